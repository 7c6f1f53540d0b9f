"""PNG figures of a sweep (matplotlib, Agg backend): the paper's Figures 4-8 for this data.

prs_heatmap (Fig. 4, Table 8), pds_heatmap (Fig. 5, Table 10), tpc_curves (Fig. 6, Table 11),
calibration_diagram (Fig. 7, with ECE), dis_bars (Fig. 8). Undefined cells are shown blank ("n/a").
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.reliability.calibration import CalibrationSummary
from predrel_ros.tools.evaluation.tables import GROUP_TITLES, KIND_SHORT, KIND_TITLES
from predrel_ros.tools.figures import save_figure


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _heatmap(matrix: np.ndarray, rows: Sequence[str], columns: Sequence[str], title: str, label: str, path: Path,
             cmap: str, digits: int, vmin=None, vmax=None) -> Path:
    plt = _pyplot()
    height = 1.2 + 0.42 * len(rows)
    figure, axes = plt.subplots(figsize=(1.6 + 1.15 * len(columns), height))
    masked = np.ma.masked_invalid(matrix)
    image = axes.imshow(masked, cmap=cmap, aspect="auto", vmin=vmin, vmax=vmax)
    axes.set_xticks(range(len(columns)), columns)
    axes.set_yticks(range(len(rows)), rows)
    for r in range(matrix.shape[0]):
        for c in range(matrix.shape[1]):
            value = matrix[r, c]
            dark = False
            if math.isfinite(value):
                red, green, blue, _ = image.cmap(image.norm(value))
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            text = "n/a" if not math.isfinite(value) else f"{value:.{digits}f}"
            axes.text(c, r, text, ha="center", va="center", fontsize=8, color="white" if dark else "black")
    figure.colorbar(image, ax=axes, label=label)
    axes.set_title(title, fontsize=10)
    return save_figure(figure, path, dpi=120)


def prs_heatmap(table8: Mapping, kinds: Sequence[str], severities: Sequence[int], clean: float, path: Path) -> Path:
    matrix = np.array([[table8[k][s] for s in severities] for k in kinds], dtype=float)
    return _heatmap(matrix, [KIND_TITLES[k] for k in kinds], [f"s={s}" for s in severities],
                    f"Average PRS by degradation and severity (clean: {clean:.2f})", "PRS", path, "viridis", 2,
                    0.0, 1.0)


def pds_heatmap(table10: Mapping, kinds: Sequence[str], path: Path) -> Path:
    rows = list(table10)
    matrix = np.array([[table10[r][k] for k in kinds] for r in rows], dtype=float)
    return _heatmap(matrix, rows, [KIND_SHORT[k] for k in kinds], "Predicate degradation sensitivity (PDS)", "PDS",
                    path, "magma_r", 3)


def tpc_curves(table11: Mapping, clean_tpc: Mapping[str, float], severities: Sequence[int], path: Path) -> Path:
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 4))
    xs = [0, *severities]
    for group in vocabulary.GROUPS:
        ys = [clean_tpc.get(group, float("nan"))] + [table11[group][s] for s in severities]
        axes.plot(xs, ys, marker="o", label=GROUP_TITLES[group])
    axes.set_xlabel("severity (0 = clean)")
    axes.set_ylabel("TPC (averaged over degradation kinds)")
    axes.set_ylim(0, 1.02)
    axes.set_xticks(xs)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    axes.set_title("Temporal predicate consistency by group", fontsize=10)
    return save_figure(figure, path, dpi=120)


def calibration_diagram(summaries: Mapping[str, CalibrationSummary], path: Path) -> Path:
    """Observed agreement per confidence bin, one line per summary (e.g. clean, degraded)."""
    plt = _pyplot()
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(5.5, 6), sharex=True,
                                         gridspec_kw={"height_ratios": [3, 1]})
    top.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfect calibration")
    width = 1.0 / max(len(s.counts) for s in summaries.values()) if summaries else 0.1
    for offset, (name, summary) in enumerate(summaries.items()):
        confidence = np.array(summary.mean_confidence, dtype=float)
        agreement = np.array(summary.agreement, dtype=float)
        filled = np.isfinite(confidence)
        top.plot(confidence[filled], agreement[filled], marker="o", label=f"{name} (ECE {summary.ece:.3f}, "
                                                                           f"n={summary.samples})")
        centres = (np.array(summary.edges[:-1]) + np.array(summary.edges[1:])) / 2
        shift = (offset - (len(summaries) - 1) / 2) * width / max(len(summaries), 1)
        bottom.bar(centres + shift, np.array(summary.counts) / max(summary.samples, 1),
                   width=width / max(len(summaries), 1),
                   label=name)
    top.set_ylabel("observed agreement with the reference")
    top.set_xlim(0, 1)
    top.set_ylim(0, 1.02)
    top.grid(alpha=0.3)
    top.legend(fontsize=7)
    top.set_title("Confidence vs reliability", fontsize=10)
    bottom.set_xlabel("confidence")
    bottom.set_ylabel("share")
    return save_figure(figure, path, dpi=120)


def dis_bars(dis: Mapping[str, Mapping], dis_mean: Mapping[str, Mapping], severities: Sequence[int],
             path: Path) -> Path:
    """DIS (accuracy form) per predicate: masking on clean predicates, and masking on degraded
    predicates averaged over the kinds at each severity."""
    plt = _pyplot()
    names = list(dis)
    series = {"clean": [dis[n]["clean"]["dis_accuracy"] for n in names]}
    for s in severities:
        series[f"s={s}"] = [dis_mean[n][s]["dis_accuracy"] for n in names]
    figure, axes = plt.subplots(figsize=(1.6 + 0.9 * len(names), 4))
    width = 0.8 / len(series)
    xs = np.arange(len(names))
    for i, (label, values) in enumerate(series.items()):
        axes.bar(xs + (i - (len(series) - 1) / 2) * width, np.nan_to_num(np.array(values, float)), width=width,
                 label=label)
    axes.set_xticks(xs, names, rotation=30, ha="right")
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_ylabel("DIS = A0(all) - A(without k)")
    axes.set_title("Downstream impact of each predicate", fontsize=10)
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize=7, ncol=2)
    return save_figure(figure, path, dpi=120)
