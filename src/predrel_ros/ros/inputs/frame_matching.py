"""Pairing images with their FrameInfo by header stamp, and accounting for those that never pair
(no rclpy here).

The replay and degrade nodes publish a FrameInfo (reliable) for every frame and the image (best
effort) for every frame that is not dropped, with the same header. Either may arrive first, so
both wait here (bounded, by stamp). Both topics keep their publisher's order, so when an image and
its FrameInfo pair up, every FrameInfo still waiting with an older stamp lost its image (it will
not come: `lost_infos`), and every older image waiting for a FrameInfo has none (`orphan_images`).
Whatever waits longer than `max_age_s` is given back by `expire` the same way.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from predrel_ros.ros.inputs.stamp_table import StampTable

Info = TypeVar("Info")
Picture = TypeVar("Picture")


@dataclass
class Matched(Generic[Picture, Info]):
    pairs: list[tuple[Picture, Info]] = field(default_factory=list)
    lost_infos: list[Info] = field(default_factory=list)      # FrameInfos whose image never came
    orphan_images: list[Picture] = field(default_factory=list)  # images whose FrameInfo never came


class ImageInfoMatcher(Generic[Picture, Info]):
    def __init__(self, capacity: int = 256, clock=None) -> None:
        kwargs = {} if clock is None else {"clock": clock}
        self._infos: StampTable[Info] = StampTable(capacity, **kwargs)
        self._images: StampTable[Picture] = StampTable(capacity, **kwargs)

    def add_info(self, stamp_ns: int, info: Info) -> Matched:
        """A FrameInfo that announces an image. Raises stamp_table.OutOfOrder for an old stamp."""
        result = Matched(lost_infos=self._infos.add(stamp_ns, info))  # checks the order, even if it pairs
        image = self._images.pop(stamp_ns)
        if image is not None:
            self._pair(stamp_ns, image, self._infos.pop(stamp_ns), result)
        return result

    def note_info(self, stamp_ns: int) -> None:
        """A FrameInfo that announces no image (a dropped frame): only its stamp's order counts."""
        self._infos.add(stamp_ns, None)
        self._infos.pop(stamp_ns)

    def add_image(self, stamp_ns: int, image: Picture) -> Matched:
        """An image. Raises stamp_table.OutOfOrder for an old stamp."""
        result = Matched(orphan_images=self._images.add(stamp_ns, image))  # checks the order
        info = self._infos.pop(stamp_ns)
        if info is not None:
            self._pair(stamp_ns, self._images.pop(stamp_ns), info, result)
        return result

    def discard_image(self, stamp_ns: int) -> Info | None:
        """The FrameInfo waiting for an image that turned out unusable (removed), or None."""
        return self._infos.pop(stamp_ns)

    def _pair(self, stamp_ns: int, image: Picture, info: Info, result: Matched) -> None:
        result.pairs.append((image, info))
        result.lost_infos.extend(self._infos.pop_older(stamp_ns))
        result.orphan_images.extend(self._images.pop_older(stamp_ns))

    def expire(self, max_age_s: float) -> Matched:
        return Matched(lost_infos=self._infos.expire(max_age_s), orphan_images=self._images.expire(max_age_s))

    def drain(self) -> Matched:
        return Matched(lost_infos=self._infos.drain(), orphan_images=self._images.drain())

    def waiting(self) -> tuple[int, int]:
        """(FrameInfos waiting for images, images waiting for FrameInfos)."""
        return len(self._infos), len(self._images)
