"""Writing matplotlib figures: one place for the layout pass, the folder, the resolution and the close
(an open figure keeps its memory for the life of the process)."""
from __future__ import annotations

from pathlib import Path

DPI = 110


def save_figure(figure, path: str | Path, dpi: int = DPI) -> Path:
    """Lay out `figure`, write it to `path` (its folder made when missing), close it; the path."""
    import matplotlib.pyplot as plt

    path = Path(path)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    return path
