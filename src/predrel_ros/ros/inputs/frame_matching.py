"""Pairing images with their FrameInfo by header stamp, and accounting for those that never pair
(no rclpy here).

The replay and degrade nodes publish a FrameInfo (reliable) for every frame and the image (best
effort) for every frame that is not dropped, with the same header. Either may arrive first, so
both wait here (bounded, by stamp). Both topics keep their publisher's order, so when an image and
its FrameInfo pair up, every FrameInfo still waiting with an older stamp lost its image (it will
not come: `lost_infos`), and every older image waiting for a FrameInfo has none (`orphan_images`).
Whatever waits longer than `max_age_s` is given back by `expire` the same way.

Order is the stream-order policy's (`predrel_ros.core.stream_order`, in `stamp_table`): images by
stamp, FrameInfos by stamp or, with `infos_by_frame_index` (the perception node), by frame_index
with their stamp as the policy's clock. A restart of either stream gives back what waits from the
old sequence (lost or orphan) and is reported in `Matched.restart`.
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
    restart: str = ""   # why the added item's stream restarted with it (empty: it did not)


class ImageInfoMatcher(Generic[Picture, Info]):
    def __init__(self, capacity: int = 256, clock=None, infos_by_frame_index: bool = False) -> None:
        kwargs = {} if clock is None else {"clock": clock}
        self._infos: StampTable[Info] = StampTable(capacity, by_frame_index=infos_by_frame_index, **kwargs)
        self._images: StampTable[Picture] = StampTable(capacity, **kwargs)

    def add_info(self, stamp_ns: int, info: Info, frame_index: int | None = None) -> Matched:
        """A FrameInfo that announces an image (frame_index: its, with `infos_by_frame_index`).
        Raises stamp_table.OutOfOrder for one out of order."""
        result = self._added(self._infos, stamp_ns, info, frame_index)  # checks the order, even if it pairs
        image = self._images.pop(stamp_ns)
        if image is not None:
            self._pair(stamp_ns, image, self._infos.pop(stamp_ns), result)
        return result

    def note_info(self, stamp_ns: int, frame_index: int | None = None) -> Matched:
        """A FrameInfo that announces no image (a dropped frame): only its order counts."""
        result = self._added(self._infos, stamp_ns, None, frame_index)
        self._infos.pop(stamp_ns)
        return result

    def add_image(self, stamp_ns: int, image: Picture) -> Matched:
        """An image. Raises stamp_table.OutOfOrder for one out of order."""
        result = self._added(self._images, stamp_ns, image)  # checks the order
        info = self._infos.pop(stamp_ns)
        if info is not None:
            self._pair(stamp_ns, self._images.pop(stamp_ns), info, result)
        return result

    def _added(self, table: StampTable, stamp_ns: int, item, frame_index: int | None = None) -> Matched:
        """`item` added to `table`, with what it pushed out (lost infos or orphan images)."""
        restarts = table.order.restarts
        pushed_out = table.add(stamp_ns, item, frame_index)
        result = Matched(restart=table.order.reason if table.order.restarts != restarts else "")
        if table is self._infos:
            result.lost_infos = pushed_out
        else:
            result.orphan_images = pushed_out
        return result

    def restart_images(self) -> Matched:
        """The image stream restarted elsewhere (the synchroniser): its order starts anew and the
        images still waiting, of the old sequence, are given back."""
        self._images.order.reset()
        return Matched(orphan_images=self._images.drain())

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
