"""The perception process's CPU threads: the automatic choice, and the libraries held to it."""
import cv2
import pytest
from threadpoolctl import threadpool_info

from predrel_ros.perception.backends import BackendConfig
from predrel_ros.perception.cpu_threads import MAX_AUTO_THREADS, available_cores, hold_native_libraries, resolve_threads


@pytest.mark.parametrize("cores, threads", [(1, 1), (2, 1), (3, 1), (4, 2), (6, 3), (8, 4), (64, MAX_AUTO_THREADS)])
def test_auto_takes_half_the_cores_from_one_to_the_cap(cores, threads):
    assert resolve_threads(0, cores) == threads


def test_an_explicit_count_is_kept_and_a_negative_one_refused():
    assert resolve_threads(3, cores=2) == 3
    with pytest.raises(ValueError, match="0 = auto"):
        resolve_threads(-1)


def test_auto_follows_the_cores_this_process_may_use():
    assert 1 <= available_cores() and resolve_threads(0) == resolve_threads(0, available_cores())
    assert BackendConfig(num_threads=0).threads == resolve_threads(0) and BackendConfig(num_threads=2).threads == 2


def test_opencv_takes_the_threads_and_blas_one():
    before = cv2.getNumThreads()
    try:
        hold_native_libraries(1)
        assert cv2.getNumThreads() == 1
        assert all(pool["num_threads"] == 1 for pool in threadpool_info() if pool["user_api"] == "blas")
    finally:
        cv2.setNumThreads(before)
