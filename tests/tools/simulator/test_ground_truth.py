"""The ground-truth rules on hand-made physics states (no simulator): each rule of the table in
predrel_ros.tools.simulator.ground_truth, one case at a time."""
import numpy as np
import pytest

from predrel_ros.core import entities as roles
from predrel_ros.tools.simulator.config import GroundTruthConfig
from predrel_ros.tools.simulator.ground_truth import FrameScript, GroundTruth, meaningful_pairs
from predrel_ros.tools.simulator.scene import (
    FLOOR_THICKNESS,
    KIND_CONTAINER,
    KIND_HAND,
    KIND_OBJECT,
    KIND_SURFACE,
    CameraSpec,
    EntitySpec,
    SceneSpec,
)
from predrel_ros.tools.simulator.simulator import PhysicsState

HAND, TABLE, CUBE, BOX, DISTRACTOR, TARGET = 1, 2, 3, 4, 5, 6
FPS = 30.0


def _scene() -> SceneSpec:
    colour = (0.5, 0.5, 0.5, 1.0)
    specs = (
        EntitySpec(HAND, "hand", roles.RIGHT_HAND, KIND_HAND, (0.05,), colour, (0.3, 0.0, 0.2)),
        EntitySpec(TABLE, "table", roles.SURFACE, KIND_SURFACE, (0.45, 0.32), colour, (0.0, 0.0, 0.0)),
        EntitySpec(CUBE, "cube", roles.MANIPULATED_OBJECT, KIND_OBJECT, (0.02,), colour, (0.0, 0.0, 0.02)),
        EntitySpec(BOX, "box", roles.CONTAINER, KIND_CONTAINER, (0.07, 0.07, 0.06), colour, (-0.2, 0.0, 0.0)),
        EntitySpec(DISTRACTOR, "cylinder", roles.DISTRACTOR, KIND_OBJECT, (0.02, 0.03), colour, (0.2, 0.1, 0.03)),
        EntitySpec(TARGET, "cube", roles.TARGET, KIND_OBJECT, (0.025,), colour, (0.2, -0.1, 0.025)),
    )
    return SceneSpec(specs, (CameraSpec("front", (0, -0.5, 0.3), (0, 0, 0), 55.0),), (), colour)


#: resting layout: (centre, half extents) of each entity's 3D box
RESTING = {
    HAND: ((0.3, 0.0, 0.2), (0.04, 0.05, 0.04)),
    TABLE: ((0.0, 0.0, -0.02), (0.45, 0.32, 0.02)),
    CUBE: ((0.0, 0.0, 0.02), (0.02, 0.02, 0.02)),
    BOX: ((-0.2, 0.0, 0.03), (0.078, 0.078, 0.03)),
    DISTRACTOR: ((0.2, 0.1, 0.03), (0.02, 0.02, 0.03)),
    TARGET: ((0.2, -0.1, 0.025), (0.025, 0.025, 0.025)),
}
RESTING_SUPPORT = {(CUBE, TABLE), (BOX, TABLE), (DISTRACTOR, TABLE), (TARGET, TABLE)}


def state(boxes=None, contacts=None, support=None, attachments=(), time=0.0) -> PhysicsState:
    layout = dict(RESTING)
    layout.update(boxes or {})
    ids = tuple(sorted(layout))
    centre = np.array([layout[i][0] for i in ids], dtype=float)
    half = np.array([layout[i][1] for i in ids], dtype=float)
    body_pos = centre.copy()
    body_pos[ids.index(BOX)] = centre[ids.index(BOX)] - [0, 0, half[ids.index(BOX)][2]]  # box origin: bottom
    support = RESTING_SUPPORT if support is None else support
    if contacts is None:
        contacts = {tuple(sorted(pair)): -1e-4 for pair in support}
    return PhysicsState(time=time, ids=ids, box_min=centre - half, box_max=centre + half, centre=centre,
                        body_pos=body_pos, body_rot=np.repeat(np.eye(3)[None], len(ids), axis=0),
                        contact_distance=contacts, support_contacts=set(support),
                        attachments=frozenset(attachments))


@pytest.fixture
def truth():
    return GroundTruth(_scene(), GroundTruthConfig(), FPS)


def test_meaningful_pairs_follow_the_documented_classes():
    pairs = meaningful_pairs(_scene())
    unordered = set(pairs.unordered)
    assert (HAND, CUBE) in unordered and (HAND, BOX) in unordered and (HAND, TARGET) in unordered
    assert (HAND, TABLE) not in unordered and (HAND, DISTRACTOR) not in unordered
    assert (TABLE, DISTRACTOR) in unordered and (CUBE, DISTRACTOR) not in unordered
    assert (CUBE, TARGET) in unordered and (CUBE, BOX) in unordered and (TABLE, BOX) in unordered
    assert all(a < b or a == HAND for a, b in pairs.unordered)
    assert set(pairs.ordered) == unordered | {(b, a) for a, b in unordered}
    assert set(pairs.hand_object) == {(HAND, CUBE), (HAND, BOX), (HAND, TARGET)}
    assert pairs.containment == ((CUBE, BOX),) or set(pairs.containment) == {(CUBE, BOX), (TARGET, BOX)}
    assert (CUBE, TABLE) in pairs.support and (TABLE, CUBE) not in pairs.support
    assert pairs.hands == (HAND,)


def test_static_values_and_priority(truth):
    resting = state()
    assert truth.static(resting, CUBE, TABLE) == "Sup"
    assert truth.static(resting, TABLE, CUBE) == "Be"
    assert truth.static(resting, CUBE, BOX) == "none"          # 0.2 m apart
    lifted = state({CUBE: ((0.0, 0.0, 0.12), (0.02, 0.02, 0.02))}, support=RESTING_SUPPORT - {(CUBE, TABLE)})
    assert truth.static(lifted, CUBE, TABLE) == "Ab"
    assert truth.static(lifted, TABLE, CUBE) == "Be"
    beside = state({CUBE: ((-0.2 - 0.078 - 0.03, 0.0, 0.02), (0.02, 0.02, 0.02))})
    assert truth.static(beside, CUBE, BOX) == "Ar"             # 1 cm from the wall
    inside = (-0.2, 0.0, FLOOR_THICKNESS + 0.02)
    in_box = state({CUBE: (inside, (0.02, 0.02, 0.02))},
                   support=(RESTING_SUPPORT - {(CUBE, TABLE)}) | {(CUBE, BOX)})
    assert truth.static(in_box, CUBE, BOX) == "In"             # In beats Sup
    assert truth.static(in_box, BOX, CUBE) == "Ar"             # the walls rise above the cube's bottom
    hand_above = state({HAND: ((0.0, 0.0, 0.1), (0.04, 0.05, 0.04))})
    assert truth.static(hand_above, HAND, CUBE) == "Ab"
    assert truth.static(hand_above, CUBE, HAND) == "Be"
    hand_inside = state({HAND: (inside, (0.02, 0.02, 0.02))})
    assert truth.static(hand_inside, HAND, BOX) != "In"        # hands are never In
    stacked = state({CUBE: ((0.2, -0.1, 0.07), (0.02, 0.02, 0.02))},
                    support=(RESTING_SUPPORT - {(CUBE, TABLE)}) | {(CUBE, TARGET)})
    assert truth.static(stacked, CUBE, TARGET) == "Sup" and truth.static(stacked, TARGET, CUBE) == "Be"


def _track(positions: dict[int, list], **extra) -> list[PhysicsState]:
    count = len(next(iter(positions.values())))
    states = []
    for t in range(count):
        boxes = {entity: (track[t], RESTING[entity][1]) for entity, track in positions.items()}
        states.append(state(boxes, time=t / FPS, **{k: v[t] if isinstance(v, list) else v for k, v in extra.items()}))
    return states


def _line(start, step, count):
    return [tuple(np.add(start, np.multiply(step, t))) for t in range(count)]


def test_dynamic_getting_close_moving_apart_and_stable(truth):
    approach = _track({HAND: _line((0.3, 0.0, 0.2), (-0.01, 0, 0), 12)})  # 0.3 m/s towards the cube
    # frame 0: the trailing window holds one frame, so no distance change is seen yet
    assert set(truth.dynamic_values(approach)[(HAND, CUBE)][1:]) == {"GC"}
    leave = _track({HAND: _line((0.1, 0.0, 0.2), (0.01, 0, 0), 12)})
    assert set(truth.dynamic_values(leave)[(HAND, CUBE)][1:]) == {"MA"}
    still = _track({HAND: _line((0.3, 0.0, 0.2), (0, 0, 0), 12)})
    assert set(truth.dynamic_values(still)[(HAND, CUBE)]) == {"S"}
    crawl = _track({HAND: _line((0.3, 0.0, 0.2), (-0.0005, 0, 0), 12)})  # 1.5 cm/s: below the GC rate
    assert set(truth.dynamic_values(crawl)[(HAND, CUBE)]) == {"S"}


def test_dynamic_moving_together_then_halting_together(truth):
    moving = _line((0.0, 0.0, 0.02), (0.01, 0, 0), 8)
    track = moving + [moving[-1]] * 6
    hand = [(x, y, z + 0.06) for x, y, z in track]
    contacts = {(HAND, CUBE): 0.001}
    states = _track({CUBE: track, HAND: hand}, contacts=contacts, support=set())
    values = truth.dynamic_values(states)[(HAND, CUBE)]
    assert values[:6] == ["MT"] * 6
    assert "HT" in values[6:10] and values[-1] == "S"
    assert values.index("HT") > 0


def test_dynamic_fixed_moving_together_when_sliding_on_the_table(truth):
    track = _line((0.0, 0.0, 0.02), (0.008, 0, 0), 12)
    states = _track({CUBE: track})
    assert set(truth.dynamic_values(states)[(TABLE, CUBE)]) == {"FMT"}
    lifted = [(x, y, z + 0.1) for x, y, z in track]
    states = _track({CUBE: lifted}, support=RESTING_SUPPORT - {(CUBE, TABLE)})
    assert "FMT" not in truth.dynamic_values(states)[(TABLE, CUBE)]  # no contact, no FMT


def test_trailing_window_lags_the_centred_one():
    track = [(0.3, 0.0, 0.2)] * 6 + _line((0.3, 0.0, 0.2), (-0.01, 0, 0), 6)
    centred = GroundTruth(_scene(), GroundTruthConfig(window_alignment="centered"), FPS).dynamic_values(
        _track({HAND: track}))[(HAND, CUBE)]
    trailing = GroundTruth(_scene(), GroundTruthConfig(), FPS).dynamic_values(_track({HAND: track}))[(HAND, CUBE)]
    assert centred.index("GC") < trailing.index("GC")


def test_derived_predicates(truth):
    frames = [state(), state(attachments={(HAND, CUBE)}), state(attachments={(HAND, CUBE)}), state(), state()]
    frames[3] = state(support=RESTING_SUPPORT)
    scripts = [FrameScript(None, "idle"), FrameScript(HAND, "grasp"), FrameScript(HAND, "hold"),
               FrameScript(HAND, "release"), FrameScript(HAND, "retreat")]
    inside = (-0.2, 0.0, FLOOR_THICKNESS + 0.02)
    frames[2] = state({CUBE: (inside, (0.02, 0.02, 0.02))}, attachments={(HAND, CUBE)},
                      support=RESTING_SUPPORT - {(CUBE, TABLE)})
    result = GroundTruth(_scene(), GroundTruthConfig(), FPS).compute(frames, scripts)

    def value(t, name, subject, obj):
        return next(p.value for p in result[t] if p.key == (name, subject, obj))

    assert [value(t, "grasp", HAND, CUBE) for t in range(5)] == ["N", "T", "T", "N", "N"]
    assert [value(t, "release", HAND, CUBE) for t in range(5)] == ["N", "N", "N", "T", "N"]
    assert [value(t, "active_hand", HAND, -1) for t in range(5)] == ["N", "T", "T", "T", "N"]
    assert [value(t, "containment_event", CUBE, BOX) for t in range(5)] == ["N", "N", "T", "N", "N"]
    assert [value(t, "support_event", CUBE, TABLE) for t in range(5)] == ["N", "N", "N", "T", "N"]
    assert all(p.confidence == 1.0 and set(p.evidence.values()) == {1.0} for p in result[2])
    keys = [p.key for p in result[0]]
    assert len(keys) == len(set(keys))  # one value per stream per frame
    assert [p.key for p in result[0]] == [p.key for p in result[4]]  # same streams every frame


def test_release_waits_until_the_fingers_leave_the_object(truth):
    touching = {tuple(sorted(pair)): -1e-4 for pair in RESTING_SUPPORT} | {tuple(sorted((HAND, CUBE))): 0.001}
    held = {(HAND, CUBE)}
    frames = [state(contacts=touching, attachments=held), state(contacts=touching, attachments=held),
              state(contacts=touching), state(contacts=touching), state(), state()]  # weld off at 2, apart at 4
    scripts = [FrameScript(HAND, "hold")] * 2 + [FrameScript(HAND, "release")] * 2 + [FrameScript(HAND, "retreat")] * 2
    regrasp = frames[:3] + [state(contacts=touching, attachments=held), state(), state()]
    for sequence in (frames, regrasp):   # regrasp: the second let-go counts, the aborted one not twice
        result = truth.compute(sequence, scripts)
        release = [next(p.value for p in frame if p.key == ("release", HAND, CUBE)) for frame in result]
        assert release == ["N", "N", "N", "N", "T", "N"]


def test_config_refuses_bad_values():
    from predrel_ros.core.errors import UserError
    from predrel_ros.tools.simulator.config import GenerationConfig, SceneConfig

    with pytest.raises(UserError, match="GroundTruthConfig.contact_distance_m"):
        GroundTruthConfig(contact_distance_m=0)
    with pytest.raises(UserError, match="window_alignment"):
        GroundTruthConfig(window_alignment="future")
    with pytest.raises(UserError, match="SceneConfig.cube_half_size"):
        SceneConfig(cube_half_size=(0.03, 0.01))
    with pytest.raises(UserError, match="GenerationConfig.formats"):
        GenerationConfig(formats=("avi",))
    with pytest.raises(UserError, match="GenerationConfig.frames"):
        GenerationConfig(frames=10)
