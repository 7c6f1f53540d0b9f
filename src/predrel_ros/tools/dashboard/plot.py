"""The plot of a sweep summary (`SweepRecorder.summary()`): per degradation kind, each predicate
group's agreement with the clean twin against severity (solid) over the trust bands (green OK,
yellow WARN, red ERROR: the agreement limits of the trust config, which is what trust judges with a
reference), its PRS (dashed: the agreement weighted by confidence, as the paper defines it), and
below it the downstream action's accuracy, its accuracy on the frames it was trusted, and how often
it was trusted."""
from __future__ import annotations

from pathlib import Path

from predrel_ros.predicates.vocabulary import GROUPS
from predrel_ros.tools.figures import save_figure

BAND_COLOURS = {"OK": "#d9f2d9", "WARN": "#fff2c2", "ERROR": "#f8d0d0"}
GROUP_MARKERS = {"contact": "o", "static": "s", "dynamic": "^", "derived": "D"}


def _kinds(summary: dict) -> list[str]:
    """Degradation kinds in order of appearance; the clean condition joins each kind at severity 0."""
    kinds: list[str] = []
    for condition in summary["conditions"]:
        if condition["kind"] != "none" and condition["kind"] not in kinds:
            kinds.append(condition["kind"])
    return kinds or ["none"]


def _series(summary: dict, kind: str) -> list[dict]:
    rows = [c for c in summary["conditions"] if c["kind"] == kind or (c["kind"] == "none" and c["severity"] == 0)]
    return sorted(rows, key=lambda c: c["severity"])


def plot_summary(summary: dict, path: Path | str, title: str = "") -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = _kinds(summary)
    limits = summary["agreement_limits"]
    figure, axes = plt.subplots(2, len(kinds), figsize=(5.2 * len(kinds), 7.2), squeeze=False,
                                gridspec_kw={"height_ratios": [3, 2]}, sharey="row")
    for column, kind in enumerate(kinds):
        rows = _series(summary, kind)
        severities = [row["severity"] for row in rows]
        top, bottom = axes[0][column], axes[1][column]
        top.axhspan(limits["warn"], 1.05, color=BAND_COLOURS["OK"], zorder=0)
        top.axhspan(limits["error"], limits["warn"], color=BAND_COLOURS["WARN"], zorder=0)
        top.axhspan(0.0, limits["error"], color=BAND_COLOURS["ERROR"], zorder=0)
        def points(metric: str, group: str) -> list[tuple[int, float]]:
            return [(row["severity"], row[metric][group]) for row in rows if row[metric].get(group) is not None]

        for group in GROUPS:
            agreement = points("agreement", group)
            if agreement:
                line, = top.plot(*zip(*agreement), marker=GROUP_MARKERS[group], label=group, linewidth=1.8)
                prs = points("prs", group)
                if prs:
                    top.plot(*zip(*prs), linestyle="--", linewidth=1.0, color=line.get_color())
        top.set_ylim(0.0, 1.05)
        top.set_title(f"{kind}: degraded vs clean twin")
        top.set_xticks(severities)
        top.grid(alpha=0.3)
        for key, label, style in (("accuracy", "accuracy", "-o"), ("accuracy_trusted", "accuracy when trusted", "-s"),
                                  ("trusted_fraction", "trusted fraction", "--^")):
            points = [(row["severity"], row["action"][key]) for row in rows if row["action"][key] is not None]
            if points:
                bottom.plot(*zip(*points), style, label=label, linewidth=1.5)
        bottom.set_ylim(0.0, 1.05)
        bottom.set_xlabel("severity")
        bottom.set_xticks(severities)
        bottom.set_title("downstream action")
        bottom.grid(alpha=0.3)
    axes[0][0].set_ylabel("agreement (dashed: PRS); bands: trust")
    axes[1][0].set_ylabel("fraction of frames")
    for axis in (axes[0][-1], axes[1][-1]):
        if axis.get_legend_handles_labels()[0]:
            axis.legend(loc="lower left", fontsize=8)
    if title:
        figure.suptitle(title)
    return save_figure(figure, path)
