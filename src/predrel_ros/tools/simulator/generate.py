"""Generate a controlled dataset: N episodes from one seed, split 70/15/15 by episode.

Layout of DIR (see `predrel_ros.sources.dataset` for the episode folder format):

    DIR/manifest.json               seeds, template and split per episode, predicate value counts,
                                    sizes on disk, generator settings
    DIR/episodes/<name>/            dataset folder of each episode (format "folder")
    DIR/bags/<name>/                rosbag2 bag of each episode (formats "mcap" / "sqlite3")

Episode i uses template `plan[i].template` and seed `episode_seed(S, i)`; templates cycle through a
seeded permutation, so every template appears once before any appears twice (a template listed twice
in `templates` appears twice per cycle; the manifest keeps the list as `template_cycle`). The manifest is
enough to regenerate any single episode (`generate_episode(template, seed, config)`).
"""
from __future__ import annotations

import multiprocessing
import shutil
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from predrel_ros import __version__
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import PRIMITIVE_LABELS
from predrel_ros.sources.dataset import EPISODES_DIR, MANIFEST_FILE, SPLITS, write_episode, write_manifest
from predrel_ros.tools.simulator.config import GenerationConfig
from predrel_ros.tools.simulator.scene import CLASS_LABELS
from predrel_ros.tools.simulator.templates import TEMPLATES, allocate_frames, build_script

BAGS_DIR = "bags"
SPLIT_FRACTIONS = (0.7, 0.15, 0.15)


@dataclass(frozen=True)
class EpisodePlan:
    index: int
    name: str
    template: str
    seed: int
    split: str


def episode_seed(dataset_seed: int, index: int) -> int:
    """Seed of episode `index` of a dataset generated with `dataset_seed` (a 31-bit integer)."""
    return int(np.random.SeedSequence([int(dataset_seed), int(index)]).generate_state(1)[0] >> 1)


def plan_dataset(episodes: int, seed: int, templates: tuple[str, ...] | None = None) -> list[EpisodePlan]:
    """Templates, seeds and splits of `episodes` episodes (deterministic in `seed`)."""
    if episodes < 1:
        raise UserError(f"--episodes must be at least 1, got {episodes}")
    templates = tuple(templates or TEMPLATES)
    unknown = [t for t in templates if t not in TEMPLATES]
    if unknown:
        raise UserError(f"unknown templates {unknown}; expected some of {tuple(TEMPLATES)}")
    rng = np.random.default_rng(seed)
    order: list[str] = []
    while len(order) < episodes:
        order.extend(templates[i] for i in rng.permutation(len(templates)))
    shuffled = rng.permutation(episodes)
    train = int(round(SPLIT_FRACTIONS[0] * episodes))
    val = int(round(SPLIT_FRACTIONS[1] * episodes))
    split_of = {}
    for position, index in enumerate(shuffled.tolist()):
        split_of[index] = SPLITS[0] if position < train else SPLITS[1] if position < train + val else SPLITS[2]
    return [EpisodePlan(i, f"ep{i:04d}_{order[i]}", order[i], episode_seed(seed, i), split_of[i])
            for i in range(episodes)]


def folder_bytes(path: Path) -> int:
    """Bytes of all files under `path`."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _predicate_counts(frames) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter] = {}
    for frame in frames:
        for estimate in frame.predicates:
            counts.setdefault(estimate.name, Counter())[estimate.value] += 1
    return {name: dict(sorted(counter.items())) for name, counter in sorted(counts.items())}


def generate_one(plan: EpisodePlan, out: Path, config: GenerationConfig,
                 on_frame: Callable[[int], None] | None = None) -> dict:
    """Generate, write and summarise one planned episode (runs in worker processes too)."""
    from predrel_ros.sources.bag import write_bag
    from predrel_ros.tools.simulator.episode import generate_episode

    episode = generate_episode(plan.template, plan.seed, config, name=plan.name, split=plan.split,
                               on_frame=on_frame)
    summary = {"name": plan.name, "index": plan.index, "template": plan.template,
               "scenario_group": episode.meta.scenario_group, "seed": plan.seed, "split": plan.split,
               "num_frames": len(episode.frames), "entities": len(episode.meta.entities),
               "predicate_counts": _predicate_counts(episode.frames), "paths": {}, "bytes": {}}
    if "folder" in config.formats:
        path = write_episode(out / EPISODES_DIR / plan.name, episode.meta, episode.frames)
        summary["paths"]["folder"] = str(path.relative_to(out))
        summary["bytes"]["folder"] = folder_bytes(path)
    for storage in ("mcap", "sqlite3"):
        if storage in config.formats:
            path = write_bag(out / BAGS_DIR / (plan.name if storage == "mcap" else f"{plan.name}_sqlite3"),
                             episode.frames, storage=storage, meta=episode.meta)
            summary["paths"][storage] = str(path.relative_to(out))
            summary["bytes"][storage] = folder_bytes(path)
    summary["renderer"] = episode.meta.extra["renderer"]
    return summary


def _worker(arguments) -> dict:
    plan, out, config = arguments
    return generate_one(plan, out, config)


def generate_dataset(out: Path | str, episodes: int, seed: int, config: GenerationConfig = GenerationConfig(),
                     templates: tuple[str, ...] | None = None, jobs: int = 1, progress: bool = True) -> Path:
    """Generate the dataset into the new or empty folder `out`; returns the manifest path."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} exists and is not an empty folder; choose a new --out")
    if jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {jobs}")
    plans = plan_dataset(episodes, seed, templates)
    for plan in plans:  # refuse an impossible episode length before any work (scripts are cheap)
        allocate_frames(build_script(plan.template, plan.seed, config.scene).phases, config.frames)
    out.mkdir(parents=True, exist_ok=True)
    try:
        summaries = _run(plans, out, config, jobs, progress)
    except BaseException:
        if not (out / MANIFEST_FILE).exists():
            print(f"generation stopped; removing the partial dataset {out}", file=sys.stderr)
            shutil.rmtree(out, ignore_errors=True)
        raise
    totals: dict[str, Counter] = {}
    for summary in summaries:
        for name, values in summary["predicate_counts"].items():
            totals.setdefault(name, Counter()).update(values)
    sizes = {key: int(np.mean([s["bytes"][key] for s in summaries])) for key in summaries[0]["bytes"]}
    manifest = {
        "generator": "predrel_ros.tools.simulator", "version": __version__, "seed": int(seed),
        "renderer": summaries[0]["renderer"], "config": _config_dict(config),
        "templates": {name: group for name, (group, _) in TEMPLATES.items()},
        # the --templates list as given (repeats weight a template), absent when all cycle once
        **({"template_cycle": list(templates)} if templates else {}),
        "classes": list(CLASS_LABELS), "primitive_labels": list(PRIMITIVE_LABELS),
        "episodes": summaries,
        "predicate_counts": {name: dict(sorted(c.items())) for name, c in sorted(totals.items())},
        "mean_bytes_per_episode": sizes,
    }
    return write_manifest(out, manifest)


def _config_dict(config: GenerationConfig) -> dict:
    data = asdict(config)
    data["formats"] = list(config.formats)
    return data


def _run(plans: list[EpisodePlan], out: Path, config: GenerationConfig, jobs: int, progress: bool) -> list[dict]:
    from tqdm import tqdm

    if jobs == 1:
        bar = tqdm(total=len(plans) * config.frames, unit="frame", disable=not progress, file=sys.stderr,
                   desc="generating")
        summaries = []
        with bar:
            for plan in plans:
                bar.set_postfix_str(plan.name)
                summaries.append(generate_one(plan, out, config, on_frame=lambda _: bar.update(1)))
        return summaries
    # spawn: a forked child would inherit the parent's OpenGL state
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        results = pool.map(_worker, [(plan, out, config) for plan in plans])
        return list(tqdm(results, total=len(plans), unit="episode", disable=not progress, file=sys.stderr,
                         desc="generating"))
