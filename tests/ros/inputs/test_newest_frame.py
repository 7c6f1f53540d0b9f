import threading
import time

from predrel_ros.ros.inputs.newest_frame import NewestFrameWorker, NewestSlot


def test_slot_keeps_only_the_newest_item():
    slot = NewestSlot()
    assert slot.put(1) is None
    assert slot.put(2) == 1
    assert slot.pending and slot.take(0) == 2
    assert slot.take(0.01) is None
    slot.put(3)
    slot.close()
    assert slot.take(0) is None


def test_worker_processes_the_newest_item_and_counts_the_replaced_ones():
    gate = threading.Event()
    processed, replaced, errors = [], [], []

    def process(item):
        if item == 0:
            gate.wait(5)  # the first item blocks while the others arrive
        if item == 7:
            raise RuntimeError("bad frame")
        processed.append(item)

    worker = NewestFrameWorker(process, lambda item, error: errors.append((item, str(error))), replaced.append)
    try:
        worker.submit(0)
        deadline = time.monotonic() + 5
        while worker.slot.pending and time.monotonic() < deadline:
            time.sleep(0.001)
        for item in range(1, 6):
            worker.submit(item)
        gate.set()
        while not worker.idle and time.monotonic() < deadline:
            time.sleep(0.001)
        worker.submit(7)  # raises inside process: reported, the worker goes on
        while not worker.idle and time.monotonic() < deadline:
            time.sleep(0.001)
        worker.submit(8)
        while (not worker.idle or 8 not in processed) and time.monotonic() < deadline:
            time.sleep(0.001)
    finally:
        left = worker.stop()
    assert left is None
    assert processed == [0, 5, 8]
    assert replaced == [1, 2, 3, 4]  # replaced while the first item was in progress
    assert errors == [(7, "bad frame")]
