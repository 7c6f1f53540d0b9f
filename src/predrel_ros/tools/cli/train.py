"""Train, export and evaluate the embedded default instance-segmentation model.

fit       train on a dataset folder's train split, selecting the checkpoint on its val split; with
          --export DIR also export and evaluate (what produced the committed default model). --data
          may also be your own labelled images: an Ultralytics YOLO-seg data.yaml (or its folder) or a
          COCO instances JSON (tools/training/label_formats.py; docs/perception.md, "Your own data")
export    write model.onnx, model.pt2, labels.txt and MODEL_CARD.md from a checkpoint; with --data
          also measure box AP50 / mask IoU on the test split, clean and under each image degradation
evaluate  box AP50, mask IoU, precision and recall per class of an exported model (or a training
          checkpoint) on a dataset split, clean or under one image degradation

Training runs on the CPU (PyTorch), seeded; no weights are downloaded.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path

from predrel_ros.degradations import textures

EXAMPLES = """examples:
  predrel dataset generate --out data/controlled                     the controlled set (training data)
  predrel train fit --data data/controlled --out runs/default \\
      --export src/predrel_ros/perception/models/default              the default model's recipe
  predrel train evaluate --model src/predrel_ros/perception/models/default --data data/controlled
  predrel train evaluate --model runs/default/best.pt --data data/controlled --split val
  predrel train evaluate --model model.onnx --data data/controlled --degradation blur --severity 3
  predrel train evaluate --model model.onnx --data data/controlled --degradation all --json metrics.json
  predrel train export --checkpoint runs/default/best.pt --out my-model --data data/controlled
  predrel train fit --data my-labels/data.yaml --roles my-roles.yaml --out runs/mine --export models/mine
  predrel train fit --data coco/instances_train.json --out runs/coco --export models/coco
"""

DEFAULT_MODEL_NAME = "predrel-default-seg"
CLEAN = "clean"
#: the training run's record beside its checkpoints (read by export for the model card)
RUN_FILE = "run.json"
#: files of a model folder that the perception pipeline reads (perception/config.py)
LABELS_FILE = "labels.txt"
ROLES_FILE = "roles.yaml"
#: CPU threads of the latency measurement in the model card
LATENCY_THREADS = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    fit = actions.add_parser("fit", help="train a model on a dataset folder",
                             formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    fit.add_argument("--data", type=Path, required=True,
                     help="dataset folder (predrel dataset generate), YOLO-seg data.yaml or COCO instances JSON")
    fit.add_argument("--roles", type=Path, help="labelled images: a YAML of class name -> entity role, written "
                                                "to the export's roles.yaml (unnamed classes: manipulated_object)")
    fit.add_argument("--out", type=Path, required=True, help="run folder: checkpoints, history.json, run.json")
    fit.add_argument("--epochs", type=int, default=30, help="passes over the training frames")
    fit.add_argument("--batch-size", type=int, default=16, help="frames per optimisation step")
    fit.add_argument("--learning-rate", type=float, default=2e-3, help="peak AdamW learning rate")
    fit.add_argument("--seed", type=int, default=0, help="seed of initialisation, shuffling and augmentation")
    fit.add_argument("--threads", type=int, default=2, help="CPU threads of PyTorch")
    fit.add_argument("--train-frame-step", type=int, default=2, help="use every k-th frame of train episodes")
    fit.add_argument("--val-frame-step", type=int, default=5, help="use every k-th frame of val episodes")
    fit.add_argument("--erase-probability", type=float, default=0.5,
                     help="share of training frames given 1..--erase-max textured, shaped occluders (random erasing)")
    fit.add_argument("--erase-max", type=int, default=3, help="most occluders per erased frame")
    fit.add_argument("--erase-object-share", type=float, default=0.5,
                     help="share of those occluders placed inside an instance's box (partly hidden objects)")
    fit.add_argument("--erase-patches", choices=textures.PATCH_SOURCES, default="anywhere",
                     help="where occluders filled with a patch of the frame cut it: anywhere (the shipped recipe), "
                          "or its unlabelled background only (no piece of another object over an object)")
    fit.add_argument("--classes", help="comma-separated class names; unset: the sorted labels of the train split")
    fit.add_argument("--init", type=Path, help="start from these weights instead of random ones (fine-tuning): a "
                                               "model folder, its model.pt2 or a training checkpoint, same classes")
    fit.add_argument("--export", type=Path, help="after training, export the best checkpoint to this folder "
                                                 "and evaluate it on the test split")
    _evaluation_options(fit)
    fit.add_argument("--no-progress", action="store_true", help="no progress bar")

    export = actions.add_parser("export", help="export a checkpoint (ONNX, .pt2, labels, model card)",
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    export.add_argument("--checkpoint", type=Path, required=True, help="best.pt of a training run")
    export.add_argument("--out", type=Path, required=True, help="model folder to write")
    export.add_argument("--data", type=Path, help="dataset folder: evaluate the export on its test split")
    _evaluation_options(export)
    export.add_argument("--baseline", type=Path,
                        help="`predrel train evaluate --degradation all --json` of the model this one replaces, on "
                             "the same split, severity, seed and frame step: a before / after table in the card")
    export.add_argument("--no-progress", action="store_true", help="no progress bar")

    evaluate = actions.add_parser("evaluate", help="detection / segmentation metrics on a dataset split",
                                  formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    evaluate.add_argument("--model", type=Path, required=True,
                          help="model folder or file (.onnx, .pt2) with labels.txt beside it, or a training "
                               "checkpoint (.pt)")
    evaluate.add_argument("--data", type=Path, required=True, help="dataset folder")
    evaluate.add_argument("--split", default="test", choices=("train", "val", "test"))
    evaluate.add_argument("--degradation", default="none",
                          help="none, all (clean + every image kind), or one of blur, occlusion, occlusion_flat, "
                               "illumination, low_resolution")
    evaluate.add_argument("--severity", type=int, default=3, help="severity of the degradation (1..5)")
    evaluate.add_argument("--seed", type=int, default=0, help="degradation seed (episode i uses seed + i)")
    evaluate.add_argument("--frame-step", type=int, default=1, help="evaluate every k-th frame")
    evaluate.add_argument("--min-pixels", type=int, default=16,
                          help="ground-truth instances with fewer visible pixels are ignored")
    evaluate.add_argument("--backend", default="onnxruntime", choices=("auto", "onnxruntime", "pytorch", "tensorrt"),
                          help="inference backend for an exported model")
    evaluate.add_argument("--threads", type=int, default=2, help="CPU threads of the runtime")
    evaluate.add_argument("--json", type=Path, help="also write the results to this JSON file")
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")


def _evaluation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--severity", type=int, default=3, help="severity of the degradations in the model card")
    parser.add_argument("--eval-seed", type=int, default=0, help="degradation seed (episode i uses seed + i)")
    parser.add_argument("--eval-frame-step", type=int, default=1, help="evaluate every k-th test frame")


def main(args: argparse.Namespace) -> int:
    # OpenMP threads that spin while waiting make PyTorch ~10x slower on a CPU shared with other jobs
    # (measured here with 2 threads on 2 busy cores); passive waiting costs little on an idle machine.
    # It only takes effect if torch was not imported yet, as in a `predrel train` process.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return {"fit": _fit, "export": _export, "evaluate": _evaluate}[args.action](args)


# -- shared pieces ------------------------------------------------------------------------------

def _fit_command(args: argparse.Namespace) -> str:
    """The full `predrel train fit` command of a run, every training option spelled out."""
    parts = ["predrel", "train", "fit", "--data", str(args.data), "--out", str(args.out), "--epochs", str(args.epochs),
             "--batch-size", str(args.batch_size), "--learning-rate", str(args.learning_rate), "--seed", str(args.seed),
             "--threads", str(args.threads), "--train-frame-step", str(args.train_frame_step),
             "--val-frame-step", str(args.val_frame_step), "--erase-probability", f"{args.erase_probability:g}",
             "--erase-max", str(args.erase_max), "--erase-object-share", f"{args.erase_object_share:g}",
             "--erase-patches", args.erase_patches]
    if args.classes:
        parts += ["--classes", args.classes]
    if getattr(args, "init", None):
        parts += ["--init", str(args.init)]
    if getattr(args, "roles", None):
        parts += ["--roles", str(args.roles)]
    if args.export:
        parts += ["--export", str(args.export), "--severity", str(args.severity), "--eval-seed", str(args.eval_seed),
                  "--eval-frame-step", str(args.eval_frame_step)]
    return " ".join(shlex.quote(p) for p in parts)


def _cpu() -> str:
    from predrel_ros.tools.benchmarks.report import hardware

    return hardware()["cpu"]


def _open_dataset(path: Path):
    from predrel_ros.sources.dataset import open_dataset

    return open_dataset(path)


def _progress(total: int, description: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=description, unit="frame", disable=not enabled, dynamic_ncols=True, file=sys.stderr)


def _check_range(name: str, value: int, low: int, high: int | None = None) -> None:
    from predrel_ros.core.errors import UserError

    if value < low or (high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f">= {low}"
        raise UserError(f"{name} must be {bound}, got {value}")


def conditions_for(degradation: str, severity: int) -> list[tuple[str, tuple[str, int] | None]]:
    """(condition name, (kind, severity) or None for clean) for a --degradation value."""
    from predrel_ros.core.errors import UserError
    from predrel_ros.degradations import IMAGE_KINDS, MAX_SEVERITY

    if degradation == "none":
        return [(CLEAN, None)]
    _check_range("--severity", severity, 1, MAX_SEVERITY)
    if degradation == "all":
        return [(CLEAN, None)] + [(f"{kind}@{severity}", (kind, severity)) for kind in IMAGE_KINDS]
    if degradation not in IMAGE_KINDS:
        raise UserError(f"--degradation must be none, all or an image kind {IMAGE_KINDS}, got {degradation!r} "
                        "(frame_drop and detection_noise do not change images)")
    return [(f"{degradation}@{severity}", (degradation, severity))]


def evaluate_conditions(detector, dataset, split: str, class_names, roles: dict[str, str], conditions, seed: int,
                        frame_step: int, min_pixels: int, progress: bool) -> dict[str, dict]:
    """Metrics of `detector` on a split under each condition: {name: EvaluationResult.as_dict()}, per class
    and per entity role (`roles`: class -> role, `dataset_frames.dataset_role_map`)."""
    from predrel_ros.tools.training.dataset_frames import labelled_frames
    from predrel_ros.tools.training.evaluation import evaluate_detector

    _check_range("frame step", frame_step, 1)
    episodes = dataset.episodes(split)
    if not episodes:
        from predrel_ros.core.errors import UserError

        raise UserError(f"dataset {dataset.root} has no {split} episodes")
    total = sum(-(-len(e) // frame_step) for e in episodes)
    results = {}
    for name, degradation in conditions:
        bar = _progress(total, f"{split} {name}", progress)

        def frames():
            for sample in labelled_frames(episodes, class_names, frame_step,
                                          None if degradation is None else (*degradation, seed)):
                bar.update(1)
                yield sample

        results[name] = evaluate_detector(detector, frames(), class_names, min_pixels, groups=roles).as_dict()
        bar.close()
    return results


def episodes_per_class(dataset, split: str, class_names) -> dict[str, int]:
    """In how many episodes of `split` each class appears (how much a per-class number rests on)."""
    counts = {name: 0 for name in class_names}
    for episode in dataset.episodes(split):
        labels = episode.labels
        for index in set(episode.ground_truth["ent_label"].tolist()):
            if labels[index] in counts:
                counts[labels[index]] += 1
    return counts


def print_results(results: dict[str, dict]) -> None:
    """Per condition, a table per class, then one per entity role when the results have it."""
    for condition, result in results.items():
        print(f"{condition} ({result['num_images']} frames)")
        _print_table("class", result)
        if result.get("occluder_detections_per_frame") is not None:
            print(f"  occluders detected as objects: {result['occluder_detections_per_frame']:.3f} per frame")
        if "per_group" in result:
            _print_table("role", result["per_group"])


def _print_table(kind: str, result: dict) -> None:
    rows = list(result["per_class"].items()) + [("mean", {**result, "num_truth": sum(
        c["num_truth"] for c in result["per_class"].values())})]
    width = max(len(name) for name, _ in rows) + 2
    print(f"  {kind:<{width}}{'truth':>7}{'AP50':>8}{'maskIoU':>9}{'prec':>8}{'recall':>8}")
    for name, row in rows:
        cells = [("-" if row.get(k) is None else f"{row[k]:.3f}")
                 for k in ("box_ap50", "mean_mask_iou", "precision", "recall")]
        print(f"  {name:<{width}}{row['num_truth']:>7}{cells[0]:>8}{cells[1]:>9}{cells[2]:>8}{cells[3]:>8}")


# -- fit ----------------------------------------------------------------------------------------

def _load_split(dataset, split: str, class_names, frame_step: int, progress: bool):
    from predrel_ros.tools.training.dataset_frames import labelled_frames

    episodes = dataset.episodes(split)
    return _compact(labelled_frames(episodes, class_names, frame_step),
                    sum(-(-len(e) // frame_step) for e in episodes), split, progress)


def _compact(samples, total: int, split: str, progress: bool):
    """The LabelledImages of `samples` held compactly, with a progress bar over `total`."""
    from predrel_ros.tools.training.data import CompactImage

    bar = _progress(total, f"read {split}", progress)
    images = []
    for sample in samples:
        images.append(CompactImage(sample))
        bar.update(1)
    bar.close()
    return images


def _fit(args: argparse.Namespace) -> int:
    import torch

    from predrel_ros.core.errors import UserError
    from predrel_ros.tools.benchmarks.report import hardware
    from predrel_ros.tools.training.data import AugmentConfig
    from predrel_ros.tools.training.dataset_frames import dataset_classes, generation_command
    from predrel_ros.tools.training.network import NetworkConfig
    from predrel_ros.tools.training.trainer import TrainConfig, initial_weights, train

    for name in ("epochs", "batch_size", "threads", "train_frame_step", "val_frame_step"):
        _check_range("--" + name.replace("_", "-"), getattr(args, name), 1)
    from predrel_ros.tools.training.label_formats import is_labelled_set

    labelled = is_labelled_set(args.data)
    if labelled and args.classes:
        raise UserError("--classes is for dataset folders: a labelled set names its classes (YOLO names, "
                        "COCO categories)")
    if args.roles and not labelled:
        raise UserError("--roles is for labelled images: a dataset folder's roles come from its ground truth")
    source = _open_labelled(args.data) if labelled else _open_dataset(args.data)
    class_names = (source.class_names if labelled else
                   [c.strip() for c in args.classes.split(",") if c.strip()] if args.classes
                   else dataset_classes(source, "train"))
    if len(set(class_names)) != len(class_names):
        raise UserError(f"--classes has duplicates: {class_names}")
    roles = _read_roles(args.roles, class_names) if args.roles else {}
    initial_state = None
    if args.init:
        initial_state, init_classes = initial_weights(args.init)
        if init_classes != list(class_names):
            raise UserError(f"--init {args.init} has the classes {init_classes}, the data {list(class_names)}: "
                            f"fine-tuning needs the same classes in the same order (--classes)")
    try:
        augment = AugmentConfig(erase_probability=args.erase_probability, erase_max=args.erase_max,
                                erase_object_share=args.erase_object_share, erase_patches_from=args.erase_patches)
        config = TrainConfig(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                             seed=args.seed, threads=args.threads, augment=augment)
    except ValueError as error:
        raise UserError(str(error)) from None
    progress = not args.no_progress
    torch.set_num_threads(config.threads)
    if labelled:  # every image: the frame steps thin out video frames of episodes
        train_images = _compact(source.images("train"), source.count("train"), "train", progress)
        validation_images = _compact(source.images("val"), source.count("val"), "val", progress)
    else:
        train_images = _load_split(source, "train", class_names, args.train_frame_step, progress)
        validation_images = _load_split(source, "val", class_names, args.val_frame_step, progress)
    if len(train_images) < config.batch_size:
        raise UserError(f"{args.data}: {len(train_images)} training frames, fewer than one batch "
                        f"({config.batch_size}); generate more episodes")
    network = NetworkConfig(num_classes=len(class_names))
    print(f"training on {len(train_images)} frames ({len(validation_images)} validation), classes {class_names}",
          file=sys.stderr)
    try:
        result = train(train_images, validation_images, class_names, args.out, config, network, progress,
                       initial_state)
    except ValueError as error:  # e.g. --init weights of another architecture
        raise UserError(str(error)) from None
    if labelled:
        data = {"path": str(args.data), "format": source.format, "train_images": len(train_images),
                "val_images": len(validation_images), "roles": roles}
    else:
        manifest = source.manifest
        data = {"path": str(args.data), "episodes": {s: len(source.names(s)) for s in ("train", "val", "test")},
                "train_frame_step": args.train_frame_step, "val_frame_step": args.val_frame_step,
                "train_frames": len(train_images), "val_frames": len(validation_images),
                "generate_command": generation_command(source),
                "description": manifest.get("description", "controlled manipulation set"
                                            if manifest.get("generator") == "predrel_ros.tools.simulator" else "")}
    run = {
        "command": _fit_command(args), "init": str(args.init) if args.init else None,
        "class_names": class_names, "network": asdict(network),
        "config": asdict(config), "parameters": result.parameters, "best_epoch": result.best_epoch,
        "best_validation": result.best_validation, "wall_seconds": round(result.wall_seconds, 1),
        "cpu_seconds": round(result.cpu_seconds, 1),
        "hardware": hardware(), "torch": torch.__version__, "data": data,
    }
    (Path(args.out) / RUN_FILE).write_text(json.dumps(run, indent=1) + "\n")
    print(f"best epoch {result.best_epoch}: {result.best_validation.get('box_ap50')} box AP50, "
          f"{result.best_validation.get('mean_mask_iou')} mask IoU (validation); "
          f"{result.wall_seconds / 60:.1f} min; checkpoint {result.best_checkpoint}")
    if args.export:
        export_model(result.best_checkpoint, args.export, None if labelled else args.data, args.severity,
                     args.eval_seed, args.eval_frame_step, progress)
        if roles:
            (Path(args.export) / ROLES_FILE).write_text("".join(f"{k}: {v}\n" for k, v in roles.items()))
    return 0


def _open_labelled(path: Path):
    from predrel_ros.tools.training.label_formats import open_labelled_set

    return open_labelled_set(path)


def _read_roles(path: Path, class_names) -> dict[str, str]:
    """class -> role from a --roles YAML, checked against the classes and the roles."""
    from predrel_ros.core.config_io import read_data
    from predrel_ros.core.entities import ROLES
    from predrel_ros.core.errors import UserError

    try:
        data = read_data(path) or {}
    except (OSError, ValueError) as error:
        raise UserError(f"--roles {path}: {error}") from None
    if not isinstance(data, dict):
        raise UserError(f"--roles {path}: expected a mapping of class names to roles")
    roles = {str(k): str(v) for k, v in data.items()}
    unknown = sorted(set(roles) - set(class_names))
    bad = {k: v for k, v in roles.items() if v not in ROLES}
    if unknown or bad:
        raise UserError(f"--roles {path}: " + (f"classes {unknown} are not in the data {list(class_names)}; "
                                               if unknown else "") + (f"unknown roles {bad}; expected one of "
                                                                      f"{ROLES}" if bad else ""))
    return roles


# -- export -------------------------------------------------------------------------------------

def _latency(perceiver, frame, repeats: int = 100) -> dict:
    """Median ONNX Runtime time of the network alone and of letterbox + network + decoding."""
    import numpy as np

    from predrel_ros.perception import letterbox

    _, _, height, width = perceiver.backend.input_shape
    tensor = letterbox.apply(frame, letterbox.plan(frame.shape[0], frame.shape[1], height, width), bgr=False)
    for _ in range(10):
        perceiver.detect(frame, bgr=False)
    network, end_to_end = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        perceiver.backend.run(tensor)
        network.append(time.perf_counter() - start)
        start = time.perf_counter()
        perceiver.detect(frame, bgr=False)
        end_to_end.append(time.perf_counter() - start)
    return {"network_ms": float(np.median(network) * 1e3), "end_to_end_ms": float(np.median(end_to_end) * 1e3),
            "repeats": repeats, "threads": LATENCY_THREADS, "cpu": _cpu(),
            "frame": f"{frame.shape[1]}x{frame.shape[0]}"}


def open_perceiver(model: Path, backend: str, threads: int):
    """The perception pipeline on `model`, as the perception node runs it (CPU)."""
    from predrel_ros.perception.backends import BackendConfig
    from predrel_ros.perception.config import PerceptionConfig
    from predrel_ros.perception.perceiver import Perceiver

    return Perceiver(PerceptionConfig(model=str(model), backend=BackendConfig(name=backend, device="cpu",
                                                                              num_threads=threads)))


def export_model(checkpoint: Path, out_dir: Path, data: Path | None, severity: int = 3, seed: int = 0,
                 frame_step: int = 1, progress: bool = True, baseline: Path | None = None) -> dict:
    """Export `checkpoint` to `out_dir`: model.onnx, model.pt2, labels.txt, with `data` also roles.yaml
    (each class's usual role in the data) and metrics.json (test split), and MODEL_CARD.md; `baseline`:
    the evaluation JSON of the model this one replaces, for the card's before / after table."""
    import numpy as np

    from predrel_ros.core.errors import UserError
    from predrel_ros.tools.training import export, model_card
    from predrel_ros.tools.training.dataset_frames import dataset_role_map
    from predrel_ros.tools.training.trainer import load_checkpoint

    if baseline is not None and data is None:
        raise UserError("--baseline needs --data: the before / after table compares evaluations on its test split")
    before = _read_baseline(baseline, severity, seed, frame_step) if baseline is not None else None
    net, class_names, saved = load_checkpoint(checkpoint)
    config = saved["train_config"]
    input_hw = (config["input_height"], config["input_width"])
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx_path = export.export_onnx(net, class_names, out_dir / "model.onnx", input_hw)
    difference = export.onnx_max_difference(net, onnx_path, input_hw)
    if max(difference.values()) > 1e-3:
        raise UserError(f"ONNX Runtime disagrees with PyTorch on {onnx_path}: {difference}")
    program_path = export.export_program(net, class_names, out_dir / "model.pt2", input_hw)
    (out_dir / LABELS_FILE).write_text("\n".join(class_names) + "\n")
    dataset = _open_dataset(data) if data is not None else None
    if dataset is not None:
        roles = dataset_role_map(dataset, class_names)
        (out_dir / ROLES_FILE).write_text("".join(f"{label}: {role}\n" for label, role in roles.items()))

    perceiver = open_perceiver(onnx_path, "onnxruntime", LATENCY_THREADS)
    detector = partial(perceiver.detect, bgr=False)
    frame = np.full((240, 320, 3), 114, np.uint8)
    if dataset is not None and dataset.episodes("test"):
        frame = dataset.episodes("test")[0].frame(0).rgb
    latency = _latency(perceiver, frame)

    evaluation = None
    if dataset is not None:
        conditions = conditions_for("all", severity)
        results = evaluate_conditions(detector, dataset, "test", class_names, roles, conditions, seed, frame_step,
                                      config["min_pixels"], progress)
        from predrel_ros.degradations import DEFAULT_TABLE

        evaluation = {"split": "test", "severity": severity, "seed": seed, "frame_step": frame_step,
                      "num_images": results[CLEAN]["num_images"], "conditions": results,
                      "episodes": len(dataset.names("test")),
                      "episodes_per_class": episodes_per_class(dataset, "test", class_names),
                      "parameters": {name: DEFAULT_TABLE.row(*degradation) for name, degradation in conditions
                                     if degradation is not None},
                      "commands": [f"predrel train evaluate --model {out_dir} --data {data} --split test "
                                   f"--degradation all --severity {severity} --seed {seed}"
                                   + (f" --frame-step {frame_step}" if frame_step != 1 else "")]}
        if before is not None:
            evaluation["baseline"] = {"model": before["model"], "conditions": before["conditions"],
                                      "command": f"predrel train evaluate --model {before['model']} --data {data} "
                                                 f"--split test --degradation all --severity {severity} --seed {seed} "
                                                 f"--frame-step {frame_step} --json baseline.json"}
        (out_dir / "metrics.json").write_text(json.dumps(evaluation, indent=1) + "\n")
        print_results(results)

    run_path = Path(checkpoint).parent / RUN_FILE
    if not run_path.is_file():
        raise UserError(f"{run_path} is missing: the model card needs the training run's record "
                        f"(written by predrel train fit)")
    run = json.loads(run_path.read_text())
    candidates = int(perceiver.backend.run(np.zeros((1, 3, *input_hw), np.float32))["output0"].shape[2])
    files = {
        "model.onnx": {"bytes": onnx_path.stat().st_size, "what": "ONNX (ONNX Runtime, TensorRT)"},
        "model.pt2": {"bytes": program_path.stat().st_size, "what": "torch.export program (PyTorch backend)"},
        LABELS_FILE: {"bytes": (out_dir / LABELS_FILE).stat().st_size, "what": "class names, one per line"},
    }
    if (out_dir / ROLES_FILE).is_file():
        files[ROLES_FILE] = {"bytes": (out_dir / ROLES_FILE).stat().st_size,
                             "what": "class -> entity role (hand: side per track)"}
    exported = {"files": files, "input_hw": list(input_hw), "opset": export.ONNX_OPSET, "candidates": candidates,
                "onnx_difference": difference, "latency": latency}
    card = model_card.render(DEFAULT_MODEL_NAME, class_names, run, exported, evaluation)
    (out_dir / model_card.CARD_FILE).write_text(card)
    print(f"exported to {out_dir}: " + ", ".join(f"{n} ({f['bytes'] / 1e6:.1f} MB)" for n, f in files.items())
          + f"; ONNX Runtime latency {latency['network_ms']:.1f} ms network, "
            f"{latency['end_to_end_ms']:.1f} ms end to end", file=sys.stderr)
    perceiver.close()
    return exported


def _read_baseline(path: Path, severity: int, seed: int, frame_step: int) -> dict:
    """A `train evaluate --json` result, checked to be comparable with the export's evaluation."""
    from predrel_ros.core.errors import UserError

    try:
        baseline = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise UserError(f"--baseline {path}: cannot read it as JSON: {error}") from None
    expected = {"split": "test", "severity": severity, "seed": seed, "frame_step": frame_step}
    differing = {key: baseline.get(key) for key, value in expected.items() if baseline.get(key) != value}
    if differing or not isinstance(baseline.get("conditions"), dict):
        raise UserError(f"--baseline {path}: not comparable with this evaluation ({expected}): it has {differing} "
                        f"(write it with predrel train evaluate --split test --degradation all --severity {severity} "
                        f"--seed {seed} --frame-step {frame_step} --json FILE)")
    return baseline


def _export(args: argparse.Namespace) -> int:
    export_model(args.checkpoint, args.out, args.data, args.severity, args.eval_seed, args.eval_frame_step,
                 not args.no_progress, args.baseline)
    return 0


# -- evaluate -----------------------------------------------------------------------------------

def _evaluate(args: argparse.Namespace) -> int:
    import torch

    from predrel_ros.tools.benchmarks.report import hardware
    from predrel_ros.tools.training.dataset_frames import dataset_role_map
    from predrel_ros.tools.training.evaluation import TorchDetector
    from predrel_ros.tools.training.trainer import is_checkpoint, load_checkpoint

    _check_range("--threads", args.threads, 1)
    _check_range("--min-pixels", args.min_pixels, 1)
    conditions = conditions_for(args.degradation, args.severity)
    dataset = _open_dataset(args.data)
    if args.model.suffix == ".pt" and is_checkpoint(args.model):
        torch.set_num_threads(args.threads)
        net, class_names, saved = load_checkpoint(args.model)
        config = saved["train_config"]
        detector = TorchDetector(net, (config["input_height"], config["input_width"]))
    else:
        perceiver = open_perceiver(args.model, args.backend, args.threads)
        detector = partial(perceiver.detect, bgr=False)
        class_names = perceiver.labels
    results = evaluate_conditions(detector, dataset, args.split, class_names, dataset_role_map(dataset, class_names),
                                  conditions, args.seed, args.frame_step, args.min_pixels, not args.no_progress)
    print_results(results)
    if args.json:
        payload = {"model": str(args.model), "data": str(args.data), "split": args.split, "seed": args.seed,
                   "severity": args.severity, "frame_step": args.frame_step, "min_pixels": args.min_pixels,
                   "hardware": hardware(), "conditions": results}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=1) + "\n")
    return 0
