"""The Trust figure of a sweep's report: per condition and group the true rolling agreement, the
expected agreement of reference-free trust, and the share of windows it flagged (`trust.json`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.tools.evaluation.tables import GROUP_TITLES
from predrel_ros.tools.figures import save_figure


def trust_plot(document: dict, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    conditions = document["conditions"]
    labels = [f"{c['kind']} {c['severity']}" if c["severity"] else "clean" for c in conditions]
    xs = np.arange(len(conditions))
    figure, axes = plt.subplots(len(vocabulary.GROUPS), 1, figsize=(max(6.0, 0.32 * len(conditions) + 2), 9),
                                sharex=True)
    for axis, group in zip(axes, vocabulary.GROUPS):
        for part, style in (("true", "o-"), ("expected", "s--")):
            values = [c[part].get(group) for c in conditions]
            axis.plot(xs, [np.nan if v is None else v for v in values], style, markersize=3,
                      label=f"{part} agreement")
        flagged = [c["flagged"].get(group) for c in conditions]
        axis.bar(xs, [0 if v is None else v for v in flagged], color="tab:red", alpha=0.25, label="flagged share")
        axis.set_ylim(0, 1.02)
        axis.set_ylabel(GROUP_TITLES[group], fontsize=8)
        axis.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=3)
    axes[0].set_title("Reference-free trust against the true rolling agreement", fontsize=10)
    axes[-1].set_xticks(xs, labels, rotation=70, fontsize=7)
    return save_figure(figure, path, dpi=110)
