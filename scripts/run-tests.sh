#!/usr/bin/env bash
# Lint (ruff, ruff.toml), then run pytest over tests/ with the built package active (make test /
# make test-all call this after make setup). Arguments go to pytest.
#
# Tests marked `ros` need the colcon build; here they must run, so a missing build fails them
# instead of skipping them (PREDREL_REQUIRE_ROS=1, see tests/conftest.py).
# A run in which no test ran (pytest's exit 5: nothing collected, or everything deselected) fails.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck disable=SC1091
source scripts/predrel-env.sh || exit 1
export PREDREL_REQUIRE_ROS=1
# Tests start node processes beside numpy work on a 2-core machine: multi-threaded BLAS then
# oversubscribes the cores and small matrix products run many times slower. One thread each.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

ruff check src tests launch scripts || { echo "ruff: lint failed (ruff check --fix fixes the [*] ones)" >&2; exit 1; }
python -m pytest --durations=10 "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest ran no test (exit 5): a test run must run tests" >&2
fi
exit "$rc"
