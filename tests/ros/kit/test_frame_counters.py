import threading

from predrel_ros.ros.kit.frame_counters import DROPPED_STALE, MALFORMED, OUTCOMES, PROCESSED, FrameCounters, summary


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_counts_per_stream_totals_and_intervals():
    clock = FakeClock()
    counters = FrameCounters(clock)
    counters.count("image_raw", PROCESSED, 3)
    counters.count("image_raw", DROPPED_STALE)
    counters.count(None, "pace_timeout")
    assert counters.stream("image_raw") == {DROPPED_STALE: 1, PROCESSED: 3}
    assert counters.total("image_raw") == 4
    assert counters.snapshot()["pace_timeout"] == 1
    clock.now += 2.0
    assert counters.interval() == (2.0, {"image_raw.dropped_stale": 1, "image_raw.processed": 3, "pace_timeout": 1})
    counters.count("image_raw", PROCESSED)
    clock.now += 0.5
    assert counters.interval() == (0.5, {"image_raw.processed": 1})
    assert summary({"a": 1, "b": 2}) == "a=1 b=2"


def test_counting_from_many_threads_loses_nothing():
    counters = FrameCounters()
    threads = [threading.Thread(target=lambda: [counters.count("s", MALFORMED) for _ in range(5000)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counters.get("s", MALFORMED) == 20000
    assert len(set(OUTCOMES)) == len(OUTCOMES)
