"""The embedded default model as shipped: complete, small, and finding what the predicates need on a
controlled scene it never saw (a fresh episode seed, not from the training set)."""
import json

import numpy as np
import onnx
import pytest
import yaml

from predrel_ros.core.boxes import box_iou
from predrel_ros.perception.config import DEFAULT_MODEL_DIR, PerceptionConfig
from predrel_ros.perception.labels import labels_from_onnx_metadata
from predrel_ros.perception.perceiver import Perceiver
from predrel_ros.tools.simulator.config import GenerationConfig
from predrel_ros.tools.simulator.episode import generate_episode

REQUIRED_ROLES = ("hand", "manipulated_object", "container")


def test_the_model_folder_is_complete_consistent_and_under_20_mb():
    files = {p.name: p for p in DEFAULT_MODEL_DIR.iterdir()}
    assert {"model.onnx", "model.pt2", "labels.txt", "roles.yaml", "metrics.json", "MODEL_CARD.md"} <= set(files)
    assert sum(p.stat().st_size for p in files.values()) < 20e6
    labels = files["labels.txt"].read_text().split()
    metadata = {p.key: p.value for p in onnx.load(str(files["model.onnx"])).metadata_props}
    assert labels_from_onnx_metadata(metadata) == labels
    assert set(yaml.safe_load(files["roles.yaml"].read_text())) <= set(labels)


def test_the_card_metrics_meet_the_goal_per_role():
    """Goal of the default model: clean box AP50 >= 0.90 and mask IoU >= 0.80 for hands, objects and
    containers on the held-out test split (metrics.json is what `predrel train evaluate` reran)."""
    clean = json.loads((DEFAULT_MODEL_DIR / "metrics.json").read_text())["conditions"]["clean"]
    roles = clean["per_group"]["per_class"]
    for role in REQUIRED_ROLES:
        assert roles[role]["box_ap50"] >= 0.90 and roles[role]["mean_mask_iou"] >= 0.80, (role, roles[role])


@pytest.mark.parametrize("template, seed", [("insert", 9001), ("pick_and_place", 9002)])
def test_finds_hands_objects_and_containers_on_an_unseen_episode(template, seed):
    episode = generate_episode(template, seed, GenerationConfig(width=320, height=240, frames=24))
    found = expected = 0
    with Perceiver(PerceptionConfig()) as perceiver:
        for frame in episode.frames:
            seen = perceiver.process(frame.rgb, frame.index, bgr=False)
            for truth in frame.entities:
                role = "hand" if truth.is_hand else truth.role
                if role not in REQUIRED_ROLES or truth.mask is None or truth.mask.sum() < 150:
                    continue
                expected += 1
                same_role = [e.box for e in seen if ("hand" if e.is_hand else e.role) == role]
                if same_role and box_iou(np.array([truth.box]), np.array(same_role)).max() >= 0.5:
                    found += 1
    # the card's clean recall is 1.00 for hands and containers, 0.92 for objects (lifted ones are missed most);
    # the model fine-tuned for occlusion (issue 17) misses the cube of pick_and_place 9002 in 11 of 24 frames
    # (37 of 48 found; the model before it: 6 of 24, 42 of 48)
    assert expected >= 40 and found >= 0.75 * expected, (found, expected)
