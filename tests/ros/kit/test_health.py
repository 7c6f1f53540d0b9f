from predrel_ros.ros.kit.health import ERROR, OK, WARN, Health


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


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
