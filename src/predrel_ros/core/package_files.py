"""Where the package's data folders (config/, launch/) are: the source checkout's, else the install's.

A development checkout (scripts/predrel-env.sh, `pip install -e .`) reads `config/` beside `src/`,
so edits take effect without a rebuild; a colcon install reads `share/predrel_ros/config/`
(found with ament_index). Run files, params files and library configs are looked up here.
"""
from __future__ import annotations

from pathlib import Path

from predrel_ros.core.errors import UserError

PACKAGE = "predrel_ros"


def data_dirs(folder: str) -> list[Path]:
    """Candidate directories of the package folder `folder` ("config", "launch"), in lookup order."""
    candidates = [Path(__file__).resolve().parents[3] / folder]  # <checkout>/src/predrel_ros/core/..
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return candidates
    try:
        candidates.append(Path(get_package_share_directory(PACKAGE)) / folder)
    except (PackageNotFoundError, OSError):   # OSError: no ament environment (AMENT_PREFIX_PATH unset)
        pass
    return candidates


def package_file(folder: str, name: str) -> Path:
    """The file `folder/name` of the package; UserError listing where it looked when missing."""
    candidates = [directory / name for directory in data_dirs(folder)]
    for path in candidates:
        if path.is_file():
            return path
    raise UserError(f"{folder}/{name} was not found (looked in {', '.join(map(str, candidates))}); "
                    f"build the package (make setup) or give a path")


def config_file(name: str) -> Path:
    """A file of the package's config/ folder, e.g. config_file("demo.run.yaml")."""
    return package_file("config", name)


def config_path(value: str, parameter: str = "config") -> Path:
    """The file a node parameter names: an existing path (~ expanded), or the bare name of a file
    in the package's config/ folder ("predicates.yaml"); UserError naming the parameter otherwise."""
    path = Path(value).expanduser()
    if path.is_file():
        return path
    if "/" in value or not value:
        raise UserError(f"parameter {parameter}: {value or '(empty)'} is not a file")
    try:
        return config_file(value)
    except UserError as error:
        raise UserError(f"parameter {parameter}: {error}") from None
