import numpy as np
import pytest

from predrel_ros.core.entities import MANIPULATED_OBJECT, RIGHT_HAND, Entity
from predrel_ros.predicates.confidence import CalibratedConfidence
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.selection import (
    DEFAULT_GRID,
    agreement,
    applicable_grid,
    fit_calibrated_confidence,
    select_confidence_weights,
    select_thresholds,
    shippable_config,
)


def rect(track_id, role, x, y, w=20, h=20):
    mask = np.zeros((240, 320), bool)
    mask[y:y + h, x:x + w] = True
    return Entity(id=track_id, label=role, role=role, box=[x, y, x + w - 1, y + h - 1], mask=mask)


def validation_sequence(gaps, reference_contact_gap=2):
    """Hand and object with the given free gaps (frame px at 320x240); the reference says contact
    when the gap is at most `reference_contact_gap` px, i.e. 4 reference px."""
    frames = []
    for t, gap in enumerate(gaps):
        entities = [rect(1, RIGHT_HAND, 100, 50), rect(2, MANIPULATED_OBJECT, 120 + gap, 50)]
        value = "T" if gap <= reference_contact_gap else "N"
        frames.append((t, entities, [PredicateEstimate("contact", 1, 2, value, frame_index=t)]))
    return frames


def test_threshold_selection_recovers_the_reference_contact_distance():
    sequences = [validation_sequence([0, 1, 2, 3, 4, 2, 2, 5, 0, 3]), validation_sequence([2, 2, 3, 6, 1])]
    grid = {"contact.distance.value": (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)}
    result = select_thresholds(sequences, grid)
    # gaps of 2 px (4 reference px) must be T, gaps of 3 px (6 reference px) N
    assert 4.0 <= result.config.contact.distance.value < 6.0
    assert result.agreement_before["contact"] < 1.0
    assert result.agreement_after["contact"] == 1.0
    assert result.scores["contact.distance.value"][3.0] == pytest.approx(result.agreement_before["contact"])
    # only the selected field changed
    assert result.config.replace("contact.distance.value", 3.0) == PredicateConfig()


def test_selection_refuses_bad_input():
    with pytest.raises(ValueError, match="no config field"):
        select_thresholds([validation_sequence([0])], {"contact.radius": (1.0,)})
    with pytest.raises(ValueError, match="at least one"):
        select_thresholds([])


def test_weights_and_calibrated_confidence_from_validation_data():
    rng = np.random.default_rng(3)
    sequences = [validation_sequence(rng.integers(0, 6, size=40).tolist())]
    config = select_confidence_weights(PredicateConfig(), sequences, min_samples=10)
    weights = config.confidence.weights["contact"]
    assert sum(weights.values()) == pytest.approx(1.0)
    assert config.confidence.weights["static"] == PredicateConfig().confidence.weights["static"]  # no reference
    model = fit_calibrated_confidence(PredicateConfig(), sequences, min_samples=10)
    assert isinstance(model, CalibratedConfidence) and "contact" in model.coefficients
    assert agreement(PredicateConfig(), sequences)["contact"] < 1.0


def test_selection_with_depth_chooses_the_3d_thresholds():
    """Frames with depth and intrinsics reach the extractor: the 3D support gap is selected between
    the heights the reference calls Sup (4 mm) and Ab (14 mm)."""
    from tabletop_depth import HEIGHT, WIDTH, K, region, tabletop_depth

    from predrel_ros.core.entities import SURFACE
    from predrel_ros.core.frame import CameraIntrinsics
    camera = CameraIntrinsics(WIDTH, HEIGHT, fx=K[0, 0], fy=K[1, 1], cx=K[0, 2], cy=K[1, 2])
    block = region(140, 100, 180, 140)
    entities = [Entity(id=2, label="cube", role=MANIPULATED_OBJECT, box=[140, 100, 179, 139], mask=block),
                Entity(id=4, label="table", role=SURFACE, box=[0, 0, WIDTH - 1, HEIGHT - 1], mask=~block)]
    sequence = []
    for t, height in enumerate((0.004, 0.014, 0.004, 0.014)):
        depth, _ = tabletop_depth({"block": (block, height)})
        value = "Sup" if height < 0.01 else "Ab"
        sequence.append((t, entities, [PredicateEstimate("static", 2, 4, value, frame_index=t)], depth, camera))
    base = PredicateConfig().replace("static.support_gap_m.value", 0.02)
    result = select_thresholds([sequence], {"static.support_gap_m.value": (0.002, 0.008, 0.02)}, base=base)
    assert result.config.static.support_gap_m.value == 0.008
    assert result.agreement_before["static"] == 0.5 and result.agreement_after["static"] == 1.0
    assert agreement(result.config, [[frame[:3] for frame in sequence]])["static"] < 1.0   # without depth: 2D


def test_the_grid_leaves_out_thresholds_switched_off_and_refuses_bad_entries():
    image_only = PredicateConfig().replace("static.support_gap_m", None).replace("dynamic.moving_speed_mps", None)
    grid = applicable_grid(DEFAULT_GRID, image_only)
    assert "static.support_gap_m.value" not in grid and "dynamic.moving_speed_mps.value" not in grid
    no_hysteresis = PredicateConfig().replace("contact.hold_exit_fraction", None)
    assert "contact.hold_exit_fraction" not in applicable_grid(DEFAULT_GRID, no_hysteresis)
    no_creep = PredicateConfig().replace("contact.hold_separation_creep_m", None)
    assert "contact.hold_separation_creep_m" not in applicable_grid(DEFAULT_GRID, no_creep)
    no_carry = PredicateConfig().replace("contact.carried_relative_speed", None).replace(
        "contact.hold_separation_begin_m", None)
    assert not {"contact.carried_relative_speed", "contact.hold_separation_begin_m"} & set(
        applicable_grid(DEFAULT_GRID, no_carry))
    assert "static.around_distance_m.value" in grid and "contact.distance.value" in grid
    assert set(applicable_grid(DEFAULT_GRID, PredicateConfig())) == set(DEFAULT_GRID)
    with pytest.raises(ValueError, match="no candidate"):
        applicable_grid({"contact.distance.value": ()}, PredicateConfig())
    with pytest.raises(ValueError, match="no config field"):
        applicable_grid({"contact.radius.value": (1.0,)}, PredicateConfig())


def test_the_selected_config_is_a_complete_file(tmp_path):
    from predrel_ros.core.config_io import read_data, write_data
    from predrel_ros.core.package_files import config_file
    from predrel_ros.reliability.trust import TrustConfig

    shipped = read_data(config_file("predicates.yaml"))
    selected = PredicateConfig.load(config_file("predicates.yaml"), section="predicates").replace(
        "contact.distance.value", 5.0)
    path = write_data(tmp_path / "predicates.yaml", shippable_config(selected, shipped))
    assert PredicateConfig.load(path, section="predicates") == selected
    assert TrustConfig.load(path, section="trust") == TrustConfig.load(config_file("predicates.yaml"), section="trust")
    assert set(read_data(path)) == set(shipped)
