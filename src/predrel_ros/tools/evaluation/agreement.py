"""agreement.json: how often the clean condition's predicates equal the reference, pooled over episodes.

The yardstick of the predicate rules (issue 13), the same for oracle and model perception:

    {"groups": {GROUP: {"agreement": a, "prs": p, "n": frames, "absent": s, "unk": s, "wrong_value": s}},
     "values": {"NAME/VALUE": {"agreement": a, "n": frames}},
     "events": {"grasp": {"found_within_3": f, "extra_per_event": e, "median_abs_offset": m, ...},
                "release": {...}},
     "episodes": {EPISODE: {GROUP: {"agreement": a, "absent": s, "n": frames}}},
     "event_frames": {EPISODE: [{"event": "release", "subject": i, "object": j, "true": [t, ...],
                                 "predicted": [t, ...]}, ...]},
     "entities": {ROLE: {"n": entity_frames, "matched": s, "other_class": s, "missed": s}}}

Frames count where the reference is known (an UNK prediction there is a disagreement). A group
pools the frames of all its predicates' streams; "NAME/VALUE" takes the frames whose reference is
VALUE. Why a group disagrees, as shares of its frames (agreement + absent + unk + wrong_value = 1):
`absent`, the stream had no estimate (an entity perception missed, or detected under another
class, so that no evaluated entity stands for the reference's); `unk`, an estimate below the
confidence floor; `wrong_value`, an estimate of another value. Per episode the same for agreement
and absence, to find the episodes perception fails. Events are the onsets of T runs
(`event_score`): for grasp the frame a grasp begins, for release the release frame. `event_frames`
lists them per stream (reference entity ids) where either side has one, so that a release found
late, early or where there was none can be looked up frame by frame. `entities` (with ground-truth
entities) says why an entity has no partner: detected under another class, or missed
(`entity_partners`); "all" pools the roles.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from predrel_ros.degradations import CLEAN
from predrel_ros.predicates import vocabulary
from predrel_ros.tools.evaluation import entity_partners
from predrel_ros.tools.evaluation.event_score import EventScore
from predrel_ros.tools.evaluation.sequences import EpisodeSequences

EVENT_TOLERANCE = 3
EVENTS = (vocabulary.GRASP, vocabulary.RELEASE)


def clean_agreement(sequences: Iterable[EpisodeSequences], tolerance: int = EVENT_TOLERANCE) -> dict:
    """The agreement record (see the module docstring) of the clean condition of `sequences`."""
    # per group: correct, confidence-weighted correct, n, absent, unk
    groups = {g: np.zeros(5) for g in vocabulary.GROUPS}
    per_episode: dict[str, dict] = {}
    values = {(name, label): np.zeros(2) for name in vocabulary.PREDICATES for label in vocabulary.values_of(name)}
    events = {name: EventScore(tolerance) for name in EVENTS}
    event_frames: dict[str, list[dict]] = {}
    for episode in sequences:
        clean = episode.condition_index(CLEAN)
        y, c, present = episode.y[clean], episode.c[clean], episode.present[clean]
        counts = {g: np.zeros(5) for g in vocabulary.GROUPS}      # this episode's, as `groups`
        for row, (name, subject, obj) in enumerate(episode.keys):
            y_ref = episode.y_ref[row]
            known = y_ref != vocabulary.UNK
            if not known.any():
                continue
            correct = (y[row] == y_ref) & known
            absent = known & ~present[row]
            unk = known & present[row] & (y[row] == vocabulary.UNK)
            group = vocabulary.group_of(name)
            counts[group] += (correct.sum(), (c[row] * correct).sum(), known.sum(), absent.sum(), unk.sum())
            for code, label in enumerate(vocabulary.values_of(name)):
                selected = y_ref == code
                values[(name, label)] += (correct[selected].sum(), selected.sum())
            if name in events:
                true, predicted = events[name].add(y[row], y_ref)
                if true.size or predicted.size:
                    event_frames.setdefault(episode.episode, []).append(
                        {"event": name, "subject": int(subject), "object": int(obj),
                         "true": true.tolist(), "predicted": predicted.tolist()})
        for group, count in counts.items():
            groups[group] += count
        per_episode[episode.episode] = {g: {"agreement": _ratio(a, n), "absent": _ratio(m, n), "n": int(n)}
                                        for g, (a, _, n, m, _) in counts.items() if n}
    return {
        "groups": {g: {"agreement": _ratio(a, n), "prs": _ratio(p, n), "n": int(n), "absent": _ratio(m, n),
                       "unk": _ratio(u, n), "wrong_value": _ratio(n - a - m - u, n)}
                   for g, (a, p, n, m, u) in groups.items()},
        "values": {f"{name}/{label}": {"agreement": _ratio(a, n), "n": int(n)}
                   for (name, label), (a, n) in values.items()},
        "events": {name: score.summary() for name, score in events.items()},
        "episodes": per_episode,
        "event_frames": event_frames,
    }


def summary_line(record: dict, worst: int = 3) -> str:
    """One line for the log: each group's agreement with its absent share, and the `worst` episodes
    by mean group agreement (where perception failed, absence says so)."""
    groups = ", ".join(f"{g} {v['agreement']:.3f} (absent {v['absent']:.2f})"
                       for g, v in record["groups"].items() if v["n"])
    means = {name: (np.mean([v["agreement"] for v in by_group.values()]),
                    np.mean([v["absent"] for v in by_group.values()]))
             for name, by_group in record["episodes"].items() if by_group}
    lowest = sorted(means, key=lambda name: means[name][0])[:worst]
    episodes = ", ".join(f"{name} {means[name][0]:.2f} (absent {means[name][1]:.2f})" for name in lowest)
    line = f"clean agreement: {groups}; lowest episodes: {episodes or 'none'}"
    everything = record.get("entities", {}).get("all")
    if everything:
        line += (f"; reference entities without a partner: {everything['other_class']:.3f} under another class, "
                 f"{everything['missed']:.3f} missed")
    return line


def _ratio(numerator: float, count: float) -> float | None:
    return float(numerator / count) if count else None


def write_agreement(path: str | Path, sequence_files: Iterable[str | Path],
                    reference_entities: Sequence[Mapping[str, Mapping[str, int]]] = ()) -> dict:
    """Compute the record from saved sequence files and write it as JSON (NaN as null), with the
    clean frames' reference-entity outcomes (`entity_partners`, one count per episode) where given."""
    record = clean_agreement(EpisodeSequences.load(file) for file in sequence_files)
    if reference_entities:
        record["entities"] = entity_partners.as_record(reference_entities)
    for score in record["events"].values():
        for key, value in score.items():
            if isinstance(value, float) and np.isnan(value):
                score[key] = None
    Path(path).write_text(json.dumps(record, indent=2) + "\n")
    return record
