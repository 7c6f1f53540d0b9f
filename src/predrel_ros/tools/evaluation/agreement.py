"""agreement.json: how often the clean condition's predicates equal the reference, pooled over episodes.

The yardstick of the predicate rules (issue 13), the same for oracle and model perception:

    {"groups": {GROUP: {"agreement": a, "prs": p, "n": frames}},
     "values": {"NAME/VALUE": {"agreement": a, "n": frames}},
     "events": {"grasp": {"found_within_3": f, "extra_per_event": e, "median_abs_offset": m, ...},
                "release": {...}}}

Frames count where the reference is known (an UNK prediction there is a disagreement). A group
pools the frames of all its predicates' streams; "NAME/VALUE" takes the frames whose reference is
VALUE. Events are the onsets of T runs (`event_score`): for grasp the frame a grasp begins, for
release the release frame.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import numpy as np

from predrel_ros.degradations import CLEAN
from predrel_ros.predicates import vocabulary
from predrel_ros.tools.evaluation.event_score import EventScore
from predrel_ros.tools.evaluation.sequences import EpisodeSequences

EVENT_TOLERANCE = 3
EVENTS = (vocabulary.GRASP, vocabulary.RELEASE)


def clean_agreement(sequences: Iterable[EpisodeSequences], tolerance: int = EVENT_TOLERANCE) -> dict:
    """The agreement record (see the module docstring) of the clean condition of `sequences`."""
    groups = {g: np.zeros(3) for g in vocabulary.GROUPS}      # correct, confidence-weighted correct, n
    values = {(name, label): np.zeros(2) for name in vocabulary.PREDICATES for label in vocabulary.values_of(name)}
    events = {name: EventScore(tolerance) for name in EVENTS}
    for episode in sequences:
        clean = episode.condition_index(CLEAN)
        y, c = episode.y[clean], episode.c[clean]
        for row, (name, _, _) in enumerate(episode.keys):
            y_ref = episode.y_ref[row]
            known = y_ref != vocabulary.UNK
            if not known.any():
                continue
            correct = (y[row] == y_ref) & known
            groups[vocabulary.group_of(name)] += (correct.sum(), (c[row] * correct).sum(), known.sum())
            for code, label in enumerate(vocabulary.values_of(name)):
                selected = y_ref == code
                values[(name, label)] += (correct[selected].sum(), selected.sum())
            if name in events:
                events[name].add(y[row], y_ref)
    return {
        "groups": {g: {"agreement": _ratio(a, n), "prs": _ratio(p, n), "n": int(n)} for g, (a, p, n) in groups.items()},
        "values": {f"{name}/{label}": {"agreement": _ratio(a, n), "n": int(n)}
                   for (name, label), (a, n) in values.items()},
        "events": {name: score.summary() for name, score in events.items()},
    }


def _ratio(numerator: float, count: float) -> float | None:
    return float(numerator / count) if count else None


def write_agreement(path: str | Path, sequence_files: Iterable[str | Path]) -> dict:
    """Compute the record from saved sequence files and write it as JSON (NaN as null)."""
    record = clean_agreement(EpisodeSequences.load(file) for file in sequence_files)
    for score in record["events"].values():
        for key, value in score.items():
            if isinstance(value, float) and np.isnan(value):
                score[key] = None
    Path(path).write_text(json.dumps(record, indent=2) + "\n")
    return record
