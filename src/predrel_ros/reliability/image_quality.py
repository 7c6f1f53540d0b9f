"""Image quality as trust evidence: cheap no-reference measures of a camera frame.

Blur, low light, overexposure, haze, sensor noise and compression all change a frame in ways that
a few numbers over a small grey copy show, without a reference frame and well under a millisecond
at 320x240 (`predrel bench trust`). The frame is decimated by a power-of-two stride to about
`width` pixels across (a stride that divides 8 keeps the 8x8 block grid of JPEG-like compression
on the decimated grid) and converted to grey in [0, 1]; then

- `sharpness`: mean |Laplacian| over the mean |gradient| (blur and low resolution lower it; the
  ratio does not move with exposure or contrast, which scale both);
- `exposure`: mean grey; `dark_share` / `bright_share`: share of pixels below 0.05 / above 0.95;
- `contrast`: standard deviation of grey;
- `noise`: Immerkaer's estimate of the standard deviation of white noise (the response to the 3x3
  mask that cancels planes and lines, J. Immerkaer, CVIU 64(2), 1996), in grey units;
- `blockiness`: mean |difference| across 8-pixel block boundaries over the mean |difference|
  within blocks (1 for natural images, above 1 with block artefacts).

What is normal depends on the camera and the scene, so these are judged against the clean profile
(`evidence_profile`), not against absolute bounds.
"""
from __future__ import annotations

import numpy as np

SIGNALS = ("sharpness", "exposure", "dark_share", "bright_share", "contrast", "noise", "blockiness")
#: the block size of JPEG-like compression
BLOCK = 8
_EPS = 1e-6


class ImageQuality:
    """Measures frames decimated to about `width` pixels across (see the module docstring)."""

    def __init__(self, width: int = 160) -> None:
        if width < 16:
            raise ValueError(f"width must be >= 16 pixels, got {width}")
        self.width = width

    def stride(self, image_width: int) -> int:
        """The decimation stride: the largest power of two <= 8 that keeps >= `width` pixels across."""
        stride = 1
        while stride < BLOCK and image_width // (stride * 2) >= self.width:
            stride *= 2
        return stride

    def measure(self, image: np.ndarray) -> dict[str, float]:
        """The signals of one frame: H x W grey or H x W x 3 (RGB or BGR) / x 4, uint8 or float in [0, 1]."""
        image = np.asarray(image)
        if image.ndim not in (2, 3) or image.shape[0] < 3 or image.shape[1] < 3 or \
                (image.ndim == 3 and image.shape[2] not in (1, 3, 4)):
            raise ValueError(f"image must be H x W or H x W x 1/3/4 with H, W >= 3, got shape {image.shape}")
        stride = self.stride(image.shape[1])
        small = image[::stride, ::stride]
        grey = _grey(small)
        # differences as slices (np.diff's own checks cost as much as the subtraction at this size)
        dx, dy = grey[:, 1:] - grey[:, :-1], grey[1:] - grey[:-1]
        second_x, second_y = dx[:, 1:] - dx[:, :-1], dy[1:] - dy[:-1]
        laplacian = second_x[1:-1] + second_y[:, 1:-1]
        # Immerkaer's mask [[1, -2, 1], [-2, 4, -2], [1, -2, 1]]: the second difference across rows of second_x
        across = second_x[1:] - second_x[:-1]
        noise = float(np.sqrt(np.pi / 2.0) / 6.0 * np.abs(across[1:] - across[:-1]).mean())
        dx, dy = np.abs(dx), np.abs(dy)
        gradient = (float(dx.mean()) + float(dy.mean())) / 2.0
        return {
            "sharpness": float(np.abs(laplacian).mean()) / (gradient + _EPS),
            "exposure": float(grey.mean()),
            "dark_share": float(np.count_nonzero(grey < 0.05)) / grey.size,
            "bright_share": float(np.count_nonzero(grey > 0.95)) / grey.size,
            "contrast": float(grey.std()),
            "noise": noise,
            "blockiness": (_blockiness(dx, BLOCK // stride, axis=1) + _blockiness(dy, BLOCK // stride, axis=0)) / 2.0,
        }


def _grey(image: np.ndarray) -> np.ndarray:
    """The mean of the colour channels (or the one channel) as float32 in [0, 1]."""
    scale = np.float32(1.0 / 255.0 if image.dtype == np.uint8 else 1.0)
    if image.ndim == 3 and image.shape[2] >= 3:
        if image.dtype == np.uint8:  # the channel sum in integers (exact, as in float32), converted once
            total = image[..., 0].astype(np.uint16)
            total += image[..., 1]
            total += image[..., 2]
            return total.astype(np.float32) * (scale / np.float32(3.0))
        return (image[..., 0].astype(np.float32) + image[..., 1] + image[..., 2]) * (scale / np.float32(3.0))
    return image.reshape(image.shape[0], image.shape[1]).astype(np.float32) * scale


def _blockiness(differences: np.ndarray, block: int, axis: int) -> float:
    """Mean |difference| across block boundaries over the mean within blocks (1.0 when the stride
    leaves no block inside the decimated grid, or the image is flat)."""
    if block < 2 or differences.shape[axis] < block:
        return 1.0
    profile = differences.mean(axis=1 - axis)       # mean |difference| per column (axis 1) or row (axis 0)
    boundary = np.zeros(profile.size, dtype=bool)
    boundary[block - 1::block] = True                # the difference between pixel k*block-1 and k*block
    inside = float(profile[~boundary].mean())
    return float(profile[boundary].mean()) / inside if inside > _EPS else 1.0
