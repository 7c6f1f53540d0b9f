"""Labelled frames from a dataset folder (`predrel_ros.sources.dataset`, e.g. the controlled set).

Each ground-truth entity whose label is one of the detector's classes becomes an instance with its
visible mask; entities of other labels are left out. The class list is the manifest's (the
controlled set: hand, cube, cylinder, bar, box, bowl, table; one hand class, the side of a hand is
its role, not its appearance), else the sorted labels found in the training split. For evaluation under an image
degradation the frame is degraded as the replay node does (`Degrader.apply_image`, occluders placed
on the ground-truth entities), while the ground truth stays that of the clean frame.
`dataset_role_map` gives the roles.yaml of a model trained on the dataset.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.degradations.table import OCCLUSION_KINDS
from predrel_ros.sources.dataset import Dataset, EpisodeReader
from predrel_ros.tools.training.data import LabelledImage


def dataset_classes(dataset: Dataset, split: str = "train") -> list[str]:
    """The detector classes of a dataset: the manifest's `classes` list when it has one (the
    controlled set's CLASS_LABELS), else the sorted labels of the entities in `split`."""
    declared = dataset.manifest.get("classes")
    if declared:
        return [str(name) for name in declared]
    labels = sorted({label for episode in dataset.episodes(split) for label in episode.labels})
    if not labels:
        raise UserError(f"dataset {dataset.root}: the {split} split has no labelled entities")
    return labels


def generation_command(dataset: Dataset) -> str | None:
    """The `predrel dataset generate` command that recreates a controlled dataset, from its manifest."""
    manifest = dataset.manifest
    if manifest.get("generator") != "predrel_ros.tools.simulator":
        return None
    config = manifest.get("config", {})
    parts = [f"predrel dataset generate --episodes {len(manifest['episodes'])} --seed {manifest['seed']}",
             f"--out {dataset.root}"]
    if "width" in config and "height" in config:
        parts.append(f"--size {config['width']}x{config['height']}")
    for key in ("fps", "frames", "camera"):
        if key in config:
            parts.append(f"--{key} {config[key]}")
    if manifest.get("template_cycle"):
        parts.append("--templates " + ",".join(manifest["template_cycle"]))
    return " ".join(parts)


def dataset_role_map(dataset: Dataset, class_names: Sequence[str], split: str = "train") -> dict[str, str]:
    """Each class's usual role in `split` (the roles.yaml of an exported model).

    A class seen only as left or right hand is left out: the perception pipeline treats it as a
    generic hand whose side it decides per track. Otherwise the most frequent role wins, a
    distractor role only when the class never plays another one (a cube is a manipulated object
    even if most cubes of the set are distractors).
    """
    from collections import Counter

    from predrel_ros.core.entities import DISTRACTOR, HAND_ROLES, ROLES

    counts: dict[str, Counter] = {name: Counter() for name in class_names}
    for episode in dataset.episodes(split):
        labels = episode.labels
        truth = episode.ground_truth
        for label, role in zip(truth["ent_label"].tolist(), truth["ent_role"].tolist()):
            if labels[label] in counts:
                counts[labels[label]][ROLES[role]] += 1
    mapping = {}
    for name, roles in counts.items():
        if not roles or set(roles) <= set(HAND_ROLES):
            continue
        ranked = sorted(roles.items(), key=lambda item: (item[0] == DISTRACTOR, -item[1], item[0]))
        mapping[name] = ranked[0][0]
    return mapping


def labelled_frames(episodes: Sequence[EpisodeReader], class_names: Sequence[str], frame_step: int = 1,
                    degradation: tuple[str, int, int] | None = None) -> Iterator[LabelledImage]:
    """Every `frame_step`-th frame of each episode as a LabelledImage.

    degradation: (kind, severity, seed) of an image degradation applied to the frames; episode i of
    `episodes` uses seed + i, so seed-dependent variants (illumination) differ across episodes.
    """
    if frame_step < 1:
        raise ValueError(f"frame_step must be >= 1, got {frame_step}")
    class_index = {name: i for i, name in enumerate(class_names)}
    for number, episode in enumerate(episodes):
        degrader = None
        if degradation is not None:
            from predrel_ros.degradations import Degrader

            kind, severity, seed = degradation
            degrader = Degrader(kind, severity, seed + number)
        for index in range(0, len(episode), frame_step):
            frame = episode.frame(index)
            if frame.entities is None:
                raise UserError(f"{episode.directory}: frame {frame.index} has no ground truth; "
                                f"training and evaluation need labelled episodes")
            kept = [e for e in frame.entities if e.label in class_index and e.mask is not None]
            image = frame.rgb if degrader is None else degrader.apply_image(frame.rgb, frame.index, kept)
            masks = (np.stack([e.mask for e in kept]) if kept
                     else np.zeros((0, frame.height, frame.width), bool))
            occluded = None
            if degrader is not None and degrader.kind in OCCLUSION_KINDS:
                occluded = degrader.occluder_mask(frame.rgb.shape, kept)
            yield LabelledImage(image, [class_index[e.label] for e in kept], masks, occluded)
