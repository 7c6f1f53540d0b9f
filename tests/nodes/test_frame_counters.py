import threading

from predrel_ros.nodes.frame_counters import DROPPED_STALE, MALFORMED, OUTCOMES, PROCESSED, FrameCounters, summary
from predrel_ros.nodes.health import ERROR, OK, WARN, Health
from predrel_ros.nodes.latency import LatencyWindow
from predrel_ros.nodes.log_throttle import LogThrottle, suppressed_note


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


def test_log_throttle_lets_the_first_through_and_counts_the_rest_per_key():
    clock = FakeClock()
    throttle = LogThrottle(5.0, clock)
    assert throttle.allow("a") == 0
    assert throttle.allow("a") is None and throttle.allow("a") is None
    assert throttle.allow("b") == 0  # another key is not held back
    clock.now += 5.0
    assert throttle.allow("a") == 2
    assert suppressed_note(2) == " (2 more since the last report)" and suppressed_note(0) == ""


def test_health_levels_from_counters_and_conditions():
    clock = FakeClock()
    health = Health(clock)
    assert health.assess(1.0, {"image_raw.processed": 30}) == (OK, "30.0 frames/s processed")
    level, message = health.assess(2.0, {"image_raw.malformed": 3, "depth.malformed": 1, "image_raw.processed": 10})
    assert level == WARN and message == "4 malformed in the last 2.0 s; 5.0 frames/s processed"
    assert health.assess(1.0, {"image_raw.failed": 1})[0] == ERROR
    health.raise_condition("qos", ERROR, "QoS mismatch on /x", hold_s=10.0)
    assert health.assess(1.0, {}) == (ERROR, "QoS mismatch on /x; 0.0 frames/s processed")
    clock.now += 10.0
    assert health.assess(1.0, {})[0] == OK  # held conditions lapse
    health.raise_condition("stalled", WARN, "no input")
    health.clear("stalled")
    assert health.assess(1.0, {})[0] == OK


def test_latency_window_keeps_the_last_samples():
    window = LatencyWindow(size=100)
    assert window.summary_ms() == {}
    for ms in range(1, 201):
        window.add(ms / 1000)
    summary_ms = window.summary_ms()
    assert len(window) == 100
    assert summary_ms["median_ms"] == 150.5 and summary_ms["max_ms"] == 200.0
    assert abs(summary_ms["p95_ms"] - 195.05) < 1e-9
