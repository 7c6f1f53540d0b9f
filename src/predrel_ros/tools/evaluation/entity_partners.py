"""Why a reference entity has no partner among the evaluated ones: the entity part of `absent`.

A predicate stream is absent when one of its entities has no partner (`reliability.association`:
same class, box IoU >= `match_iou`). Each reference entity of each clean frame is counted as one of
  - `matched`: it has a partner;
  - `other_class`: no partner, but an evaluated entity of another class covers it at `match_iou`
    (perception saw it and named it wrongly, e.g. a cube read as a cylinder);
  - `missed`: nothing of another class covers it either (not detected, lost by the tracker, or one
    detection standing for two objects of its class).
Counted per role, so a model for the predicates can be chosen on what they need (a box AP50 over a
test split does not see a class kept wrong over a whole episode).
"""
from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

import numpy as np

from predrel_ros.core.boxes import box_iou
from predrel_ros.core.entities import Entity

MATCHED, OTHER_CLASS, MISSED = "matched", "other_class", "missed"
OUTCOMES = (MATCHED, OTHER_CLASS, MISSED)


def partner_outcomes(evaluated: Sequence[Entity], reference: Sequence[Entity], mapping: Mapping[int, int],
                     min_iou: float) -> Counter:
    """(role, outcome) -> count over the reference entities of one frame; `mapping` is the frame's
    association (evaluated id -> reference id)."""
    partnered = set(mapping.values())
    counts: Counter = Counter()
    unmatched = [r for r in reference if r.id not in partnered]
    counts.update((r.role, MATCHED) for r in reference if r.id in partnered)
    if unmatched and evaluated:
        iou = box_iou(np.array([r.box for r in unmatched]), np.array([e.box for e in evaluated]))
        labels = np.array([e.label for e in evaluated])
        for row, entity in enumerate(unmatched):
            seen = (iou[row] >= min_iou) & (labels != entity.label)
            counts[(entity.role, OTHER_CLASS if seen.any() else MISSED)] += 1
    else:
        counts.update((r.role, MISSED) for r in unmatched)
    return counts


def nested(counts: Mapping[tuple[str, str], int]) -> dict[str, dict[str, int]]:
    """{ROLE: {OUTCOME: count}}: the JSON form of (role, outcome) counts."""
    out: dict[str, dict[str, int]] = {}
    for (role, outcome), n in counts.items():
        out.setdefault(role, dict.fromkeys(OUTCOMES, 0))[outcome] += int(n)
    return out


def as_record(counts: Sequence[Mapping[str, Mapping[str, int]]]) -> dict:
    """{ROLE: {"n": n, "matched": share, "other_class": share, "missed": share}} pooled over
    `counts` (`nested` forms, e.g. one per episode), roles sorted, then "all" over every role."""
    pooled: dict[str, Counter] = {}
    for count in counts:
        for role, outcomes in count.items():
            pooled.setdefault(role, Counter()).update(outcomes)
    pooled = dict(sorted(pooled.items()))
    pooled["all"] = sum(pooled.values(), Counter())
    record = {}
    for role, outcomes in pooled.items():
        total = sum(outcomes[o] for o in OUTCOMES)
        if total:
            record[role] = {"n": total, **{o: outcomes[o] / total for o in OUTCOMES}}
    return record


def entity_table(record: Mapping[str, Mapping[str, float]]) -> str:
    """The Entities table of tables.md (and so of report.html) from an `as_record` record."""
    lines = ["## Entities without a partner (clean frames, against the ground truth's entities)", "",
             "Why a predicate stream can be absent: per role, the share of the reference entity-frames that "
             "perception matched, saw only under another class, or missed (`agreement.json` `entities`).", "",
             "| role | entity-frames | matched | other class | missed |", "| --- | --- | --- | --- | --- |"]
    for role, entry in record.items():
        lines.append(f"| {role} | {entry['n']} | " + " | ".join(f"{entry[o]:.3f}" for o in OUTCOMES) + " |")
    return "\n".join(lines)
