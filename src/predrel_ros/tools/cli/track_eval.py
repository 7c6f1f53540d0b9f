"""Measure the tracker's IDF1 and identity switches on controlled episodes or synthetic tracks,
clean and under detection noise or frame dropping (severities 0..5 of the degradation table).

Detections come from the ground truth (default: the tracker alone is measured; visible
ground-truth entities pass through the `detection_noise` degradation: box jitter, misses, false
detections) or from a model (`--model`: the full detector + tracker on the frames' pixels).
`frame_drop` drops or repeats frames with their indices preserved; dropped frames are not scored.
Ground-truth entities less visible than --min-visibility are neither detected nor expected.
Scores per condition are summed over episodes (MOT-style): IDF1, IDP, IDR, ID switches, MOTA.
True detections keep the ground truth's score 1; false detections score 0.3-0.8 (degradation table).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from predrel_ros.tools.evaluation.tracking import (
    KINDS,
    dataset_sequences,
    evaluate_conditions,
    ground_truth_detector,
    model_detector,
    plot_scores,
    synthetic_sequences,
)

EXAMPLES = """examples:
  predrel track-eval --synthetic 10                          tracker on 10 synthetic episodes
  predrel track-eval --dataset data/controlled --split test  tracker on recorded controlled episodes
  predrel track-eval --dataset data/controlled --kinds detection_noise --severities 0 3 5 --out idf1.json
  predrel track-eval --dataset data/controlled --model runs/model --severities 0   detector + tracker
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", type=Path, help="dataset folder with ground-truth entities (controlled set)")
    source.add_argument("--synthetic", type=int, metavar="N", help="N synthetic episodes instead")
    parser.add_argument("--split", choices=("train", "val", "test"), default=None, help="dataset split (default: all)")
    parser.add_argument("--frames", type=int, default=150, help="frames per synthetic episode")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="degradation kinds")
    parser.add_argument("--severities", nargs="+", type=int, default=[0, 1, 2, 3, 4, 5],
                        help="severities (0 = clean)")
    parser.add_argument("--seed", type=int, default=0, help="degradation seed (and first synthetic seed)")
    parser.add_argument("--model", default=None, help="detect with this model instead of the ground truth")
    parser.add_argument("--config", type=Path, default=None, help="perception settings (tracker, decoder, backend)")
    parser.add_argument("--min-visibility", type=float, default=0.3,
                        help="ground-truth entities less visible are not expected to be tracked")
    parser.add_argument("--out", type=Path, default=None, help="write the scores as JSON (and a plot beside it)")


def main(args: argparse.Namespace) -> int:
    from predrel_ros.core.errors import UserError
    from predrel_ros.tools.cli.detect import load_perception_config

    if any(not 0 <= s <= 5 for s in args.severities):
        raise UserError("--severities must lie in 0..5")
    if not 0 <= args.min_visibility <= 1:
        raise UserError("--min-visibility must lie in [0, 1]")
    config = load_perception_config(args.config, {"model": args.model})
    perceiver = None
    detector = ground_truth_detector
    if args.model is not None:
        from predrel_ros.perception.perceiver import Perceiver

        perceiver = Perceiver(config)
        detector = model_detector(perceiver)
    if args.synthetic is not None:
        if args.synthetic < 1:
            raise UserError("--synthetic needs at least one episode")
        sequences = list(synthetic_sequences(args.synthetic, args.seed, args.frames))
    else:
        sequences = list(dataset_sequences(args.dataset, args.split, with_images=perceiver is not None))
    if not sequences:
        raise UserError(f"{args.dataset}: no episodes{' in split ' + args.split if args.split else ''}")
    try:
        results = evaluate_conditions(sequences, args.kinds, args.severities, args.seed, detector, config.tracker,
                                      args.min_visibility)
    finally:
        if perceiver is not None:
            perceiver.close()
    print(f"{'condition':<22}{'IDF1':>7}{'IDP':>7}{'IDR':>7}{'IDsw':>6}{'MOTA':>8}{'FN':>7}{'FP':>6}")
    for row in results:
        label = "clean" if row["kind"] == "none" else f"{row['kind']} {row['severity']}"
        print(f"{label:<22}{row['idf1']:>7.3f}{row['idp']:>7.3f}{row['idr']:>7.3f}{row['id_switches']:>6d}"
              f"{row['mota']:>8.3f}{row['misses']:>7d}{row['false_positives']:>6d}")
    if args.out is not None:
        source = {"synthetic": args.synthetic, "frames": args.frames} if args.synthetic is not None \
            else {"dataset": str(args.dataset), "split": args.split}
        document = {"source": source, "detector": args.model or "ground truth", "seed": args.seed,
                    "min_visibility": args.min_visibility, "tracker": config.to_dict()["tracker"],
                    "results": results}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(document, indent=2) + "\n")
        plot = plot_scores(results, args.out.with_suffix(".png"))
        print(f"written to {args.out}" + (f" and {plot}" if plot else ""))
    return 0
