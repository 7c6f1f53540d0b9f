"""A Dask worker plugin for the fleet tests: the first worker to finish a chosen episode dies right
after it (its sequences written, its result not yet returned), as a worker lost mid-run does."""
from __future__ import annotations

import os
from pathlib import Path

from distributed.diagnostics.plugin import WorkerPlugin


class DieAfterEpisode(WorkerPlugin):
    """Worker plugin: `os._exit` once (across all workers: `marker` records it) after evaluating `episode`."""

    name = "predrel-die-after-episode"

    def __init__(self, episode: str, marker: str) -> None:
        self.episode = episode
        self.marker = marker

    def setup(self, worker) -> None:
        from predrel_ros.tools.evaluation import episode_run

        real = getattr(episode_run.evaluate_episode, "__wrapped__", episode_run.evaluate_episode)
        episode, marker = self.episode, Path(self.marker)

        def evaluate_then_die(source):
            result = real(source)
            if source.name == episode and not marker.exists():
                marker.write_text(f"{os.getpid()}\n")
                os._exit(1)
            return result

        evaluate_then_die.__wrapped__ = real
        episode_run.evaluate_episode = evaluate_then_die
