"""Fixtures of the io tests: small synthetic frames with ground truth (no simulator needed)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from predrel_ros.core.entities import Entity
from predrel_ros.core.frame import CameraIntrinsics, Frame
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.sources.dataset import EntityInfo, EpisodeMeta

WIDTH, HEIGHT = 64, 48
CAMERA = CameraIntrinsics(width=WIDTH, height=HEIGHT, fx=55.0, fy=55.0, cx=31.5, cy=23.5)


def make_frames(count: int = 4, seed: int = 0) -> list[Frame]:
    rng = np.random.default_rng(seed)
    frames = []
    for index in range(count):
        rgb = rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
        depth = rng.uniform(0.3, 2.0, (HEIGHT, WIDTH)).astype(np.float32)
        depth[0, 0] = np.nan
        mask = np.zeros((HEIGHT, WIDTH), bool)
        mask[10 + index:20 + index, 5:30] = True
        cube = Entity(id=3, label="cube", role="manipulated_object", box=(5, 10 + index, 30, 20 + index),
                      mask=mask, visibility=0.75, centroid=(17.0, 15.0 + index, 0.8),
                      point3d=(0.1, 0.05, 0.8), frame_index=index)
        hand = Entity(id=1, label="hand", role="right_hand", box=(0, 0, 0, 0), mask=np.zeros_like(mask),
                      visibility=0.0, centroid=(0.0, 0.0), frame_index=index)
        predicates = [PredicateEstimate("contact", 1, 3, "T" if index % 2 else "N", frame_index=index),
                      PredicateEstimate("static", 3, 1, "Ab", frame_index=index),
                      PredicateEstimate("active_hand", 1, -1, "T", frame_index=index)]
        frames.append(Frame(index=index, stamp_ns=1_000_000_000 + index * 33_333_333, rgb=rgb, depth=depth,
                            camera=CAMERA, entities=[hand, cube], predicates=predicates,
                            primitive=("approach", "grasp")[index % 2], source="test",
                            attributes={"script_primitive": ("approach", "lift")[index % 2]}))
    return frames


def make_meta(count: int = 4, name: str = "ep00000") -> EpisodeMeta:
    return EpisodeMeta(name=name, num_frames=count, fps=30.0, width=WIDTH, height=HEIGHT, camera=CAMERA,
                       camera_pose=np.eye(4).tolist(), template="pick_and_place",
                       scenario_group="object_surface", seed=7, split="train",
                       entities=[EntityInfo(1, "hand", "right_hand"), EntityInfo(3, "cube", "manipulated_object")])


def assert_same_ground_truth(read: Frame, written: Frame, depth_atol: float = 0.0) -> None:
    assert read.index == written.index and read.stamp_ns == written.stamp_ns
    np.testing.assert_array_equal(read.rgb, written.rgb)
    np.testing.assert_allclose(read.depth, written.depth, atol=depth_atol, equal_nan=True)
    assert read.camera == written.camera
    assert read.primitive == written.primitive
    assert len(read.entities) == len(written.entities)
    for got, want in zip(read.entities, written.entities):
        assert (got.id, got.label, got.role) == (want.id, want.label, want.role)
        np.testing.assert_allclose(got.box, want.box, atol=1e-4)
        if got.mask is None:  # Entity.msg sends an all-false mask as "no mask"
            assert not want.mask.any()
        else:
            np.testing.assert_array_equal(got.mask, want.mask)
        assert abs(got.visibility - want.visibility) < 1e-6
        np.testing.assert_allclose(got.centroid, want.centroid, atol=1e-4)
        if want.point3d is None:
            assert got.point3d is None
        else:
            np.testing.assert_allclose(got.point3d, want.point3d, atol=1e-6)
    assert [(p.name, p.subject, p.object, p.value, p.confidence) for p in read.predicates] == \
        [(p.name, p.subject, p.object, p.value, p.confidence) for p in written.predicates]


@pytest.fixture
def synthetic():
    """make_frames(count, seed), make_meta(count, name), assert_same_ground_truth(read, written)."""
    return SimpleNamespace(make_frames=make_frames, make_meta=make_meta,
                           assert_same_ground_truth=assert_same_ground_truth, camera=CAMERA)
