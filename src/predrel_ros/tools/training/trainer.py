"""The training loop: seeded, CPU-friendly, with an exponential moving average of the weights.

Frames showing rare classes are drawn more often (repeat-factor sampling, `repeat_threshold`).
AdamW with linear warm-up and cosine decay; weight decay on convolution weights only. After every
`validate_every` epochs the averaged (EMA) weights are evaluated on the validation frames through the
same letterbox and YOLO-seg decoder as the exported model, and the best (mean of box AP50 and mean
mask IoU) is kept as `best.pt`; `last.pt` and `history.json` are written as training goes.
"""
from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from predrel_ros.tools.training.assignment import AssignmentConfig, assign
from predrel_ros.tools.training.data import AugmentConfig, CompactImage, epoch_order, repeat_factors, training_batches
from predrel_ros.tools.training.evaluation import TorchDetector, evaluate_detector
from predrel_ros.tools.training.losses import LossWeights, segmentation_loss
from predrel_ros.tools.training.network import NetworkConfig, SegmentationNet, count_parameters

CHECKPOINT_FORMAT = "predrel-segnet-1"


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 40
    batch_size: int = 16
    learning_rate: float = 2e-3
    final_learning_rate_fraction: float = 0.05
    weight_decay: float = 5e-4
    warmup_iterations: int = 200
    ema_decay: float = 0.999
    input_height: int = 256
    input_width: int = 320
    min_pixels: int = 16  # instances with fewer visible pixels are not targets (and ignored in evaluation)
    repeat_threshold: float = 0.3  # repeat-factor sampling of frames with rare classes; 0 = uniform
    validate_every: int = 2
    seed: int = 0
    threads: int = 2
    augment: AugmentConfig = field(default_factory=AugmentConfig)
    assignment: AssignmentConfig = field(default_factory=AssignmentConfig)
    loss_weights: LossWeights = field(default_factory=LossWeights)

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "validate_every", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"TrainConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.learning_rate <= 0:
            raise ValueError(f"TrainConfig.learning_rate must be > 0, got {self.learning_rate}")
        if not 0.0 <= self.final_learning_rate_fraction <= 1.0:
            raise ValueError("TrainConfig.final_learning_rate_fraction must lie in [0, 1], "
                             f"got {self.final_learning_rate_fraction}")
        if self.weight_decay < 0 or self.warmup_iterations < 0 or self.min_pixels < 1:
            raise ValueError("TrainConfig.weight_decay and warmup_iterations must be >= 0, min_pixels >= 1")
        if not 0.0 <= self.repeat_threshold <= 1.0:
            raise ValueError(f"TrainConfig.repeat_threshold must lie in [0, 1], got {self.repeat_threshold}")
        if not 0.0 <= self.ema_decay < 1.0:
            raise ValueError(f"TrainConfig.ema_decay must lie in [0, 1), got {self.ema_decay}")
        if self.input_height % 32 or self.input_width % 32 or min(self.input_height, self.input_width) < 32:
            raise ValueError(f"TrainConfig.input_height/input_width must be positive multiples of 32, "
                             f"got {self.input_height}x{self.input_width}")

    @property
    def input_hw(self) -> tuple[int, int]:
        return self.input_height, self.input_width


class WeightAverage:
    """Exponential moving average of a model's weights (and BN statistics), ramped up early on."""

    def __init__(self, model: nn.Module, decay: float) -> None:
        self.model = copy.deepcopy(model).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.decay = decay
        self.updates = 0

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        self.updates += 1
        decay = self.decay * (1 - math.exp(-self.updates / 500))
        source = model.state_dict()
        for name, value in self.model.state_dict().items():
            if value.dtype.is_floating_point:
                value.mul_(decay).add_(source[name].detach(), alpha=1 - decay)
            else:
                value.copy_(source[name])


def save_checkpoint(path: Path, net: SegmentationNet, class_names: Sequence[str], config: TrainConfig,
                    info: dict) -> None:
    torch.save({"format": CHECKPOINT_FORMAT, "network": asdict(net.config), "state_dict": net.state_dict(),
                "class_names": list(class_names), "train_config": asdict(config), "info": info}, path)


def is_checkpoint(path: Path) -> bool:
    """Whether `path` is a training checkpoint (a TorchScript .pt is not)."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # not a torch.save pickle (TorchScript archive, corrupt file, ...)
        return False
    return isinstance(data, dict) and data.get("format") == CHECKPOINT_FORMAT


def load_checkpoint(path: Path) -> tuple[SegmentationNet, list[str], dict]:
    """(network in eval mode, class names, the checkpoint's other fields)."""
    from predrel_ros.core.errors import UserError

    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError) as error:
        raise UserError(f"cannot read checkpoint {path}: {error}") from error
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise UserError(f"{path} is not a predrel training checkpoint (format {CHECKPOINT_FORMAT})")
    network = data["network"]
    config = NetworkConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in network.items()})
    net = SegmentationNet(config)
    net.load_state_dict(data["state_dict"])
    return net.eval(), list(data["class_names"]), data


def initial_weights(path: Path) -> tuple[dict[str, torch.Tensor], list[str]]:
    """(state dict, class names) to start training from: a training checkpoint (.pt), an exported
    torch.export program (.pt2, labels.txt beside it) or a model folder holding one. Fine-tuning an
    exported model needs no checkpoint: the program keeps the network's weights under its wrapper."""
    from predrel_ros.core.errors import UserError

    path = Path(path)
    if path.is_dir():
        path = path / "model.pt2"
    if path.suffix == ".pt":
        net, class_names, _ = load_checkpoint(path)
        return net.state_dict(), class_names
    if path.suffix != ".pt2" or not path.is_file():
        raise UserError(f"--init {path}: expected a training checkpoint (.pt), a model.pt2 or a model folder")
    labels = path.parent / "labels.txt"
    if not labels.is_file():
        raise UserError(f"--init {path}: no labels.txt beside it")
    prefix = "net."  # export.YoloSegExport wraps the network as .net
    state = {name[len(prefix):]: value for name, value in torch.export.load(path).state_dict.items()
             if name.startswith(prefix)}
    return state, [line.strip() for line in labels.read_text().splitlines() if line.strip()]


def _parameter_groups(net: nn.Module, weight_decay: float) -> list[dict]:
    decayed = [p for name, p in net.named_parameters() if p.ndim == 4]
    others = [p for name, p in net.named_parameters() if p.ndim != 4]
    return [{"params": decayed, "weight_decay": weight_decay}, {"params": others, "weight_decay": 0.0}]


def _learning_rate(config: TrainConfig, iteration: int, total: int) -> float:
    if iteration < config.warmup_iterations:
        return config.learning_rate * (iteration + 1) / config.warmup_iterations
    progress = (iteration - config.warmup_iterations) / max(1, total - config.warmup_iterations)
    floor = config.final_learning_rate_fraction
    return config.learning_rate * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


@dataclass
class TrainResult:
    best_checkpoint: Path
    best_epoch: int
    best_validation: dict
    parameters: int
    wall_seconds: float
    cpu_seconds: float  # process CPU time, all threads: comparable across differently loaded machines
    history: list[dict]


def validation_score(metrics: dict) -> float:
    """Checkpoint selection: mean of box AP50 and mean mask IoU (0 where undefined)."""
    return 0.5 * ((metrics.get("box_ap50") or 0.0) + (metrics.get("mean_mask_iou") or 0.0))


def train(train_images: Sequence[CompactImage], validation_images: Sequence[CompactImage],
          class_names: Sequence[str], out_dir: Path, config: TrainConfig = TrainConfig(),
          network: NetworkConfig | None = None, progress: bool = True,
          initial_state: dict[str, torch.Tensor] | None = None) -> TrainResult:
    """Train a network on `train_images`, select on `validation_images`, write checkpoints to `out_dir`;
    from random initialisation, or from `initial_state` (fine-tuning: `initial_weights`)."""
    from tqdm import tqdm

    if not train_images:
        raise ValueError("no training images")
    if len(train_images) < config.batch_size:
        raise ValueError(f"{len(train_images)} training images are fewer than one batch ({config.batch_size})")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    network = network or NetworkConfig(num_classes=len(class_names))
    if network.num_classes != len(class_names):
        raise ValueError(f"network has {network.num_classes} classes but {len(class_names)} class names were given")
    net = SegmentationNet(network)
    if initial_state is not None:
        try:
            net.load_state_dict(initial_state)
        except RuntimeError as error:  # missing, unexpected or differently shaped weights
            raise ValueError(f"the initial weights do not fit the network: {error}") from None
    average = WeightAverage(net, config.ema_decay)
    optimizer = torch.optim.AdamW(_parameter_groups(net, config.weight_decay), lr=config.learning_rate)
    factors = repeat_factors(train_images, len(class_names), config.repeat_threshold, config.min_pixels)
    orders = [epoch_order(factors, rng) for _ in range(config.epochs)]
    total = sum(len(order) // config.batch_size for order in orders)
    history: list[dict] = []
    best_score, best_epoch, best_validation = -1.0, 0, {}
    started, cpu_started = time.monotonic(), time.process_time()
    iteration = 0
    bar = tqdm(total=total, desc="train", unit="batch", disable=not progress, dynamic_ncols=True)
    for epoch, order in enumerate(orders, start=1):
        net.train()
        sums: dict[str, float] = {}
        per_epoch = len(order) // config.batch_size
        for batch in training_batches(train_images, order, config.batch_size, config.input_hw, rng, config.augment,
                                      config.min_pixels):
            for group in optimizer.param_groups:
                group["lr"] = _learning_rate(config, iteration, total)
            outputs = net(batch.images)
            assignment = assign(outputs.class_logits.detach().sigmoid(), outputs.box_xyxy.detach(), outputs.anchors,
                                batch.boxes, batch.labels, batch.valid, config.assignment)
            terms = segmentation_loss(outputs, assignment, batch.boxes, batch.masks, config.loss_weights)
            optimizer.zero_grad(set_to_none=True)
            terms.total.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 10.0)
            optimizer.step()
            average.update(net)
            iteration += 1
            for key, value in terms.as_floats().items():
                sums[key] = sums.get(key, 0.0) + value
            bar.update(1)
            bar.set_postfix(epoch=epoch, loss=f"{terms.total.item():.3f}")
        record = {"epoch": epoch, "seconds": round(time.monotonic() - started, 1),
                  "cpu_seconds": round(time.process_time() - cpu_started, 1),
                  **{k: round(v / max(per_epoch, 1), 4) for k, v in sums.items()}}
        if validation_images and (epoch % config.validate_every == 0 or epoch == config.epochs):
            detector = TorchDetector(average.model, config.input_hw)
            metrics = evaluate_detector(detector, (image.expand() for image in validation_images), class_names,
                                        config.min_pixels).as_dict()
            record["validation"] = metrics
            score = validation_score(metrics)
            if score > best_score:
                best_score, best_epoch, best_validation = score, epoch, metrics
                save_checkpoint(out_dir / "best.pt", average.model, class_names, config,
                                {"epoch": epoch, "validation": metrics})
            bar.write(f"epoch {epoch}: loss {record['loss']:.3f}  val box AP50 {metrics['box_ap50']}  "
                      f"mask IoU {metrics['mean_mask_iou']}")
        history.append(record)
        save_checkpoint(out_dir / "last.pt", average.model, class_names, config, {"epoch": epoch})
        (out_dir / "history.json").write_text(json.dumps(history, indent=1) + "\n")
    bar.close()
    if not validation_images:
        best_epoch = config.epochs
        (out_dir / "best.pt").write_bytes((out_dir / "last.pt").read_bytes())
    return TrainResult(out_dir / "best.pt", best_epoch, best_validation, count_parameters(net),
                       time.monotonic() - started, time.process_time() - cpu_started, history)
