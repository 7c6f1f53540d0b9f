"""From episode rows and recognizer outcomes to the paper's tables (8-15), the findings, and the
long-form summary with standard deviations and 95 % confidence intervals.

Averaging, step by step (each step ignores undefined values, e.g. containment_event in an episode
without a container):

1. a predicate row's metric per (episode, kind, severity) is `scores.episode_rows`;
2. a group's value per (episode, kind, severity) is the mean over its predicates (contact: contact;
   static: static; dynamic: dynamic; derived: grasp, release, active_hand, containment_event,
   support_event);
3. a cell (row or group, kind, severity) is the mean over episodes (paper 4.5), reported with its
   sample std and 95 % t-interval (`reliability.aggregation`);
4. Table 8 (kind x severity) averages the four group cells; Tables 9, 11 and 12 (group x severity)
   average the cells over the evaluated kinds, and take s = 0 from the clean condition; Table 10 is
   PDS (`metrics.pds`, endpoint) over the severities of the value-row cells, per kind, and their mean.

Recognizer scores pool the frames of all episodes (accuracy and macro-F1 over every scored frame,
as `downstream.evaluation` does); a row "at s" averages the kinds. DIS_k at (kind, s) is
`metrics.dis_accuracy(A(clean, all predicates), A(kind s, without k))` and `metrics.dis_prob` of the
true-class probabilities of the same frames.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy import stats

from predrel_ros.action import metrics as action_metrics
from predrel_ros.degradations import NONE
from predrel_ros.predicates import vocabulary
from predrel_ros.reliability import metrics
from predrel_ros.reliability.aggregation import aggregate
from predrel_ros.reliability.calibration import CalibrationSummary
from predrel_ros.tools.evaluation import action
from predrel_ros.tools.evaluation.scores import PREDICATE, VALUE, VALUE_ROWS

NAN = float("nan")
KIND_TITLES = {"blur": "Blur", "occlusion": "Occlusion", "illumination": "Illumination",
               "low_resolution": "Low resolution", "frame_drop": "Frame dropping", "detection_noise": "Detection noise",
               "occlusion_flat": "Occlusion (flat)"}
KIND_SHORT = {"blur": "Blur", "occlusion": "Occ.", "illumination": "Illum.", "low_resolution": "Low res.",
              "frame_drop": "Frame drop", "detection_noise": "Det. noise", "occlusion_flat": "Occ. flat"}
GROUP_TITLES = {vocabulary.CONTACT: "Contact relations", vocabulary.STATIC: "Static spatial relations",
                vocabulary.DYNAMIC: "Dynamic spatial relations", vocabulary.DERIVED: "Derived predicates"}
METRICS = ("prs", "agreement", "tpc", "tpc_s", "cws", "mean_confidence", "degraded_unk_rate", "unk_on_known_reference")


def nanmean(values: Iterable[float]) -> float:
    finite = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return float(np.mean(finite)) if finite else NAN


# ----------------------------------------------------------------------------------- cells

def group_rows(rows: Sequence[Mapping]) -> list[dict]:
    """Per (episode, group, kind, severity): the mean of the group's predicate rows (step 2)."""
    buckets: dict[tuple, list[Mapping]] = {}
    for row in rows:
        if row["level"] == PREDICATE:
            buckets.setdefault((row["episode"], row["group"], row["kind"], row["severity"]), []).append(row)
    out = []
    for (episode, group, kind, severity), members in buckets.items():
        out.append({"episode": episode, "group": group, "kind": kind, "severity": severity,
                    **{metric: nanmean(member[metric] for member in members) for metric in METRICS}})
    return out


class Cells:
    """Episode means (step 3) of predicate rows, value rows and groups, keyed (name, kind, severity)."""

    def __init__(self, rows: Sequence[Mapping]) -> None:
        predicate_rows = [row for row in rows if row["level"] == PREDICATE]
        value_rows = [row for row in rows if row["level"] == VALUE]
        self.predicates = aggregate(predicate_rows, by=("row", "kind", "severity"), metrics=METRICS)
        self.values = aggregate(value_rows, by=("row", "kind", "severity"), metrics=("prs", "agreement"))
        self.groups = aggregate(group_rows(rows), by=("group", "kind", "severity"), metrics=METRICS)

    @staticmethod
    def _mean(table, key: tuple, metric: str) -> float:
        summary = table.get(key, {}).get(metric)
        return NAN if summary is None else summary.mean

    def group(self, group: str, kind: str, severity: int, metric: str = "prs") -> float:
        return self._mean(self.groups, (group, kind, severity), metric)

    def value(self, label: str, kind: str, severity: int, metric: str = "prs") -> float:
        return self._mean(self.values, (label, kind, severity), metric)

    def predicate(self, name: str, kind: str, severity: int, metric: str = "prs") -> float:
        return self._mean(self.predicates, (name, kind, severity), metric)


# ----------------------------------------------------------------------------------- recognizer

class ActionScores:
    """Pooled recognizer scores per (variant, kind, severity) over the episodes' frames."""

    def __init__(self, outcomes: Sequence[tuple[np.ndarray, Mapping]], n_classes: int) -> None:
        pooled: dict[tuple, tuple[list, list, list]] = {}
        for y_true, predictions in outcomes:
            for key, (y_pred, p_true) in predictions.items():
                truth, predicted, probability = pooled.setdefault(key, ([], [], []))
                truth.append(y_true), predicted.append(y_pred), probability.append(p_true)
        self.n_classes = n_classes
        self.scores: dict[tuple, dict] = {}
        self._p_true: dict[tuple, np.ndarray] = {}
        for key, (truth, predicted, probability) in pooled.items():
            y_true, y_pred, p_true = np.concatenate(truth), np.concatenate(predicted), np.concatenate(probability)
            scored = y_true >= 0
            self._p_true[key] = p_true[scored]
            self.scores[key] = {"accuracy": action_metrics.accuracy(y_true, y_pred, n_classes),
                                "macro_f1": action_metrics.macro_f1(y_true, y_pred, n_classes),
                                "mean_p_true": float(p_true[scored].mean()) if scored.any() else NAN,
                                "frames": int(scored.sum())}

    def get(self, variant: str, kind: str, severity: int, metric: str = "accuracy") -> float:
        return self.scores.get((variant, kind, severity), {}).get(metric, NAN)

    def mean_over_kinds(self, variant: str, kinds: Sequence[str], severity: int, metric: str = "accuracy") -> float:
        return nanmean(self.get(variant, kind, severity, metric) for kind in kinds)

    def dis(self, name: str, kind: str, severity: int) -> dict[str, float]:
        """DIS of predicate (or group) `name` at (kind, severity), accuracy and probability forms."""
        clean = (action.FULL, NONE, 0)
        without = (action.mask_variant(name), kind, severity)
        if clean not in self.scores or without not in self.scores:
            return {"dis_accuracy": NAN, "dis_macro_f1": NAN, "dis_prob": NAN}
        return {"dis_accuracy": metrics.dis_accuracy(self.scores[clean]["accuracy"], self.scores[without]["accuracy"]),
                "dis_macro_f1": metrics.dis_accuracy(self.scores[clean]["macro_f1"], self.scores[without]["macro_f1"]),
                "dis_prob": metrics.dis_prob(self._p_true[clean], self._p_true[without])}


# ----------------------------------------------------------------------------------- tables

def build_tables(cells: Cells, actions: ActionScores | None, kinds: Sequence[str], severities: Sequence[int],
                 moderate: int, severe: int, dataset_label: str) -> dict:
    """The numbers of Tables 8-15 (plain dicts; NaN where not available)."""
    groups = vocabulary.GROUPS
    tables: dict = {}
    tables["clean_prs"] = nanmean(cells.group(g, NONE, 0) for g in groups)
    tables["table8"] = {kind: {s: nanmean(cells.group(g, kind, s) for g in groups) for s in severities}
                        for kind in kinds}

    def by_group(metric: str, with_clean: bool) -> dict:
        out = {}
        for g in groups:
            row = {0: cells.group(g, NONE, 0, metric)} if with_clean else {}
            row.update({s: nanmean(cells.group(g, kind, s, metric) for kind in kinds) for s in severities})
            out[g] = row
        return out

    tables["table9"] = by_group("prs", True)
    tables["table10"] = {}
    for value_row in VALUE_ROWS:
        per_kind = {}
        for kind in kinds:
            scores = {s: cells.value(value_row.label, kind, s) for s in severities}
            scores = {s: v for s, v in scores.items() if not math.isnan(v)}
            per_kind[kind] = metrics.pds(scores, "endpoint") if len(scores) >= 2 else NAN
        per_kind["mean"] = nanmean(per_kind.values())
        tables["table10"][value_row.label] = per_kind
    tables["table11"] = by_group("tpc", False)
    tables["table12"] = by_group("cws", False)

    prs_moderate = nanmean(tables["table8"][kind].get(moderate, NAN) for kind in kinds)
    agreement_moderate = nanmean(cells.group(g, kind, moderate, "agreement") for g in groups for kind in kinds)
    tpc_moderate = nanmean(tables["table11"][g].get(moderate, NAN) for g in groups)
    cws_moderate = nanmean(tables["table12"][g].get(moderate, NAN) for g in groups)

    if actions is not None:
        def mean(variant: str, severity: int, metric: str) -> float:
            return actions.mean_over_kinds(variant, kinds, severity, metric)

        def row(variant: str, kind: str | None, severity: int) -> dict:
            if kind is None:
                return {"accuracy": mean(variant, severity, "accuracy"),
                        "macro_f1": mean(variant, severity, "macro_f1")}
            return {"accuracy": actions.get(variant, kind, severity), "macro_f1": actions.get(variant, kind, severity,
                                                                                              "macro_f1")}
        tables["table13"] = {
            "Clean predicates": row(action.FULL, NONE, 0),
            f"Degraded predicates, s={moderate}": row(action.FULL, None, moderate),
            f"Degraded predicates, s={severe}": row(action.FULL, None, severe),
            f"Degraded predicates, s={moderate}, without confidence weighting":
                row(action.NO_CONFIDENCE, None, moderate),
            "Mask contact relations": row(action.mask_variant(vocabulary.CONTACT), NONE, 0),
            "Mask dynamic spatial relations": row(action.mask_variant(vocabulary.DYNAMIC), NONE, 0),
            "Mask derived predicates": row(action.mask_variant(vocabulary.DERIVED), NONE, 0),
        }
        tables["table13_extra"] = {
            "Clean predicates, without confidence weighting": row(action.NO_CONFIDENCE, NONE, 0),
            "Clean predicates, frame-level recognizer": row(action.FRAME_LEVEL, NONE, 0),
            "Mask static spatial relations": row(action.mask_variant(vocabulary.STATIC), NONE, 0),
            f"Degraded predicates, s={moderate}, frame-level recognizer": row(action.FRAME_LEVEL, None, moderate),
            f"Degraded predicates, s={severe}, without confidence weighting": row(action.NO_CONFIDENCE, None, severe),
        }
        tables["dis"] = {name: {"clean": actions.dis(name, NONE, 0),
                                **{f"{kind}:{s}": actions.dis(name, kind, s) for kind in kinds for s in severities}}
                         for name in action.MASKS}
        tables["dis_mean"] = {name: {s: {metric: nanmean(actions.dis(name, kind, s)[metric] for kind in kinds)
                                         for metric in ("dis_accuracy", "dis_prob")} for s in severities}
                              for name in action.MASKS}
        full = tables["table13"][f"Degraded predicates, s={moderate}"]
        no_confidence = tables["table13"][f"Degraded predicates, s={moderate}, without confidence weighting"]
        frame_level = row(action.FRAME_LEVEL, None, moderate)
    else:
        full = no_confidence = frame_level = {"accuracy": NAN, "macro_f1": NAN}
    tables["table14"] = {dataset_label: {"prs": prs_moderate, "tpc": tpc_moderate, "accuracy": full["accuracy"]}}
    dash = NAN
    tables["table15"] = {
        "Full framework": (prs_moderate, tpc_moderate, cws_moderate, full["accuracy"], full["macro_f1"]),
        "Action-level robustness only": (dash, dash, dash, full["accuracy"], full["macro_f1"]),
        "Unweighted predicate agreement": (agreement_moderate, dash, dash, no_confidence["accuracy"],
                                           no_confidence["macro_f1"]),
        "Frame-level predicate evaluation": (prs_moderate, dash, cws_moderate, frame_level["accuracy"],
                                             frame_level["macro_f1"]),
        "Without confidence weighting": (agreement_moderate, tpc_moderate, dash, no_confidence["accuracy"],
                                         no_confidence["macro_f1"]),
        "Without temporal consistency": (prs_moderate, dash, cws_moderate, full["accuracy"], full["macro_f1"]),
        "Without degradation sensitivity": (prs_moderate, tpc_moderate, cws_moderate, full["accuracy"],
                                            full["macro_f1"]),
        "Without downstream-impact analysis": (prs_moderate, tpc_moderate, cws_moderate, full["accuracy"],
                                               full["macro_f1"]),
    }
    return tables


# ----------------------------------------------------------------------------------- findings

def findings(tables: dict, kinds: Sequence[str], severities: Sequence[int], moderate: int,
             calibration: CalibrationSummary | None = None) -> list[dict]:
    """The paper's main findings (5.1-5.5, 6.1), each with what we measured and whether it holds
    (None: this run cannot test it, e.g. fewer than four kinds or no recognizer). `calibration`:
    the confidence bins of the degraded estimates (section 5.4)."""
    out = []
    table8 = tables["table8"]
    ordered = sorted(severities)
    monotonic = {}
    for kind in kinds:
        values = [table8[kind][s] for s in ordered]
        finite = [v for v in values if not math.isnan(v)]
        monotonic[kind] = len(finite) >= 2 and all(b <= a + 1e-9 for a, b in zip(finite, finite[1:]))
    out.append({"finding": "PRS falls monotonically with severity for every degradation kind",
                "measured": {kind: [round(table8[kind][s], 3) for s in ordered] for kind in kinds},
                "holds": all(monotonic.values()) if monotonic and len(ordered) > 1 else None,
                "detail": f"monotonic for {sum(monotonic.values())} of {len(monotonic)} kinds: "
                          + ", ".join(kind for kind, ok in monotonic.items() if ok)})
    table9 = tables["table9"]
    worst = max(severities)
    at_worst = {g: table9[g].get(worst, NAN) for g in vocabulary.GROUPS}
    drop = {g: table9[g].get(0, NAN) - table9[g].get(worst, NAN) for g in vocabulary.GROUPS}

    def extreme(values: dict, pick, group: str) -> bool | None:
        finite = {g: v for g, v in values.items() if not math.isnan(v)}
        return pick(finite, key=finite.get) == group if len(finite) > 1 else None

    for claim, group, by_level, by_drop in (("static spatial relations are the most robust group", vocabulary.STATIC,
                                             max, min),
                                            ("derived predicates are the most fragile group", vocabulary.DERIVED,
                                             min, max)):
        out.append({"finding": f"{claim}: {'highest' if by_level is max else 'lowest'} PRS at s={worst}",
                    "measured": {g: round(v, 3) for g, v in at_worst.items()},
                    "holds": extreme(at_worst, by_level, group), "detail": ""})
        out.append({"finding": f"{claim}: {'smallest' if by_drop is min else 'largest'} PRS drop from clean to "
                               f"s={worst}",
                    "measured": {g: round(v, 3) for g, v in drop.items()},
                    "holds": extreme(drop, by_drop, group), "detail": ""})
    strongest = sorted((kind for kind in kinds if not math.isnan(table8[kind][worst])), key=lambda k: table8[k][worst])
    expected = {"detection_noise", "occlusion", "frame_drop"}
    out.append({"finding": f"detection noise, occlusion and frame dropping are the strongest degradations "
                           f"(lowest PRS at s={worst})",
                "measured": {kind: round(table8[kind][worst], 3) for kind in strongest},
                "holds": ((set(strongest[:3]) == expected) if len(strongest) > 3 and expected <= set(strongest)
                          else None),
                "detail": "from strongest to mildest: " + ", ".join(strongest)})
    if calibration is not None:
        out.append(_calibration_finding(calibration))
    table13 = tables.get("table13")
    if table13 is not None:
        weighted = table13[f"Degraded predicates, s={moderate}"]
        unweighted = table13[f"Degraded predicates, s={moderate}, without confidence weighting"]
        gains = {metric: weighted[metric] - unweighted[metric] for metric in ("accuracy", "macro_f1")}
        out.append({"finding": f"confidence weighting helps the downstream task at s={moderate} "
                               "(accuracy and macro-F1)",
                    "measured": {f"{metric} with / without": f"{weighted[metric]:.3f} / {unweighted[metric]:.3f}"
                                 for metric in gains},
                    "holds": None if any(math.isnan(g) for g in gains.values()) else all(g > 0 for g in gains.values()),
                    "detail": ", ".join(f"{metric} {gain:+.3f}" for metric, gain in gains.items())})
    return out


def _calibration_finding(calibration: CalibrationSummary, min_share: float = 0.01) -> dict:
    """Agreement rises with confidence: Spearman's rho between the bins' mean confidence and their
    observed agreement, over the bins holding at least `min_share` of the estimates (>= 0.9 holds)."""
    total = max(calibration.samples, 1)
    bins = [(c, a) for c, a, n in zip(calibration.mean_confidence, calibration.agreement, calibration.counts)
            if n >= min_share * total and not math.isnan(c)]
    rho = float(stats.spearmanr([c for c, _ in bins], [a for _, a in bins]).statistic) if len(bins) >= 3 else NAN
    return {"finding": "higher confidence means higher agreement with the reference (degraded conditions)",
            "measured": {"spearman_rho": round(rho, 3), "ece": round(calibration.ece, 3),
                         "bins": [[round(c, 2), round(a, 2)] for c, a in bins]},
            "holds": None if math.isnan(rho) else rho >= 0.9,
            "detail": f"rank correlation of bin confidence and agreement over {len(bins)} bins with >= "
                      f"{100 * min_share:.0f} % of the estimates"}


# ----------------------------------------------------------------------------------- markdown

def shown(value: float | None, digits: int = 2) -> str:
    """`digits` decimals; "n/a" for None or NaN."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _dash(value: float, digits: int = 2) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(tables: dict, found: list[dict], kinds: Sequence[str], severities: Sequence[int], moderate: int,
             severe: int, not_applicable: Sequence[str], title: str) -> str:
    """Tables 8-15 in the paper's shapes, and the findings."""
    sev = [f"s={s}" for s in severities]
    parts = [f"# {title}", ""]
    if not_applicable:
        parts += [f"Not applicable to this front-end (left out of every average): {', '.join(not_applicable)}.", ""]
    parts += [f"## Table 8: average PRS by degradation and severity (clean: {shown(tables['clean_prs'])})", "",
              _table(["Degradation"] + sev, ([KIND_TITLES[k]] + [shown(tables["table8"][k][s]) for s in severities]
                                             for k in kinds)), ""]
    parts += ["## Table 9: average PRS by predicate group (averaged over degradation kinds)", "",
              _table(["Predicate group", "s=0"] + sev,
                     ([GROUP_TITLES[g]] + [shown(tables["table9"][g][s]) for s in (0, *severities)]
                      for g in vocabulary.GROUPS)), ""]
    parts += ["## Table 10: PDS of value-level predicates by degradation", "",
              _table(["Predicate"] + [KIND_SHORT[k] for k in kinds] + ["Mean"],
                     ([label] + [shown(row[k], 3) for k in kinds] + [shown(row["mean"], 3)]
                      for label, row in tables["table10"].items())), ""]
    parts += ["## Table 11: average TPC by predicate group (averaged over degradation kinds)", "",
              _table(["Predicate group"] + sev, ([GROUP_TITLES[g]] + [shown(tables["table11"][g][s])
                                                                        for s in severities]
                                                 for g in vocabulary.GROUPS)), ""]
    parts += ["## Table 12: average CWS by predicate group (averaged over degradation kinds)", "",
              _table(["Predicate group"] + sev, ([GROUP_TITLES[g]] + [shown(tables["table12"][g][s])
                                                                        for s in severities]
                                                 for g in vocabulary.GROUPS)), ""]
    if "table13" in tables:
        parts += ["## Table 13: downstream primitive recognition under predicate input conditions", "",
                  _table(["Predicate input condition", "Accuracy", "Macro-F1"],
                         ([name, shown(v["accuracy"]), shown(v["macro_f1"])] for name, v in tables["table13"].items())),
                  "", "Further conditions (not in the paper):", "",
                  _table(["Predicate input condition", "Accuracy", "Macro-F1"],
                         ([name, shown(v["accuracy"]), shown(v["macro_f1"])]
                          for name, v in tables["table13_extra"].items())), ""]
        parts += ["## DIS per predicate (accuracy form; probability form in brackets)", "",
                  _table(["Predicate", "clean (masking only)"] + [f"mean over kinds, s={s}" for s in severities],
                         ([name, f"{shown(row['clean']['dis_accuracy'], 3)} ({shown(row['clean']['dis_prob'], 3)})"]
                          + [f"{shown(tables['dis_mean'][name][s]['dis_accuracy'], 3)} "
                             f"({shown(tables['dis_mean'][name][s]['dis_prob'], 3)})" for s in severities]
                          for name, row in tables["dis"].items())), ""]
    parts += [f"## Table 14: this dataset at moderate degradation (s={moderate})", "",
              _table(["Dataset", "Avg. PRS", "Avg. TPC", "Downstream acc."],
                     ([name, shown(v["prs"]), shown(v["tpc"]), shown(v["accuracy"])]
                      for name, v in tables["table14"].items())), ""]
    parts += [f"## Table 15: ablations at moderate degradation (s={moderate})", "",
              _table(["Method", "Pred. score", "TPC", "CWS", "Accuracy", "Macro-F1"],
                     ([name] + [_dash(v) for v in values] for name, values in tables["table15"].items())), ""]
    parts += ["## Findings of the paper, checked on this run", "",
              _table(["Finding", "Holds", "Measured"],
                     ([f["finding"], {True: "yes", False: "no", None: "not testable here"}[f["holds"]],
                       (f["detail"] + "; " if f["detail"] else "")
                       + ", ".join(f"{k}: {v}" for k, v in f["measured"].items())]
                      for f in found)), ""]
    return "\n".join(parts)


# ----------------------------------------------------------------------------------- long form

def summary_records(cells: Cells) -> list[dict]:
    """Every cell with n, mean, std and the 95 % interval, one record per (level, name, kind,
    severity, metric)."""
    records = []
    for level, table in (("predicate", cells.predicates), ("value", cells.values), ("group", cells.groups)):
        for (name, kind, severity), summaries in table.items():
            for metric, summary in summaries.items():
                records.append({"level": level, "name": name, "kind": kind, "severity": severity, "metric": metric,
                                **summary.to_dict()})
    return records
