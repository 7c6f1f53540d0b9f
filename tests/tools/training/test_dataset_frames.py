import numpy as np
import pytest

from predrel_ros.sources.dataset import open_dataset
from predrel_ros.tools.training.dataset_frames import dataset_classes, labelled_frames


def test_classes_are_the_sorted_train_labels(synthetic_dataset):
    assert dataset_classes(open_dataset(synthetic_dataset)) == ["bar", "box", "disc"]


def test_frames_carry_the_visible_masks_of_known_classes(synthetic_dataset):
    dataset = open_dataset(synthetic_dataset)
    episodes = dataset.episodes("train")
    every = list(labelled_frames(episodes, ["bar", "box", "disc"]))
    assert len(every) == sum(len(e) for e in episodes)
    assert len(list(labelled_frames(episodes, ["bar", "box", "disc"], frame_step=2))) == len(every) // 2
    first = episodes[0].frame(0)
    sample = every[0]
    assert np.array_equal(sample.image, first.rgb)
    assert sample.masks.shape[0] == len(first.entities)
    only_discs = next(labelled_frames(episodes, ["disc"]))
    assert set(only_discs.labels.tolist()) <= {0}
    assert only_discs.masks.shape[0] == sum(e.label == "disc" for e in first.entities)


def test_degraded_frames_keep_the_clean_ground_truth(synthetic_dataset):
    episodes = open_dataset(synthetic_dataset).episodes("test")
    clean = next(labelled_frames(episodes, ["bar", "box", "disc"]))
    blurred = next(labelled_frames(episodes, ["bar", "box", "disc"], degradation=("blur", 3, 0)))
    assert not np.array_equal(clean.image, blurred.image)
    assert np.array_equal(clean.masks, blurred.masks) and np.array_equal(clean.labels, blurred.labels)


def test_frame_step_must_be_positive(synthetic_dataset):
    with pytest.raises(ValueError, match="frame_step"):
        next(labelled_frames(open_dataset(synthetic_dataset).episodes("train"), ["box"], frame_step=0))


def test_role_map_takes_each_class_usual_role(synthetic_dataset):
    from predrel_ros.tools.training.dataset_frames import dataset_role_map

    assert dataset_role_map(open_dataset(synthetic_dataset), ["bar", "box", "disc", "unseen"]) == {
        "bar": "manipulated_object", "box": "manipulated_object", "disc": "manipulated_object"}


def test_controlled_set_classes_roles_and_recipe(controlled_dataset):
    from predrel_ros.tools.simulator.scene import CLASS_LABELS
    from predrel_ros.tools.training.dataset_frames import dataset_role_map, generation_command

    dataset = open_dataset(controlled_dataset)
    classes = dataset_classes(dataset)
    assert classes == list(CLASS_LABELS) and "hand" in classes
    roles = dataset_role_map(dataset, classes, split=None)
    assert "hand" not in roles  # a generic hand: the pipeline gives each hand track its side
    assert roles["table"] == "surface"
    assert all(roles[label] == "container" for label in ("box", "bowl") if label in roles)
    command = generation_command(dataset)
    assert command.startswith(f"predrel dataset generate --episodes {len(dataset)} --seed 0 --out {controlled_dataset}")
    assert "--size 128x96" in command
    assert command.endswith(" --templates insert,handover,stack")   # the fixture's subset, in its order
    sample = next(labelled_frames(dataset.episodes(), classes))
    assert sample.image.shape == (96, 128, 3) and sample.masks.shape[1:] == (96, 128)
    assert classes.index("table") in sample.labels.tolist()
