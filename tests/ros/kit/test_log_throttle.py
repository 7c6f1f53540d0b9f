from predrel_ros.ros.kit.log_throttle import LogThrottle, suppressed_note


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_log_throttle_lets_the_first_through_and_counts_the_rest_per_key():
    clock = FakeClock()
    throttle = LogThrottle(5.0, clock)
    assert throttle.allow("a") == 0
    assert throttle.allow("a") is None and throttle.allow("a") is None
    assert throttle.allow("b") == 0  # another key is not held back
    clock.now += 5.0
    assert throttle.allow("a") == 2
    assert suppressed_note(2) == " (2 more since the last report)" and suppressed_note(0) == ""
