"""Rewrite the build-machine paths baked into the ROS 2 wheels' CMake files to this venv's paths.

The PyPI wheels were built in a manylinux container; e.g.
share/std_msgs/cmake/export_std_msgs__rosidl_generator_pyExport.cmake names
/opt/python/cp311-cp311/include/python3.11 and .../site-packages/numpy/_core/include as include
directories, and CMake refuses imported targets whose include directories do not exist. This maps
every such path to this interpreter's include directory and this venv's numpy include directory,
writing only inside the venv. Idempotent: a second run changes nothing.

Run with the venv's python: `.venv/bin/python scripts/fix_wheel_cmake_paths.py`.
"""
from __future__ import annotations

import re
import sys
import sysconfig
from pathlib import Path

import numpy

PYTHON_INCLUDE = re.compile(r"^/.*/include/python3\.\d+$")
NUMPY_INCLUDE = re.compile(r"^/.*/site-packages/numpy/(_core|core)/include$")
QUOTED = re.compile(r'"([^"]*)"')


def replacements(text: str, venv: str, python_include: str, numpy_include: str) -> dict[str, str]:
    """Baked absolute paths in `text` -> the paths of this venv."""
    found: dict[str, str] = {}
    for quoted in QUOTED.findall(text):
        for path in quoted.split(";"):
            if not path.startswith("/") or path.startswith(venv + "/"):
                continue
            if PYTHON_INCLUDE.match(path) and path != python_include:
                found[path] = python_include
            elif NUMPY_INCLUDE.match(path) and path != numpy_include:
                found[path] = numpy_include
    return found


def missing_include_dirs(text: str) -> set[str]:
    missing = set()
    for line in text.splitlines():
        if "INTERFACE_INCLUDE_DIRECTORIES" not in line:
            continue
        for quoted in QUOTED.findall(line):
            missing.update(p for p in quoted.split(";") if p.startswith("/") and not Path(p).exists())
    return missing


def main() -> int:
    venv = sys.prefix
    if venv == sys.base_prefix:
        print("fix_wheel_cmake_paths: run this with the venv's python", file=sys.stderr)
        return 2
    python_include = sysconfig.get_paths()["include"]
    numpy_include = numpy.get_include()
    if not Path(python_include, "Python.h").is_file():
        print(f"fix_wheel_cmake_paths: Python.h is missing in {python_include}: install the Python "
              f"development headers (Debian: python3.11-dev)", file=sys.stderr)
        return 1
    changed_files = 0
    missing: set[str] = set()
    for path in sorted(Path(venv, "share").glob("*/cmake/**/*.cmake")):
        text = path.read_text()
        mapping = replacements(text, venv, python_include, numpy_include)
        if mapping:
            for old, new in mapping.items():
                text = text.replace(old, new)
            path.write_text(text)
            changed_files += 1
        missing |= missing_include_dirs(text)
    if missing:
        print("fix_wheel_cmake_paths: include directories still missing: " + ", ".join(sorted(missing)),
              file=sys.stderr)
        return 1
    print(f"fix_wheel_cmake_paths: {changed_files} CMake file(s) rewritten "
          f"(python include {python_include}, numpy include {numpy_include})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
