"""How often each predicate value and each value transition occurs, per scenario group.

A transition is a change of value between consecutive frames within one predicate stream
(name, subject, object), written "from>to". `missing_values` lists the vocabulary values a dataset
never shows (the coverage check of the controlled set).
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.sources.dataset import Dataset

ALL_GROUPS = "all"


def dataset_statistics(dataset: Dataset, split: str | None = None) -> dict:
    """{group: {"episodes", "frames", "values": {name: {value: n}}, "transitions": {name: {"a>b": n}}}},
    with the totals under "all"."""
    result: dict[str, dict] = {}
    for episode in dataset.episodes(split):
        group = episode.meta.scenario_group or "unknown"
        for key in (group, ALL_GROUPS):
            entry = result.setdefault(key, {"episodes": 0, "frames": 0, "values": {}, "transitions": {}})
            entry["episodes"] += 1
            entry["frames"] += len(episode)
        for (name, _, _), codes in episode.predicate_codes().items():
            labels = [vocabulary.decode(name, int(c)) for c in codes]
            values = Counter(label for label, code in zip(labels, codes) if code != vocabulary.UNK)
            changes = np.flatnonzero(codes[1:] != codes[:-1])
            transitions = Counter(f"{labels[t]}>{labels[t + 1]}" for t in changes.tolist())
            for key in (group, ALL_GROUPS):
                entry = result[key]
                entry["values"].setdefault(name, Counter()).update(values)
                entry["transitions"].setdefault(name, Counter()).update(transitions)
    for entry in result.values():
        for field in ("values", "transitions"):
            entry[field] = {name: dict(sorted(counter.items())) for name, counter in sorted(entry[field].items())}
    return dict(sorted(result.items(), key=lambda item: (item[0] == ALL_GROUPS, item[0])))


def missing_values(statistics: dict) -> list[tuple[str, str]]:
    """(predicate, value) pairs of the vocabulary that never occur in the whole set."""
    seen = statistics.get(ALL_GROUPS, {}).get("values", {})
    return [(name, value) for name in vocabulary.PREDICATES for value in vocabulary.values_of(name)
            if not seen.get(name, {}).get(value)]


def format_tables(statistics: dict) -> str:
    """Plain-text tables: values per predicate and group, then the transitions."""
    groups = list(statistics)
    lines = []
    header = ["predicate", "value"] + groups
    rows = [[name, value] + [str(statistics[g]["values"].get(name, {}).get(value, 0)) for g in groups]
            for name in vocabulary.PREDICATES for value in vocabulary.values_of(name)]
    lines += _table("value counts (frames x streams)", header, rows)
    summary = [["episodes"] + [str(statistics[g]["episodes"]) for g in groups],
               ["frames"] + [str(statistics[g]["frames"]) for g in groups]]
    lines += _table("episodes and frames", [""] + groups, summary)
    transitions = sorted({(name, t) for g in groups for name, counts in statistics[g]["transitions"].items()
                          for t in counts}, key=lambda item: (list(vocabulary.PREDICATES).index(item[0]), item[1]))
    rows = [[name, t] + [str(statistics[g]["transitions"].get(name, {}).get(t, 0)) for g in groups]
            for name, t in transitions]
    lines += _table("transitions (from>to)", ["predicate", "transition"] + groups, rows)
    missing = missing_values(statistics)
    lines.append("missing values: " + (", ".join(f"{n}={v}" for n, v in missing) if missing else "none"))
    return "\n".join(lines)


def _table(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)] if rows else \
        [len(h) for h in header]
    def line(cells):
        return "  ".join(str(cell).ljust(width) if k < 2 else str(cell).rjust(width)
                         for k, (cell, width) in enumerate(zip(cells, widths)))
    return [title, line(header), line(["-" * w for w in widths])] + [line(row) for row in rows] + [""]
