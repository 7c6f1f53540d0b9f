"""scripts/run-tests.sh (make test, CI): a run in which no test ran fails, with a message."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_tests(*pytest_args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts" / "run-tests.sh"), "-q", "-p", "no:randomly", *pytest_args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_a_run_that_selects_no_test_fails():
    result = run_tests("tests/core/test_boxes.py", "-k", "no_test_has_this_name")
    assert result.returncode == 5, result.stdout[-2000:] + result.stderr[-2000:]
    assert "ran no test" in result.stderr


def test_a_run_with_tests_passes():
    result = run_tests("tests/core/test_boxes.py::test_box_iou_by_hand")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout
