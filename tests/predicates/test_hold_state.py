import pytest
from hypothesis import given
from hypothesis import strategies as st

from predrel_ros.predicates.config import GraspConfig
from predrel_ros.predicates.hold_state import HoldState, motion_codes
from predrel_ros.predicates.rules import FMT, GC, MT, UNK, N, S, T

CONFIG = GraspConfig(onset_frames=3)
CODES = motion_codes(CONFIG)


def run(frames):
    """(grasp, release) codes of a sequence of (contact code, dynamic code)."""
    hold = HoldState()
    return [tuple(value[0] for value in hold.update((c, 0.8), (d, 0.5), CONFIG, CODES)) for c, d in frames]


def test_a_hold_begins_onset_frames_after_the_contacts_first_motion_and_survives_stillness_and_shape_changes():
    out = run([(N, S), (T, S), (T, FMT), (T, MT), (T, S), (T, GC), (T, S), (N, S), (N, S)])
    assert [g for g, _ in out] == [N, N, N, N, T, T, T, N, N]     # FMT at 2: frames 2, 3, 4
    assert [r for _, r in out] == [N, N, N, N, N, N, N, T, N]     # release on the frame contact ends


def test_a_long_touch_that_shows_motion_only_at_its_end_is_no_hold():
    """A hand resting against a container while it inserts what it holds (dev seed 1313): contact
    for many frames, the pair moving on each other only in the last two."""
    out = run([(T, S)] * 6 + [(T, FMT), (T, FMT), (N, FMT)])
    assert all(g == N for g, _ in out) and all(r == N for _, r in out)


def test_onset_counts_contact_frames_after_the_motion_whatever_the_dynamic_then():
    out = run([(T, MT), (T, S), (T, UNK), (N, S), (T, S), (T, S), (T, S), (T, S)])
    assert [g for g, _ in out] == [N, N, T, N, N, N, N, N]     # a new contact needs its own motion


def test_a_touch_without_motion_is_no_grasp_and_ends_without_release():
    out = run([(T, S)] * 6 + [(N, S)])
    assert all(g == N for g, _ in out) and all(r == N for _, r in out)


def test_an_object_the_other_hand_holds_is_taken_without_motion():
    """A handover: the receiving hand closes on the object while both hands hold still (seed 1393
    `ep0009_handover`: 20 frames of S, the grasp found 24 frames late when it waited for motion)."""
    hold = HoldState()
    out = [hold.update((T, 0.8), (S, 0.5), CONFIG, CODES, handed_over=True)[0][0] for _ in range(5)]
    assert out == [N, N, T, T, T]                               # onset_frames (3) after the first contact


def test_unk_contact_is_unk_and_keeps_the_state():
    out = run([(T, MT)] * 3 + [(UNK, UNK), (T, S), (UNK, UNK), (N, S)])
    assert out == [(N, N), (N, N), (T, N), (UNK, UNK), (T, N), (UNK, UNK), (N, T)]


def test_margins_are_the_contact_margin():
    hold = HoldState()
    assert hold.update((T, 0.3), (MT, 0.9), GraspConfig(onset_frames=1), CODES) == ((T, 0.3), (N, 0.3))
    assert hold.update((N, 0.7), (S, 0.9), GraspConfig(onset_frames=1), CODES) == ((N, 0.7), (T, 0.7))


def test_config_refuses_bad_values():
    with pytest.raises(ValueError, match="onset_frames"):
        GraspConfig(onset_frames=0)
    with pytest.raises(ValueError, match="motion"):
        GraspConfig(motion=("XX",))


@given(st.lists(st.tuples(st.sampled_from([N, T, UNK]), st.sampled_from([S, MT, FMT, GC, UNK])), max_size=40))
def test_every_release_ends_a_grasp_and_grasp_implies_contact(frames):
    out = run(frames)
    previous_grasp = N
    for (contact, _), (grasp, release) in zip(frames, out):
        if grasp == T:
            assert contact == T
        if release == T:
            assert contact == N and previous_grasp in (T, UNK)
        if grasp != UNK:
            previous_grasp = grasp


def hold_frames(carried, frames, still_hold_frames=5):
    """(grasp, release) codes of a contact with motion held `frames` frames, then ended; carried: the
    per-frame carry (True / False / None: cannot be told)."""
    config = GraspConfig(onset_frames=1, still_hold_frames=still_hold_frames)
    hold = HoldState()
    out = [tuple(v[0] for v in hold.update((T, 0.8), (FMT, 0.5), config, CODES, carried=carried))
           for _ in range(frames)]
    return out + [tuple(v[0] for v in hold.update((N, 0.8), (S, 0.5), config, CODES))]


def test_a_short_hold_that_never_carried_the_object_ends_without_a_release():
    """Seed 1453: a hand touching a box the other hand holds, or an object it reaches past, read as a
    hold of 2-16 frames that never moved the object; a box held still for the other hand: 98-105."""
    assert hold_frames(False, 4)[-1] == (N, N)
    assert [g for g, _ in hold_frames(False, 4)][:4] == [T] * 4          # the grasp itself is unchanged
    assert hold_frames(False, 5)[-1] == (N, T)                            # held still_hold_frames: a grip
    assert hold_frames(True, 2)[-1] == (N, T)                             # carried: a grip
    assert hold_frames(None, 2)[-1] == (N, T)                             # no 3D motion: every hold
    assert hold_frames(False, 2, still_hold_frames=None)[-1] == (N, T)


def test_a_carry_counts_from_the_contacts_first_frame_and_is_forgotten_with_it():
    config = GraspConfig(onset_frames=3, still_hold_frames=50)
    hold = HoldState()
    steps = [((T, 0.8), (S, 0.5), True), ((T, 0.8), (MT, 0.5), False), ((T, 0.8), (S, 0.5), False),
             ((T, 0.8), (S, 0.5), False), ((N, 0.8), (S, 0.5), False),          # carried before the hold
             ((T, 0.8), (MT, 0.5), False), ((T, 0.8), (S, 0.5), False), ((T, 0.8), (S, 0.5), False),
             ((N, 0.8), (S, 0.5), False)]                                        # a new contact, never carried
    out = [tuple(v[0] for v in hold.update(c, d, config, CODES, carried=k)) for c, d, k in steps]
    assert [r for _, r in out] == [N, N, N, N, T, N, N, N, N]


def test_still_hold_frames_must_be_positive():
    with pytest.raises(ValueError, match="still_hold_frames"):
        GraspConfig(still_hold_frames=0)
