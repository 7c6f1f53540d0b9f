from hypothesis import given
from hypothesis import strategies as st

from predrel_ros.predicates.config import ContactConfig, Threshold
from predrel_ros.predicates.enclosed_contact import EnclosedContact

CONFIG = ContactConfig(hold_separation_rise_m=Threshold(0.004, 0.002), hold_separation_max_m=0.03,
                       hold_separation_frames=4, hold_separation_area_change=0.1)


def decisions(separations, areas=None, config=CONFIG):
    state = EnclosedContact(config.hold_separation_frames)
    out = []
    for separation, area in zip(separations, areas or [100.0] * len(separations)):
        value, threshold = state.test(separation, area, config)
        out.append(value <= threshold.value)
    return out


def test_contact_ends_on_the_frame_the_separation_rises_above_its_hold_level():
    held = [0.010, 0.011, 0.010, 0.012, 0.011]
    assert decisions(held + [0.0145, 0.016, 0.020]) == [True] * 6 + [False, False]   # median 0.011 + 0.004
    assert decisions([0.031]) == [False]                                              # beyond the cap: never T


def test_a_hand_that_closes_again_touches_again_and_one_never_in_contact_touches_within_the_cap():
    assert decisions([0.010, 0.010, 0.016, 0.013, 0.0115]) == [True, True, False, False, True]  # back within 0.002
    assert decisions([0.05, 0.04, 0.029]) == [False, False, True]


def test_other_parts_of_the_object_coming_into_view_start_a_new_level_instead_of_ending_the_contact():
    separations = [0.010, 0.010, 0.010, 0.020, 0.020, 0.026]
    assert decisions(separations, [100, 100, 104, 130, 131, 132]) == [True] * 5 + [False]   # 30 % more in view
    assert decisions(separations, [100, 100, 104, 108, 109, 110]) == [True] * 3 + [False] * 3


def test_the_threshold_carries_the_margin_scale():
    state = EnclosedContact(4)
    state.test(0.010, 100.0, CONFIG)
    value, threshold = state.test(0.012, 100.0, CONFIG)
    assert (value, threshold.value, threshold.eta) == (0.012, 0.014, 0.002)


@given(st.floats(0.0, 0.025), st.lists(st.floats(-0.0019, 0.0019), min_size=1, max_size=30))
def test_a_separation_that_stays_within_half_the_rise_never_ends_the_contact(start, wobble):
    separations = [min(max(start + w, 0.0), 0.03) for w in wobble]
    assert all(decisions([start, *separations]))
