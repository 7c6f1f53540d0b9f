"""Fit and judge the trust estimator: the expected agreement per predicate group without a reference.

`predrel trust fit` fits the estimator (`reliability.trust_estimator`: an evidence profile from the
clean windows, then per group a monotone additive logistic model of the true rolling agreement)
on the runs of `predrel eval` on controlled episodes (`--data`: their --out folders; the sweep saves the
estimator's inputs after every frame), and writes it as JSON for the reliability node's
`trust_model` parameter and `predrel eval --trust-model`. `predrel trust evaluate` writes trust.json
(with its table, trust.md, and plot, trust.png) of a model on other runs; with
`--leave-one-kind-out` it also fits, per degradation kind, a model without that kind (on
`--fit-data`, default the evaluated runs) and reports its recall on that kind
(`summary.lok_recall_min`); with `--leave-one-episode-out` it judges every episode of `--data` by a
model fitted on the other episodes and on `--fit-data` (`summary.loeo`: how the estimator does on a
scene it never saw). Fit and evaluate on different episodes and degradation seeds.
`predrel trust run` runs perception, the predicates and the self-mode trust over footage without
ground truth (videos, bags) and reports per group how often trust flags it
(`tools.evaluation.source_trust`); with `--labels` (real footage labelled in the `real-dev` format,
`tools.evaluation.footage_labels`) it also compares, window by window, the trust with the agreement
against the labels, and `--hand-landmarks` adds MediaPipe's hands to perception.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

EXAMPLES = """examples:
  predrel eval --data data/controlled --split train --max-episodes 4 --seed 100 --out runs/fit --action-model none
  predrel trust fit --data runs/fit --out trust_model.json
  predrel eval --data data/fresh --split all --out runs/test --trust-model trust_model.json
  predrel trust evaluate --data runs/test --model trust_model.json --out runs/test-trust --leave-one-kind-out \\
      --fit-data runs/fit
  predrel trust evaluate --data runs/test --fit-data runs/fit --out runs/test-loeo --leave-one-episode-out
  predrel trust run --input clip.mp4 robot.mcap --out runs/real-trust.json
  predrel trust run --input real-dev/box.mp4 --labels real-dev/box.jsonl --hand-landmarks --out runs/box-trust.json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fit = sub.add_parser("fit", help="fit the estimator on predrel eval runs; write it as JSON")
    fit.add_argument("--data", nargs="+", required=True, metavar="DIR", help="predrel eval --out folders")
    fit.add_argument("--out", required=True, type=Path, metavar="FILE", help="the model file (.json)")
    _fit_options(fit)
    evaluate = sub.add_parser("evaluate", help="trust.json of a model on predrel eval runs")
    evaluate.add_argument("--data", nargs="+", required=True, metavar="DIR", help="predrel eval --out folders")
    evaluate.add_argument("--out", required=True, type=Path, metavar="DIR",
                          help="folder for trust.json, trust.md and trust.png")
    evaluate.add_argument("--model", metavar="FILE",
                          help="the model (default: fitted on --fit-data, which is then required)")
    evaluate.add_argument("--leave-one-kind-out", action="store_true",
                          help="also per kind the recall of a model fitted without it (summary.lok_recall_min)")
    evaluate.add_argument("--leave-one-episode-out", action="store_true",
                          help="also every episode of --data judged by a model fitted on the others and on "
                               "--fit-data (summary.loeo)")
    evaluate.add_argument("--fit-data", nargs="+", metavar="DIR",
                          help="runs the leave-one-kind-out models are fitted on (default: --data), and the "
                               "leave-one-episode-out models besides the other episodes of --data")
    _fit_options(evaluate)
    run = sub.add_parser("run", help="perception + predicates + self-mode trust over footage: flagged share per group")
    run.add_argument("--input", nargs="+", required=True, type=Path, metavar="SOURCE",
                     help="videos, bags, episode folders or image folders")
    run.add_argument("--out", required=True, type=Path, metavar="FILE", help="result (.json)")
    run.add_argument("--model", default="default",
                     help="trust model file ('default': the packaged one; '': none, the trust bounds)")
    run.add_argument("--perception-config", type=Path, default=None, help="perception settings (YAML/JSON)")
    run.add_argument("--predicate-config", default="predicates.yaml",
                     help="YAML with the `predicates` and `trust` sections (default: the package's)")
    run.add_argument("--window", type=int, default=30, help="rolling window in frames (default 30)")
    run.add_argument("--max-frames", type=int, default=None, help="stop after this many frames per source")
    run.add_argument("--fps", type=float, default=None, help="frame rate of image folders / override a video's")
    run.add_argument("--labels", nargs="+", type=Path, default=None, metavar="JSONL",
                     help="labels of the inputs (one .jsonl per input, in order; grasp / release events from the "
                          "events.json beside each, if any): compare the trust with the agreement against them")
    run.add_argument("--hand-landmarks", action="store_true",
                     help="add MediaPipe's hand landmarks to perception (hand_landmarks.enabled)")


def _fit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--window", type=int, default=30, help="rolling window in frames, as in the runs (default 30)")
    parser.add_argument("--l2", type=float, default=1e-3, help="L2 penalty of the logistic models (default 0.001)")
    parser.add_argument("--warn-percentile", type=float, default=2.0,
                        help="WARN below this percentile of the clean windows' expected agreement or above 100 "
                             "minus it of their risk of agreement < 0.6 (default 2)")
    parser.add_argument("--error", type=float, default=0.4, help="ERROR below this expected agreement (default 0.4)")
    parser.add_argument("--clean-false-alarms", type=float, default=None, metavar="SHARE",
                        help="WARN bounds for this share of the fit set's clean windows flagged in any group (the "
                             "same percentile of each group's clean windows), instead of --warn-percentile")
    parser.add_argument("--segments", type=int, default=1,
                        help="linear pieces per input between quantile knots of its fit values, flat outside them "
                             "(default 1: linear in each input; 2 or 4 generalised worse from 4 fit episodes, "
                             "docs/results.md)")


def main(args: argparse.Namespace) -> int:
    from predrel_ros.core.errors import UserError
    from predrel_ros.reliability.trust_estimator import TrustModel
    from predrel_ros.tools.evaluation import trust_fitting
    from predrel_ros.tools.evaluation.sweep import json_safe
    from predrel_ros.tools.evaluation.trust_measurement import trust_table
    from predrel_ros.tools.evaluation.trust_plot import trust_plot

    if args.action == "run":
        return _run(args)
    options = dict(l2=args.l2, warn_percentile=args.warn_percentile, error=args.error, segments=args.segments,
                   clean_false_alarms=args.clean_false_alarms)
    if args.action == "fit":
        episodes = trust_fitting.load_runs(args.data)
        provenance = {"fitted_on": [str(d) for d in args.data], "episodes": [s.episode for s, _, _ in episodes],
                      **options}
        model = trust_fitting.fit_model(episodes, args.window, provenance=provenance, **options)
        path = model.save(args.out)
        print(f"fitted on {len(episodes)} episodes; groups: "
              + ", ".join(f"{name} (warn < {g.warn:.2f}, error < {g.error:.2f})" for name, g in model.groups.items())
              + f"\nwritten to {path}")
        return 0
    fit_episodes = trust_fitting.load_runs(args.fit_data) if args.fit_data else None
    if args.model:
        try:
            model = TrustModel.load(args.model)
        except (OSError, ValueError, KeyError) as error:
            raise UserError(f"--model {args.model}: {error}") from None
    elif fit_episodes is not None:
        model = trust_fitting.fit_model(fit_episodes, args.window, provenance={"fitted_on": args.fit_data},
                                        **options)
    else:
        raise UserError("give --model, or --fit-data to fit one")
    episodes = trust_fitting.load_runs(args.data)
    if args.leave_one_episode_out and args.fit_data and \
            {Path(d).resolve() for d in args.data} & {Path(d).resolve() for d in args.fit_data}:
        raise UserError("--leave-one-episode-out: a folder given to both --data and --fit-data would put the "
                        "left-out episode in its own fit; give --fit-data only the other runs")
    document = trust_fitting.evaluate(model, episodes, args.leave_one_kind_out, fit_episodes,
                                      args.leave_one_episode_out, **options)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "trust.json").write_text(json.dumps(json_safe(document), indent=2) + "\n")
    (args.out / "trust.md").write_text(trust_table(document) + "\n")
    trust_plot(document, args.out / "trust.png")
    summary = document["summary"]
    print(json.dumps({key: summary.get(key) for key in ("mae", "recall_below_0_6", "false_alarm_clean",
                                                         "clean_low_share", "false_alarm_clean_good",
                                                         "median_delay_frames", "lok_recall_min", "recall_by_kind",
                                                         "lok_recall_by_kind", "loeo") if key in summary},
                     indent=2))
    print(f"written to {args.out / 'trust.json'}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from predrel_ros.core.errors import UserError
    from predrel_ros.core.package_files import config_path
    from predrel_ros.perception.perceiver import Perceiver
    from predrel_ros.predicates import PredicateConfig, PredicateExtractor
    from predrel_ros.reliability.monitor import MonitorConfig, ReliabilityMonitor
    from predrel_ros.reliability.trust import TrustConfig
    from predrel_ros.reliability.trust_estimator import DEFAULT_TRUST_MODEL_FILE, TrustModel
    from predrel_ros.sources.open_source import open_frames
    from predrel_ros.tools.cli.detect import load_perception_config
    from predrel_ros.tools.evaluation.footage_labels import load_footage_labels
    from predrel_ros.tools.evaluation.source_trust import source_trust

    if args.max_frames is not None and args.max_frames < 1:
        raise UserError("--max-frames must be at least 1")
    if args.labels is not None and len(args.labels) != len(args.input):
        raise UserError(f"--labels: give one label file per --input ({len(args.input)}), got {len(args.labels)}")
    labels = [load_footage_labels(path, _events_beside(path)) for path in args.labels] \
        if args.labels is not None else [None] * len(args.input)
    config_file = config_path(args.predicate_config, "--predicate-config")
    try:
        predicates = PredicateConfig.load(config_file, section="predicates")
        trust = TrustConfig.load(config_file, section="trust")
        model = None if not args.model else TrustModel.load(
            DEFAULT_TRUST_MODEL_FILE if args.model == "default" else args.model)
    except (OSError, ValueError, KeyError) as error:
        raise UserError(str(error)) from None
    if model is not None and model.window != args.window:
        raise UserError(f"the trust model was fitted over {model.window}-frame windows; give --window {model.window}")
    monitor = ReliabilityMonitor(MonitorConfig.for_predicates(predicates, window=args.window), trust, None, predicates,
                                 model)
    results = {}
    perception = load_perception_config(args.perception_config,
                                        {"hand_landmarks.enabled": True if args.hand_landmarks else None})
    with Perceiver(perception) as perceiver:
        for source, source_labels in zip(args.input, labels):
            result = results[str(source)] = source_trust(open_frames(source, fps=args.fps), perceiver,
                                                         PredicateExtractor(predicates), monitor, args.max_frames,
                                                         source_labels)
            print(f"{source}: any group flagged on {_share(result['any_group_flagged_share'])} of the "
                  f"judged frames; " + ", ".join(f"{group} {_share(values['flagged_share'])}" for group, values
                                                 in result["groups"].items()))
            if source_labels is not None:
                print(_against_labels(result["labels"], args.window))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"model": args.model, "window": args.window,
                                    "hand_landmarks": perception.hand_landmarks.enabled, "sources": results},
                                   indent=2) + "\n")
    print(f"written to {args.out}")
    return 0


def _against_labels(compared: dict, window: int) -> str:
    """What `source_trust` found against a clip's labels, for the terminal."""
    from predrel_ros.tools.evaluation.source_trust import label_table

    found = ", ".join(f"{_share(values['found_share'])} of {values['labelled']} {kind}s "
                      f"(+{values['unmatched_per_frame']:.2f} unlabelled a frame)"
                      for kind, values in compared["entities_found"].items())
    sides = compared["hand_sides"]
    predicates = ", ".join(f"{name} {_share(values['agreement'])} of {values['reference_streams']}"
                           for name, values in compared["predicates"].items())
    return (f"against the labels ({compared['labelled_frames']} labelled frames, window {window}; found {found}; "
            f"side right on {_share(sides['agreement'])} of {sides['hands']} found hands with a labelled side; "
            f"agreement {predicates}):\n" + label_table(compared["groups"]))


def _events_beside(labels: Path) -> Path | None:
    """The events.json in a label file's folder, if there is one."""
    events = labels.parent / "events.json"
    return events if events.is_file() else None


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f} %"
