"""The demo's parts: its episode and the clean profile of its reference-free reliability node, both
generated once into a cache (keyed by the code and settings they depend on), the severity sweep the
replay plays, and the summary table printed at the end. `predrel demo` (tools/cli/demo.py) runs it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

from predrel_ros.core.errors import UserError
from predrel_ros.degradations.table import SEVERITIES

RUN_FILE = "demo.run.yaml"
#: the demo episode: a pick-and-place (hand-object contact, grasp, transport, support, release)
TEMPLATE = "pick_and_place"
SEED = 3
#: frames of the episode; each (kind, severity) replays it once. 150 frames (5 s) is the time scale of
#: the controlled set that the packaged recognizer was trained on: its temporal features count frames,
#: so a shorter episode (faster motions) costs it accuracy (clean 0.50 at 60 frames, 0.87 at 150)
DEFAULT_FRAMES = 150
#: the clean profile of the reference-free reliability node: clean episodes of the demo's kind with
#: other seeds than the demo episode's
PROFILE_EPISODES = 6
PROFILE_SEED = 104


def default_cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "predrel" / "demo"


def _source_files() -> list[Path]:
    """The code and message definitions an episode depends on (its bags are written by the
    message conversions)."""
    import predrel_ros.ros.messages as conversions
    import predrel_ros.sources as io
    import predrel_ros.tools.simulator as controlled
    from predrel_ros.ros.messages.message_classes import message_directory

    files: list[Path] = []
    for package in (controlled, io, conversions):
        files += sorted(Path(package.__file__).parent.glob("*.py"))
    files += sorted(message_directory().glob("*.msg"))
    return files


def episode_key(config, template: str, seed: int, episodes: int = 1) -> str:
    """Content key of generated episodes: generator code, message definitions, settings, MuJoCo version."""
    import mujoco

    digest = hashlib.sha256()
    _digest_files(digest, _source_files())
    settings = {"config": dataclasses.asdict(config), "template": template, "seed": seed,
                "mujoco": mujoco.__version__}
    if episodes != 1:
        settings["episodes"] = episodes
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:16]


def _digest_files(digest, files) -> None:
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")


def _generate_once(entry: Path, what: str, generate) -> None:
    """Run generate(folder) into a temporary folder and rename it to `entry` when done, so a
    finished result appears at once and an interrupted run leaves no half entry."""
    print(f"demo: generating {what} into {entry}", file=sys.stderr)
    partial = entry.with_name(entry.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    start = time.monotonic()
    generate(partial)
    shutil.rmtree(entry, ignore_errors=True)
    partial.rename(entry)
    print(f"demo: {what} generated in {time.monotonic() - start:.0f} s", file=sys.stderr)


def demo_episode(cache_dir: Path, frames: int = DEFAULT_FRAMES, template: str = TEMPLATE, seed: int = SEED,
                 regenerate: bool = False, size: tuple[int, int] = (320, 240)) -> Path:
    """The bag of the demo episode (`size`: width, height), generated into the cache when missing;
    returns its path."""
    from predrel_ros.tools.simulator.config import GenerationConfig
    from predrel_ros.tools.simulator.generate import BAGS_DIR, generate_dataset, plan_dataset

    config = GenerationConfig(frames=frames, formats=("mcap",), width=size[0], height=size[1])
    key = episode_key(config, template, seed)
    entry = Path(cache_dir) / f"{template}-{frames}f-{key}"
    bag = entry / BAGS_DIR / plan_dataset(1, seed, (template,))[0].name
    if bag.is_dir() and not regenerate:
        print(f"demo episode: {bag} (cached)", file=sys.stderr)
        return bag
    _generate_once(entry, f"the demo episode ({template}, {frames} frames, {size[0]}x{size[1]})",
                   lambda folder: generate_dataset(folder, 1, seed, config, templates=(template,)))
    return bag


def profile_dataset(cache_dir: Path, frames: int = DEFAULT_FRAMES, regenerate: bool = False) -> Path:
    """The dataset folder of the clean profile's episodes (PROFILE_EPISODES of the demo's kind),
    generated into the cache when missing."""
    from predrel_ros.tools.simulator.config import GenerationConfig
    from predrel_ros.tools.simulator.generate import generate_dataset

    config = GenerationConfig(frames=frames, formats=("folder",))
    entry = Path(cache_dir) / (f"{TEMPLATE}-x{PROFILE_EPISODES}-{frames}f-"
                               f"{episode_key(config, TEMPLATE, PROFILE_SEED, PROFILE_EPISODES)}")
    if entry.is_dir() and not regenerate:
        return entry
    _generate_once(entry, f"{PROFILE_EPISODES} clean {TEMPLATE} episodes for the clean profile",
                   lambda folder: generate_dataset(folder, PROFILE_EPISODES, PROFILE_SEED, config,
                                                   templates=(TEMPLATE,), progress=False))
    return entry


def demo_profile(cache_dir: Path, model: str = "", frames: int = DEFAULT_FRAMES, regenerate: bool = False) -> Path:
    """The clean profile (JSON) of perception `model` (a folder or .onnx; empty: the default model)
    for the demo's reference-free reliability node: its window, the perception nodes' parameters
    (config/perception.yaml: perception config, thresholds, whether depth is used) and the predicate
    config, measured on `profile_dataset`. Cached under a key of all of these and of the code."""
    import predrel_ros.action.streams as streams
    import predrel_ros.perception as perception
    import predrel_ros.predicates as predicates
    import predrel_ros.reliability as reliability
    from predrel_ros.core.package_files import config_file
    from predrel_ros.perception.config import DEFAULT_MODEL_DIR, config_from_node_params
    from predrel_ros.ros.kit.parameter_specs import read_params_file

    model_path = Path(model).expanduser() if model else DEFAULT_MODEL_DIR
    if not model_path.exists():
        raise UserError(f"model {model_path} does not exist")
    window = int(read_params_file(config_file("reliability_node.yaml"), "reliability")["window"])
    node_params = {**read_params_file(config_file("perception.yaml"), "perception"), "model_path": str(model_path)}
    config, config_path = config_from_node_params(node_params)
    depth = predicate_depth()
    digest = hashlib.sha256(f"window {window} perception {sorted(node_params.items())} depth {depth}".encode())
    _digest_files(digest, sorted(model_path.iterdir()) if model_path.is_dir() else [model_path])
    _digest_files(digest, [config_path, config_file("predicates.yaml"), Path(streams.__file__)])
    for package in (perception, predicates, reliability):
        _digest_files(digest, sorted(Path(package.__file__).parent.rglob("*.py")))
    dataset = profile_dataset(cache_dir, frames, regenerate)
    path = Path(cache_dir) / f"profile-{dataset.name}-{digest.hexdigest()[:16]}.json"
    if path.is_file() and not regenerate:
        print(f"demo: clean profile {path} (cached)", file=sys.stderr)
        return path

    from predrel_ros.action.streams import PerceivedEntities
    from predrel_ros.perception.perceiver import Perceiver
    from predrel_ros.predicates import PredicateConfig, PredicateExtractor
    from predrel_ros.sources.dataset import open_dataset
    from predrel_ros.tools.cli.profile import dataset_profile

    extractor = PredicateExtractor(PredicateConfig.load(config_file("predicates.yaml"), section="predicates"))
    start = time.monotonic()
    perceiver = Perceiver(config)
    try:
        profile = dataset_profile(open_dataset(dataset).episodes(),
                                  PerceivedEntities(perceiver, use_depth=bool(node_params["use_depth"])), extractor,
                                  window=window, depth=depth)
    finally:
        perceiver.close()
    partial = path.with_name(path.name + f".partial-{os.getpid()}.json")
    profile.save(partial)
    partial.rename(path)
    print(f"demo: clean profile of {model_path} measured in {time.monotonic() - start:.0f} s: {path}", file=sys.stderr)
    return path


def predicate_depth() -> bool:
    """Whether the demo's predicate nodes use depth (demo.run.yaml): the clean profile's predicates must
    be extracted as theirs are."""
    from predrel_ros.core.package_files import config_file
    from predrel_ros.ros.run.run_file import load_run_file

    nodes = [spec for spec in load_run_file(config_file(RUN_FILE), {"bag": "unused"}).nodes
             if spec.executable == "predicate_node"]
    uses = {bool(spec.parameters.get("use_depth", False)) for spec in nodes}
    if len(uses) != 1:
        raise UserError(f"{RUN_FILE}: the predicate nodes must agree on use_depth (the clean profile is one)")
    return uses.pop()


def sweep_schedule(kinds: list[str], period: int) -> str:
    return f"sweep:{','.join(kinds)}:{period}:{','.join(map(str, SEVERITIES))}"


def format_summary(summary: dict) -> str:
    """The per-condition table printed at the end: agreement and PRS per group, the degraded entities
    without a clean partner per frame, the share of each report topic's group entries at WARN / ERROR,
    the action's accuracy and trust."""
    from predrel_ros.predicates.vocabulary import GROUPS

    def number(value) -> str:
        return "  -  " if value is None else f"{value:5.2f}"

    def short(value) -> str:
        return "-" if value is None else f"{value:.2f}"

    labels = sorted({label for row in summary["conditions"] for label in row["trust"]})
    header = ("condition        frames  " + "  ".join(f"{g[:11]:>11}" for g in GROUPS) + "  extra/f  false/f"
              + "".join(f"  {label[:16] + ' W/E':>20}" for label in labels) + "   action acc  trusted  acc|trusted")
    lines = [header, "-" * len(header)]
    for row in summary["conditions"]:
        condition = "clean" if row["severity"] == 0 else f"{row['kind']} {row['severity']}"
        prs = "  ".join(f"{short(row['agreement'].get(g)) + '/' + short(row['prs'].get(g)):>11}" for g in GROUPS)
        shares = ""
        for label in labels:
            counts = list(row["trust"].get(label, {}).values())
            total = sum(sum(c.values()) for c in counts)
            warn, error = (sum(c[level] for c in counts) for level in ("WARN", "ERROR"))
            shares += f"  {'-' if not total else f'{warn / total:.0%}/{error / total:.0%}':>20}"
        action = row["action"]
        extra = row.get("entities", {}).get("extra_per_frame")
        false = row.get("entities", {}).get("false_per_frame")
        lines.append(f"{condition:<16} {row['frames']['degraded']:>6}  {prs}  {number(extra):>7}  {number(false):>7}"
                     f"{shares}   "
                     f"{number(action['accuracy'])}      {number(action['trusted_fraction'])}  "
                     f"{number(action['accuracy_trusted'])}")
    lines.append("agreement/PRS: degraded predicates against the clean twin (entities associated per frame), "
                 "pooled per group, unweighted / confidence-weighted; extra/f: degraded detections per frame (entities "
                 "seen; a lost track still reported is none) with no clean partner; false/f: those no clean entity "
                 "of another class covers (false detections, e.g. occluders taken for objects; the rest are objects "
                 "named wrongly); W/E: share of each report "
                 "topic's group entries at WARN / ERROR; action: accuracy against ground truth, trusted fraction, "
                 "accuracy when trusted")
    return "\n".join(lines)
