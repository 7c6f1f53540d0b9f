import math

from hypothesis import given
from hypothesis import strategies as st

from predrel_ros.predicates.co_motion import moving_together

SPEED = 0.05 / 30          # 5 cm/s in metres per frame at 30 Hz


def test_an_object_carried_at_the_hands_velocity_moves_with_it():
    hand, cube = (-0.030, 0.0026, -0.0054), (-0.030, 0.0027, -0.0042)     # seed 1353 ep0002, ~0.9 m/s
    assert moving_together(hand, cube, SPEED, 0.5)


def test_an_object_left_behind_or_a_hand_standing_still_is_not_carried():
    assert not moving_together((0.005, 0.0, 0.0), (0.0, 0.0, 0.0), SPEED, 0.5)     # withdrawn from it
    assert not moving_together((0.001, 0.0, 0.0), (0.001, 0.0, 0.0), SPEED, 0.5)   # both slower than 5 cm/s
    assert not moving_together((0.004, 0.0, 0.0), (0.004, -0.003, 0.0), SPEED, 0.5)  # falling away from it


vectors = st.tuples(*[st.floats(-0.05, 0.05)] * 3)


@given(vectors, vectors, st.floats(0.05, 1.0))
def test_carried_means_the_hand_moves_and_the_difference_is_within_the_share(hand, other, share):
    together = moving_together(hand, other, SPEED, share)
    speed = math.hypot(*hand)
    assert together == (speed > SPEED and math.dist(hand, other) <= share * speed)
    if together:
        assert math.hypot(*other) >= (1 - share) * speed - 1e-12     # the object moves too
