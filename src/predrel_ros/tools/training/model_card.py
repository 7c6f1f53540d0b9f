"""The model card of an exported model: what it is, what it was trained on, how well it does.

Written by `predrel train export` from the training run's record (`run.json`), the export checks and
the evaluation results, so every number in it comes from a command that can be rerun.
"""
from __future__ import annotations

from typing import Sequence

CARD_FILE = "MODEL_CARD.md"


def _number(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


#: (metric key, title) of the card's rows; per role only the first two
_METRICS = (("box_ap50", "box AP50"), ("mean_mask_iou", "mask IoU"), ("recall", "recall"), ("precision", "precision"))


def _metric_rows(conditions: dict[str, dict], names: Sequence[str], metrics, mean: bool) -> list[str]:
    """One row per condition and metric: its value for each of `names` (`per_class` of the result),
    and with `mean` the result's mean."""
    lines = []
    for condition, result in conditions.items():
        for key, title in metrics:
            cells = [_number(result["per_class"].get(name, {}).get(key)) for name in names]
            lines.append(f"| {condition} | {title} | " + " | ".join(cells) + " |"
                         + (f" {_number(result.get(key))} |" if mean else ""))
    return lines


def metrics_table(conditions: dict[str, dict], class_names: Sequence[str], episodes: dict[str, int]) -> list[str]:
    """Markdown rows: how much ground truth each class has, then per condition box AP50, mask IoU,
    recall and precision per class plus the means over classes."""
    header = "| condition | metric | " + " | ".join(class_names) + " | mean |"
    lines = [header, "|" + " --- |" * (len(class_names) + 3)]
    first = next(iter(conditions.values()))
    lines.append("| | episodes | " + " | ".join(str(episodes.get(n, "n/a")) for n in class_names) + " | |")
    lines.append("| | instances | " + " | ".join(str(first["per_class"][n]["num_truth"]) for n in class_names)
                 + " | |")
    return lines + _metric_rows(conditions, class_names, _METRICS, mean=True)


def role_table(conditions: dict[str, dict]) -> list[str]:
    """Markdown rows: per condition box AP50 and mask IoU per entity role (classes of one role merged)."""
    per_role = {condition: result["per_group"] for condition, result in conditions.items()}
    roles = list(next(iter(per_role.values()))["per_class"])
    lines = ["| condition | metric | " + " | ".join(roles) + " |", "|" + " --- |" * (len(roles) + 2)]
    return lines + _metric_rows(per_role, roles, _METRICS[:2], mean=False)


#: per-frame metrics of the before / after table besides the class means
_FRAME_METRICS = (("occluder_detections_per_frame", "occluders detected per frame"),)


def before_after_table(baseline: dict[str, dict], conditions: dict[str, dict]) -> list[str]:
    """Markdown rows: per condition the class means of the replaced model (before) and of this one, and
    the occluders taken for objects per frame (occlusion conditions; n/a elsewhere)."""
    metrics = _METRICS + _FRAME_METRICS
    lines = ["| condition | " + " | ".join(f"{title} before | {title} after" for _, title in metrics) + " |",
             "|" + " --- |" * (1 + 2 * len(metrics))]
    for condition, result in conditions.items():
        old = baseline.get(condition, {})
        lines.append(f"| {condition} | " + " | ".join(f"{_number(old.get(key))} | {_number(result.get(key))}"
                                                      for key, _ in metrics) + " |")
    return lines


def _origin(run: dict) -> list[str]:
    if run.get("init"):
        return ["predrel_ros controlled manipulation scenes. Fine-tuned by the project's own code (`predrel train`,",
                f"PyTorch on the CPU) from `{run['init']}` (the model it replaces, trained by the same code from",
                "random initialisation): no third-party weights, no Ultralytics code."]
    return ["predrel_ros controlled manipulation scenes. Trained by the project's own code (`predrel train`,",
            "PyTorch on the CPU) from random initialisation: no third-party weights, no Ultralytics code."]


def _augmentation(augment: dict) -> list[str]:
    if not augment.get("erase_probability"):
        return ["  and sensor noise as augmentation (none of the evaluation protocol's degradations is used)."]
    return [f"  and sensor noise as augmentation; random erasing (probability {augment['erase_probability']:g}, "
            f"1-{augment.get('erase_max', 3)} per frame) with textured, shaped occluders",
            "  (procedural textures or patches of the frame; ellipses, blobs, arm-like shapes), "
            f"{augment.get('erase_object_share', 0):.0%} of them inside",
            "  an instance's box; " + _erased_targets(augment.get("amodal_min_visible", 1.0)),
            "  None of the evaluation protocol's degradations is used; the `occlusion` kind",
            "  draws on the same texture generator (degradations/textures.py), with its own shapes and placement."]


def _erased_targets(amodal_min_visible: float) -> str:
    if amodal_min_visible >= 1.0:
        return "the covered pixels leave the visible-mask targets."
    return (f"an instance at least {amodal_min_visible:.0%} visible keeps its whole (amodal) mask and box as "
            "target, one hidden more keeps its visible pixels.")


def render(model_name: str, class_names: Sequence[str], run: dict, export: dict, evaluation: dict | None) -> str:
    """Markdown text of the card. run: the training record; export: files, sizes, checks, latency;
    evaluation: {"split", "severity", "conditions": {name: EvaluationResult.as_dict()}, "command"}."""
    network = run["network"]
    lines = [
        f"# Model card: {model_name}",
        "",
        "Instance segmentation (boxes, classes, masks) of hands, objects, containers and the table in the",
        *_origin(run),
        "Licence: Apache-2.0, like the package.",
        "",
        "## Files",
        "",
        "| file | bytes | what |",
        "| --- | --- | --- |",
    ]
    for name, info in export["files"].items():
        lines.append(f"| `{name}` | {info['bytes']:,} | {info['what']} |")
    lines += [
        "",
        "## Interface (Ultralytics YOLO-seg layout)",
        "",
        f"- input `images` [1, 3, {export['input_hw'][0]}, {export['input_hw'][1]}]: RGB float in [0, 1], the frame",
        "  letterboxed (aspect kept, grey 114/255 padding split evenly), e.g. 320x240 -> 320x256;",
        f"- `output0` [1, 4 + {len(class_names)} + 32, {export['candidates']}]: per candidate cx, cy, w, h "
        "(input pixels), class scores in [0, 1], 32 mask coefficients;",
        f"- `output1` [1, 32, {export['input_hw'][0] // 4}, {export['input_hw'][1] // 4}]: mask prototypes; "
        "mask = sigmoid(coefficients @ prototypes), cropped to the box.",
        "- classes (index: name): " + ", ".join(f"{i}: {n}" for i, n in enumerate(class_names)) + ".",
        "  One `hand` class: which hand it is (left/right) is decided downstream, not by appearance.",
        "- ONNX metadata carries `names`, `stride`, `imgsz`, `task` as Ultralytics writes them; the .pt2",
        "  program carries the same as its `config.txt` extra file.",
        "",
        "## Network",
        "",
        f"- {run['parameters']:,} parameters; CSP/residual backbone (stage widths {network['stage_widths']}, "
        f"depths {network['stage_depths']}),",
        f"  top-down pyramid ({network['neck_width']} channels), decoupled heads at strides 8/16/32 "
        f"({network['head_width']} channels),",
        "  mask prototypes at stride 4; anchor-free box side distances (softplus x stride).",
        "- Training: task-aligned assignment (top-10, score^0.5 x IoU^6), BCE class loss on the aligned",
        "  soft targets, CIoU box loss, per-pixel BCE mask loss inside the box at prototype resolution;",
        "  AdamW, warm-up + cosine schedule, weight EMA; frames with rare classes drawn more often",
        f"  (repeat-factor sampling, threshold {run['config']['repeat_threshold']}); flips, scale/translate "
        "jitter, HSV jitter, light blur",
        *_augmentation(run["config"]["augment"]),
        "",
        "## Training data and recipe",
        "",
    ]
    data = run["data"]
    if "format" in data:  # labelled images (tools/training/label_formats.py)
        lines += [
            f"- labelled images: `{data['path']}` ({data['format']} format); {data['train_images']} train images, "
            f"{data['val_images']} val images for checkpoint selection; roles: "
            + (", ".join(f"{k}: {v}" for k, v in data["roles"].items()) or "none given (manipulated_object)") + ".",
        ]
    else:
        lines += [
            f"- dataset: `{data['path']}` ({data.get('description') or 'dataset folder'}); "
            f"{data['episodes']['train']} train / {data['episodes']['val']} val / {data['episodes']['test']} test "
            "episodes (split by episode).",
            f"- frames used: every {data['train_frame_step']}th train frame ({data['train_frames']} frames), "
            f"every {data['val_frame_step']}th val frame ({data['val_frames']} frames) for checkpoint selection.",
        ]
    lines += [
        f"- {run['config']['epochs']} epochs, batch {run['config']['batch_size']}, learning rate "
        f"{run['config']['learning_rate']}, seed {run['config']['seed']}, {run['config']['threads']} CPU threads; "
        f"best epoch {run['best_epoch']} (validation box AP50 {_number(run['best_validation'].get('box_ap50'))}, "
        f"mask IoU {_number(run['best_validation'].get('mean_mask_iou'))}).",
        f"- training time: {run['wall_seconds'] / 60:.1f} min wall, {run['cpu_seconds'] / 60:.1f} min CPU "
        f"({run['config']['threads']} threads) on {run['hardware']['cpu']}, {run['hardware']['cores']} cores "
        "shared with other jobs.",
        "",
        "Reproduce:",
        "",
        "```",
    ]
    if data.get("generate_command"):
        lines.append(data["generate_command"])
    lines += [run["command"], "```", ""]
    lines += [
        "## Export checks",
        "",
        f"- ONNX opset {export['opset']}; ONNX Runtime vs PyTorch max abs difference: output0 "
        f"{export['onnx_difference']['output0']:.2e}, output1 {export['onnx_difference']['output1']:.2e}.",
        f"- latency, ONNX Runtime CPU, {export['latency']['threads']} threads, one 320x240 frame "
        f"(median of {export['latency']['repeats']}): network {export['latency']['network_ms']:.1f} ms, "
        f"letterbox + network + decoding {export['latency']['end_to_end_ms']:.1f} ms "
        f"({export['latency']['cpu']}).",
        "",
    ]
    if evaluation:
        lines += [
            f"## Metrics ({evaluation['split']} split: {evaluation['episodes']} episodes, "
            f"{evaluation['num_images']} frames"
            + (f", every {evaluation['frame_step']}th frame" if evaluation.get("frame_step", 1) != 1 else "") + ")",
            "",
            "Box AP50 (COCO 101-point), mean mask IoU of matched pairs, precision and recall at score 0.25",
            "(decoder defaults: NMS IoU 0.45, mask threshold 0.5). Ground truth: visible masks; instances",
            f"under {run['config']['min_pixels']} visible pixels are ignored. Degraded rows apply one image "
            f"degradation at severity {evaluation['severity']}",
            "(`predrel_ros.degradations`, episode i seeded with seed + i, so illumination cycles through",
            "low light, overexposure and contrast reduction over the episodes; occluders on the",
            "ground-truth entities) and keep the clean frame's ground truth, so occluded pixels count as",
            "missed mask pixels.",
            "",
            *metrics_table(evaluation["conditions"], class_names, evaluation["episodes_per_class"]),
            "",
            *(["By entity role (what the predicates use; a cube taken for a cylinder is a wrong class but",
               "the right manipulated object): classes merged by the role they play in the training split.",
               "", *role_table(evaluation["conditions"]), ""]
              if all("per_group" in r for r in evaluation["conditions"].values()) else []),
            *([f"Before / after: class means of the model this one replaces (`{evaluation['baseline']['model']}`,",
               "evaluated the same way on the same frames) and of this one.", "",
               *before_after_table(evaluation["baseline"]["conditions"], evaluation["conditions"]), "",
               "```", evaluation["baseline"]["command"], "```", ""]
              if evaluation.get("baseline") else []),
            f"Severity {evaluation['severity']} parameters (`predrel_ros.degradations` table): "
            + "; ".join(f"{name}: " + ", ".join(f"{k} {v:g}" for k, v in row.items())
                        for name, row in evaluation["parameters"].items()) + ".",
            "",
            "Rerun:",
            "",
            "```",
            *evaluation["commands"],
            "```",
            "",
        ]
    lines += [
        "## Limitations",
        "",
        "- Trained on synthetic MuJoCo scenes only (flat-shaded primitives, stylised hands, one table):",
        "  expect it to fail on real camera images; train on your own data or drop in your own",
        "  YOLO-seg export for real scenes.",
        "- Fixed input size; larger frames are letterboxed down, so small objects in high-resolution",
        "  frames lose detail.",
        "",
    ]
    return "\n".join(lines)
