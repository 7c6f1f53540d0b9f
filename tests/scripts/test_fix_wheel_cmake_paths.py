import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fix_wheel_cmake_paths.py"
spec = importlib.util.spec_from_file_location("fix_wheel_cmake_paths", SCRIPT)
fix = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fix)

VENV = "/home/user/proj/.venv"
PY_INC = "/usr/include/python3.11"
NP_INC = f"{VENV}/lib/python3.11/site-packages/numpy/_core/include"
BAKED = ('  INTERFACE_INCLUDE_DIRECTORIES "/opt/python/cp311-cp311/include/python3.11;'
         '/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"\n')


def test_build_machine_paths_map_to_this_venv():
    assert fix.replacements(BAKED, VENV, PY_INC, NP_INC) == {
        "/opt/python/cp311-cp311/include/python3.11": PY_INC,
        "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include": NP_INC,
    }


def test_paths_already_ours_are_left_alone():
    fixed = f'  INTERFACE_INCLUDE_DIRECTORIES "{PY_INC};{NP_INC};{VENV}/include"\n'
    assert fix.replacements(fixed, VENV, PY_INC, NP_INC) == {}


def test_missing_include_dirs_are_reported(tmp_path):
    present = tmp_path / "include"
    present.mkdir()
    text = f'set_target_properties(x PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "{present};/no/such/dir")\n'
    assert fix.missing_include_dirs(text) == {"/no/such/dir"}
