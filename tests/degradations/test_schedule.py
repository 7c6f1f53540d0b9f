import pytest

from predrel_ros.degradations import (
    CLEAN,
    KINDS,
    Condition,
    ConstantSchedule,
    ScheduledDegrader,
    SegmentSchedule,
    SweepSchedule,
    conditions,
    parse_schedule,
)


def test_sweep_steps_through_severities_then_kinds():
    sweep = SweepSchedule(("blur", "occlusion"), period=10)
    assert sweep.condition_at(0) == Condition("blur", 0)
    assert sweep.condition_at(9) == Condition("blur", 0)
    assert sweep.condition_at(10) == Condition("blur", 1)
    assert sweep.condition_at(59) == Condition("blur", 5)
    assert sweep.condition_at(60) == Condition("occlusion", 0)
    assert sweep.condition_at(120) == Condition("blur", 0)
    late = SweepSchedule(("blur",), period=5, severities=(1, 3, 5), start_frame=100)
    assert [late.condition_at(f).severity for f in (0, 100, 105, 110, 115)] == [1, 1, 3, 5, 1]


def test_segments_hold_from_their_first_frame_and_are_clean_before():
    segments = SegmentSchedule(((10, Condition("blur", 2)), (20, Condition("occlusion", 4))))
    assert segments.condition_at(0) == CLEAN
    assert segments.condition_at(10) == Condition("blur", 2)
    assert segments.condition_at(19) == Condition("blur", 2)
    assert segments.condition_at(10**6) == Condition("occlusion", 4)


def test_text_forms():
    assert parse_schedule("none") == ConstantSchedule(CLEAN)
    assert parse_schedule(" blur:3 ") == ConstantSchedule(Condition("blur", 3))
    assert parse_schedule("sweep:blur:30") == SweepSchedule(("blur",), 30)
    assert parse_schedule("sweep:all:30:1,3,5", start_frame=7) == SweepSchedule(KINDS, 30, (1, 3, 5), 7)
    assert parse_schedule("sweep:blur,occlusion:8").kinds == ("blur", "occlusion")
    assert parse_schedule("segments:0=none,100=blur:2").segments == ((0, CLEAN), (100, Condition("blur", 2)))


@pytest.mark.parametrize("text, message", [
    ("blur", "condition must be 'none' or KIND:SEVERITY"),
    ("fog:2", "kind must be one of"),
    ("blur:9", "severity must lie in 0..5"),
    ("none:1", "severity must be 0 for kind 'none'"),
    ("sweep:blur", "expected sweep:KINDS:PERIOD"),
    ("sweep:blur:0", "period must be an integer >= 1"),
    ("sweep:blur:x", "sweep period must be an integer, got 'x'"),
    ("sweep:none:5", "kind must be one of"),
    ("segments:5=blur:1,3=blur:2", "strictly increasing"),
    ("segments:blur:1", "must be FIRST_FRAME=CONDITION"),
])
def test_bad_text_is_refused_naming_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        parse_schedule(text)


def test_scheduled_degrader_follows_and_swaps_its_schedule():
    scheduled = ScheduledDegrader(SweepSchedule(("blur",), period=2), seed=3)
    assert scheduled.degrader_at(0).severity == 0 and scheduled.degrader_at(5).severity == 2
    assert scheduled.degrader_at(5) is scheduled.degrader_at(4)
    assert scheduled.degrader_at(5).seed == 3
    scheduled.set_schedule(parse_schedule("occlusion:4"))
    assert (scheduled.degrader_at(5).kind, scheduled.degrader_at(5).severity) == ("occlusion", 4)
    with pytest.raises(ValueError, match="seed must be an integer"):
        ScheduledDegrader(ConstantSchedule(CLEAN), seed=2**32)


def test_conditions_cover_every_kind_and_severity():
    everything = conditions()
    assert len(everything) == 36 and everything[0] == Condition("blur", 0) and everything[-1] == Condition(
        "detection_noise", 5)
