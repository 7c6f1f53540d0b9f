"""Cost of generating one controlled episode (physics, rendering, masks, visibility, ground truth,
writing), and its size on disk.

Baseline in the same run: the plain RGB renders the episode needs anyway (one per frame of the
same scene); the ratio says what everything else costs on top of them.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

TEMPLATES_DEFAULT = "pick_and_place,insert,handover"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--templates", default=TEMPLATES_DEFAULT, help="comma-separated templates to time")
    parser.add_argument("--repeats", type=int, default=1, help="episodes per template (default 1)")
    parser.add_argument("--size", default="320x240", help="WIDTHxHEIGHT (default 320x240)")
    parser.add_argument("--frames", type=int, default=150, help="frames per episode (default 150)")


def _rgb_baseline(template: str, seed: int, config) -> float:
    """Seconds for `config.frames` RGB renders of the template's scene at rest."""
    import mujoco

    from predrel_ros.tools.simulator.simulator import Simulation
    from predrel_ros.tools.simulator.templates import build_script

    sim = Simulation(build_script(template, seed, config.scene).scene, config)
    renderer = mujoco.Renderer(sim.model, config.height, config.width)
    try:
        start = time.perf_counter()
        for _ in range(config.frames):
            renderer.update_scene(sim.data, config.camera)
            renderer.render()
        return time.perf_counter() - start
    finally:
        renderer.close()


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.sources.bag import write_bag
    from predrel_ros.sources.dataset import write_episode
    from predrel_ros.tools.simulator.config import GenerationConfig
    from predrel_ros.tools.simulator.episode import generate_episode
    from predrel_ros.tools.simulator.generate import folder_bytes
    from predrel_ros.tools.simulator.gl import backend_in_effect, configure_backend

    configure_backend()
    width, height = (int(v) for v in args.size.lower().split("x"))
    config = GenerationConfig(width=width, height=height, frames=args.frames)
    results = {}
    for template in [t.strip() for t in args.templates.split(",") if t.strip()]:
        generation, writing, baseline, folder_sizes, bag_sizes = [], [], [], [], []
        for seed in range(args.repeats):
            start = time.perf_counter()
            episode = generate_episode(template, seed, config)
            generation.append(time.perf_counter() - start)
            baseline.append(_rgb_baseline(template, seed, config))
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                write_episode(Path(tmp) / "folder", episode.meta, episode.frames)
                write_bag(Path(tmp) / "bag", episode.frames, meta=episode.meta)
                writing.append(time.perf_counter() - start)
                folder_sizes.append(folder_bytes(Path(tmp) / "folder"))
                bag_sizes.append(folder_bytes(Path(tmp) / "bag"))
        median = float(np.median(generation))
        results[template] = {
            "generate": summarize(generation), "write_folder_and_mcap": summarize(writing),
            "rgb_render_baseline": summarize(baseline),
            "ratio_to_rgb_baseline": median / float(np.median(baseline)),
            "frames_per_second": config.frames / median,
            "folder_mb_per_episode": float(np.mean(folder_sizes)) / 1e6,
            "mcap_mb_per_episode": float(np.mean(bag_sizes)) / 1e6,
        }
    return {"size": f"{width}x{height}", "frames": args.frames, "renderer": backend_in_effect(),
            "templates": results, "peak_rss_mb": peak_rss_mb()}
