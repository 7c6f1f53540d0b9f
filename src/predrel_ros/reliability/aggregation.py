"""Aggregating reliability scores per predicate, group, degradation and severity (paper 4.5).

Rows are plain mappings, one per (video, predicate, degradation, severity), holding identifying
fields and metric values, e.g. {"video": "ep03", "predicate": "contact", "degradation": "blur",
"severity": 3, "prs": 0.81, "tpc": 0.9}. `aggregate(rows, by=("predicate", "degradation"))` groups
them and summarises each metric by its mean, sample standard deviation and the 95 % confidence
interval of the mean from Student's t distribution: mean +- t_{0.975, n-1} * std / sqrt(n).
NaN values (a metric undefined on a video) are left out and counted apart. A group with one value
has std and interval NaN. The field "group" is filled from the predicate name when rows lack it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy import stats

from predrel_ros.predicates import vocabulary


@dataclass(frozen=True)
class Summary:
    n: int            # values used (NaN excluded)
    missing: int      # NaN values left out
    mean: float
    std: float        # sample standard deviation (ddof = 1)
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict:
        return {"n": self.n, "missing": self.missing, "mean": self.mean, "std": self.std,
                "ci_low": self.ci_low, "ci_high": self.ci_high}


def summarize(values: Iterable[float], confidence: float = 0.95) -> Summary:
    """Mean, sample std and the t-distribution confidence interval of the mean."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    array = np.asarray(list(values), dtype=np.float64)
    finite = array[~np.isnan(array)]
    n, missing = int(finite.size), int(array.size - finite.size)
    nan = float("nan")
    if n == 0:
        return Summary(0, missing, nan, nan, nan, nan)
    mean = float(finite.mean())
    if n == 1:
        return Summary(1, missing, mean, nan, nan, nan)
    std = float(finite.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1)) * std / math.sqrt(n)
    return Summary(n, missing, mean, std, mean - half, mean + half)


def aggregate(rows: Iterable[Mapping], by: Sequence[str], metrics: Sequence[str] = ("prs", "pds", "tpc", "cws", "dis"),
              confidence: float = 0.95) -> dict[tuple, dict[str, Summary]]:
    """Group rows by the fields `by` and summarise each metric present in them.

    Returns {(value of by[0], value of by[1], ...): {metric: Summary}}, keys sorted.
    """
    groups: dict[tuple, dict[str, list[float]]] = {}
    for index, row in enumerate(rows):
        fields = dict(row)
        if "group" in by and "group" not in fields:
            if "predicate" not in fields:
                raise ValueError(f"row {index}: aggregating by group needs a 'group' or 'predicate' field")
            fields["group"] = vocabulary.group_of(fields["predicate"])
        missing = [name for name in by if name not in fields]
        if missing:
            raise ValueError(f"row {index}: lacks the field(s) {missing} to group by")
        values = groups.setdefault(tuple(fields[name] for name in by), {})
        for metric in metrics:
            if metric in fields and fields[metric] is not None:
                values.setdefault(metric, []).append(float(fields[metric]))
    return {key: {metric: summarize(values, confidence) for metric, values in groups[key].items()}
            for key in sorted(groups, key=_sort_key)}


def _sort_key(key: tuple) -> tuple:
    """Numbers in numeric order (severity 2 before 10), then text."""
    return tuple((0, float(v), "") if isinstance(v, (int, float, np.number)) else (1, 0.0, str(v)) for v in key)
