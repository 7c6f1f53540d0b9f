"""The embedded default model's network: a compact anchor-free instance-segmentation net.

A small residual/CSP backbone (strides 2..32), a top-down feature pyramid, one decoupled head per
level (strides 8, 16, 32) predicting class logits, box side distances and 32 mask coefficients per
location, and a prototype branch at stride 4. `SegmentationNet.forward` returns the raw training
outputs (`NetOutputs`); `YoloSegExport` wraps a trained net into the Ultralytics YOLO-seg output
layout (`output0 [1, 4+nc+32, N]`, `output1 [1, 32, H/4, W/4]`) so the project's decoder, or any
YOLO-seg decoder, runs it unchanged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class NetworkConfig:
    """Architecture hyper-parameters (a checkpoint stores them, so a net can be rebuilt from it).

    stage_widths / stage_depths: channels and residual blocks of the five backbone stages (strides
    2, 4, 8, 16, 32). neck_width: channels of the pyramid levels. head_width: channels inside each
    head branch. proto_width: channels of the prototype branch (it runs at stride 4, where every
    channel is costly). num_prototypes: mask prototypes (32 in the YOLO-seg layout).
    """

    num_classes: int
    stage_widths: tuple[int, ...] = (16, 32, 64, 96, 128)
    stage_depths: tuple[int, ...] = (0, 1, 2, 2, 1)
    neck_width: int = 64
    head_width: int = 48
    proto_width: int = 32
    num_prototypes: int = 32

    def __post_init__(self) -> None:
        if self.num_classes < 1:
            raise ValueError(f"NetworkConfig.num_classes must be >= 1, got {self.num_classes}")
        if len(self.stage_widths) != 5 or len(self.stage_depths) != 5:
            raise ValueError("NetworkConfig.stage_widths and stage_depths need 5 entries (strides 2..32), "
                             f"got {len(self.stage_widths)} and {len(self.stage_depths)}")
        if min(self.stage_widths) < 1 or min(self.stage_depths) < 0:
            raise ValueError("NetworkConfig.stage_widths must be >= 1 and stage_depths >= 0")
        for name in ("neck_width", "head_width", "proto_width", "num_prototypes"):
            if getattr(self, name) < 1:
                raise ValueError(f"NetworkConfig.{name} must be >= 1, got {getattr(self, name)}")

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides of the prediction levels."""
        return HEAD_STRIDES

    @property
    def max_stride(self) -> int:
        """Input sides must be multiples of this."""
        return 32


HEAD_STRIDES = (8, 16, 32)
PROTOTYPE_STRIDE = 4
#: prior probability of a class at initialisation (focal-loss style bias init)
CLASS_PRIOR = 0.01


class ConvBnAct(nn.Sequential):
    def __init__(self, c_in: int, c_out: int, kernel: int = 3, stride: int = 1) -> None:
        super().__init__(nn.Conv2d(c_in, c_out, kernel, stride, kernel // 2, bias=False),
                         nn.BatchNorm2d(c_out), nn.SiLU(inplace=True))


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with an identity shortcut."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = ConvBnAct(channels, channels)
        self.conv2 = ConvBnAct(channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(self.conv1(x))


class CspStage(nn.Module):
    """Strided downsampling, then residual blocks on half of the channels (cross-stage partial)."""

    def __init__(self, c_in: int, c_out: int, depth: int) -> None:
        super().__init__()
        self.down = ConvBnAct(c_in, c_out, 3, 2)
        self.depth = depth
        if depth:
            half = c_out // 2
            self.split = ConvBnAct(c_out, 2 * half, 1)
            self.blocks = nn.Sequential(*[ResidualBlock(half) for _ in range(depth)])
            self.merge = ConvBnAct(2 * half, c_out, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.down(x)
        if not self.depth:
            return x
        keep, work = self.split(x).chunk(2, dim=1)
        return self.merge(torch.cat((keep, self.blocks(work)), dim=1))


class Head(nn.Module):
    """Decoupled per-level head: class logits, box side distances (raw), mask coefficients."""

    def __init__(self, c_in: int, width: int, num_classes: int, num_prototypes: int, stride: int) -> None:
        super().__init__()
        self.stride = stride
        self.cls = nn.Sequential(ConvBnAct(c_in, width), ConvBnAct(width, width), nn.Conv2d(width, num_classes, 1))
        self.box = nn.Sequential(ConvBnAct(c_in, width), ConvBnAct(width, width), nn.Conv2d(width, 4, 1))
        self.coef = nn.Sequential(ConvBnAct(c_in, width), nn.Conv2d(width, num_prototypes, 1))
        nn.init.constant_(self.cls[-1].bias, -math.log((1 - CLASS_PRIOR) / CLASS_PRIOR))
        # softplus(bias) * stride = 2 strides per side: boxes start about 4 cells wide
        nn.init.constant_(self.box[-1].bias, math.log(math.expm1(2.0)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.cls(x), self.box(x), self.coef(x)


@dataclass
class NetOutputs:
    """Raw outputs over all N locations of all levels (level by level, row-major).

    class_logits (B, N, nc); box_xyxy (B, N, 4) in input pixels; coefficients (B, N, P);
    prototypes (B, P, H/4, W/4); anchors (N, 2) location centres in input pixels; strides (N,).
    """

    class_logits: torch.Tensor
    box_xyxy: torch.Tensor
    coefficients: torch.Tensor
    prototypes: torch.Tensor
    anchors: torch.Tensor
    strides: torch.Tensor


def location_grid(height: int, width: int, stride: int, device=None, dtype=torch.float32) -> torch.Tensor:
    """Centres (x, y) of a height x width feature map's cells in input pixels, row-major, (H*W, 2)."""
    ys = (torch.arange(height, device=device, dtype=dtype) + 0.5) * stride
    xs = (torch.arange(width, device=device, dtype=dtype) + 0.5) * stride
    grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack((grid_x.reshape(-1), grid_y.reshape(-1)), dim=1)


class SegmentationNet(nn.Module):
    def __init__(self, config: NetworkConfig) -> None:
        super().__init__()
        self.config = config
        widths, depths = config.stage_widths, config.stage_depths
        self.stem = ConvBnAct(3, widths[0], 3, 2)
        if depths[0]:
            self.stem = nn.Sequential(self.stem, *[ResidualBlock(widths[0]) for _ in range(depths[0])])
        self.stages = nn.ModuleList(CspStage(widths[i - 1], widths[i], depths[i]) for i in range(1, 5))
        neck = config.neck_width
        self.laterals = nn.ModuleList(ConvBnAct(widths[i], neck, 1) for i in (2, 3, 4))
        self.smooth = nn.ModuleList(ConvBnAct(neck, neck) for _ in range(2))  # after each top-down merge
        self.heads = nn.ModuleList(Head(neck, config.head_width, config.num_classes, config.num_prototypes, s)
                                   for s in HEAD_STRIDES)
        proto = config.proto_width
        self.proto = nn.Sequential(ConvBnAct(neck, proto), nn.Upsample(scale_factor=2, mode="nearest"),
                                   ConvBnAct(proto, proto), ConvBnAct(proto, config.num_prototypes, 1))

    def pyramid(self, images: torch.Tensor) -> list[torch.Tensor]:
        """Feature maps at strides 8, 16, 32 after the top-down merge."""
        x = self.stem(images)
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        c3, c4, c5 = features[1:]
        p5 = self.laterals[2](c5)
        p4 = self.smooth[1](self.laterals[1](c4) + F.interpolate(p5, size=c4.shape[-2:], mode="nearest"))
        p3 = self.smooth[0](self.laterals[0](c3) + F.interpolate(p4, size=c3.shape[-2:], mode="nearest"))
        return [p3, p4, p5]

    def forward(self, images: torch.Tensor) -> NetOutputs:
        height, width = images.shape[-2:]
        stride = self.config.max_stride
        if height % stride or width % stride:
            raise ValueError(f"input sides must be multiples of {stride}, got {height}x{width}")
        levels = self.pyramid(images)
        logits, boxes, coefs, anchors, strides = [], [], [], [], []
        for head, feature in zip(self.heads, levels):
            cls, box, coef = head(feature)
            batch, _, h, w = cls.shape
            grid = location_grid(h, w, head.stride, images.device, images.dtype)
            distances = F.softplus(box.flatten(2).transpose(1, 2)) * head.stride
            boxes.append(torch.cat((grid - distances[..., :2], grid + distances[..., 2:]), dim=-1))
            logits.append(cls.flatten(2).transpose(1, 2))
            coefs.append(coef.flatten(2).transpose(1, 2))
            anchors.append(grid)
            strides.append(torch.full((h * w,), float(head.stride), device=images.device, dtype=images.dtype))
        return NetOutputs(torch.cat(logits, 1), torch.cat(boxes, 1), torch.cat(coefs, 1),
                          self.proto(levels[0]), torch.cat(anchors), torch.cat(strides))


class YoloSegExport(nn.Module):
    """Inference wrapper in the Ultralytics YOLO-seg layout.

    output0 (B, 4 + nc + P, N): cx, cy, w, h in input pixels, class scores in [0, 1], P mask coefficients;
    output1 (B, P, H/4, W/4): mask prototypes. Masks are sigmoid(coefficients @ prototypes).
    """

    def __init__(self, net: SegmentationNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.net(images)
        xy1, xy2 = out.box_xyxy[..., :2], out.box_xyxy[..., 2:]
        boxes_cxcywh = torch.cat(((xy1 + xy2) / 2, xy2 - xy1), dim=-1)
        output0 = torch.cat((boxes_cxcywh, out.class_logits.sigmoid(), out.coefficients), dim=-1).transpose(1, 2)
        return output0, out.prototypes


def count_parameters(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())
