"""Expected agreement per predicate group from all the trust evidence: a monotone additive logistic model.

The reference-free signals of a group (its window's mean confidence, TPC-S, UNK rate and logic-rule
violation rate, `GROUP_SIGNALS`) and the evidence beyond the predicates (scene memory, detection
statistics, stream timing, image quality and the model's score shift, as deviations from their
clean range: `evidence_profile`; the hands seen and the masks' fill of their boxes only as their
deficit below it, `DEFICITS`) are the inputs (`INPUTS`) of one model per group,

    expected agreement = delivered_share * sigmoid(b + sum_i f_i(x_i)),

where delivered_share is the share of the window's frames the stream delivered: a frame the
pipeline never published disagrees on every stream (`rolling_agreement`), so that factor is known,
not learnt, and holds for a frame rate never seen in the fit (the sigmoid models the agreement on
the delivered frames; it is fitted to the true agreement divided by the delivered share). Each f_i
is piecewise linear between knots at quantiles of the input on the fit set (`segments` per
input; a linear logistic model when 1), flat outside them: the sum of ramps `(clip(x, k_j, k_j+1)
- k_j) / (k_j+1 - k_j)`, one weight each. Fitted on controlled episodes with ground truth (`fit`,
`predrel trust fit`) to the true rolling agreement of the same windows by cross-entropy with the
agreement as a soft label (so the output is a calibrated agreement, not a class), with an L2
penalty. Every ramp's weight is held to its input's sign (`SIGNS`), so each f_i is monotone: the
expected agreement never rises with the UNK or violation rate, never falls with the confidence or
TPC-S, and never rises as any evidence moves away from its clean range (a deviation enters as its
size, clipped to `clip` clean ranges). So a scene unlike every scene of the training, far outside
the clean ranges, can only lower the expected agreement, never raise it; the ramps let an input
matter only past a point (a birth rate clean data also shows) or saturate (a confidence that is
high enough), which one weight per input cannot. NaN inputs (no violation checks in the window, no
image) count as the clean value.

Beside it each group has a **risk** model on the same ramps: the probability that the window's
true agreement is below `LOW_AGREEMENT` (0.6),

    risk = sigmoid(c + sum_i g_i(x_i) + u * (1 - delivered_share)),

fitted by cross-entropy on that hard label, each g_i held to the opposite sign of f_i (risk never
falls as evidence moves away from clean) and u >= 0. The expected agreement is calibrated on
average, so where the same evidence comes with good and failed windows alike (a blur that ruins
some scenes and not others) it predicts the mean and stays above its bound; the risk of such
evidence is still far above that of clean windows, and that is what a robot asks: may I act on this?

Levels come from the fit set, not from the worst clean window: a group is ERROR when its expected
agreement is below `error` (or the WARN bound, when that is lower), WARN when it is below its `warn`
bound or its risk is above its `risk_warn` bound. `fit` sets the WARN bound at the `warn_percentile`
percentile of the expected agreements of the group's clean training windows and `risk_warn` at the
(100 - `warn_percentile`) percentile of their risks; `trust_fitting` can choose that percentile for
a false-alarm budget instead. The reason names the expected agreement (or the risk) and the
strongest evidence: the inputs that pull the expected agreement down most against their clean value
(f_i(x_i) - f_i(clean_i) most negative).

Everything at run time is numpy: the model is a few knots and weights per group in a small JSON
file (`TrustModel.save`; the default model's in `reliability/models/`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from predrel_ros.core.config_io import read_data, write_data
from predrel_ros.reliability.evidence_profile import DEVIATIONS, EvidenceProfile
from predrel_ros.reliability.trust import ERROR, OK, WARN
from predrel_ros.reliability.trust_evidence import FEATURES as EVIDENCE_FEATURES

#: the estimator fitted for the embedded default perception model (docs/results.md says how)
DEFAULT_TRUST_MODEL_FILE = Path(__file__).resolve().parent / "models" / "default-trust-model.json"
#: the per-group window signals of the monitor (`ReliabilityMonitor.group_signals`) the model reads
GROUP_SIGNALS = ("confidence", "tpc_s", "unk_rate", "violation_rate")
#: the evidence feature the expected agreement is scaled by
DELIVERED = "delivered_share"
#: true agreement below which a group-window has failed: what the risk model predicts, and what
#: trust.json's recall counts (`trust_measurement`)
LOW_AGREEMENT = 0.6
#: a delivered share below which it is named first among the reasons
DELIVERED_REASON = 0.9
#: deviations the model reads on one side only, as their part below the clean range (`deficit`):
#: fewer hands than every clean scene showed (hidden by an occluder, lost in the dark) is evidence of
#: failure, more (a second hand where the clean scenes had one) is another scene; masks that fill
#: less of their boxes than clean ones are partly hidden, fuller ones are not
DEFICITS = ("hands", "mask_fill")
#: the deviations the model reads on both sides: the evidence of the stream's quality, not of what
#: the scene holds (how many entities, the score histogram's bins: `score_shift` summarises them)
#: nor of kinds the controlled set does not degrade with (blockiness) nor repeated (gaps)
#: nor the delivered share, a factor of the model's output (see the module docstring)
MODEL_DEVIATIONS = tuple(name for name in DEVIATIONS if name not in (
    "count", "gaps", "blockiness", "dark_share", DELIVERED, *DEFICITS) and not name.startswith("score_share_"))
DEFICIT_INPUTS = tuple(f"{name}_deficit" for name in DEFICITS)
INPUTS = GROUP_SIGNALS + MODEL_DEVIATIONS + DEFICIT_INPUTS
_MODEL_DEVIATIONS = [DEVIATIONS.index(name) for name in MODEL_DEVIATIONS]
_DEFICITS = [DEVIATIONS.index(name) for name in DEFICITS]
#: the sign each input's weight is held to (+1: >= 0, -1: <= 0): confidence and TPC-S up, UNK and
#: violation rates down, every deviation from clean and every deficit down
SIGNS = np.array([1.0, 1.0, -1.0, -1.0] + [-1.0] * (len(MODEL_DEVIATIONS) + len(DEFICITS)))


def evidence_inputs(deviations: Mapping[str, float]) -> list[float]:
    """The evidence part of an input row from a window's deviations (`EvidenceProfile.deviations`):
    `MODEL_DEVIATIONS` as they are (`TrustModel.filled` takes their size), then `DEFICITS`' parts
    below the clean range, >= 0 (NaN where the deviation is undefined)."""
    return [deviations.get(name, math.nan) for name in MODEL_DEVIATIONS] + \
        [deficit(deviations.get(name, math.nan)) for name in DEFICITS]


def deficit(deviation: np.ndarray | float) -> np.ndarray | float:
    """How far below its clean range a deviation is (0 inside or above it; NaN stays NaN), of one
    deviation or an array of them."""
    return np.maximum(-deviation, 0.0)


def delivered_factor(shares: np.ndarray | float) -> np.ndarray | float:
    """The factor of the expected agreement for delivered shares (NaN, no timing known: 1): an array
    for an array, a float for one window's share (`TrustModel.assess`, once a frame: numpy's clip and
    nan_to_num on a scalar took 20 us each)."""
    if isinstance(shares, float):
        return 1.0 if math.isnan(shares) else min(max(shares, 0.0), 1.0)
    return np.nan_to_num(np.clip(np.asarray(shares, dtype=np.float64), 0.0, 1.0), nan=1.0)


@dataclass
class GroupModel:
    """One group's models (see the module docstring) and its levels: WARN below `warn` or at a risk
    above `risk_warn`, ERROR below `error`. knots: per input its ascending knots (fewer than 2: the
    input is not used); weights: one per ramp, input by input; clean: each input's clean value (the
    median of the clean windows), for the reasons and for NaN; risk_weights: one per ramp, then the
    undelivered share's."""

    knots: list[np.ndarray]
    weights: np.ndarray
    bias: float
    clean: np.ndarray
    warn: float
    error: float
    risk_weights: np.ndarray
    risk_bias: float
    risk_warn: float

    def __post_init__(self) -> None:
        self.knots = [np.asarray(k, dtype=np.float64) for k in self.knots]
        if len(self.knots) != len(INPUTS) or self.clean.shape != (len(INPUTS),):
            raise ValueError(f"trust model: a group needs knots and a clean value for each of the {len(INPUTS)} inputs")
        if any((np.diff(k) <= 0).any() for k in self.knots):
            raise ValueError("trust model: knots must be strictly ascending")
        #: per ramp: its input, lower and upper knot
        self._input = np.concatenate([np.full(max(len(k) - 1, 0), i, dtype=np.intp) for i, k in enumerate(self.knots)])
        self._low = np.concatenate([k[:-1] for k in self.knots])
        self._width = np.concatenate([np.diff(k) for k in self.knots])
        if self.weights.shape != self._input.shape:
            raise ValueError(f"trust model: {len(self._input)} ramps need as many weights, got {self.weights.shape}")
        if self.risk_weights.shape != (len(self._input) + 1,):
            raise ValueError(f"trust model: {len(self._input)} ramps need as many risk weights and one for the "
                             f"undelivered share, got {self.risk_weights.shape}")

    def ramps(self, x: np.ndarray) -> np.ndarray:
        """(N, ramps) values in [0, 1] of input rows x (N, len(INPUTS)), already filled and clipped."""
        return np.clip((x[:, self._input] - self._low) / self._width, 0.0, 1.0)

    def signs(self) -> np.ndarray:
        """The sign each ramp's weight is held to (its input's)."""
        return SIGNS[self._input]

    def terms(self, x: np.ndarray) -> np.ndarray:
        """(N, len(INPUTS)) each input's term f_i(x_i) of the logit."""
        contributions = self.ramps(x) * self.weights
        terms = np.zeros(x.shape)
        np.add.at(terms, (slice(None), self._input), contributions)
        return terms

    def expected(self, x: np.ndarray) -> np.ndarray:
        """Expected agreement of input rows x (N, len(INPUTS)), already filled and clipped."""
        return _sigmoid(self.ramps(x) @ self.weights + self.bias)

    def risk(self, x: np.ndarray, delivered: np.ndarray) -> np.ndarray:
        """Probability that the true agreement is below `LOW_AGREEMENT`, of input rows x (already
        filled and clipped) and their windows' delivered shares (`delivered_factor`)."""
        return _sigmoid(self.ramps(x) @ self.risk_weights[:-1] + self.risk_weights[-1] * (1.0 - delivered)
                        + self.risk_bias)

    def levels(self, expected: np.ndarray, risk: np.ndarray) -> np.ndarray:
        """The level (OK / WARN / ERROR) of each window from its expected agreement and risk."""
        return _levels(expected, risk, self.error, self.warn, self.risk_warn)


@dataclass(frozen=True)
class GroupTrust:
    expected: float
    level: str
    reason: str


class TrustModel:
    """Evidence profile + one `GroupModel` per group (see the module docstring)."""

    FORMAT = "predrel-trust-model/5"

    def __init__(self, profile: EvidenceProfile, groups: Mapping[str, GroupModel], window: int, clip: float = 5.0,
                 provenance: Mapping | None = None) -> None:
        if window < 1:
            raise ValueError(f"trust model: window must be >= 1 frame, got {window}")
        if not (math.isfinite(clip) and clip > 0):
            raise ValueError(f"trust model: clip must be a positive number, got {clip}")
        self.profile = profile
        self.groups = dict(groups)
        self.window = window
        self.clip = clip
        self.provenance = dict(provenance or {})
        self._tables = _AssessmentTables(self.groups)

    # ------------------------------------------------------------------------------ inputs

    def raw_inputs(self, group_signals: Mapping[str, float], deviations: Mapping[str, float]) -> np.ndarray:
        """The input row of one group-window, NaN where a value is undefined."""
        return np.array([group_signals.get(name, math.nan) for name in GROUP_SIGNALS] + evidence_inputs(deviations),
                        dtype=np.float64)

    def filled(self, rows: np.ndarray, clean: np.ndarray) -> np.ndarray:
        """Rows with NaN replaced by the clean value and deviations (and deficits) as their size, clipped to `clip`."""
        rows = np.where(np.isnan(rows), clean, rows)
        rows[..., len(GROUP_SIGNALS):] = np.minimum(np.abs(rows[..., len(GROUP_SIGNALS):]), self.clip)
        return rows

    # ------------------------------------------------------------------------------ run time

    def assess(self, group_signals: Mapping[str, Mapping[str, float]],
               features: Mapping[str, float]) -> dict[str, GroupTrust]:
        """Per group with a model and signals: expected agreement, level and reason, from the
        monitor's group signals and the window's evidence features (`TrustEvidence.features`).
        All modelled groups in one array pass over their stacked ramps (`_AssessmentTables`); the
        levels are read from the groups at each call."""
        tables = self._tables
        names = [name for name in group_signals if name in tables.index]
        if not names:
            return {}
        deviations = self.profile.deviation_array(
            np.array([features.get(name, math.nan) for name in EVIDENCE_FEATURES], dtype=np.float64))
        signals = [[math.nan] * len(GROUP_SIGNALS)] * len(tables.index)   # a row per modelled group, NaN: not assessed
        for name in names:
            signals[tables.index[name]] = [group_signals[name].get(signal, math.nan) for signal in GROUP_SIGNALS]
        x = np.empty((len(tables.index), len(INPUTS)))
        x[:, :len(GROUP_SIGNALS)] = signals
        x[:, len(GROUP_SIGNALS):] = np.concatenate([deviations[_MODEL_DEVIATIONS], deficit(deviations[_DEFICITS])])
        x = self.filled(x, tables.clean)
        delivered = delivered_factor(float(features.get(DELIVERED, math.nan)))
        ramps = np.clip((x[tables.group, tables.input] - tables.low) / tables.width, 0.0, 1.0)
        contributions = ramps * tables.weights
        logits = np.bincount(tables.group, weights=contributions, minlength=len(x)) + tables.bias
        expected = delivered * _sigmoid(logits)
        risks = _sigmoid(np.bincount(tables.group, weights=ramps * tables.risk_weights, minlength=len(x))
                         + tables.risk_undelivered * (1.0 - delivered) + tables.risk_bias)
        models = self.groups.values()          # the levels are read at each call (a fit may set them later)
        levels = _levels(expected, risks, np.array([m.error for m in models]), np.array([m.warn for m in models]),
                         np.array([m.risk_warn for m in models])).tolist()
        terms = None
        result = {}
        for name in names:
            model, row = self.groups[name], tables.index[name]
            value, risk, level = float(expected[row]), float(risks[row]), levels[row]
            reason = ""
            if level != OK:
                if terms is None:
                    terms = tables.terms(contributions)
                if level == ERROR or value < model.warn:
                    bound = model.error if level == ERROR else model.warn
                    judged = f"expected agreement {value:.2f} < {bound:.2f} ({level.lower()})"
                else:
                    judged = f"risk of agreement < {LOW_AGREEMENT} {risk:.2f} > {model.risk_warn:.2f} (warn)"
                lost = [f"{DELIVERED} {delivered:.2f}"] if delivered < DELIVERED_REASON else []
                reason = f"{judged}: " + \
                    ", ".join((lost + _strongest(terms[row] - tables.clean_terms[row], x[row]))[:2])
            result[name] = GroupTrust(value, level, reason)
        return result

    # ------------------------------------------------------------------------------ fitting

    @classmethod
    def fit(cls, profile: EvidenceProfile, samples: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
            window: int, l2: float = 1e-3, clip: float = 5.0, warn_percentile: float = 2.0,
            error: float = 0.4, segments: int = 1, provenance: Mapping | None = None) -> "TrustModel":
        """samples: group -> (raw input rows (N, len(INPUTS)), true agreements (N,), clean (N,) bool:
        the row is from a clean window[, delivered shares (N,): 1 when not given]). The clean rows
        give each input's clean value and the WARN bound: the `warn_percentile` of their expected
        agreements; ERROR is below `error` (or the WARN bound, when that is lower). segments: ramps
        per input, between quantiles of its values."""
        if segments < 1:
            raise ValueError(f"trust model: segments must be >= 1, got {segments}")
        shell = cls(profile, {}, window, clip)
        groups = {}
        for name, (rows, truth, clean, *delivered) in sorted(samples.items()):
            rows, truth, clean = np.asarray(rows, float), np.asarray(truth, float), np.asarray(clean, bool)
            delivered = delivered_factor(delivered[0]) if delivered else np.ones(len(rows))
            if len(rows) != len(truth) or len(rows) != len(clean) or len(rows) != len(delivered) \
                    or rows.shape[1:] != (len(INPUTS),):
                raise ValueError(f"group {name}: rows, truths, clean flags and delivered shares must match, "
                                 f"{len(INPUTS)} inputs")
            kept = delivered > 0                      # a window with no frame delivered has no report
            rows, truth, clean, delivered = rows[kept], truth[kept], clean[kept], delivered[kept]
            if not clean.any():
                raise ValueError(f"group {name}: no clean window to take the clean values and bounds from")
            centre = np.array([np.median(column[~np.isnan(column)]) if (~np.isnan(column)).any() else 0.0
                               for column in rows[clean].T])
            x = shell.filled(rows.copy(), centre)
            knots = [_knots(column, segments) for column in x.T]
            ramps = sum(max(len(k) - 1, 0) for k in knots)
            model = GroupModel(knots, np.zeros(ramps), 0.0, centre, warn=1.0, error=error,
                               risk_weights=np.zeros(ramps + 1), risk_bias=0.0, risk_warn=1.0)
            design = model.ramps(x)
            model.weights, model.bias = logistic_fit(design, np.clip(truth / delivered, 0.0, 1.0), l2,
                                                     signs=model.signs())
            model.risk_weights, model.risk_bias = logistic_fit(
                np.hstack([design, (1.0 - delivered)[:, None]]), (truth < LOW_AGREEMENT).astype(float), l2,
                signs=np.r_[-model.signs(), 1.0])
            model.warn = float(np.percentile(delivered[clean] * model.expected(x[clean]), warn_percentile))
            model.error = min(error, model.warn)
            model.risk_warn = float(np.percentile(model.risk(x[clean], delivered[clean]), 100.0 - warn_percentile))
            groups[name] = model
        return cls(profile, groups, window, clip, provenance)

    # ------------------------------------------------------------------------------ files

    def to_dict(self) -> dict:
        return {"format": self.FORMAT, "window": self.window, "clip": self.clip, "inputs": list(INPUTS),
                "provenance": self.provenance, "evidence_profile": self.profile.to_dict(),
                "groups": {name: {"knots": [[round(float(k), 6) for k in knots] for knots in g.knots],
                                  "weights": [round(float(w), 6) for w in g.weights], "bias": round(g.bias, 6),
                                  "clean": [round(float(c), 6) for c in g.clean], "warn": round(g.warn, 4),
                                  "error": round(g.error, 4),
                                  "risk_weights": [round(float(w), 6) for w in g.risk_weights],
                                  "risk_bias": round(g.risk_bias, 6), "risk_warn": round(g.risk_warn, 4)}
                           for name, g in self.groups.items()}}

    @classmethod
    def from_dict(cls, data: Mapping) -> "TrustModel":
        if data.get("format") != cls.FORMAT:
            raise ValueError(f"trust model: expected format {cls.FORMAT!r}, got {data.get('format')!r} "
                             f"(fit it again with `predrel trust fit`)")
        if list(data.get("inputs", ())) != list(INPUTS):
            raise ValueError("trust model: its inputs are not this version's (fit it again with `predrel trust fit`)")
        groups = {name: GroupModel([np.array(k, float) for k in g["knots"]], np.array(g["weights"], float),
                                   float(g["bias"]), np.array(g["clean"], float),
                                   float(g["warn"]), float(g["error"]), np.array(g["risk_weights"], float),
                                   float(g["risk_bias"]), float(g["risk_warn"])) for name, g in data["groups"].items()}
        return cls(EvidenceProfile.from_dict(data["evidence_profile"]), groups, int(data["window"]),
                   float(data.get("clip", 5.0)), data.get("provenance"))

    def save(self, path: str | Path) -> Path:
        return write_data(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> "TrustModel":
        data = read_data(path)
        if not isinstance(data, Mapping):
            raise ValueError(f"{path}: expected a trust model mapping")
        return cls.from_dict(data)


class _AssessmentTables:
    """The ramps of all groups' models stacked into flat arrays, so that `TrustModel.assess` takes
    every group in one pass: per ramp its group's row, input, lower knot, width, weight and risk weight (each
    group's ramps in its own order, so a group's terms add up as `GroupModel.terms` adds them); per
    group its bias, its risk model's bias and undelivered weight, clean values and the terms of its
    clean values (for the reasons). Built once from the groups' knots, weights, biases and clean
    values; the levels (`warn`, `error`, `risk_warn`) are not in them (a fit may set those later)."""

    def __init__(self, groups: Mapping[str, GroupModel]) -> None:
        models = list(groups.values())
        self.index = {name: row for row, name in enumerate(groups)}
        self.group = np.concatenate([np.full(len(m.weights), row, dtype=np.intp) for row, m in enumerate(models)]
                                    or [np.zeros(0, dtype=np.intp)])
        self.input, self.low, self.width, self.weights = (
            np.concatenate([getattr(m, part) for m in models] or [np.zeros(0)])
            for part in ("_input", "_low", "_width", "weights"))
        self.risk_weights = np.concatenate([m.risk_weights[:-1] for m in models] or [np.zeros(0)])
        self.risk_undelivered = np.array([m.risk_weights[-1] for m in models])
        self.risk_bias = np.array([m.risk_bias for m in models])
        self.bias = np.array([m.bias for m in models])
        self.clean = np.array([m.clean for m in models]).reshape(len(models), len(INPUTS))
        self.clean_terms = np.array([m.terms(m.clean[None, :])[0] for m in models]).reshape(len(models), len(INPUTS))
        #: the ramps of one input of one group are consecutive: where each such run starts, and its cell
        cell = self.group * len(INPUTS) + self.input
        self._starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]]) if len(cell) else np.zeros(0, np.intp)
        self._cells = cell[self._starts]

    def terms(self, contributions: np.ndarray) -> np.ndarray:
        """(groups, len(INPUTS)) each input's term of each group's logit from the ramps' contributions
        (each run summed in order, as `GroupModel.terms` adds them)."""
        terms = np.zeros(len(self.bias) * len(INPUTS))
        if len(self._cells):
            terms[self._cells] = np.add.reduceat(contributions, self._starts)
        return terms.reshape(len(self.bias), len(INPUTS))


def _strongest(pull: np.ndarray, x: np.ndarray, count: int = 2) -> list[str]:
    """The inputs that pull the expected agreement down most (per input its term minus its clean
    value's), with their values."""
    order = np.argsort(pull)
    return [f"{INPUTS[i]} {x[i]:+.2f}" if INPUTS[i] in MODEL_DEVIATIONS and INPUTS[i] != "score_shift"
            else f"{INPUTS[i]} {x[i]:.2f}" for i in order[pull[order] < 0][:count].tolist()] \
        or ["no single input stands out"]


def _knots(values: np.ndarray, segments: int) -> np.ndarray:
    """Knots at `segments` + 1 evenly spaced quantiles of an input's values (repeats merged: an input
    that is mostly 0 gets fewer; one with a single value none, and is not used); rounded as the model
    file keeps them."""
    return np.unique(np.round(np.quantile(values, np.linspace(0.0, 1.0, segments + 1)), 6))


def logistic_fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, signs: np.ndarray | None = None,
                 iterations: int = 50) -> tuple[np.ndarray, float]:
    """Weights and bias minimising the mean cross-entropy of sigmoid(x w + b) against soft labels y
    in [0, 1] plus l2 * |w|^2 (Newton's method; the bias is not penalised). signs: per weight +1
    (held >= 0), -1 (held <= 0) or 0 (free); a weight that comes out of its sign is held at 0 and
    the rest refitted (an active set), until none does."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if x.ndim != 2 or len(x) != len(y) or len(x) == 0:
        raise ValueError(f"logistic_fit: x must be (N, D) with N = len(y) > 0, got {x.shape} and {y.shape}")
    signs = np.zeros(x.shape[1]) if signs is None else np.asarray(signs, float)
    if signs.shape != (x.shape[1],):
        raise ValueError(f"logistic_fit: signs must have one entry per column of x ({x.shape[1]})")
    free = np.ones(x.shape[1], dtype=bool)
    while True:
        weights, bias = _newton(x[:, free], y, l2, iterations)
        full = np.zeros(x.shape[1])
        full[free] = weights
        wrong = free & (full * signs < 0)
        if not wrong.any():
            return full, bias
        free &= ~wrong


def _newton(x: np.ndarray, y: np.ndarray, l2: float, iterations: int) -> tuple[np.ndarray, float]:
    design = np.hstack([x, np.ones((len(x), 1))])
    penalty = np.full(design.shape[1], 2.0 * l2)
    penalty[-1] = 0.0
    theta = np.zeros(design.shape[1])
    mean = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
    theta[-1] = math.log(mean / (1 - mean))
    for _ in range(iterations):
        p = _sigmoid(design @ theta)
        gradient = design.T @ (p - y) / len(y) + penalty * theta
        hessian = (design * (p * (1 - p))[:, None]).T @ design / len(y) + np.diag(penalty) + 1e-9 * np.eye(len(theta))
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    return theta[:-1], float(theta[-1])


def _sigmoid(logits: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-logits))


def _levels(expected: np.ndarray, risk: np.ndarray, error: float | np.ndarray, warn: float | np.ndarray,
            risk_warn: float | np.ndarray) -> np.ndarray:
    """OK / WARN / ERROR of windows (`GroupModel.levels`); the bounds are scalars or one per window."""
    return np.where(expected < error, ERROR, np.where((expected < warn) | (risk > risk_warn), WARN, OK))
