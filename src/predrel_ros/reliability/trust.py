"""How far to trust each predicate right now: rolling metrics -> OK / WARN / ERROR with reasons.

With a reference (a clean twin pipeline, or ground truth) trust judges the comparison:
- the agreement rate: the share of the window's frames with a known reference on which the value
  equals the reference (a UNK against a known reference disagrees). Against the clean twin the
  clean expectation is full agreement, so it is judged against the absolute bounds `agreement`;
  against ground truth with a clean profile, as its drop below the lowest agreement the profile
  saw in a clean window (`agreement_drop`), since the extraction disagrees with ground truth on
  clean data already for some predicates;
- TPC: whether the value changes when, and only when, the reference changes.
PRS is reported as the paper defines it but not judged: it weighs each agreement by its
confidence, so two identical pipelines score their mean confidence (0.6-0.8 on clean data), which
says how confident the pipeline is, not whether it agrees; the confidence is the reference-free
signals' business. With a reference those are reported but not judged: flicker, UNK and low
confidence that the clean pipeline shows as well are no degradation, and where they are one, the
agreement falls.

Without a reference (a live robot) the paper's metrics cannot be computed, but four signals remain
(see docs/design.md, "Runtime trust: reliability without a clean twin"):
- temporal self-consistency TPC-S over the rolling window (flicker);
- the confidence level, and its drop against the clean profile of the same predicate;
- the calibrated expected agreement: each confidence mapped to the agreement observed at that
  confidence on clean data with ground truth (`CalibrationSummary`), averaged over the window;
- the violation rate of logic rules the extractor does not use (`predicates.logic_rules`), in excess
  of the rate the clean data already shows, and the UNK rate in excess of clean.

With a clean profile every signal is judged against what clean windows of the same setup showed:
TPC-S, the confidence and the expected agreement as drops below the lowest clean window
(`tpc_s_drop`, `confidence_drop`, `agreement_drop`), the UNK and violation rates as excesses over
the highest (`unk_excess`, `violation_excess`). Clean data varies from window to window (dynamic
relations change every few frames during a task; a held object is half hidden; a detector misses an
object now and then), so a bound at its mean would warn on clean data half the time: trust asks
whether the stream is worse than clean data gets. Without a profile TPC-S and the expected
agreement are judged against the absolute bounds `tpc_s` and `expected_agreement`, and the UNK and
violation rates against zero; a reference-free monitor is only as good as its profile, so measure
one on clean data of the setup (camera, model, scenes) the robot works in.

Each signal has a WARN and an ERROR bound (`TrustConfig`); a predicate's level is its worst signal,
and every signal that is not OK gives a reason naming the value, the comparison that failed and
the bound, such as "tpc_s 0.62 < 0.70 (error)", with as many decimals as it takes to tell value and
bound apart. Fewer than `min_frames` frames in the window gives WARN ("not enough frames").

The clean profile (`CleanProfile`) is measured once on clean data with
`clean_profile.build_clean_profile` (`predrel profile`), and saved as JSON or YAML.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from predrel_ros.core.config_io import ConfigFile, read_data, write_data
from predrel_ros.reliability.calibration import CalibrationSummary

OK, WARN, ERROR = "OK", "WARN", "ERROR"
LEVELS = (OK, WARN, ERROR)
#: not enough frames to judge (the reliability monitor's level before `min_frames`; PredicateReliability.STALE)
STALE = "STALE"
#: what a reference stream is (TrustAssessor's `reference`): the clean twin pipeline or ground truth
CLEAN_TWIN, GROUND_TRUTH = "clean_twin", "ground_truth"
REFERENCES = (CLEAN_TWIN, GROUND_TRUTH)


@dataclass
class Limit:
    """WARN and ERROR bounds of one signal; `higher_is_better` says which way is bad."""

    warn: float
    error: float
    higher_is_better: bool = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.warn) and math.isfinite(self.error)):
            raise ValueError(f"warn and error must be finite, got {self.warn}, {self.error}")
        if self.higher_is_better and self.error > self.warn:
            raise ValueError(f"error bound {self.error} must not exceed the warn bound {self.warn} "
                             f"when higher is better")
        if not self.higher_is_better and self.error < self.warn:
            raise ValueError(f"error bound {self.error} must not be below the warn bound {self.warn} "
                             f"when lower is better")

    def outside(self, value: float | np.ndarray) -> bool | np.ndarray:
        """Whether a value (or each of an array's) crosses the warn bound; NaN never does."""
        return value < self.warn if self.higher_is_better else value > self.warn

    def judge(self, name: str, value: float) -> tuple[str, str | None]:
        """(level, reason or None) of a value; the reason names the value, the comparison that
        failed and the bound it crossed."""
        if not self.outside(value):       # within: the common case
            return OK, None
        comparison = "<" if self.higher_is_better else ">"
        for level, bound in ((ERROR, self.error), (WARN, self.warn)):
            crossed = value < bound if self.higher_is_better else value > bound
            if crossed:
                shown_value, shown_bound = _distinct(value, bound)
                return level, f"{name} {shown_value} {comparison} {shown_bound} ({level.lower()})"
        return OK, None


def _distinct(value: float, bound: float, decimals: int = 2) -> tuple[str, str]:
    """value and bound with `decimals` decimals, or more until they read differently (at most 6)."""
    while True:
        shown = f"{value:.{decimals}f}", f"{bound:.{decimals}f}"
        if shown[0] != shown[1] or decimals >= 6:
            return shown
        decimals += 1


@dataclass
class TrustConfig(ConfigFile):
    """Bounds of the trust signals (see the module docstring)."""

    min_frames: int = 10
    tpc_s: Limit = field(default_factory=lambda: Limit(0.85, 0.7))
    tpc_s_drop: Limit = field(default_factory=lambda: Limit(0.08, 0.15, higher_is_better=False))
    confidence_drop: Limit = field(default_factory=lambda: Limit(0.15, 0.3, higher_is_better=False))
    expected_agreement: Limit = field(default_factory=lambda: Limit(0.8, 0.6))
    agreement_drop: Limit = field(default_factory=lambda: Limit(0.1, 0.2, higher_is_better=False))
    violation_excess: Limit = field(default_factory=lambda: Limit(0.05, 0.15, higher_is_better=False))
    unk_excess: Limit = field(default_factory=lambda: Limit(0.2, 0.5, higher_is_better=False))
    agreement: Limit = field(default_factory=lambda: Limit(0.8, 0.6))
    tpc: Limit = field(default_factory=lambda: Limit(0.8, 0.6))

    NAME = "trust"

    def __post_init__(self) -> None:
        if self.min_frames < 1:
            raise ValueError(f"min_frames must be >= 1, got {self.min_frames}")


@dataclass
class PredicateBaseline:
    """How one predicate looks on clean data, over rolling windows of `CleanProfile.window` frames:
    the worst value any clean window showed (its `quantile`), so that trust flags only what is worse
    than clean data gets. NaN where the clean data had none (no rule checks, no calibration, no
    reference)."""

    confidence: float           # lowest window mean confidence
    tpc_s: float                # lowest window TPC-S
    unk_rate: float             # highest window UNK rate
    violation_rate: float       # highest window logic-rule violation rate (windows with enough checks)
    calibration: CalibrationSummary | None = None    # confidence -> agreement with ground truth
    expected_agreement: float = math.nan             # lowest window calibrated expected agreement
    agreement: float = math.nan                      # lowest window agreement with ground truth


class CleanProfile:
    """Per predicate name, its clean baseline (`PredicateBaseline`); the trust assessment compares
    to it. window: the rolling window (frames) the baselines were measured over, which should be the
    monitor's; quantile: 1.0 = the worst clean window, 0.99 = the worst but 1 %, ... Measure it with
    `clean_profile.build_clean_profile` (`predrel profile`)."""

    FORMAT = "predrel-clean-profile/2"
    #: the baseline values saved as numbers (the calibration is saved as its own mapping)
    _FIELDS = tuple(f.name for f in fields(PredicateBaseline) if f.name != "calibration")

    def __init__(self, baselines: Mapping[str, PredicateBaseline], window: int = 30, quantile: float = 1.0) -> None:
        if window < 1:
            raise ValueError(f"clean profile: window must be >= 1 frame, got {window}")
        if not 0.5 <= quantile <= 1.0:
            raise ValueError(f"clean profile: quantile must lie in [0.5, 1], got {quantile}")
        self.baselines = dict(baselines)
        self.window = window
        self.quantile = quantile

    def calibration_maps(self) -> dict[str, Callable[[float], float]]:
        """predicate -> confidence-to-expected-agreement map, for `RollingReliability(calibration=...)`."""
        return {name: baseline.calibration.expected_agreement for name, baseline in self.baselines.items()
                if baseline.calibration is not None}

    def to_dict(self) -> dict:
        def plain(value: float) -> float | None:
            return None if math.isnan(value) else float(value)
        return {"format": self.FORMAT, "window": self.window, "quantile": self.quantile, "predicates": {
            name: {**{key: plain(getattr(b, key)) for key in self._FIELDS},
                   "calibration": b.calibration.to_dict() if b.calibration is not None else None}
            for name, b in self.baselines.items()}}

    @classmethod
    def from_dict(cls, data: Mapping) -> "CleanProfile":
        if data.get("format") != cls.FORMAT:
            raise ValueError(f"clean profile: expected format {cls.FORMAT!r}, got {data.get('format')!r} (measure "
                             f"it again with `predrel profile`)")
        baselines = {}
        for name, entry in (data.get("predicates") or {}).items():
            values = {key: math.nan if entry.get(key) is None else float(entry[key]) for key in cls._FIELDS}
            calibration = entry.get("calibration")
            baselines[name] = PredicateBaseline(
                **values, calibration=CalibrationSummary.from_dict(calibration) if calibration is not None else None)
        return cls(baselines, int(data.get("window", 30)), float(data.get("quantile", 1.0)))

    def save(self, path: str | Path) -> Path:
        return write_data(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> "CleanProfile":
        data = read_data(path)
        if not isinstance(data, Mapping):
            raise ValueError(f"{path}: expected a mapping with format / predicates")
        return cls.from_dict(data)


@dataclass
class TrustAssessment:
    predicate: str
    level: str
    reasons: list[str]
    signals: dict[str, float]


class TrustAssessor:
    """Maps rolling metrics (per predicate name) and violation rates to trust levels.

    reference: what the metrics were compared with: None (no reference: the reference-free
    signals), CLEAN_TWIN or GROUND_TRUTH (the agreement and TPC; see the module docstring).
    """

    def __init__(self, config: TrustConfig | None = None, profile: CleanProfile | None = None,
                 reference: str | None = None) -> None:
        if reference is not None and reference not in REFERENCES:
            raise ValueError(f"reference must be None or one of {REFERENCES}, got {reference!r}")
        self.config = config if config is not None else TrustConfig()
        self.profile = profile
        self.reference = reference

    def assess(self, metrics_by_predicate: Mapping[str, Mapping[str, float]],
               violation_rates: Mapping[str, float] | None = None) -> dict[str, TrustAssessment]:
        """metrics_by_predicate: `RollingReliability.by_predicate()`; violation_rates:
        `LogicMonitor.compute()`. Returns one assessment per predicate name."""
        violation_rates = violation_rates or {}
        return {name: self.assess_one(name, values, violation_rates.get(name, float("nan")))
                for name, values in sorted(metrics_by_predicate.items())}

    def assess_one(self, name: str, values: Mapping[str, float], violation_rate: float = math.nan
                   ) -> TrustAssessment:
        """The assessment of one predicate name's (or one stream's) metrics, as `assess` gives it."""
        signals: dict[str, float] = {}
        judged: list[tuple[str, str | None]] = []

        def judge(signal: str, value: float, limit: Limit) -> None:
            if value is None or value != value:       # NaN: not judged
                return
            value = signals[signal] = float(value)
            verdict = limit.judge(signal, value)
            if verdict[0] != OK:
                judged.append(verdict)

        def note(signal: str, value: float, unless_nan: bool = False) -> None:
            if not (unless_nan and (value is None or value != value)):
                signals[signal] = float(value)

        frames = values.get("frames", 0) or 0
        signals["frames"] = float(frames)
        if frames < self.config.min_frames:
            judged.append((WARN, f"not enough frames ({int(frames)} < {self.config.min_frames})"))
        self._judge(self._baseline(name), values, violation_rate, judge, note)
        if not judged:
            return TrustAssessment(name, OK, [], signals)
        level = max((lvl for lvl, _ in judged), key=LEVELS.index)
        return TrustAssessment(name, level, [reason for _, reason in judged if reason], signals)

    def assess_streams(self, names: Sequence[str], columns: Mapping[str, np.ndarray]) -> list[tuple[str, list[str]]]:
        """(level, reasons) of each stream, its predicate name in `names` and its metrics a row of
        `columns` (one array per metric): what `assess_one` gives each stream without a violation
        rate (the logic monitor counts per predicate, not per pair), judged for all the rows of the
        same baseline together, so a report of a hundred streams costs a few array operations and
        a reason only where a stream is not OK."""
        baselines = {name: self._baseline(name) for name in set(names)}
        if len({id(baseline) for baseline in baselines.values()}) <= 1:    # one baseline for all (or none)
            return self._assess_rows(next(iter(baselines.values()), None), columns) if names else []
        results: list[tuple[str, list[str]]] = [(OK, [])] * len(names)
        by_baseline: dict[int, tuple[PredicateBaseline | None, list[int]]] = {}
        for row, name in enumerate(names):
            baseline = baselines[name]
            by_baseline.setdefault(id(baseline), (baseline, []))[1].append(row)
        for baseline, rows in by_baseline.values():
            judged = self._assess_rows(baseline, {metric: column[rows] for metric, column in columns.items()})
            for row, verdict in zip(rows, judged):
                results[row] = verdict
        return results

    def _assess_rows(self, baseline: PredicateBaseline | None, columns: Mapping[str, np.ndarray]
                     ) -> list[tuple[str, list[str]]]:
        """`assess_streams` of rows that share a baseline."""
        rows = len(columns["frames"])
        verdicts: list[tuple[str, np.ndarray, Limit, np.ndarray]] = []   # signal, values, limit, not OK

        def judge(signal: str, value, limit: Limit) -> None:
            value = np.broadcast_to(np.asarray(value, dtype=np.float64), (rows,))
            outside = limit.outside(value)                  # NaN is never outside: not judged
            if outside.any():
                verdicts.append((signal, value, limit, outside))

        def note(signal: str, value, unless_nan: bool = False) -> None:
            """The signals are not kept here."""

        frames = np.asarray(columns["frames"], dtype=np.float64)
        minimum = self.config.min_frames
        short = frames < minimum
        self._judge(baseline, columns, math.nan, judge, note)
        flagged = short.copy()
        for _, _, _, outside in verdicts:
            flagged |= outside
        results: list[tuple[str, list[str]]] = [(OK, [])] * rows
        for row in np.flatnonzero(flagged).tolist():
            judged = [(WARN, f"not enough frames ({int(frames[row])} < {minimum})")] if short[row] else []
            judged += [limit.judge(signal, float(value[row])) for signal, value, limit, outside in verdicts
                       if outside[row]]
            results[row] = (max((lvl for lvl, _ in judged), key=LEVELS.index), [reason for _, reason in judged])
        return results

    def _baseline(self, name: str) -> PredicateBaseline | None:
        return self.profile.baselines.get(name) if self.profile is not None else None

    def _judge(self, baseline: PredicateBaseline | None, values: Mapping, violation_rate: float, judge: Callable,
               note: Callable) -> None:
        """Judge metrics (numbers, or columns of numbers) against a predicate's baseline with
        `judge(signal, value, limit)`; `note(signal, value, unless_nan)` records a signal not judged."""
        if self.reference is not None:
            self._judge_comparison(baseline, values, judge, note)
        else:
            self._judge_reference_free(baseline, values, violation_rate, judge, note)

    def _judge_comparison(self, baseline: PredicateBaseline | None, values: Mapping, judge: Callable,
                          note: Callable) -> None:
        """With a reference: the agreement rate (against ground truth with a clean profile: its drop
        from the clean agreement) and TPC; PRS, TPC-S and confidence are reported only."""
        config = self.config
        agreement = values.get("agreement", float("nan"))
        clean_agreement = baseline.agreement if self.reference == GROUND_TRUTH and baseline is not None \
            else float("nan")
        if math.isfinite(clean_agreement):
            note("agreement", agreement)
            judge("agreement_drop", clean_agreement - agreement, config.agreement_drop)
        else:
            judge("agreement", agreement, config.agreement)
        judge("tpc", values.get("tpc", float("nan")), config.tpc)
        for signal in ("prs", "tpc_s", "confidence", "unk_rate"):
            note(signal, values.get(signal, float("nan")), unless_nan=True)

    def _judge_reference_free(self, baseline: PredicateBaseline | None, values: Mapping, violation_rate: float,
                              judge: Callable, note: Callable) -> None:
        config = self.config
        tpc_s = values.get("tpc_s", float("nan"))
        if baseline is not None and math.isfinite(baseline.tpc_s):
            note("tpc_s", tpc_s)
            judge("tpc_s_drop", baseline.tpc_s - tpc_s, config.tpc_s_drop)
        else:
            judge("tpc_s", tpc_s, config.tpc_s)
        confidence = values.get("confidence", float("nan"))
        note("confidence", confidence)
        if baseline is not None:
            judge("confidence_drop", baseline.confidence - confidence, config.confidence_drop)
        expected = values.get("expected_agreement", float("nan"))
        clean_agreement = baseline.expected_agreement if baseline is not None else float("nan")
        if math.isfinite(clean_agreement):
            note("expected_agreement", expected)
            judge("agreement_drop", clean_agreement - expected, config.agreement_drop)
        else:
            judge("expected_agreement", expected, config.expected_agreement)
        clean_violations = baseline.violation_rate if baseline is not None else float("nan")
        judge("violation_excess", violation_rate - (0.0 if math.isnan(clean_violations) else clean_violations),
              config.violation_excess)
        clean_unk = baseline.unk_rate if baseline is not None else 0.0
        judge("unk_excess", values.get("unk_rate", float("nan")) - clean_unk, config.unk_excess)
