"""Which reference entity each evaluated entity stands for, frame by frame.

Perception names entities by its own track ids; the reference (ground truth, or the clean twin
pipeline, which runs a tracker of its own) by others, and two trackers that differ once never
agree on ids again. Predicates can only be compared once both name the same entities, so every
frame's evaluated entities are matched one-to-one to the reference entities of the content they
were computed from: same detector class, box IoU at least `min_iou`, Hungarian assignment on
1 - IoU. When the two sides share no class name at all (a model with its own vocabulary) the class
is ignored. The offline evaluator (`predrel eval`) and the live reliability monitor
(`reliability.monitor`, clean_twin and ground_truth modes) both use it.

The association is per frame, so a predicate about "the hand and the cube" is judged at every frame
by what the pipeline said about the entities that were there; a track interruption or an identity
switch still shows, through the pipeline's own state (a new track restarts its dynamic window,
q_trk and q_tmp), but not as a second stream. Entities without a partner (false detections,
duplicates) have no reference: their predicates are left out, as the paper leaves out frames
without a reference.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from predrel_ros.core.boxes import box_iou
from predrel_ros.core.entities import Entity
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate

#: box IoU an entity needs with its partner by default (the reliability node's `match_iou`)
MIN_IOU = 0.3


def associate(evaluated: Sequence[Entity], reference: Sequence[Entity], min_iou: float = MIN_IOU) -> dict[int, int]:
    """evaluated entity id -> reference entity id (see the module docstring)."""
    if not evaluated or not reference:
        return {}
    iou = box_iou(np.array([e.box for e in evaluated]), np.array([r.box for r in reference]))
    labels_e = [e.label for e in evaluated]
    labels_r = [r.label for r in reference]
    if set(labels_e) & set(labels_r):
        same = np.array([[le == lr for lr in labels_r] for le in labels_e])
        iou = np.where(same, iou, 0.0)
    rows, cols = linear_sum_assignment(1.0 - iou)
    return {evaluated[r].id: reference[c].id for r, c in zip(rows, cols) if iou[r, c] >= min_iou}


def renamed(estimates: Iterable[PredicateEstimate], ids: Mapping[int, int]) -> tuple[list[PredicateEstimate], int]:
    """The estimates whose entities all have a partner in `ids` (own id -> other side's id),
    renamed into the other side's ids, and the number left out (an entity without a partner)."""
    kept: list[PredicateEstimate] = []
    left_out = 0
    for estimate in estimates:
        subject = ids.get(estimate.subject)
        obj = NO_OBJECT if estimate.object == NO_OBJECT else ids.get(estimate.object)
        if subject is None or obj is None:
            left_out += 1
            continue
        kept.append(PredicateEstimate.trusted(estimate.name, subject, obj, estimate.value, estimate.confidence,
                                              estimate.evidence, estimate.frame_index, estimate.group))
    return kept, left_out
