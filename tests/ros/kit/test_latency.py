from predrel_ros.ros.kit.latency import LatencyWindow


def test_latency_window_keeps_the_last_samples():
    window = LatencyWindow(size=100)
    assert window.summary_ms() == {}
    for ms in range(1, 201):
        window.add(ms / 1000)
    summary_ms = window.summary_ms()
    assert len(window) == 100
    assert summary_ms["median_ms"] == 150.5 and summary_ms["max_ms"] == 200.0
    assert abs(summary_ms["p95_ms"] - 195.05) < 1e-9
