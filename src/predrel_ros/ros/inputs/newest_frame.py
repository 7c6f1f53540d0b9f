"""Newest-frame processing: a one-item slot and a worker thread that always takes the newest item.

Subscription callbacks (the executor thread) `put` each complete input into the slot; an item
still waiting there is replaced and handed to `on_replaced` (the node counts it `dropped_stale`).
The worker thread processes one item at a time, so a slow model never builds a queue and its
latency stays one frame, while the executor keeps taking messages (and counting them) meanwhile.
Inference and image work release the GIL, so the two threads overlap.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable, Generic, TypeVar

Item = TypeVar("Item")

log = logging.getLogger(__name__)


class NewestSlot(Generic[Item]):
    """Holds at most one item; `put` replaces (and returns) the one waiting, `take` waits for one."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._item: Item | None = None
        self._full = False
        self._closed = False

    def put(self, item: Item) -> Item | None:
        """Store `item`; returns the item it replaced, or None."""
        with self._condition:
            replaced = self._item if self._full else None
            self._item, self._full = item, True
            self._condition.notify()
            return replaced

    def take(self, timeout_s: float | None = None) -> Item | None:
        """The waiting item (the slot is then empty), waiting up to timeout_s; None when there is
        none, or once the slot is closed."""
        with self._condition:
            if not self._full and not self._closed:
                self._condition.wait(timeout_s)
            if not self._full or self._closed:
                return None
            item, self._item, self._full = self._item, None, False
            return item

    def clear(self) -> Item | None:
        """Remove and return the waiting item, if any."""
        with self._condition:
            item = self._item if self._full else None
            self._item, self._full = None, False
            return item

    def close(self) -> None:
        """Wake the taker; later `take`s return None."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    @property
    def pending(self) -> bool:
        with self._condition:
            return self._full


class NewestFrameWorker(Generic[Item]):
    """A thread that processes the newest item of a `NewestSlot` until `stop()`.

    `process(item)` runs on the worker thread; an exception it raises goes to `on_error(item,
    error)` (the node logs and counts it) and the worker carries on with the next item.
    """

    def __init__(self, process: Callable[[Item], None], on_error: Callable[[Item, BaseException], None],
                 on_replaced: Callable[[Item], None] | None = None, name: str = "frame-worker") -> None:
        self.slot: NewestSlot[Item] = NewestSlot()
        self._process = process
        self._on_error = on_error
        self._on_replaced = on_replaced
        self._busy = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, item: Item) -> None:
        """Queue `item` as the newest input (called from subscription callbacks)."""
        replaced = self.slot.put(item)
        if replaced is not None and self._on_replaced is not None:
            self._on_replaced(replaced)

    @property
    def idle(self) -> bool:
        """Nothing waiting and nothing being processed."""
        return not self.slot.pending and not self._busy.is_set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            item = self.slot.take(timeout_s=0.1)
            if item is None:
                continue
            self._busy.set()
            try:
                self._process(item)
            except Exception as error:  # one bad frame must not stop the node
                self._on_error(item, error)
            finally:
                self._busy.clear()

    def stop(self, timeout_s: float = 5.0) -> Item | None:
        """Stop after the item in progress; returns the item left waiting (not processed), if any."""
        self._stopping.set()
        left = self.slot.clear()
        self.slot.close()
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.warning("the frame worker did not stop within %.1f s (an item is still in progress)", timeout_s)
        return left
