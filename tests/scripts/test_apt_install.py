"""scripts/apt-install.sh with stand-ins for dpkg-query, apt-get and id: only missing packages are
installed, apt-get update runs only then."""
import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "apt-install.sh"


def run(tmp_path, installed, *packages, uid=0):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "apt.log"
    stubs = {
        "dpkg-query": f'case " {" ".join(installed)} " in *" ${{@: -1}} "*) printf "install ok installed";; '
                      f'*) exit 1;; esac',
        "apt-get": f'echo "apt-get $*" >> {log}',
        "id": f"echo {uid}",
        "sudo": "exit 1",  # no password-less sudo
    }
    for name, body in stubs.items():
        (bin_dir / name).write_text(f"#!/bin/bash\n{body}\n")
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    result = subprocess.run(["bash", str(SCRIPT), *packages], env=env, capture_output=True, text=True)
    return result, (log.read_text().splitlines() if log.exists() else [])


def test_only_missing_packages_are_installed(tmp_path):
    result, calls = run(tmp_path, ["cmake", "make"], "cmake", "libosmesa6", "make", "g++")
    assert result.returncode == 0, result.stderr
    assert calls == ["apt-get update -qq",
                     "apt-get install -y -qq --no-install-recommends libosmesa6 g++"]


def test_nothing_missing_runs_no_apt_get(tmp_path):
    result, calls = run(tmp_path, ["cmake"], "cmake")
    assert result.returncode == 0 and calls == []


def test_without_root_or_sudo_it_says_what_to_run(tmp_path):
    result, calls = run(tmp_path, [], "cmake", uid=1000)
    assert result.returncode == 1 and calls == []
    assert "need root to run: apt-get install cmake" in result.stderr
