"""Train and evaluate the downstream manipulation-primitive recognizer (paper 4.6, Table 13).

fit       extract predicates from a dataset's clean episodes (oracle = ground-truth entities, or the
          perception model's entities), fit every hyperparameter setting on the train split, keep
          the best validation macro-F1, report the test split and write the model file
evaluate  accuracy, macro-F1, per-class F1 and the confusion matrix of a model on a dataset split,
          clean, degraded (--degradation KIND --severity S) or with predicates masked (--mask);
          --plot writes the confusion matrix as a PNG

Predicates are extracted exactly as the predicate node does (PredicateExtractor with the given or
the default predicate config); nothing is tuned on degraded data.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from predrel_ros.tools.figures import save_figure

EXAMPLES = """examples:
  predrel dataset generate --episodes 100 --seed 11 --out data/action-set-s11 --format folder
  predrel action fit --data data/action-set-s11 --source perception \\
      --out src/predrel_ros/action/models/primitive-recognizer.json
  predrel action fit --data data/action-set-s11 --source perception --no-confidence \\
      --out src/predrel_ros/action/models/primitive-recognizer-noconf.json
  predrel action evaluate --data data/action-set-s11 --plot confusion.png
  predrel action evaluate --data data/action-set-s11 --degradation detection_noise --severity 3
  predrel action evaluate --data data/action-set-s11 --mask contact --json masked-contact.json
  predrel action evaluate --data data/action-set-s11 --source perception --degradation blur --severity 5
"""


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _numbers(kind):
    def parse(text: str):
        try:
            values = tuple(kind(part) for part in _names(text))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {kind.__name__}s, got {text!r}") from None
        if not values:
            raise argparse.ArgumentTypeError("expected at least one value")
        return values
    return parse


def _source_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", choices=("oracle", "perception"), default="oracle",
                        help="entities: ground truth (oracle) or the perception model's")
    parser.add_argument("--perception-config", help="perception YAML for --source perception (default model otherwise)")
    parser.add_argument("--predicate-config", type=Path,
                        help="predicate YAML (section 'predicates'); default: the built-in defaults "
                             "(= config/predicates.yaml)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    fit = actions.add_parser("fit", help="fit on train, select on val, report test; write the model",
                             epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    fit.add_argument("--data", type=Path, required=True, help="dataset folder (predrel dataset generate)")
    fit.add_argument("--out", type=Path, required=True, help="model file to write (.json)")
    _source_options(fit)
    fit.add_argument("--no-confidence", action="store_true",
                     help="indicators without confidence (the paper's 'without confidence weighting' model)")
    fit.add_argument("--hidden", type=_numbers(int), default=None,
                     help="hidden sizes to try (default 0,32; 0 = linear)")
    fit.add_argument("--l2", type=_numbers(float), default=None, help="L2 strengths to try (default 3e-4,1e-3,1e-2)")
    fit.add_argument("--seed", type=int, default=0, help="seed of the initial weights")

    evaluate = actions.add_parser("evaluate", help="accuracy / macro-F1 / confusion matrix on a split",
                                  epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    evaluate.add_argument("--data", type=Path, required=True, help="dataset folder")
    evaluate.add_argument("--model", type=Path, help="model file (default: the packaged model)")
    evaluate.add_argument("--split", choices=("train", "val", "test"), default="test")
    _source_options(evaluate)
    evaluate.add_argument("--degradation", default="none",
                          help="none, or a kind: blur, occlusion, occlusion_flat, illumination, low_resolution "
                               "(these need --source perception), frame_drop, detection_noise")
    evaluate.add_argument("--severity", type=int, default=3, help="severity 1..5 of --degradation")
    evaluate.add_argument("--seed", type=int, default=0, help="degradation seed (episode i of the split uses seed + i)")
    evaluate.add_argument("--mask", type=_names, default=(),
                          help="comma-separated predicates or groups treated as unknown, e.g. contact or derived")
    evaluate.add_argument("--no-confidence", action="store_true",
                          help="drop the confidences at inference (a model trained with them; for the paper's "
                               "ablation evaluate a model fitted with --no-confidence instead)")
    evaluate.add_argument("--json", type=Path, help="also write the results to this JSON file")
    evaluate.add_argument("--plot", type=Path, help="write the confusion matrix as a PNG")


def main(args: argparse.Namespace) -> int:
    return {"fit": _fit, "evaluate": _evaluate}[args.action](args)


def _predicate_config(path: Path | None):
    from predrel_ros.core.errors import UserError
    from predrel_ros.predicates.config import PredicateConfig
    if path is None:
        return PredicateConfig()
    try:
        return PredicateConfig.load(path, section="predicates")
    except ValueError as error:
        raise UserError(str(error)) from None


def _fit(args: argparse.Namespace) -> int:
    from predrel_ros.action import training
    from predrel_ros.action.evaluation import evaluate_streams
    from predrel_ros.action.streams import dataset_streams, make_source
    from predrel_ros.core.frame import PRIMITIVE_LABELS
    from predrel_ros.sources.dataset import open_dataset

    dataset = open_dataset(args.data)
    predicate_config = _predicate_config(args.predicate_config)
    source = make_source(args.source, args.perception_config)
    progress = not args.no_progress
    started = time.perf_counter()
    streams = {split: dataset_streams(dataset, split, source, predicate_config, progress=progress)
               for split in ("train", "val", "test")}
    grid = [training.Hyperparameters(temporal, hidden, l2)
            for temporal in training.DEFAULT_TEMPORAL
            for hidden in (args.hidden or training.DEFAULT_HIDDEN)
            for l2 in (args.l2 or training.DEFAULT_L2)]
    confidence_weighted = not args.no_confidence
    selection = training.select_and_fit(streams["train"], streams["val"], PRIMITIVE_LABELS, grid,
                                        confidence_weighted, args.seed, progress)
    model = selection.model
    test = evaluate_streams(model, streams["test"])
    model.training = {
        "command": _fit_command(args),
        "data": {"path": str(args.data), "seed": dataset.manifest.get("seed"),
                 "episodes": {split: len(items) for split, items in streams.items()},
                 "frames": {split: sum(s.num_frames for s in items) for split, items in streams.items()}},
        "source": args.source,
        "perception_config": args.perception_config,
        "predicate_config": predicate_config.to_dict(),
        "seed": args.seed,
        "selected": selection.best.to_dict(),
        "trials": [trial.to_dict() for trial in selection.trials],
        "test": {"accuracy": round(test.accuracy, 4), "macro_f1": round(test.macro_f1, 4), "frames": test.frames},
    }
    path = model.save(args.out)
    print(_selection_table(selection))
    print(f"\nselected: {_describe(selection.best.hyperparameters)}  (val macro-F1 {selection.best.val_macro_f1:.3f})")
    print(_report(test, f"test split, {args.source} entities, clean"))
    print(f"\nwrote {path} ({path.stat().st_size / 1024:.0f} KiB) in {time.perf_counter() - started:.0f} s")
    return 0


def _fit_command(args: argparse.Namespace) -> str:
    parts = ["predrel", "action", "fit", "--data", str(args.data), "--out", str(args.out), "--source", args.source,
             "--seed", str(args.seed)]
    if args.perception_config:
        parts += ["--perception-config", args.perception_config]
    if args.predicate_config:
        parts += ["--predicate-config", str(args.predicate_config)]
    if args.no_confidence:
        parts.append("--no-confidence")
    if args.hidden:
        parts += ["--hidden", ",".join(map(str, args.hidden))]
    if args.l2:
        parts += ["--l2", ",".join(map(str, args.l2))]
    return " ".join(shlex.quote(part) for part in parts)


def _evaluate(args: argparse.Namespace) -> int:
    from predrel_ros.action.encoding import expand_masked
    from predrel_ros.action.evaluation import evaluate_streams
    from predrel_ros.action.model import PrimitiveModel
    from predrel_ros.action.streams import dataset_streams, make_source
    from predrel_ros.core.errors import UserError
    from predrel_ros.degradations import NONE, Condition
    from predrel_ros.sources.dataset import open_dataset

    model = PrimitiveModel.load(args.model)
    try:
        expand_masked(args.mask)
        condition = None if args.degradation == NONE else Condition(args.degradation, args.severity)
    except ValueError as error:
        raise UserError(str(error)) from None
    trained_on = model.training.get("source")
    if trained_on and trained_on != args.source:
        print(f"note: the model was trained on {trained_on} entities, evaluated on {args.source} entities",
              file=sys.stderr)
    streams = dataset_streams(open_dataset(args.data), args.split, make_source(args.source, args.perception_config),
                              _predicate_config(args.predicate_config), condition, args.seed,
                              progress=not args.no_progress)
    result = evaluate_streams(model, streams, args.mask, False if args.no_confidence else None)
    condition_text = "clean" if condition is None else f"{condition.kind} s={condition.severity}"
    details = [condition_text] + ([f"masked {','.join(args.mask)}"] if args.mask else []) \
        + (["without confidence"] if args.no_confidence or not model.confidence_weighted else [])
    title = f"{args.split} split, {args.source} entities, {', '.join(details)}"
    print(_report(result, title))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"split": args.split, "source": args.source, "condition": condition_text,
                                         "masked": list(args.mask), "model": str(args.model or "packaged"),
                                         **result.to_dict()}, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.plot:
        print(f"wrote {plot_confusion(result, args.plot, title)}")
    return 0


def _describe(hyperparameters) -> str:
    temporal = hyperparameters.temporal
    return (f"lags {list(temporal.lags)}, recent max {temporal.recent_max}, hold {temporal.max_hold}, "
            f"hidden {hyperparameters.hidden}, l2 {hyperparameters.l2:g}")


def _selection_table(selection) -> str:
    described = [_describe(trial.hyperparameters) for trial in selection.trials]
    width = max(len(text) for text in described)
    lines = [f"{'hyperparameters':{width}s}  val acc  val F1"]
    for text, trial in zip(described, selection.trials):
        lines.append(f"{text:{width}s} {trial.val_accuracy:8.3f} {trial.val_macro_f1:7.3f}")
    return "\n".join(lines)


def _report(result, title: str) -> str:
    names = result.class_names
    width = max(len(name) for name in names) + 1
    lines = [f"\n{title}: {result.frames} frames of {result.episodes} episodes",
             f"accuracy {result.accuracy:.3f}   macro-F1 {result.macro_f1:.3f}", "",
             "confusion (rows: true, columns: predicted; '-' = no prediction)",
             " " * width + "".join(f"{name[:7]:>8s}" for name in names) + f"{'-':>8s}{'F1':>8s}"]
    for i, name in enumerate(names):
        f1 = result.per_class_f1[i]
        lines.append(f"{name:{width}s}" + "".join(f"{count:8d}" for count in result.confusion[i])
                     + (f"{f1:8.3f}" if f1 == f1 else f"{'n/a':>8s}"))
    return "\n".join(lines)


def plot_confusion(result, path: Path, title: str) -> Path:
    """Row-normalised confusion matrix with counts, as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    counts = result.confusion
    names = list(result.class_names) + ["(none)"]
    rows = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, rows, out=np.zeros(counts.shape), where=rows > 0)
    figure, axes = plt.subplots(figsize=(8.5, 7))
    image = axes.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    for (i, j), count in np.ndenumerate(counts):
        if count:
            axes.text(j, i, f"{shares[i, j]:.2f}\n{count}", ha="center", va="center", fontsize=7,
                      color="white" if shares[i, j] > 0.5 else "black")
    axes.set_xticks(range(len(names)), names, rotation=45, ha="right")
    axes.set_yticks(range(len(result.class_names)), result.class_names)
    axes.set_xlabel("predicted")
    axes.set_ylabel("true")
    axes.set_title(f"{title}\naccuracy {result.accuracy:.3f}, macro-F1 {result.macro_f1:.3f}", fontsize=9)
    figure.colorbar(image, ax=axes, fraction=0.046, label="share of the true class")
    return save_figure(figure, path)
