"""The one frame-order policy of every stream: frame indices and header stamps alike.

Every stateful stage (perception's tracker, predicate extraction, rolling reliability and its frame
matching, the action recognizer, the nodes around them, the degrade node's and the synchroniser's
camera stamps, the dashboard's newest frame, the replay's pace) takes its input in increasing order
of a *position*: a frame index, or for a stream that has only stamps, the header stamp in ns. A
`StreamOrder` decides about each frame; the stage only refuses, resets or takes it.

    order = StreamOrder()                    # frame indices; StreamOrder.of_stamps() for stamps in ns
    verdict = order.check(frame_index)       # NEXT, OUT_OF_ORDER or RESTART (order.reason says why)
    if verdict == OUT_OF_ORDER: count it, skip the frame (it changes nothing)
    if verdict == RESTART: reset the stage's state and order.reset(), count the restart
    ... process; then order.accept(frame_index) once the frame was taken

A library stage that refuses by raising calls `order.admit(frame_index, self.reset)` instead:
`FrameOrderError` for OUT_OF_ORDER, its reset (and the order's) on RESTART. A node shares the
stage's order (`PredicateExtractor(config, order=...)`) and decides first with the node kit's
`frame_order.admit`, which counts and logs (rate-limited) what the policy decided.

The rule (`restart_after` R, default 5; `max_step` S: 2**20 frames or one hour of stamps):

- NEXT: the first frame, or a position 1..S ahead of the last accepted one;
- OUT_OF_ORDER: a position not ahead of the last one (old, repeated, wrapped around), or more than
  S ahead (a far-future stamp such as sec = 2**31-1, a frame_index of 2**64-1): such a frame never
  becomes the reference, so the next ordinary frame is NEXT again at once;
- RESTART: the R-th out-of-order frame in a row (a respawned producer numbering from 0, a bag
  played again, a stream that really jumped): the stage starts a new sequence with this frame. A
  frame repeating the previous out-of-order frame's position (or stamp) is the same stale frame
  again and does not add to the count. R = 0: never (strict: old frames are refused for good);
  R = 1: every out-of-order frame starts a new sequence (a stage that cannot refuse, the tracker).

So whatever single value (or burst of values) arrives, ordinary frames are taken again after at
most R - 1 refused ones (none when an accepted frame preceded the bad one), and a stream never
blocks unless R = 0. The bound holds per ordering stage: a stage fed by one that restarted starts
anew with it instead of judging the same frames again (`camera_inputs.CameraFrame.sequence`, the
perception node's input sequence).

A stream numbered by frame_index may also give each frame's header stamp (`check(index, stamp_ns)`,
the perception node's FrameInfo stream): then the stamp must not go back (nor more than an hour
ahead) either, and an index that went back with a newer stamp is a RESTART at once (the producer
restarted its numbering; the frame is fresh, not stale). Stamps that stay equal are no evidence
either way (a camera that does not stamp).
"""
from __future__ import annotations

from typing import Callable

NEXT = "next"
OUT_OF_ORDER = "out_of_order"
RESTART = "restart"

#: consecutive out-of-order frames after which a stream is taken to have restarted
RESTART_AFTER = 5
#: the largest step forward of a frame index that is still the same stream (over 9 h at 30 Hz)
MAX_INDEX_STEP = 2**20
#: the largest step forward of a header stamp that is still the same stream (one hour)
MAX_STAMP_STEP_NS = 3600 * 10**9


class FrameOrderError(ValueError):
    """A frame the stream order refused (older than, or far ahead of, the last one taken)."""


class StreamOrder:
    """restart_after: consecutive out-of-order frames that mean the stream restarted (0: never,
    1: at once); max_step: the largest step ahead of the position (frames, or ns for a stream of
    stamps); unit: how reasons name a position ("frame", "stamp")."""

    def __init__(self, restart_after: int = RESTART_AFTER, max_step: int = MAX_INDEX_STEP,
                 unit: str = "frame") -> None:
        if restart_after < 0:
            raise ValueError(f"restart_after must be >= 0 frames (0 = never), got {restart_after}")
        if max_step < 1:
            raise ValueError(f"max_step must be >= 1, got {max_step}")
        self.restart_after = restart_after
        self.max_step = max_step
        self.unit = unit
        #: totals since construction (reset() keeps them)
        self.out_of_order = 0
        self.restarts = 0
        self.reason = ""
        self.reset()

    @classmethod
    def of_stamps(cls, restart_after: int = RESTART_AFTER) -> "StreamOrder":
        """The policy of a stream positioned by its header stamps (ns)."""
        return cls(restart_after, MAX_STAMP_STEP_NS, "stamp")

    def reset(self) -> None:
        """Forget the order (a new sequence starts with the next frame); totals are kept."""
        self.last: int | None = None
        self.last_stamp: int | None = None
        self._behind = 0
        self._candidate: tuple[int, int | None] | None = None

    def describe(self, position: int, stamp_ns: int | None = None) -> str:
        text = f"{self.unit} {position}" + (" ns" if self.unit == "stamp" else "")
        return text if stamp_ns is None else f"{text} (stamp {stamp_ns} ns)"

    def check(self, position: int, stamp_ns: int | None = None) -> str:
        """The verdict on the next frame (see the module docstring); it counts out-of-order frames
        and restarts, accept() or reset() clears the run of out-of-order frames."""
        position = int(position)
        if self.last is None:
            return NEXT
        step = position - self.last
        stamp_step = None if stamp_ns is None or self.last_stamp is None else int(stamp_ns) - self.last_stamp
        stamp_ok = stamp_step is None or 0 <= stamp_step <= MAX_STAMP_STEP_NS
        if 0 < step <= self.max_step and stamp_ok:
            return NEXT
        here, before = self.describe(position, stamp_ns), self.describe(self.last, self.last_stamp)
        self.reason = f"{here} arrived after {before}"
        if step <= 0 and stamp_step is not None and 0 < stamp_step <= MAX_STAMP_STEP_NS and self.restart_after:
            self.restarts += 1
            self.reason += " with a newer stamp: its numbering restarted"
            return RESTART
        if step > self.max_step:
            self.reason += f", {step} ahead (more than {self.max_step})"
        elif stamp_step is not None and stamp_step > MAX_STAMP_STEP_NS:
            self.reason += f", its stamp {stamp_step} ns ahead (more than {MAX_STAMP_STEP_NS})"
        if not self._repeats(position, stamp_ns):
            self._behind += 1
        self._candidate = (position, None if stamp_ns is None else int(stamp_ns))
        if self.restart_after and self._behind >= self.restart_after:
            self.restarts += 1
            self.reason += (f", {self._behind} out-of-order frames in a row" if self._behind > 1 else "") + \
                ": the stream restarted"
            return RESTART
        self.out_of_order += 1
        return OUT_OF_ORDER

    def admit(self, position: int, reset: Callable[[], None], stamp_ns: int | None = None) -> str:
        """check() for a stage that refuses by raising: FrameOrderError for OUT_OF_ORDER (nothing
        changes); on RESTART `reset()` (the stage's state) and this order are reset. Returns the
        verdict; the stage accept()s the frame once it took it."""
        verdict = self.check(position, stamp_ns)
        if verdict == OUT_OF_ORDER:
            key = "frame_index" if self.unit == "frame" else self.unit
            raise FrameOrderError(f"{self.reason}; frames must come in increasing {key} (this frame was ignored)")
        if verdict == RESTART:
            reset()
            self.reset()
        return verdict

    def _repeats(self, position: int, stamp_ns: int | None) -> bool:
        """Whether the frame repeats the previous out-of-order frame (its position or its stamp)."""
        if self._candidate is None:
            return False
        last_position, last_stamp = self._candidate
        return position == last_position or (stamp_ns is not None and stamp_ns == last_stamp)

    def accept(self, position: int, stamp_ns: int | None = None) -> None:
        """The frame was taken: later frames are judged against it."""
        self.last = int(position)
        self.last_stamp = None if stamp_ns is None else int(stamp_ns)
        self._behind = 0
        self._candidate = None
