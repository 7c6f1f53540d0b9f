"""Predicate streams of episodes: sources, degradations where the replay node puts them, labels."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from predrel_ros.action.streams import OracleEntities, PerceivedEntities, episode_stream, make_source
from predrel_ros.core.entities import MANIPULATED_OBJECT, RIGHT_HAND, Entity
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import Frame
from predrel_ros.degradations import Condition, Degrader, FrameAction
from predrel_ros.predicates import PredicateExtractor

HEIGHT, WIDTH = 60, 80


def entity(track_id: int, role: str, x: int) -> Entity:
    mask = np.zeros((HEIGHT, WIDTH), bool)
    mask[20:30, x:x + 10] = True
    return Entity(id=track_id, label=role, role=role, box=[x, 20, x + 9, 29], mask=mask)


class FakeEpisode:
    """What episode_stream reads of an EpisodeReader: meta and frames(images=...)."""

    def __init__(self, count: int) -> None:
        self.meta = SimpleNamespace(name="fake", scenario_group="hand_object")
        self.count = count
        self.image_requests: list[bool] = []

    def frames(self, images: bool = True):
        self.image_requests.append(images)
        for index in range(self.count):
            hand = entity(1, RIGHT_HAND, 5 + 2 * index)   # the hand moves right, one object stands still
            yield Frame(index=index, stamp_ns=index, rgb=np.full((HEIGHT, WIDTH, 3), index, np.uint8),
                        entities=[hand, entity(2, MANIPULATED_OBJECT, 60)],
                        primitive="approach" if index < self.count - 1 else None)


def test_clean_oracle_stream_is_the_extractor_output_of_every_frame():
    episode = FakeEpisode(8)
    stream = episode_stream(episode, OracleEntities(), PredicateExtractor())
    assert [index for index, _ in stream.frames] == list(range(8))
    assert stream.labels == ["approach"] * 7 + [None] and stream.num_frames == 8
    assert episode.image_requests == [False]          # the oracle needs no PNGs
    reference = PredicateExtractor()
    for frame, (index, estimates) in zip(episode.frames(), stream.frames):
        expected = reference.update(index, frame.entities)
        assert [(e.key, e.value, e.confidence) for e in estimates] == [(e.key, e.value, e.confidence) for e in expected]


def test_frame_drop_keeps_indices_and_repeats_deliver_the_last_delivered_content():
    condition = Condition("frame_drop", 5)
    degrader = Degrader("frame_drop", 5, seed=3)
    decisions = [degrader.decide_frame(i) for i in range(40)]
    actions = {decision.action for decision in decisions}
    assert FrameAction.DROP in actions and FrameAction.REPEAT in actions
    seen = []

    class Recording(OracleEntities):
        def entities(self, frame):
            seen.append((frame.index, frame.entities[0].box[0]))
            return super().entities(frame)

    stream = episode_stream(FakeEpisode(40), Recording(), PredicateExtractor(), condition, seed=3)
    delivered = [d.frame_index for d in decisions if d.action != FrameAction.DROP]
    assert [index for index, _ in stream.frames] == delivered
    assert stream.num_frames == 40
    for decision, (index, hand_x) in zip([d for d in decisions if d.action != FrameAction.DROP], seen):
        assert index == decision.frame_index
        assert hand_x == 5 + 2 * decision.source_index      # a repeat shows the older frame's content


def test_detection_noise_acts_on_the_entities_and_image_kinds_need_perception():
    clean = episode_stream(FakeEpisode(10), OracleEntities(), PredicateExtractor())
    noisy = episode_stream(FakeEpisode(10), OracleEntities(), PredicateExtractor(),
                           Condition("detection_noise", 5), seed=1)
    assert [i for i, _ in noisy.frames] == list(range(10))
    values = lambda s: [[(e.key, e.value) for e in estimates] for _, estimates in s.frames]   # noqa: E731
    assert values(noisy) != values(clean)
    with pytest.raises(UserError, match="blur degrades images.*--source perception"):
        episode_stream(FakeEpisode(3), OracleEntities(), PredicateExtractor(), Condition("blur", 2))


def test_perceived_entities_run_the_perceiver_on_the_degraded_image():
    calls = []

    class FakePerceiver:
        def process(self, image, frame_index, depth=None, camera=None, bgr=True):
            calls.append((frame_index, image.copy(), bgr))
            return [entity(1, RIGHT_HAND, 5), entity(2, MANIPULATED_OBJECT, 30)]

        def reset(self):
            calls.append("reset")

    episode = FakeEpisode(4)
    stream = episode_stream(episode, PerceivedEntities(FakePerceiver()), PredicateExtractor(),
                            Condition("illumination", 5), seed=0)
    assert calls[0] == "reset" and episode.image_requests == [True]
    assert [c[0] for c in calls[1:]] == [0, 1, 2, 3] and all(c[2] is False for c in calls[1:])
    assert not np.array_equal(calls[2][1], np.full((HEIGHT, WIDTH, 3), 1, np.uint8))   # degraded image
    assert len(stream.frames) == 4


def test_make_source():
    assert make_source("oracle").name == "oracle"
    with pytest.raises(UserError, match="applies to the perception source only"):
        make_source("oracle", "perception.yaml")
    with pytest.raises(UserError, match="unknown source"):
        make_source("camera")
