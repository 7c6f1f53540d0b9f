import numpy as np

from predrel_ros.degradations import CLEAN, Condition
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate
from predrel_ros.tools.evaluation.sequences import EpisodeSequences, StreamIndex, scope_keys


def estimate(name, subject, obj, value, confidence=0.5):
    return PredicateEstimate(name, subject, obj, value, confidence)


def test_fill_maps_ids_orders_unordered_keys_and_leaves_gaps_unknown():
    index = StreamIndex([("contact", 1, 2), ("static", 2, 1), ("active_hand", 1, NO_OBJECT)])
    delivered = [(0, 0), (2, 1)]                      # frame 1 dropped, frame 2 repeats frame 1's content
    estimates = [[estimate("contact", 20, 10, "T", 0.9), estimate("static", 20, 10, "Ab"),
                  estimate("active_hand", 10, NO_OBJECT, "T"), estimate("contact", 10, 99, "N")],
                 [estimate("contact", 10, 20, "N", 0.4)]]
    mappings = [{10: 1, 20: 2}, {10: 1, 20: 2}]
    y, c, present = index.fill(delivered, estimates, mappings, 3)
    assert y.tolist() == [[1, -1, 0], [3, -1, -1], [1, -1, -1]]
    assert np.allclose(c[0], [0.9, 0.0, 0.4]) and present.tolist()[0] == [True, False, True]
    assert scope_keys(estimates) == [("contact", 10, 20), ("contact", 10, 99), ("static", 20, 10),
                                     ("active_hand", 10, NO_OBJECT)]


def test_save_and_load_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    shape = (2, 3, 5)
    original = EpisodeSequences("ep", "hand_object", [("contact", 1, 2), ("static", 2, 1), ("grasp", 1, 2)],
                                [CLEAN, Condition("blur", 3)], rng.integers(-1, 3, shape).astype(np.int8),
                                rng.random(shape).astype(np.float32), rng.random(shape) > 0.5,
                                rng.random((2, 5)) > 0.5, rng.integers(-1, 2, shape[1:]).astype(np.int8),
                                np.ones(shape[1:], np.float32), rng.random(shape[1:]).astype(np.float32), "gt")
    back = EpisodeSequences.load(original.save(tmp_path / "ep.npz"))
    assert back.keys == original.keys and back.conditions == original.conditions and back.reference == "gt"
    for name in ("y", "c", "present", "delivered", "y_ref", "c_ref", "c_clean"):
        assert np.array_equal(getattr(back, name), getattr(original, name))
