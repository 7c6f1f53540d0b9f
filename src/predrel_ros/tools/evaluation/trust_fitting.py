"""Fitting and judging the trust estimator on `predrel eval` runs (`predrel trust fit / evaluate`).

A run of `predrel eval` on controlled episodes saves, per episode and condition, the true rolling
agreement's ingredients (`sequences/<episode>.npz`) and the estimator's inputs after every frame
(`sequences/<episode>.trust.npz`: the groups' window signals and the window's evidence,
`trust_measurement.TrustSeries`). From those, without running perception again:

- `fit_model`: the evidence profile from the clean condition's windows, then per group the
  monotone additive logistic model of the true agreement of every judged group-window (`TrustModel.fit`), optionally
  without the conditions of some degradation kinds;
- `modelled`: the series the model gives on saved inputs (expected agreement, flagged), equal to
  what `self_trust(model=...)` gives live on the same frames (`modelled_values`: with the risk);
- `evaluate`: trust.json of the model on runs (`trust_measurement.trust_document`); with
  `leave_one_kind_out`, per kind the recall of a model fitted without that kind, judged on it
  (`summary.lok_recall_by_kind`, `summary.lok_recall_min`); with `leave_one_episode_out`, every
  episode judged by a model fitted on all the others (`summary.loeo`): how far the estimator carries
  to a scene it has not seen, which a model judged on the episodes it was fitted on does not tell.

Fit on some episodes (and degradation seeds) and evaluate on others nothing was fitted on.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.degradations import NONE
from predrel_ros.reliability.evidence_profile import EvidenceProfile
from predrel_ros.reliability.trust_estimator import (
    DELIVERED,
    GROUP_SIGNALS,
    TrustModel,
    delivered_factor,
    evidence_inputs,
)
from predrel_ros.reliability.trust_evidence import FEATURES
from predrel_ros.tools.evaluation.rolling_agreement import rolling_agreement
from predrel_ros.tools.evaluation.sequences import EpisodeSequences
from predrel_ros.tools.evaluation.trust_measurement import (
    FLAGGED,
    GROUPS,
    TrustSeries,
    load_series,
    trust_document,
)

#: one episode of a run: its sequences, its conditions' series, its switching schedules' series
Episode = tuple[EpisodeSequences, list[TrustSeries], dict[str, TrustSeries]]


def load_runs(folders: Iterable[str | Path]) -> list[Episode]:
    """The episodes of `predrel eval --out` folders (their `sequences/`), with the estimator's inputs."""
    episodes = []
    for folder in folders:
        files = sorted(Path(folder, "sequences").glob("*.trust.npz"))
        if not files:
            raise UserError(f"{folder}: no sequences/*.trust.npz (the --out folder of a finished `predrel eval`)")
        for trust_file in files:
            sequences = EpisodeSequences.load(trust_file.with_name(trust_file.name.replace(".trust.npz", ".npz")))
            series, switches = load_series(trust_file)
            if all(np.isnan(s.features).all() for s in series):
                raise UserError(f"{trust_file}: no trust evidence saved (run `predrel eval` again with this version)")
            episodes.append((sequences, series, switches))
    return episodes


def fit_model(episodes: Sequence[Episode], window: int, without_kinds: Iterable[str] = (), l2: float = 1e-3,
              warn_percentile: float = 2.0, error: float = 0.4, segments: int = 1,
              clean_false_alarms: float | None = None, provenance: dict | None = None) -> TrustModel:
    """The trust model fitted on `episodes` (leaving out the conditions of `without_kinds`); with
    `clean_false_alarms`, WARN bounds for that share of clean windows flagged (`budget_bounds`)
    instead of `warn_percentile`."""
    without = set(without_kinds)
    clean_windows = [dict(zip(FEATURES, row)) for sequences, series, _ in episodes
                     for condition, s in zip(sequences.conditions, series) if condition.kind == NONE
                     for row, judged in zip(s.features, s.judged.any(axis=0)) if judged]
    if not clean_windows:
        raise UserError("no judged clean window to fit the evidence profile on (is the clean condition evaluated?)")
    profile = EvidenceProfile.fit(clean_windows)
    parts: dict[str, list] = {group: [] for group in GROUPS}
    for sequences, series, _ in episodes:
        for index, (condition, s) in enumerate(zip(sequences.conditions, series)):
            if condition.kind in without:
                continue
            truth = rolling_agreement(sequences, index, window)
            deviations = _deviations(profile, s)
            for row, group in enumerate(GROUPS):
                true = truth.get(group)
                if true is None:
                    continue
                keep = _judged_by_model(s, row) & ~np.isnan(true)
                inputs = np.hstack([s.signals[row], deviations])[keep]
                parts[group].append((inputs, true[keep], np.full(int(keep.sum()), condition.kind == NONE),
                                     _delivered(s)[keep]))
    samples = {group: tuple(np.concatenate(column) for column in zip(*chunks))
               for group, chunks in parts.items() if chunks and any(len(c[1]) for c in chunks)}
    model = TrustModel.fit(profile, samples, window, l2=l2, warn_percentile=warn_percentile, error=error,
                           segments=segments, provenance=provenance)
    if clean_false_alarms is not None:
        budget_bounds(model, episodes, clean_false_alarms, error)
    return model


def budget_bounds(model: TrustModel, episodes: Sequence[Episode], clean_false_alarms: float,
                  error: float = 0.4) -> float:
    """Sets every group's WARN bounds at the same percentile p of its clean windows on `episodes`
    (`warn` at p of their expected agreement, `risk_warn` at 100 - p of their risk), the highest p
    with at most `clean_false_alarms` of the clean windows (frames) flagged in any group there
    (ERROR: below `error` or the WARN bound, whichever is lower); returns that percentile. The false
    alarms are counted as `trust_document` counts them."""
    if not 0.0 <= clean_false_alarms < 1.0:
        raise ValueError(f"clean_false_alarms must be in [0, 1), got {clean_false_alarms}")
    expected, risk = [], []          # per clean series: (G, T), NaN where not judged
    for sequences, series, _ in episodes:
        for condition, s in zip(sequences.conditions, series):
            if condition.kind == NONE:
                values, risks = modelled_values(model, s)
                judged = np.array([_judged_by_model(s, row) for row in range(len(GROUPS))])
                expected.append(np.where(judged, values, np.nan))
                risk.append(np.where(judged, risks, np.nan))
    expected, risk = np.concatenate(expected, axis=1), np.concatenate(risk, axis=1)
    judged = ~np.isnan(expected).all(axis=0)
    groups = [(row, group) for row, group in enumerate(GROUPS) if group in model.groups
              and (~np.isnan(expected[row])).any()]

    def bounds(percentile: float) -> dict[str, tuple[float, float]]:
        return {group: (float(np.nanpercentile(expected[row], percentile)),
                        float(np.nanpercentile(risk[row], 100.0 - percentile))) for row, group in groups}

    def alarms(percentile: float) -> float:
        flagged = np.zeros(expected.shape[1], dtype=bool)
        for (row, _), (warn, risk_warn) in zip(groups, bounds(percentile).values()):
            flagged |= (np.nan_to_num(expected[row], nan=np.inf) < warn) | (np.nan_to_num(risk[row], nan=-np.inf)
                                                                            > risk_warn)
        return float(flagged[judged].mean()) if judged.any() else 0.0

    low, high = 0.0, 100.0
    for _ in range(40):                                  # bisection: alarms rise with the percentile
        middle = 0.5 * (low + high)
        low, high = (middle, high) if alarms(middle) <= clean_false_alarms else (low, middle)
    for group, (warn, risk_warn) in bounds(low).items():
        model.groups[group].warn = warn
        model.groups[group].error = min(error, warn)
        model.groups[group].risk_warn = risk_warn
    return low


def _deviations(profile: EvidenceProfile, series: TrustSeries) -> np.ndarray:
    """(T, evidence inputs) the evidence part of the model's input row of each frame's window (`evidence_inputs`)."""
    return np.array([evidence_inputs(profile.deviations(dict(zip(FEATURES, row)))) for row in series.features])


def _judged_by_model(series: TrustSeries, row: int) -> np.ndarray:
    """(T,) the windows a trust model judges the group of `row` in (`ReliabilityMonitor.report`):
    those the run judged, and, STALE in a run without a model, those where the monitor had the group
    and its evidence covered trust.min_frames (`evidence_covered`: predicates all too young, or none);
    in files saved before that flag, the groups without predicates the monitor gave on the evidence
    alone (UNK rate 1, no confidence: `ReliabilityMonitor._with_evidence_only_groups`)."""
    signals = series.signals[row]
    evidence_only = np.isnan(signals[:, GROUP_SIGNALS.index("confidence")]) & \
        (signals[:, GROUP_SIGNALS.index("unk_rate")] == 1.0)
    defined = ~np.isnan(signals).all(axis=1)
    return series.judged[row] | evidence_only | (series.evidence_covered & defined)


def _delivered(series: TrustSeries) -> np.ndarray:
    """(T,) the factor of the expected agreement for each frame's window (`delivered_factor`)."""
    return delivered_factor(series.features[:, FEATURES.index(DELIVERED)])


def modelled_values(model: TrustModel, series: TrustSeries) -> tuple[np.ndarray, np.ndarray]:
    """(G, T) expected agreement and risk of each group's windows on the saved inputs (NaN: the
    model has no such group, or the monitor did not have it at that frame)."""
    expected = np.full_like(series.expected, np.nan)
    risk = np.full_like(series.expected, np.nan)
    deviations = _deviations(model.profile, series)
    delivered = _delivered(series)
    for row, group in enumerate(GROUPS):
        group_model = model.groups.get(group)
        if group_model is None:
            continue
        inputs = model.filled(np.hstack([series.signals[row], deviations]), group_model.clean)
        defined = ~np.isnan(series.signals[row]).all(axis=1)     # the monitor had the group at that frame
        expected[row] = np.where(defined, delivered * group_model.expected(inputs), np.nan)
        risk[row] = np.where(defined, group_model.risk(inputs, delivered), np.nan)
    return expected, risk


def modelled(model: TrustModel, series: TrustSeries) -> TrustSeries:
    """The series with the model's expected agreement and flags on the saved inputs (judged kept)."""
    expected, risk = modelled_values(model, series)
    flagged = np.zeros_like(series.flagged)
    for row, group in enumerate(GROUPS):
        group_model = model.groups.get(group)
        if group_model is not None:
            levels = group_model.levels(np.nan_to_num(expected[row], nan=np.inf), np.nan_to_num(risk[row], nan=0.0))
            flagged[row] = _judged_by_model(series, row) & np.isin(levels, FLAGGED)
    return dataclasses.replace(series, expected=expected, flagged=flagged)


def _modelled_episodes(model: TrustModel, episodes: Sequence[Episode]) -> list[Episode]:
    return [(sequences, [modelled(model, s) for s in series],
             {kind: modelled(model, s) for kind, s in switches.items()}) for sequences, series, switches in episodes]


#: the summary values `evaluate` reports of its leave-one-episode-out document
LOEO_SUMMARY = ("mae", "recall_below_0_6", "false_alarm_clean", "clean_low_share", "false_alarm_clean_good",
                "median_delay_frames", "group_windows")


def evaluate(model: TrustModel, episodes: Sequence[Episode], leave_one_kind_out: bool = False,
             fit_episodes: Sequence[Episode] | None = None, leave_one_episode_out: bool = False,
             **fit_options) -> dict:
    """trust.json of `model` on `episodes`; with `leave_one_kind_out`, for every degradation kind the
    recall of a model fitted on `fit_episodes` (default: `episodes`) without that kind, on that kind;
    with `leave_one_episode_out`, the summary of every episode of `episodes` judged by a model fitted
    on the others and on `fit_episodes` (which must not hold the same episodes) as `summary.loeo`."""
    window = model.window
    document = trust_document(_modelled_episodes(model, episodes), window)
    document["summary"]["model"] = dict(model.provenance)
    if leave_one_episode_out:
        document["summary"]["loeo"] = leave_one_episode_out_summary(episodes, fit_episodes or (), window,
                                                                    **fit_options)
    if leave_one_kind_out:
        fit_episodes = episodes if fit_episodes is None else fit_episodes
        kinds = sorted({c.kind for sequences, _, _ in episodes for c in sequences.conditions} - {NONE})
        by_kind = {}
        for kind in kinds:
            without = fit_model(fit_episodes, window, without_kinds=[kind], **fit_options)
            recall = trust_document(_modelled_episodes(without, episodes), window)["summary"]["recall_by_kind"]
            by_kind[kind] = recall.get(kind)
        known = [value for value in by_kind.values() if value is not None and not math.isnan(value)]
        document["summary"]["lok_recall_by_kind"] = by_kind
        document["summary"]["lok_recall_min"] = min(known) if known else None
    return document


def leave_one_episode_out_summary(episodes: Sequence[Episode], extra_fit_episodes: Sequence[Episode], window: int,
                                  **fit_options) -> dict:
    """The summary (`LOEO_SUMMARY`, and `episodes`) of every episode of `episodes` judged by a model
    fitted on the other episodes and on `extra_fit_episodes` (the evidence profile included)."""
    if len(episodes) + len(extra_fit_episodes) < 2:
        raise UserError("leaving one episode out needs at least two episodes")
    judged = []
    for index, episode in enumerate(episodes):
        others = [other for place, other in enumerate(episodes) if place != index] + list(extra_fit_episodes)
        judged.extend(_modelled_episodes(fit_model(others, window, **fit_options), [episode]))
    summary = trust_document(judged, window)["summary"]
    return {**{key: summary[key] for key in LOEO_SUMMARY}, "episodes": len(episodes)}
