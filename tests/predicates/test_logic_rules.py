import math

import numpy as np
import pytest

from predrel_ros.core.entities import CONTAINER, MANIPULATED_OBJECT, RIGHT_HAND, SURFACE, Entity
from predrel_ros.predicates import PredicateExtractor
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate
from predrel_ros.predicates.logic_rules import CONSISTENCY, INDEPENDENT, RULES, LogicMonitor, check_sequence, rules_of

HAND, OBJ, BOWL, TABLE, CUP = 1, 2, 3, 4, 5


def e(name, s, o, value):
    return PredicateEstimate(name, s, o, value)


def violated(frames, rules=None, **kwargs):
    violations, rates = check_sequence(list(enumerate(frames)), rules, **kwargs)
    return {(v.frame_index, v.rule, v.subject, v.object) for v in violations}, rates


def test_rule_groups():
    assert {rule.group for rule in RULES} == {INDEPENDENT, CONSISTENCY}
    assert len(rules_of(INDEPENDENT)) == 7 and len(rules_of(CONSISTENCY)) == 3
    assert all(rule.description and rule.kind for rule in RULES)
    with pytest.raises(ValueError, match="unknown rule group"):
        rules_of("other")


def test_release_after_grasp_precedence():
    grasp = [e("grasp", HAND, OBJ, "T"), e("release", HAND, OBJ, "N")]
    release = [e("grasp", HAND, OBJ, "N"), e("release", HAND, OBJ, "T")]
    quiet = [e("grasp", HAND, OBJ, "N"), e("release", HAND, OBJ, "N")]
    found, rates = violated([grasp, quiet, release])
    assert found == set()
    assert rates["release"] == 0.0
    found, rates = violated([quiet, quiet, release])
    assert found == {(2, "release_after_grasp", HAND, OBJ)}
    assert rates["release"] == 1.0
    # memory: a grasp 3 frames back is forgotten with memory 2
    found, _ = violated([grasp, quiet, quiet, release], memory=2)
    assert found == {(3, "release_after_grasp", HAND, OBJ)}


def test_exclusion_and_cardinality_rules():
    frame = [e("static", OBJ, BOWL, "In"), e("static", BOWL, OBJ, "In"),       # In both ways
             e("static", OBJ, TABLE, "Sup"),                                     # In the bowl and on the table
             e("static", OBJ, CUP, "In"), e("static", CUP, BOWL, "none"), e("static", BOWL, CUP, "none"),
             e("contact", OBJ, BOWL, "T"), e("contact", OBJ, CUP, "T")]
    found, rates = violated([frame])
    rules = {rule for _, rule, _, _ in found}
    assert rules == {"in_asymmetric", "in_excludes_support_elsewhere", "single_container"}
    # nested containers are allowed: the cup sits in the bowl
    nested = [e("static", OBJ, BOWL, "In"), e("static", OBJ, CUP, "In"), e("static", CUP, BOWL, "In"),
              e("contact", OBJ, BOWL, "T"), e("contact", OBJ, CUP, "T"), e("contact", CUP, BOWL, "T")]
    found, _ = violated([nested])
    assert not any(rule == "single_container" for _, rule, _, _ in found)
    found, _ = violated([[e("static", OBJ, CUP, "Sup"), e("static", CUP, OBJ, "Sup")]])
    assert found == {(0, "support_asymmetric", OBJ, CUP)}


def test_co_occurrence_rules_and_unk_is_not_evidence():
    moving = [e("dynamic", HAND, OBJ, "MT"), e("contact", OBJ, HAND, "N"), e("active_hand", HAND, NO_OBJECT, "T")]
    found, rates = violated([moving])
    assert found == {(0, "hand_moving_together_implies_contact", HAND, OBJ)}
    assert rates["dynamic"] == 1.0
    unknown = [e("dynamic", HAND, OBJ, "MT"), e("contact", HAND, OBJ, "UNK"), e("active_hand", HAND, NO_OBJECT, "T")]
    found, rates = violated([unknown])
    assert found == set() and math.isnan(rates["dynamic"])
    # contact one frame earlier, within the window, satisfies it
    touching = [e("contact", HAND, OBJ, "T"), e("active_hand", HAND, NO_OBJECT, "T")]
    assert violated([touching, moving])[0] == set()
    # objects that are not hands may move together without touching
    assert violated([[e("dynamic", OBJ, CUP, "MT"), e("contact", OBJ, CUP, "N")]])[0] == set()
    floating = [e("static", OBJ, BOWL, "In"), e("contact", OBJ, BOWL, "N")]
    assert violated([floating])[0] == {(0, "containment_implies_contact_or_grasp", OBJ, BOWL)}
    held = floating + [e("grasp", HAND, OBJ, "T")]
    assert violated([held])[0] == set()


def test_consistency_rules():
    frame = [e("grasp", HAND, OBJ, "T"), e("contact", HAND, OBJ, "N"), e("release", HAND, OBJ, "T"),
             e("static", OBJ, TABLE, "Sup"), e("contact", OBJ, TABLE, "N")]
    found, rates = violated([frame], rules_of(CONSISTENCY))
    assert {rule for _, rule, _, _ in found} == {"grasp_implies_contact", "release_excludes_grasp",
                                                 "support_implies_contact"}
    assert rates == {"grasp": 1.0, "release": 1.0, "static": 1.0}


def test_rolling_rate_window_and_order():
    monitor = LogicMonitor(rules_of(CONSISTENCY), rate_window=2)
    bad = [e("grasp", HAND, OBJ, "T"), e("contact", HAND, OBJ, "N")]
    good = [e("grasp", HAND, OBJ, "T"), e("contact", HAND, OBJ, "T")]
    monitor.update(0, bad)
    monitor.update(1, good)
    assert monitor.compute()["grasp"] == 0.5
    monitor.update(2, good)
    assert monitor.compute()["grasp"] == 0.0          # frame 0 left the rate window
    assert len(monitor.violations) == 0               # and so did its violation: a live monitor stays bounded
    with pytest.raises(ValueError, match="increasing order"):
        monitor.update(2, good)
    monitor.update(3, bad)
    assert [v.frame_index for v in monitor.violations] == [3]
    monitor.reset()
    assert not monitor.violations and math.isnan(monitor.compute()["grasp"])


def test_a_long_running_monitor_keeps_only_the_rate_window():
    monitor = LogicMonitor(rules_of(CONSISTENCY), rate_window=30)
    bad = [e("grasp", HAND, OBJ, "T"), e("contact", HAND, OBJ, "N")]
    for frame in range(1000):
        monitor.update(frame, bad)
    assert len(monitor.violations) == 30 and len(monitor._counts) == 30
    assert monitor.compute()["grasp"] == 1.0


def rect(track_id, role, x, y, w, h):
    mask = np.zeros((240, 320), bool)
    mask[y:y + h, x:x + w] = True
    return Entity(id=track_id, label=role, role=role, box=[x, y, x + w - 1, y + h - 1], mask=mask)


def extracted(frames):
    extractor = PredicateExtractor()
    return [(t, extractor.update(t, entities)) for t, entities in frames]


def test_consistency_rules_hold_by_construction_for_the_extractor():
    rng = np.random.default_rng(7)
    frames = []
    for t in range(40):
        jitter = rng.integers(-3, 4, size=6)
        frames.append((t, [rect(HAND, RIGHT_HAND, 100 + jitter[0], 80 + jitter[1], 20, 20),
                           rect(OBJ, MANIPULATED_OBJECT, 100 + jitter[2], 100 + jitter[3], 20, 20),
                           rect(BOWL, CONTAINER, 140 + jitter[4], 100 + jitter[5], 40, 40),
                           rect(TABLE, SURFACE, 0, 200, 320, 40)]))
    violations, rates = check_sequence(extracted(frames), rules_of(CONSISTENCY))
    assert violations == []
    assert all(math.isnan(rate) or rate == 0.0 for rate in rates.values())


def test_a_touch_and_retract_is_neither_grasp_nor_release():
    # the hand bumps into a resting object for one frame and pulls back: no hold began, so the
    # contact's end releases nothing
    obj = rect(OBJ, MANIPULATED_OBJECT, 100, 100, 20, 20)
    xs = [40, 55, 70, 80, 70, 55, 40]              # hand's left edge; touching at x + 20 = 100
    frames = [(t, [rect(HAND, RIGHT_HAND, x, 100, 20, 20), obj]) for t, x in enumerate(xs)]
    output = extracted(frames)
    values = {t: {est.key: est.value for est in out} for t, out in output}
    assert values[3][("contact", HAND, OBJ)] == "T"
    assert all(values[t][("grasp", HAND, OBJ)] != "T" and values[t][("release", HAND, OBJ)] != "T" for t in values)
    violations, _ = check_sequence(output)
    assert violations == []


def test_given_canonical_keys_check_as_the_keys_the_monitor_computes():
    quiet = [e("grasp", HAND, OBJ, "N"), e("release", HAND, OBJ, "N"), e("contact", OBJ, HAND, "T")]
    release = [e("grasp", HAND, OBJ, "N"), e("release", HAND, OBJ, "T"), e("contact", OBJ, HAND, "N")]
    computed, given = LogicMonitor(), LogicMonitor()
    for t, frame in enumerate([quiet, quiet, release, quiet]):
        found = computed.update(t, frame)
        assert given.update(t, frame, [estimate.canonical_key for estimate in frame]) == found
    assert given.rule_counts() == computed.rule_counts() and repr(given.compute()) == repr(computed.compute())
    assert len(given.violations) == 1
