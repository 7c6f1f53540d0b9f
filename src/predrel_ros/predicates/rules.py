"""The extraction rules of paper 3.3 as pure functions of measurements, each with its margin q_sp.

A rule is a chain of tests; each test compares one measurement with one threshold. The margin of a
label follows the logic of the chain: a passing conjunction is as certain as its weakest condition,
a failing conjunction as its strongest failing condition, and a label reached after higher-priority
tests failed is only as certain as the least certain of those decisions. So q_sp says how far the
measurements are from flipping the label.

Codes are the vocabulary's integer codes (contact N=0 / T=1; static and dynamic in the order of
`vocabulary.STATIC_VALUES` / `DYNAMIC_VALUES`; UNK = -1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.config import ContactConfig, DynamicConfig, StaticConfig, Threshold

UNK = vocabulary.UNK
N, T = 0, 1
STATIC_CODE = {label: code for code, label in enumerate(vocabulary.STATIC_VALUES)}
DYNAMIC_CODE = {label: code for code, label in enumerate(vocabulary.DYNAMIC_VALUES)}
IN, SUP, AB, BE, AR, NONE = (STATIC_CODE[label] for label in ("In", "Sup", "Ab", "Be", "Ar", "none"))
S, GC, MA, MT, FMT, HT = (DYNAMIC_CODE[label] for label in ("S", "GC", "MA", "MT", "FMT", "HT"))


def at_most(x: float, threshold: Threshold) -> tuple[bool, float]:
    """x <= theta, with its margin."""
    return x <= threshold.value, threshold.margin(x)


def above(x: float, threshold: Threshold) -> tuple[bool, float]:
    """x > theta, with its margin."""
    return x > threshold.value, threshold.margin(x)


def at_least(x: np.ndarray, threshold: Threshold) -> tuple[np.ndarray, np.ndarray]:
    """x >= theta, with its margin, per element (the static rule's tests, `static_rules`)."""
    return x >= threshold.value, threshold.margins(x)


def at_most_rows(x: np.ndarray, threshold: Threshold) -> tuple[np.ndarray, np.ndarray]:
    """x <= theta, with its margin, per element."""
    return x <= threshold.value, threshold.margins(x)


def conjunction(*tests: tuple[bool, float]) -> tuple[bool, float]:
    """All tests pass (margin: the weakest passing one), else fail (margin: the strongest failing one)."""
    strongest_failing = weakest = None              # one pass (a conjunction is evaluated per test, per pair)
    for passed, margin in tests:
        if not passed:
            if strongest_failing is None or margin > strongest_failing:
                strongest_failing = margin
        elif weakest is None or margin < weakest:
            weakest = margin
    if strongest_failing is not None:
        return False, strongest_failing
    return True, weakest


def negation(test: tuple[bool, float]) -> tuple[bool, float]:
    return not test[0], test[1]


def decide(chain: Sequence[tuple[int, Callable[[], tuple[bool, float]] | None]], default: int) -> tuple[int, float]:
    """First label whose test passes, in priority order; `default` when none does.

    Tests are called lazily, in order, until one passes; None means the label is not allowed here.
    The margin is the smallest of the margins of every decision taken on the way.
    """
    margin = 1.0
    for code, test in chain:
        if test is None:
            continue
        passed, test_margin = test()
        if test_margin < margin:
            margin = test_margin
        if passed:
            return code, margin
    return default, margin


# ------------------------------------------------------------------------------------------- contact

def contact_rule(distance: float, depth_tests: Sequence[tuple[float, Threshold]], config: ContactConfig
                 ) -> tuple[int, float]:
    """contact = T iff the boundary distance (reference px) <= theta_C and, when depth is used,
    every depth test's value (m) <= its threshold; depth_tests: (value, threshold) pairs, none
    without depth."""
    test = conjunction(at_most(distance, config.distance), *(at_most(*depth_test) for depth_test in depth_tests))
    return (T if test[0] else N), test[1]


# -------------------------------------------------------------------------------------------- static

@dataclass
class StaticMeasurements:
    """What the static rule of ordered pairs (i, j) looks at (ratios are scale-free): one value per
    field for one pair, or one array per field with a row per pair (`static_rules`)."""

    inside_fraction: float          # share of i's mask inside j's rectangle
    bottom_within: bool             # i's lowest pixel is not below j's lowest pixel
    contact: tuple[bool, float]     # the contact test of the pair (passed, margin)
    support_fraction: float         # share of i's bottom columns with j right under them
    vertical_offset: float          # (cy_j - cy_i) / mean height: > 0 when i is higher in the image
    horizontal_overlap: float       # x-overlap / min width
    centroid_distance: float        # centroid distance / sum of the half-diagonals


STATIC_RELATIONS = ("In", "Sup", "Ab", "Be", "Ar")      # the static rule's priority order


def static_rule(m: StaticMeasurements, allowed: Sequence[str], config: StaticConfig) -> tuple[int, float]:
    """Static relation of (i, j) in priority In > Sup > Ab > Be > Ar > none, restricted to `allowed`."""
    rows = StaticMeasurements(**{name: np.atleast_1d(value) for name, value in vars(m).items() if name != "contact"},
                              contact=(np.atleast_1d(m.contact[0]), np.atleast_1d(m.contact[1])))
    codes, margins = static_rules(rows, {name: np.atleast_1d(name in allowed) for name in STATIC_RELATIONS}, config)
    return int(codes[0]), float(margins[0])


def static_rules(m: StaticMeasurements, allowed: dict[str, np.ndarray], config: StaticConfig
                 ) -> tuple[np.ndarray, np.ndarray]:
    """`static_rule` of every row at once: m holds one array per field, allowed one boolean array per
    relation of STATIC_RELATIONS. The decision is the scalar one: the first allowed relation whose test
    passes, margin the smallest of the allowed tests' margins up to it (`decide`). The six threshold
    tests are one array (rows: In's, Sup's support, Ab's, Be's, the overlap, Ar's), and the four
    two-test conjunctions another: a handful of numpy calls for all rows, whose cost is per call."""
    thresholds = (config.inside_fraction, config.support_fraction, config.above_offset, config.above_offset,
                  config.horizontal_overlap, config.around_distance)
    measured = np.array([m.inside_fraction, m.support_fraction, m.vertical_offset, -np.asarray(m.vertical_offset),
                         m.horizontal_overlap, m.centroid_distance], np.float64)
    values = np.array([[threshold.value] for threshold in thresholds])
    margins = np.abs(measured - values) / np.array([[threshold.eta] for threshold in thresholds])
    margins = np.where(margins < 1.0, margins, 1.0)                 # `Threshold.margins` of each test
    passed = measured >= values                                    # `at_least`, Ar's row `at_most` below
    passed[5] = measured[5] <= values[5, 0]
    conjunctions = _conjunction_rows(
        (np.array([passed[0], m.contact[0], passed[2], passed[3]]),
         np.array([margins[0], m.contact[1], margins[2], margins[3]])),
        (np.array([m.bottom_within, passed[1], passed[4], passed[4]]),
         np.array([np.ones(len(margins[0])), margins[1], margins[4], margins[4]])))
    return _decide_rows((IN, SUP, AB, BE, AR), np.vstack((conjunctions[0], passed[5:])),
                        np.vstack((conjunctions[1], margins[5:])),
                        np.array([allowed[name] for name in STATIC_RELATIONS], bool), NONE)


@dataclass
class StaticMeasurements3D:
    """What the static rule of ordered pairs (i, j) looks at in 3D, one array per field with a row per
    pair, metres along gravity (`gravity.GravityFrame`): the entities' extents (`gravity.Extent`)."""

    inside_fraction: np.ndarray     # as in 2D: In is judged in the image (the walls hide the inside)
    bottom_within: np.ndarray
    support_gap: np.ndarray         # |bottom of i - top of j|
    clearance_above: np.ndarray     # bottom of i - top of j (> 0: i clear above j)
    clearance_below: np.ndarray     # bottom of j - top of i
    footprint_gap: np.ndarray       # lateral gap of the footprints (< 0: they overlap by as much)
    footprint_depth_gap: np.ndarray  # their gap along the view (the far sides are hidden)
    box_gap: np.ndarray             # distance between the two extents (0 when they overlap)

    @classmethod
    def of(cls, inside_fraction: np.ndarray, bottom_within: np.ndarray, low_i: np.ndarray, high_i: np.ndarray,
           low_j: np.ndarray, high_j: np.ndarray) -> "StaticMeasurements3D":
        """From the extents' corners (rows x (lateral, depth, height))."""
        overlap = np.minimum(high_i, high_j) - np.maximum(low_i, low_j)
        clearance_above = low_i[:, 2] - high_j[:, 2]
        return cls(inside_fraction=inside_fraction, bottom_within=bottom_within,
                   support_gap=np.abs(clearance_above), clearance_above=clearance_above,
                   clearance_below=low_j[:, 2] - high_i[:, 2], footprint_gap=-overlap[:, 0],
                   footprint_depth_gap=-overlap[:, 1],
                   box_gap=np.linalg.norm(np.maximum(-overlap, 0.0), axis=1))


def static_rules_3d(m: StaticMeasurements3D, allowed: dict[str, np.ndarray], config: StaticConfig
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The static rule along gravity (`StaticConfig`, 3D), priority and margins as `static_rules`:
    In as in the image; Sup: i's bottom within support_gap_m of j's top over overlapping footprints;
    Ab / Be: i's bottom at least above_clearance_m over j's top / i's top at least below_clearance_m
    under j's bottom, the footprints within footprint_gap_m laterally and footprint_depth_gap_m along the view; Ar: the
    extents at most around_distance_m apart."""
    footprints = _conjunction_rows(at_most_rows(m.footprint_gap, config.footprint_gap_m),
                                   at_most_rows(m.footprint_depth_gap, config.footprint_depth_gap_m))
    tests = (
        (IN, "In", _conjunction_rows(at_least(m.inside_fraction, config.inside_fraction),
                                     (m.bottom_within, np.ones(len(m.bottom_within))))),
        (SUP, "Sup", _conjunction_rows(at_most_rows(m.support_gap, config.support_gap_m), footprints)),
        (AB, "Ab", _conjunction_rows(at_least(m.clearance_above, config.above_clearance_m), footprints)),
        (BE, "Be", _conjunction_rows(at_least(m.clearance_below, config.below_clearance_m), footprints)),
        (AR, "Ar", at_most_rows(m.box_gap, config.around_distance_m)),
    )
    return _decide_rows(tuple(code for code, *_ in tests), np.array([test[0] for *_, test in tests]),
                        np.array([test[1] for *_, test in tests]),
                        np.array([allowed[name] for _, name, _ in tests], bool), NONE)


def _decide_rows(codes: tuple[int, ...], passed: np.ndarray, margins: np.ndarray, allowed: np.ndarray | None,
                 default: int) -> tuple[np.ndarray, np.ndarray]:
    """`decide` of every row (column) at once: passed, margins and allowed (None: all allowed) hold a
    row per test in priority order, codes the tests' labels. The code of the first allowed test that
    passes (else `default`); the margin the smallest of the allowed tests' margins up to it, 1 at most
    (a NaN margin is skipped, as `decide`'s comparison skips it)."""
    eligible = passed if allowed is None else passed & allowed
    decided = eligible.any(axis=0)
    first = np.argmax(eligible, axis=0)
    considered = np.arange(len(codes))[:, None] <= np.where(decided, first, len(codes) - 1)
    if allowed is not None:
        considered &= allowed
    margin = np.fmin.reduce(np.where(considered, margins, 1.0), axis=0, initial=1.0)
    return np.where(decided, np.array(codes, np.int64)[first], default), margin


def _conjunction_rows(*tests: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """`conjunction` of every element of the tests' arrays (any shape, the same for all)."""
    (passed, weakest), *rest = tests
    failing = np.where(passed, -np.inf, weakest)
    for test, margin in rest:                       # pairwise: no stacking of the tests' arrays
        passed = passed & test
        failing = np.maximum(failing, np.where(test, -np.inf, margin))
        weakest = np.minimum(weakest, margin)
    return passed, np.where(passed, weakest, failing)


# ------------------------------------------------------------------------------------------- dynamic

@dataclass
class DynamicMeasurements:
    """What the dynamic rule of a pair looks at over the window (reference px per frame): one value per
    field for one pair, or one array per field with a row per pair (`dynamic_rules`)."""

    samples: int                 # frames of the window in which both entities were seen
    speed_i: float               # least-squares centroid speed over the window
    speed_j: float
    early_speed_i: float         # speed between the first two samples of the window
    early_speed_j: float
    late_speed_i: float          # speed between the last two samples of the window
    late_speed_j: float
    relative_speed: float        # |v_i - v_j|
    distance_rate: float         # least-squares slope of the centroid distance (< 0: closing in)
    contact_fraction: float      # share of the window's contact values that were T


def dynamic_rule(m: DynamicMeasurements, config: DynamicConfig) -> tuple[int, float]:
    """GC / MA / MT / FMT / HT / S of a pair (see `DynamicConfig` for the decision order)."""
    rows = DynamicMeasurements(**{name: np.atleast_1d(value) for name, value in vars(m).items()})
    codes, margins = dynamic_rules(rows, config)
    return int(codes[0]), float(margins[0])


def dynamic_rules(m: DynamicMeasurements, config: DynamicConfig) -> tuple[np.ndarray, np.ndarray]:
    """`dynamic_rule` of every row at once (m holds one array per field): the first label of
    HT > S > MT > FMT > GC > MA whose test passes, else S; the margin is the smallest of the tests'
    margins up to it (`decide`); UNK with margin 0 for fewer than min_frames joint samples."""
    speed, rate = config.moving_speed, config.distance_rate
    count = len(m.samples)
    speeds = np.array([m.speed_i, m.speed_j, m.early_speed_i, m.early_speed_j, m.late_speed_i, m.late_speed_j],
                      np.float64)
    moving, speed_margins = _above_rows(speeds, speed)         # rows: i, j, early i, early j, late i, late j
    still = ~moving
    relative = at_most_rows(m.relative_speed, config.relative_speed)
    ones, padding = np.ones(count, bool), np.full(count, np.inf)   # a test that passes and never decides
    # the conjunctions of HT, S, MT and FMT as (conjunction x test x row) arrays, padded to four tests
    tests_passed = np.array([[moving[2], moving[3], still[4], still[5]], [still[0], still[1], ones, ones],
                             [moving[0], moving[1], relative[0], ones],
                             [moving[0] != moving[1], m.contact_fraction >= config.fmt_contact_fraction, ones, ones]])
    tests_margins = np.array([[speed_margins[2], speed_margins[3], speed_margins[4], speed_margins[5]],
                              [speed_margins[0], speed_margins[1], padding, padding],
                              [speed_margins[0], speed_margins[1], relative[1], padding],
                              [np.minimum(speed_margins[0], speed_margins[1]), np.ones(count), padding, padding]])
    passed, margins = _conjunction_rows(*zip(tests_passed.swapaxes(0, 1), tests_margins.swapaxes(0, 1)))
    approaching, receding = (m.distance_rate < -rate.value, rate.margins(-m.distance_rate)), _above_rows(
        m.distance_rate, rate)
    codes, margins = _decide_rows((HT, S, MT, FMT, GC, MA), np.vstack((passed, [approaching[0], receding[0]])),
                                  np.vstack((margins, [approaching[1], receding[1]])), None, S)
    few = np.asarray(m.samples) < config.min_frames
    codes[few] = UNK
    margins[few] = 0.0
    return codes, margins


def _above_rows(x: np.ndarray, threshold: Threshold) -> tuple[np.ndarray, np.ndarray]:
    """`above` of every row."""
    return x > threshold.value, threshold.margins(x)


# ------------------------------------------------------------------------------------------- derived
#
# Derived predicates combine base values in three-valued (Kleene) logic over T=1 / N=0 / UNK=-1.
# Each operand is (code, margin); the margin of the result is that of the operands that decide it:
# an AND that is N is as certain as its most certain N operand, a T result as its least certain
# operand; OR the other way round; UNK has margin 0.

Truth = tuple[int, float]


def kleene_and(*operands: Truth) -> Truth:
    """N if any operand is N, else UNK if any is UNK, else T."""
    false = [margin for code, margin in operands if code == N]
    if false:
        return N, max(false)
    if any(code == UNK for code, _ in operands):
        return UNK, 0.0
    return T, min((margin for _, margin in operands), default=1.0)


def kleene_or(*operands: Truth) -> Truth:
    """T if any operand is T, else UNK if any is UNK, else N (N with margin 1 for no operand)."""
    true = [margin for code, margin in operands if code == T]
    if true:
        return T, max(true)
    if any(code == UNK for code, _ in operands):
        return UNK, 0.0
    return N, min((margin for _, margin in operands), default=1.0)


def member(operand: Truth, codes: tuple[int, ...]) -> Truth:
    """Truth of "the value is one of codes", with the operand's margin."""
    code, margin = operand
    if code == UNK:
        return UNK, 0.0
    return (T if code in codes else N), margin


#: `onset_rules`' previous code of a stream with no known value
NOTHING_KNOWN = -2


def onset_rule(previous: int | None, current: Truth, state: int) -> Truth:
    """Event on the frame where a static state begins (containment: In, support: Sup).

    UNK when the current state is unknown; T when it holds now and the last known value before was
    another relation; N otherwise (also when nothing is known before: an object seen inside a
    container from the start was not just put there)."""
    codes, margins = onset_rules(np.array([NOTHING_KNOWN if previous is None else previous]), np.array([current[0]]),
                                 np.array([current[1]], np.float64), state)
    return int(codes[0]), float(margins[0])


def onset_rules(previous: np.ndarray, codes: np.ndarray, margins: np.ndarray, state: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """`onset_rule` of every row: previous holds NOTHING_KNOWN where no value is known."""
    unknown = codes == UNK
    onset = (codes == state) & (previous != NOTHING_KNOWN) & (previous != state)
    return np.where(unknown, UNK, np.where(onset, T, N)), np.where(unknown, 0.0, margins)


def active_hand_rule(contacts: Sequence[Truth], dynamics: Sequence[Truth]) -> Truth:
    """A hand is active when it touches, approaches or moves together with one of its objects."""
    return kleene_or(*contacts, *(member(dynamic, (GC, MT, FMT)) for dynamic in dynamics))
