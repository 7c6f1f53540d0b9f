"""predicate_node over DDS: the same predicates as the extractor run directly, order and restarts,
and 1,000 malformed EntityArrays each counted."""

import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from node_graph import (  # noqa: E402
    FAR_INDEX,
    PROBE_QOS,
    Probe,
    assert_memory_bounded,
    entity_msg,
    fuzz,
    malformed_entities,
    resident_bytes,
    run_until,
    with_far_future,
)
from rclpy.parameter import Parameter  # noqa: E402

from predrel_ros.core.errors import UserError  # noqa: E402
from predrel_ros.msg import EntityArray, PredicateArray  # noqa: E402
from predrel_ros.predicates import PredicateExtractor  # noqa: E402
from predrel_ros.ros.kit.frame_counters import MALFORMED, NO_SUBSCRIBERS, OUT_OF_ORDER, PROCESSED  # noqa: E402
from predrel_ros.ros.kit.frame_order import RESTARTS  # noqa: E402
from predrel_ros.ros.messages.degradations import degradation_to_msg  # noqa: E402
from predrel_ros.ros.messages.entities import entities_from_msg  # noqa: E402
from predrel_ros.ros.messages.predicates import predicates_from_msg  # noqa: E402
from predrel_ros.ros.nodes.predicate_node import DEPTH, ENTITIES, ENTITIES_DROPPED, INFO, PredicateNode  # noqa: E402
from predrel_ros.sources.dataset import open_dataset  # noqa: E402

pytestmark = pytest.mark.ros


@pytest.fixture(scope="module")
def episode(controlled_dataset):
    return list(open_dataset(controlled_dataset).episodes()[1].frames(images=False))


def start(ros_context, ros_executor, **params):
    node = PredicateNode(context=ros_context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    probe = Probe(ros_context)
    received = probe.watch(PredicateArray, "predicates")
    publisher = probe.node.create_publisher(EntityArray, "entities", PROBE_QOS)
    ros_executor.add_node(node)
    ros_executor.add_node(probe.node)
    run_until(ros_executor, lambda: publisher.get_subscription_count() > 0 and
              node.predicates_publisher.get_subscription_count() > 0, 10, "discovery")
    return node, publisher, received


def test_output_equals_the_extractor_run_directly(ros_context, ros_executor, episode):
    node, publisher, received = start(ros_context, ros_executor)
    degradation = degradation_to_msg("occlusion", 3, 7)
    sent = [entity_msg(frame, degradation=degradation) for frame in episode if frame.index % 7 != 3]  # with gaps
    for msg in sent:
        publisher.publish(msg)
    run_until(ros_executor, lambda: len(received) == len(sent), 20, "every frame's predicates")
    extractor = PredicateExtractor()
    for msg, out in zip(sent, received):
        expected = extractor.update(msg.frame_index, entities_from_msg(msg))
        got = predicates_from_msg(out)
        assert out.frame_index == msg.frame_index and out.source == "ground_truth"
        assert (out.degradation.kind, out.degradation.severity, out.degradation.seed) == ("occlusion", 3, 7)
        assert [(e.name, e.subject, e.object, e.value) for e in got] == \
               [(e.name, e.subject, e.object, e.value) for e in expected]
        np.testing.assert_allclose([e.confidence for e in got], [e.confidence for e in expected], atol=1e-6)
        np.testing.assert_allclose([e.evidence["vis"] for e in got], [e.evidence["vis"] for e in expected], atol=1e-6)
    assert node.counters.stream(ENTITIES) == {PROCESSED: len(sent)}
    assert any(e.value == "T" for m in received for e in m.predicates if e.name == "contact")


def test_old_frames_are_skipped_and_a_restarted_stream_starts_a_new_sequence(ros_context, ros_executor, episode):
    node, publisher, received = start(ros_context, ros_executor, restart_after=3)
    for index in (10, 11, 11, 4, 12, 0, 1, 2, 3):
        publisher.publish(entity_msg(episode[index % len(episode)], index))
    run_until(ros_executor, lambda: node.counters.total(ENTITIES) == 9 and len(received) == 5, 10, "all frames")
    # 11 (repeat) and 4 are skipped; 12 is taken; 0 and 1 are skipped, 2 is the third old one in a row
    assert [m.frame_index for m in received] == [10, 11, 12, 2, 3]
    assert node.counters.stream(ENTITIES) == {PROCESSED: 5, OUT_OF_ORDER: 4, RESTARTS: 1}
    fresh = PredicateExtractor()
    fresh.update(2, entities_from_msg(entity_msg(episode[2])))
    expected = fresh.update(3, entities_from_msg(entity_msg(episode[3])))
    assert [e.value for e in predicates_from_msg(received[-1])] == [e.value for e in expected]


def test_lazy_node_skips_work_without_subscribers(ros_context, ros_executor, episode):
    node = PredicateNode(context=ros_context)
    probe = Probe(ros_context)
    publisher = probe.node.create_publisher(EntityArray, "entities", PROBE_QOS)
    ros_executor.add_node(node)
    ros_executor.add_node(probe.node)
    run_until(ros_executor, lambda: publisher.get_subscription_count() > 0, 10, "discovery")
    publisher.publish(entity_msg(episode[0]))
    run_until(ros_executor, lambda: node.counters.total(ENTITIES) == 1, 10, "the frame counted")
    assert node.counters.stream(ENTITIES) == {NO_SUBSCRIBERS: 1}


def test_bad_config_is_refused_at_start(ros_context, tmp_path):
    with pytest.raises(UserError, match="parameter config: .*nowhere.yaml is not a file"):
        PredicateNode(context=ros_context, parameter_overrides=[Parameter("config", value="/nowhere.yaml")])
    bad = tmp_path / "bad.yaml"
    bad.write_text("predicates:\n  window: 0\n")
    with pytest.raises(UserError, match="window"):
        PredicateNode(context=ros_context, parameter_overrides=[Parameter("config", value=str(bad))])


def test_entities_beyond_max_entities_are_dropped_lowest_score_first_and_counted(ros_context, ros_executor,
                                                                                 episode, tmp_path):
    bounded = tmp_path / "bounded.yaml"
    bounded.write_text("predicates:\n  max_entities: 2\n")
    node, publisher, received = start(ros_context, ros_executor, config=str(bounded))
    sent = [entity_msg(frame) for frame in episode[:3]]
    for msg in sent:
        publisher.publish(msg)
    run_until(ros_executor, lambda: len(received) == len(sent), 10, "every frame's predicates")
    over = sum(max(0, len(msg.entities) - 2) for msg in sent)
    assert over > 0
    assert node.counters.get(None, ENTITIES_DROPPED) == over
    assert node.counters.stream(ENTITIES) == {PROCESSED: len(sent)}
    for msg, out in zip(sent, received):
        kept = sorted(msg.entities, key=lambda e: (-e.score, e.id))[:2]
        ids = {e.subject for e in out.predicates} | {e.object for e in out.predicates}
        assert ids - {-1} <= {e.id for e in kept}


def test_with_depth_each_entity_array_is_matched_with_its_depth_image_and_intrinsics(ros_context, ros_executor,
                                                                                   controlled_dataset):
    """use_depth: the predicates equal the extractor's given the frame's depth and camera, as the
    evaluator runs it; an EntityArray whose depth never comes is counted unsynchronised, one whose
    depth has another size malformed."""
    from sensor_msgs.msg import CameraInfo, Image

    from predrel_ros.ros.kit.frame_counters import UNSYNCHRONISED
    from predrel_ros.ros.messages.camera_info import intrinsics_to_camera_info
    from predrel_ros.ros.messages.fields import header_at
    from predrel_ros.ros.messages.images import numpy_to_image

    frames = list(open_dataset(controlled_dataset).episodes()[1].frames(images=True))[:8]
    node, publisher, received = start(ros_context, ros_executor, use_depth=True)
    depth_publisher = node_probe_publisher(ros_executor, node, Image, DEPTH)
    info_publisher = node_probe_publisher(ros_executor, node, CameraInfo, INFO)
    without_depth, wrong_size = 3, 5
    logged = []
    node.log_throttled = lambda key, text, error=False: logged.append(text)
    for frame in frames:
        header = header_at(frame.index * 33_000_000, "camera_color_optical_frame")
        msg = entity_msg(frame)
        msg.header = header
        if frame.index != without_depth:
            depth = frame.depth if frame.index != wrong_size else frame.depth[:-8]
            depth_publisher.publish(numpy_to_image(depth.astype(np.float32), "32FC1", header))
            info_publisher.publish(intrinsics_to_camera_info(frame.camera, header))
        publisher.publish(msg)
    taken = [f for f in frames[:-1] if f.index not in (without_depth, wrong_size)]   # the last set waits for none
    run_until(ros_executor, lambda: len(received) >= len(taken), 20, "the matched frames' predicates")
    extractor, image_only = PredicateExtractor(), PredicateExtractor()
    differs = 0
    for frame, out in zip(taken, received):
        expected = extractor.update(frame.index, frame.entities, depth_m=frame.depth, camera=frame.camera)
        got = [(e.name, e.subject, e.object, e.value, round(e.confidence, 5)) for e in predicates_from_msg(out)]
        assert out.frame_index == frame.index
        assert got == [(e.name, e.subject, e.object, e.value, round(e.confidence, 5)) for e in expected]
        differs += got != [(e.name, e.subject, e.object, e.value, round(e.confidence, 5))
                           for e in image_only.update(frame.index, frame.entities)]
    assert differs > 0            # the depth made a difference, so it was used
    assert node.counters.get(ENTITIES, UNSYNCHRONISED) == 1
    assert node.counters.get(ENTITIES, MALFORMED) == 1
    assert any(text.startswith(f"{ENTITIES}: input unsynchronised: no depth image and camera_info matched")
               and "predicate_depth:=false" in text for text in logged)   # the user is told the likely cause


def test_gravity_from_tf_orders_the_static_relations_and_a_missing_transform_falls_back(
        ros_context, ros_executor, controlled_dataset, monkeypatch):
    """gravity_frame: the predicates equal the extractor's given the up tf gives (a fake tf2_ros: a
    camera turned so that up is the image's +x, which no table in this episode agrees with, so the
    output differs from the plane's); with no transform, the plane's, counted gravity_from_plane."""
    import fake_tf2
    from sensor_msgs.msg import CameraInfo, Image

    from predrel_ros.ros.messages.camera_info import intrinsics_to_camera_info
    from predrel_ros.ros.messages.fields import header_at
    from predrel_ros.ros.messages.images import numpy_to_image
    from predrel_ros.ros.nodes.predicate_node import GRAVITY_FROM_PLANE

    def rows(estimates):
        return [(e.name, e.subject, e.object, e.value, round(e.confidence, 5)) for e in estimates]

    with pytest.raises(UserError, match="gravity_frame \\(base_link\\) needs use_depth"):
        PredicateNode(context=ros_context, parameter_overrides=[Parameter("gravity_frame", value="base_link")])
    frames = list(open_dataset(controlled_dataset).episodes()[1].frames(images=True))[:6]
    sideways = (0.0, np.sin(np.pi / 4), 0.0, np.cos(np.pi / 4))         # up = the camera's +x
    outputs = {}
    for case, rotation in (("tf", sideways), ("no transform", None)):
        tf2 = fake_tf2.install(monkeypatch, rotation)
        node, publisher, received = start(ros_context, ros_executor, use_depth=True, gravity_frame="base_link")
        depth_publisher = node_probe_publisher(ros_executor, node, Image, DEPTH)
        info_publisher = node_probe_publisher(ros_executor, node, CameraInfo, INFO)
        for frame in frames:
            header = header_at(frame.index * 33_000_000, "camera_color_optical_frame")
            msg = entity_msg(frame)
            msg.header = header
            depth_publisher.publish(numpy_to_image(frame.depth.astype(np.float32), "32FC1", header))
            info_publisher.publish(intrinsics_to_camera_info(frame.camera, header))
            publisher.publish(msg)
        run_until(ros_executor, lambda: len(received) >= len(frames) - 1, 20, "the matched frames' predicates")
        outputs[case] = [rows(predicates_from_msg(out)) for out in received]
        assert tf2.lookups and {(target, source) for target, source, _ in tf2.lookups} == \
            {("camera_color_optical_frame", "base_link")}
        fallbacks = node.counters.get(None, GRAVITY_FROM_PLANE)
        assert fallbacks == (0 if rotation else node.counters.get(ENTITIES, PROCESSED))
        ros_executor.remove_node(node)
        node.destroy_node()
    along_tf, along_plane = PredicateExtractor(), PredicateExtractor()
    for index, frame in enumerate(frames[:len(outputs["tf"])]):
        scene = dict(depth_m=frame.depth, camera=frame.camera)
        assert outputs["tf"][index] == rows(along_tf.update(frame.index, frame.entities, gravity_up=[1, 0, 0], **scene))
        assert outputs["no transform"][index] == rows(along_plane.update(frame.index, frame.entities, **scene))
    assert outputs["tf"] != outputs["no transform"]                    # tf's up was used


def node_probe_publisher(ros_executor, node, msg_type, topic):
    """A publisher on `topic` that `node` has discovered."""
    probe = Probe(node.context)
    publisher = probe.node.create_publisher(msg_type, topic, PROBE_QOS)
    ros_executor.add_node(probe.node)
    run_until(ros_executor, lambda: publisher.get_subscription_count() > 0, 10, f"discovery of {topic}")
    return publisher


def test_fuzz_every_malformed_message_is_counted_and_the_node_lives(ros_context, ros_executor, episode):
    node, publisher, received = start(ros_context, ros_executor, restart_after=0)
    publisher.publish(entity_msg(episode[5], index=50_000))
    run_until(ros_executor, lambda: len(received) == 1, 10, "the first frame")
    counted = lambda: node.counters.total(ENTITIES)  # noqa: E731
    bad, stale = list(malformed_entities(episode, 900)), [entity_msg(episode[i % len(episode)], i) for i in range(100)]
    before = resident_bytes()
    malformed = fuzz(ros_executor, publisher, bad, counted, burst=20)
    old = fuzz(ros_executor, publisher, stale, counted, burst=20)
    assert_memory_bounded(before, "predicate node, 1000 malformed or stale EntityArrays")
    publisher.publish(entity_msg(episode[6], index=50_001))
    run_until(ros_executor, lambda: len(received) == 2, 10, "a good frame after the fuzz")
    assert malformed + old == 1000
    assert node.counters.stream(ENTITIES) == {PROCESSED: 2, MALFORMED: 900, OUT_OF_ORDER: 100}
    assert [m.frame_index for m in received] == [50_000, 50_001]


@pytest.mark.parametrize("first", [False, True], ids=["after_frames", "first"])
def test_a_frame_indexed_far_in_the_future_does_not_block_the_stream(ros_context, ros_executor, episode, first):
    node, publisher, received = start(ros_context, ros_executor)
    sent, taken = with_far_future(range(10), FAR_INDEX, first)
    for index in sent:
        publisher.publish(entity_msg(episode[index % len(episode)], index))
    expected = ([FAR_INDEX] if first else []) + taken     # a far first frame has nothing to be judged by
    run_until(ros_executor, lambda: node.counters.total(ENTITIES) == len(sent) and len(received) == len(expected), 10,
              "every frame counted")
    assert [m.frame_index for m in received] == expected
    assert node.counters.get(ENTITIES, OUT_OF_ORDER) == len(sent) - len(received)
    assert node.counters.get(ENTITIES, RESTARTS) == int(first)


def test_an_entity_array_beyond_the_bound_is_refused_at_once_and_valid_frames_go_on(ros_context, ros_executor,
                                                                                  episode):
    """The fuzzer's EntityArray of 300 entities (13.5 s, +670 MB before the bound): refused unread,
    counted too_large; the bound changes at runtime."""
    import time

    from rclpy.parameter import Parameter as RuntimeParameter

    from predrel_ros.msg import Entity as EntityMsg
    from predrel_ros.ros.kit.frame_counters import TOO_LARGE

    node, publisher, received = start(ros_context, ros_executor)
    crowd = entity_msg(episode[0], 0)
    crowd.entities = [EntityMsg(id=k, label="cube", role="manipulated_object") for k in range(300)]
    started = time.monotonic()
    publisher.publish(crowd)
    run_until(ros_executor, lambda: node.counters.get(ENTITIES, TOO_LARGE) == 1, 5, "the crowd to be refused")
    assert time.monotonic() - started < 2.0
    publisher.publish(entity_msg(episode[1], 1))
    run_until(ros_executor, lambda: len(received) == 1, 10, "the next valid frame")
    assert node.set_parameters([RuntimeParameter("max_entities_per_message", value=1)])[0].successful
    publisher.publish(entity_msg(episode[2], 2))
    run_until(ros_executor, lambda: node.counters.get(ENTITIES, TOO_LARGE) == 2, 5, "a frame beyond the new bound")
    assert node.counters.stream(ENTITIES) == {PROCESSED: 1, TOO_LARGE: 2}


def test_a_new_config_at_runtime_retunes_the_extractor_and_a_broken_one_is_refused(ros_context, ros_executor,
                                                                                   episode, tmp_path):
    """`ros2 param set /predicates config other.yaml` (SetParameters over DDS): the frames after it
    equal a fresh extractor of the new thresholds; a file that does not load is refused with the
    reason and changes nothing."""
    from node_graph import set_parameters

    from predrel_ros.core.config_io import write_data
    from predrel_ros.predicates import PredicateConfig

    node, publisher, received = start(ros_context, ros_executor)
    probe = Probe(ros_context, name="setter")
    ros_executor.add_node(probe.node)
    tuned = PredicateConfig.from_dict({**PredicateConfig().to_dict(), "confidence": {
        **PredicateConfig().to_dict()["confidence"], "floor": 0.6}})
    good = write_data(tmp_path / "tuned.yaml", {"predicates": tuned.to_dict()})
    broken = write_data(tmp_path / "broken.yaml", {"predicates": {"window": 0}})
    for frame in episode[:5]:
        publisher.publish(entity_msg(frame))
    run_until(ros_executor, lambda: len(received) == 5, 10, "the first frames")
    refused, = set_parameters(ros_executor, probe, "/predicates", {"config": str(broken)})
    assert not refused.successful and "broken.yaml" in refused.reason and "window" in refused.reason
    assert node.params["config"] == "predicates.yaml"
    accepted, = set_parameters(ros_executor, probe, "/predicates", {"config": str(good)})
    assert accepted.successful and node.extractor.config.confidence.floor == 0.6
    for frame in episode[5:12]:
        publisher.publish(entity_msg(frame))
    run_until(ros_executor, lambda: len(received) == 12, 10, "the frames after the change")
    fresh = PredicateExtractor(tuned)
    for frame, out in zip(episode[5:12], received[5:]):
        expected = fresh.update(frame.index, entities_from_msg(entity_msg(frame)))
        got = predicates_from_msg(out)
        assert [(e.name, e.subject, e.object, e.value) for e in got] == \
               [(e.name, e.subject, e.object, e.value) for e in expected]
        np.testing.assert_allclose([e.confidence for e in got], [e.confidence for e in expected], atol=1e-6)
