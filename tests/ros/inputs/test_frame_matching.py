"""Pairing images with FrameInfo by stamp; every one that never pairs is given back."""
import pytest

from predrel_ros.ros.inputs.frame_matching import ImageInfoMatcher
from predrel_ros.ros.inputs.stamp_table import OutOfOrder


def test_pairs_in_either_order():
    matcher = ImageInfoMatcher()
    assert matcher.add_info(10, "info10").pairs == []
    assert matcher.add_image(10, "image10").pairs == [("image10", "info10")]
    assert matcher.add_image(20, "image20").pairs == []
    assert matcher.add_info(20, "info20").pairs == [("image20", "info20")]
    assert matcher.waiting() == (0, 0)


def test_a_pair_settles_everything_older():
    matcher = ImageInfoMatcher()
    matcher.add_info(10, "info10")       # its image was lost in transport
    matcher.add_image(15, "image15")     # its FrameInfo never came
    matcher.add_info(20, "info20")
    result = matcher.add_image(20, "image20")
    assert result.pairs == [("image20", "info20")]
    assert result.lost_infos == ["info10"] and result.orphan_images == ["image15"]


def test_drops_only_advance_the_order_and_old_stamps_are_refused():
    matcher = ImageInfoMatcher()
    matcher.note_info(10)
    with pytest.raises(OutOfOrder):
        matcher.add_info(5, "old")
    matcher.add_image(30, "image30")
    with pytest.raises(OutOfOrder):
        matcher.add_image(30, "again")
    assert matcher.waiting() == (0, 1)


def test_expiry_and_drain_give_back_what_waits():
    now = [0.0]
    matcher = ImageInfoMatcher(clock=lambda: now[0])
    matcher.add_info(10, "info10")
    now[0] = 2.0
    matcher.add_image(20, "image20")
    expired = matcher.expire(1.0)
    assert expired.lost_infos == ["info10"] and expired.orphan_images == []
    assert matcher.discard_image(99) is None
    drained = matcher.drain()
    assert drained.orphan_images == ["image20"] and matcher.waiting() == (0, 0)


def test_a_restart_of_the_frame_info_stream_is_reported_and_gives_back_the_old_sequence():
    matcher = ImageInfoMatcher(infos_by_frame_index=True)
    matcher.add_info(500, "info500", frame_index=50)          # its image is still on its way
    result = matcher.add_info(600, "info0", frame_index=0)    # the producer numbers from 0 again
    assert result.restart and result.lost_infos == []        # a newer stamp: nothing old to give back
    assert matcher.add_image(600, "image600").pairs == [("image600", "info0")]
    assert matcher.note_info(700, frame_index=1).restart == ""
    with pytest.raises(OutOfOrder, match="ahead"):
        matcher.add_image(2**62, "bogus")
