"""reliability_node over DDS: reports equal to the monitor (and the paper's metrics) on the same frames,
entities associated between the twins, trust dropping under severe occlusion and recovering,
/diagnostics per group, every frame accounted for, and 1,000 malformed messages per input topic each
counted."""
import copy
import dataclasses
import math
from typing import NamedTuple

import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
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
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from reliability_scenarios import occlusion_run, oracle_profile  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from predrel_ros.core.errors import UserError  # noqa: E402
from predrel_ros.msg import EntityArray, PredicateArray, ReliabilityReport  # noqa: E402
from predrel_ros.predicates import PredicateExtractor  # noqa: E402
from predrel_ros.predicates.vocabulary import GROUPS  # noqa: E402
from predrel_ros.reliability import metrics  # noqa: E402
from predrel_ros.reliability.image_quality import ImageQuality  # noqa: E402
from predrel_ros.reliability.monitor import MonitorConfig, ReliabilityMonitor  # noqa: E402
from predrel_ros.reliability.trust import ERROR, OK, WARN, CleanProfile  # noqa: E402
from predrel_ros.reliability.trust_estimator import DEFAULT_TRUST_MODEL_FILE, TrustModel  # noqa: E402
from predrel_ros.ros.kit import diagnostics  # noqa: E402
from predrel_ros.ros.kit.frame_counters import MALFORMED, OUT_OF_ORDER, PROCESSED  # noqa: E402
from predrel_ros.ros.kit.frame_order import RESTARTS  # noqa: E402
from predrel_ros.ros.messages.degradations import degradation_to_msg  # noqa: E402
from predrel_ros.ros.messages.entities import entities_from_msg, entities_to_msg  # noqa: E402
from predrel_ros.ros.messages.images import numpy_to_image  # noqa: E402
from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg  # noqa: E402
from predrel_ros.ros.messages.reliability import TRUST_CODES, TRUST_NAMES, reliability_report_from_msg  # noqa: E402
from predrel_ros.ros.nodes.reliability_node import (  # noqa: E402
    ENTITIES,
    IMAGE,
    PREDICATES,
    REFERENCE,
    REFERENCE_ENTITIES,
    ReliabilityNode,
)
from predrel_ros.sources.dataset import open_dataset  # noqa: E402

pytestmark = pytest.mark.ros

WINDOW = 30
FLOAT32 = 1e-6


class Frame(NamedTuple):
    """One frame of the scenario as the topics carry it."""

    degraded: PredicateArray            # predicates of the degraded pipeline
    clean: PredicateArray               # ... of the clean twin
    truth: PredicateArray               # ground-truth predicates
    degraded_entities: EntityArray      # the entities each was computed from (ids differ between the twins)
    clean_entities: EntityArray


#: the degraded pipeline's tracker numbers the objects its own way: id -> id + RENUMBER
RENUMBER = 100


def renumbered(estimates):
    return [dataclasses.replace(e, subject=e.subject + RENUMBER, object=e.object + RENUMBER if e.object >= 0 else -1)
            for e in estimates]


@pytest.fixture(scope="module")
def scenario(controlled_dataset, tmp_path_factory):
    """The stack episode looped 5 times, the middle loop under severe occlusion, as the two pipelines'
    predicate and entity arrays (the degraded pipeline numbering its tracks differently); and a clean
    profile of the other episodes."""
    episodes = open_dataset(controlled_dataset).episodes()
    run = occlusion_run(episodes[0], loops=5, occluded=(2,), severity=5)
    clean_extractor, degraded_extractor = PredicateExtractor(), PredicateExtractor()
    frames = []
    for frame in run:
        degradation = degradation_to_msg(frame.kind, frame.severity, 3)
        clean = clean_extractor.update(frame.frame_index, frame.clean)
        degraded = renumbered(degraded_extractor.update(frame.frame_index, frame.degraded))
        index = frame.frame_index
        size = {"frame_index": index, "image_width": frame.width, "image_height": frame.height}
        frames.append(Frame(
            predicates_to_msg(degraded, frame_index=index, source="perception", degradation=degradation),
            predicates_to_msg(clean, frame_index=index, source="perception"),
            predicates_to_msg(frame.references, frame_index=index, source="ground_truth"),
            entities_to_msg([dataclasses.replace(e, id=e.id + RENUMBER) for e in frame.degraded],
                            source="perception", degradation=degradation, **size),
            entities_to_msg(frame.clean, source="perception", **size)))
    profile = tmp_path_factory.mktemp("profile") / "clean_profile.json"
    oracle_profile(episodes[1:]).save(profile)
    return frames, len(episodes[0]), profile


TOPIC_TYPES = {"predicates": PredicateArray, "reference": PredicateArray, "entities": EntityArray,
               "reference_entities": EntityArray, "image": Image}


def start(ros_context, ros_executor, **params):
    node = ReliabilityNode(context=ros_context,
                           parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    probe = Probe(ros_context)
    reports = probe.watch(ReliabilityReport, "reliability")
    statuses = probe.watch(DiagnosticArray, diagnostics.TOPIC)
    publishers = {topic: probe.node.create_publisher(kind, topic, PROBE_QOS) for topic, kind in TOPIC_TYPES.items()}
    ros_executor.add_node(node)
    ros_executor.add_node(probe.node)
    needed = [publishers["predicates"]] + [publishers[stream] for stream in node.part_subscriptions]
    run_until(ros_executor, lambda: all(p.get_subscription_count() > 0 for p in needed) and
              node.report_publisher.get_subscription_count() > 0, 10, "discovery")
    return node, publishers, reports, statuses


def accounted(node, stream):
    """Messages of `stream` (a topic) the node counted or holds waiting for the rest of their frame."""
    part = {PREDICATES: "evaluated", ENTITIES: "evaluated_entities"}.get(stream, stream)
    return node.counters.total(stream) + node.monitor.snapshot_counters().get(f"pending_{part}", 0)


def delivered(msg):
    """`msg` as a subscriber receives it (serialised: float fields rounded to float32)."""
    return deserialize_message(serialize_message(msg), type(msg))


def group_levels(msg):
    return {entry.predicate: TRUST_NAMES[entry.trust] for entry in msg.groups}


def test_clean_twin_reports_equal_the_monitor_and_trust_recovers(ros_context, ros_executor, scenario):
    frames, n, profile = scenario
    node, publishers, reports, statuses = start(ros_context, ros_executor, reference_mode="clean_twin",
                                                window=WINDOW, clean_profile=str(profile))
    delay = 3                                       # the clean twin lags three frames behind

    def publish_clean(frame):
        publishers["reference_entities"].publish(frame.clean_entities)
        publishers["reference"].publish(frame.clean)

    for i, frame in enumerate(frames):
        publishers["predicates"].publish(frame.degraded)
        publishers["entities"].publish(frame.degraded_entities)
        if i >= delay:
            publish_clean(frames[i - delay])
        run_until(ros_executor, lambda: accounted(node, PREDICATES) == accounted(node, ENTITIES) == i + 1, 5,
                  f"frame {i}")
    for frame in frames[-delay:]:
        publish_clean(frame)
    run_until(ros_executor, lambda: len(reports) == len(frames), 10, "a report per frame")
    for stream in (PREDICATES, REFERENCE, ENTITIES, REFERENCE_ENTITIES):
        assert node.counters.stream(stream) == {PROCESSED: len(frames)}, stream
    # the twins' ids differ: the streams are keyed by the clean twin's (the reference's) entities
    clean_ids = {e.id for e in entities_from_msg(frames[-1].clean_entities)}
    last = reliability_report_from_msg(reports[-1])
    assert {r.subject for r in last.predicates if not r.pooled} <= clean_ids

    # /diagnostics: one status per group with the trust as its level, beside the node's own
    final = group_levels(reports[-1])
    seen = len(statuses)
    run_until(ros_executor, lambda: len(statuses) > seen, 5, "diagnostics after the last frame")
    latest = {s.name: s for s in statuses[-1].status}
    for group in GROUPS:
        status = latest[f"/reliability/{group}"]
        assert diagnostics.level_of(status) == TRUST_CODES[final[group]]
        assert diagnostics.values_of(status)["samples"] != ""
    own = diagnostics.values_of(latest["/reliability"])
    assert own["predicates.processed"] == own["reference.processed"] == own["entities.processed"] == \
        own["reference_entities.processed"] == str(len(frames))

    # the same frames (as DDS delivered them: float32 confidences) through the monitor give the same reports
    frames = [Frame(*(delivered(msg) for msg in frame)) for frame in frames]
    offline = ReliabilityMonitor(MonitorConfig(reference_mode="clean_twin", window=WINDOW),
                                 profile=CleanProfile.load(profile))
    for frame, msg in zip(frames, reports):
        degraded, clean = frame.degraded, frame.clean
        offline.add_reference(clean.frame_index, predicates_from_msg(clean))
        offline.add_reference_entities(clean.frame_index, entities_from_msg(frame.clean_entities))
        offline.add_evaluated_entities(clean.frame_index, entities_from_msg(frame.degraded_entities))
        offline.add_evaluated(degraded.frame_index, predicates_from_msg(degraded),
                              degraded.degradation.kind, degraded.degradation.severity)
        got = reliability_report_from_msg(msg)
        expected = offline.report()
        assert msg.frame_index == degraded.frame_index and msg.reference_mode == "clean_twin"
        assert (msg.degradation.kind, msg.degradation.severity) == (degraded.degradation.kind,
                                                                   degraded.degradation.severity)
        assert [(r.predicate, r.subject, r.object, r.trust, r.reason, r.samples) for r in got.predicates + got.groups] \
            == [(r.predicate, r.subject, r.object, r.trust, r.reason, r.samples)
                for r in expected.predicates + expected.groups]
        for a, b in zip(got.predicates + got.groups, expected.predicates + expected.groups):
            for metric in ("prs", "pds", "tpc", "tpc_s", "cws", "mean_confidence", "rule_violation_rate"):
                x, y = getattr(a, metric), getattr(b, metric)
                assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=FLOAT32), metric

    # ... and the paper's formulas on the last window: PRS and CWS of the pooled contact predicate (the
    # occluded loop is out of the window: every degraded entity has its clean twin, id + RENUMBER)
    last = frames[-WINDOW:]
    y, c, y_ref, c_ref = [], [], [], []
    for frame in last:
        degraded, clean = frame.degraded, frame.clean
        mine = {e.canonical_key: e for e in renumbered_back(predicates_from_msg(degraded))
                if e.name == "contact"}
        ref = {e.canonical_key: e for e in predicates_from_msg(clean) if e.name == "contact"}
        for key in sorted(set(mine) | set(ref)):
            y.append(mine[key].code if key in mine else -1)
            c.append(mine[key].confidence if key in mine else 0.0)
            y_ref.append(ref[key].code if key in ref else -1)
            c_ref.append(ref[key].confidence if key in ref else 0.0)
    contact = reliability_report_from_msg(reports[-1]).record("contact")
    assert contact.samples == len(y)
    assert contact.prs == pytest.approx(metrics.prs(np.array(y), np.array(y_ref), np.array(c)), abs=FLOAT32)
    assert contact.cws == pytest.approx(metrics.cws(np.array(c), np.array(c_ref)), abs=FLOAT32)

    # trust: OK on clean frames, WARN/ERROR under severe occlusion, OK again once the window is clean
    before, during, after = (group_levels(reports[i]) for i in (2 * n - 1, 3 * n - 1, 5 * n - 1))
    assert set(before.values()) == {OK} and set(after.values()) == {OK}
    assert set(during.values()) <= {WARN, ERROR}, during


def renumbered_back(estimates):
    return [dataclasses.replace(e, subject=e.subject - RENUMBER, object=e.object - RENUMBER if e.object >= 0 else -1)
            for e in estimates]


def test_without_association_independently_numbered_twins_never_meet(ros_context, ros_executor, scenario):
    """What `associate` is for: matched by their own ids, the renumbered twin agrees on nothing."""
    frames, n, _ = scenario
    node, publishers, reports, _ = start(ros_context, ros_executor, reference_mode="clean_twin", window=WINDOW,
                                         associate=False)
    assert set(node.part_subscriptions) == {REFERENCE}
    for frame in frames[:n]:
        publishers["predicates"].publish(frame.degraded)
        publishers["reference"].publish(frame.clean)
    run_until(ros_executor, lambda: len(reports) == n, 10, "a report per frame")
    assert set(group_levels(reports[-1]).values()) == {ERROR}
    assert all(entry.prs == 0.0 for entry in reports[-1].groups)


def test_ground_truth_mode_accounts_for_frames_the_pipeline_dropped(ros_context, ros_executor, scenario):
    frames, n, _ = scenario
    node, publishers, reports, _ = start(ros_context, ros_executor, reference_mode="ground_truth", window=WINDOW,
                                         report_streams=False, publish_every_n_frames=5)
    kept = [i for i in range(n) if i % 4 != 1]      # the degraded pipeline lost every fourth frame
    sent = dict.fromkeys(TOPIC_TYPES, 0)
    for i in range(n):
        parts = {"reference": frames[i].truth, "reference_entities": frames[i].clean_entities}   # ground truth
        if i in kept:
            parts.update(predicates=frames[i].degraded, entities=frames[i].degraded_entities)
        for topic, msg in parts.items():
            publishers[topic].publish(msg)
            sent[topic] += 1
        run_until(ros_executor, lambda: all(accounted(node, topic) == count for topic, count in sent.items()), 5,
                  f"frame {i}")
    node.destroy_node()                              # frames still waiting count as unmatched
    ros_executor.remove_node(node)
    assert node.counters.stream(PREDICATES) == node.counters.stream(ENTITIES) == {PROCESSED: len(kept)}
    for stream in (REFERENCE, REFERENCE_ENTITIES):      # a dropped frame is scored from its reference
        assert node.counters.stream(stream) == {PROCESSED: n}
    assert node.monitor.snapshot_counters()["incomplete"] == n - len(kept)
    assert len(reports) == len(kept) // 5
    assert all(e.subject == e.object == -1 for m in reports for e in m.predicates)   # report_streams off


def test_self_mode_needs_no_reference_and_bad_parameters_are_refused(ros_context, ros_executor, scenario, tmp_path):
    frames, n, profile = scenario
    node, publishers, reports, statuses = start(ros_context, ros_executor, reference_mode="self",
                                                clean_profile=str(profile), stale_after_s=0.3, trust_model="")
    assert set(node.part_subscriptions) == {ENTITIES}          # for identity switches; no reference
    for frame in frames[:n]:
        publishers["predicates"].publish(frame.degraded)
        publishers["entities"].publish(frame.degraded_entities)
    run_until(ros_executor, lambda: len(reports) == n, 10, "reports")
    last = reliability_report_from_msg(reports[-1])
    assert last.reference_mode == "self" and math.isnan(last.record("contact").prs)
    assert set(group_levels(reports[-1]).values()) == {OK}
    seen = len(statuses)                              # frames stopped: after stale_after_s the groups are STALE
    run_until(ros_executor, lambda: len(statuses) > seen + 1, 5, "two more diagnostics")
    latest = {s.name: s for s in statuses[-1].status}
    assert {diagnostics.level_of(latest[f"/reliability/{g}"]) for g in GROUPS} == {TRUST_CODES["STALE"]}
    assert "no frame processed for" in latest["/reliability"].message
    bad = tmp_path / "profile.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(UserError, match="parameter clean_profile: .*expected format"):
        ReliabilityNode(context=ros_context, parameter_overrides=[Parameter("clean_profile", value=str(bad))])
    with pytest.raises(UserError, match="measured over 30-frame windows and the node's window is 20"):
        ReliabilityNode(context=ros_context, parameter_overrides=[Parameter("clean_profile", value=str(profile)),
                                                                  Parameter("window", value=20)])
    with pytest.raises(UserError, match="reference_mode"):
        ReliabilityNode(context=ros_context, parameter_overrides=[Parameter("reference_mode", value="twin")])


def test_self_mode_trust_comes_from_the_default_trust_model_with_image_evidence(ros_context, ros_executor,
                                                                                 scenario):
    """The node's reports equal a monitor with the packaged model fed the same entities (masks
    decoded), image sizes and image measures; reasons name the expected agreement; malformed images
    are counted and change nothing."""
    frames, n, _ = scenario
    node, publishers, reports, statuses = start(ros_context, ros_executor, reference_mode="self")
    assert set(node.part_subscriptions) == {ENTITIES, IMAGE} and node.monitor.trust_model is not None
    local = ReliabilityMonitor(MonitorConfig(window=WINDOW), node.monitor.trust_config, None,
                               trust_model=TrustModel.load(DEFAULT_TRUST_MODEL_FILE))
    quality = ImageQuality()
    rng = np.random.default_rng(0)
    bad = Image(encoding="rgb8", width=4, height=4, step=12, data=bytes(5))       # 5 bytes, not 48
    for k, frame in enumerate(frames[:n]):
        entities_msg = copy.deepcopy(frame.degraded_entities)
        entities_msg.header.stamp.sec = k + 1
        pixels = rng.integers(0, 256, (entities_msg.image_height, entities_msg.image_width, 3), dtype=np.uint8)
        image = numpy_to_image(pixels, "rgb8", entities_msg.header)
        publishers["image"].publish(image)
        publishers["image"].publish(bad)
        run_until(ros_executor, lambda: node.counters.total(IMAGE) == 2 * (k + 1), 5, f"image {k}")
        publishers["predicates"].publish(frame.degraded)
        publishers["entities"].publish(entities_msg)
        received = delivered(entities_msg)
        local.add_evaluated_entities(received.frame_index, entities_from_msg(received),
                                     (received.image_width, received.image_height), quality.measure(pixels))
        local.add_evaluated(frame.degraded.frame_index, predicates_from_msg(delivered(frame.degraded)))
    run_until(ros_executor, lambda: len(reports) == n, 10, "reports")
    assert node.counters.stream(IMAGE) == {PROCESSED: n, MALFORMED: n}
    got, want = reliability_report_from_msg(reports[-1]), local.report()
    for group in GROUPS:
        mine, theirs = got.group(group), want.group(group)
        if theirs is None:
            continue
        assert (mine.trust, mine.reason) == (theirs.trust, theirs.reason)
        assert theirs.trust == "STALE" or not math.isnan(theirs.expected_agreement)
        if theirs.trust in (WARN, ERROR):
            assert mine.reason.startswith("expected agreement ")
    run_until(ros_executor, lambda: statuses and any(s.name == "/reliability/contact" for s in statuses[-1].status),
              5, "the group statuses")
    contact = {s.name: s for s in statuses[-1].status}["/reliability/contact"]
    assert "expected_agreement" in {value.key for value in contact.values}


def malformed_predicates(template, count, first_index):
    """`count` malformed PredicateArrays (each refused before it changes anything)."""
    def unknown_name(msg):
        msg.predicates[0].name = "touching"

    def unknown_value(msg):
        msg.predicates[0].value = "maybe"

    def code_mismatch(msg):
        msg.predicates[0].code = 5 if msg.predicates[0].code != 5 else 4

    def confidence_above_one(msg):
        msg.predicates[0].confidence = 1.5

    def confidence_nan(msg):
        msg.predicates[1].confidence = math.nan

    def wrong_group(msg):
        msg.predicates[0].group = "dynamic" if msg.predicates[0].group != "dynamic" else "static"

    def same_stream_twice(msg):
        msg.predicates = list(msg.predicates) + [msg.predicates[0]]

    def bad_severity(msg):
        msg.degradation.severity = 7

    def unknown_kind(msg):
        msg.degradation.kind = "rain"

    def parameter_mismatch(msg):
        msg.degradation.parameter_names = ["sigma"]

    kinds = [unknown_name, unknown_value, code_mismatch, confidence_above_one, confidence_nan, wrong_group,
             same_stream_twice, bad_severity, unknown_kind, parameter_mismatch]
    for i in range(count):
        msg = copy.deepcopy(template)
        msg.frame_index = first_index + i
        msg.degradation = degradation_to_msg("blur", 2, 0)
        kinds[i % len(kinds)](msg)
        yield msg


@pytest.fixture(scope="module")
def episode(controlled_dataset):
    return list(open_dataset(controlled_dataset).episodes()[0].frames(images=False))


@pytest.mark.parametrize("topic", ["predicates", "reference", "entities", "reference_entities"])
def test_fuzz_every_malformed_message_is_counted_and_the_node_lives(ros_context, ros_executor, scenario, episode,
                                                                   topic):
    frames, _, _ = scenario
    node, publishers, reports, _ = start(ros_context, ros_executor, reference_mode="clean_twin", restart_after=0)
    stream = topic
    good = frames[10]

    def frame(index):
        """The four parts of one good frame, numbered `index`."""
        for which, msg in (("reference", good.clean), ("predicates", good.degraded)):
            publishers[which].publish(PredicateArray(header=msg.header, frame_index=index, source=msg.source,
                                                     degradation=msg.degradation, predicates=list(msg.predicates)))
        for which, msg in (("reference_entities", good.clean_entities), ("entities", good.degraded_entities)):
            publishers[which].publish(EntityArray(header=msg.header, frame_index=index, source=msg.source,
                                                  image_width=msg.image_width, image_height=msg.image_height,
                                                  degradation=msg.degradation, entities=list(msg.entities)))

    frame(5000)
    run_until(ros_executor, lambda: len(reports) == 1, 10, "the first report")
    counted = lambda: node.counters.total(stream)  # noqa: E731
    if topic in ("predicates", "reference"):
        bad = list(malformed_predicates(good.degraded, 900, 10_000))
        old = [PredicateArray(frame_index=i, predicates=list(good.degraded.predicates)) for i in range(100)]
    else:
        bad = list(malformed_entities(episode, 900))
        old = [entity_msg(episode[i % len(episode)], index=i) for i in range(100)]
    before = resident_bytes()
    malformed = fuzz(ros_executor, publishers[topic], bad, counted, burst=20)
    old = fuzz(ros_executor, publishers[topic], old, counted, burst=20)
    assert_memory_bounded(before, f"reliability node, 1000 malformed or stale messages on {topic}")
    frame(5001)
    run_until(ros_executor, lambda: len(reports) == 2, 10, "a report after the fuzz")
    assert malformed + old == 1000
    assert node.counters.stream(stream) == {PROCESSED: 2, MALFORMED: 900, OUT_OF_ORDER: 100}
    assert [m.frame_index for m in reports] == [5000, 5001]


@pytest.mark.parametrize("first", [False, True], ids=["after_frames", "first"])
def test_a_frame_indexed_far_in_the_future_does_not_block_the_streams(ros_context, ros_executor, scenario, first):
    frames, _, _ = scenario
    node, publishers, reports, _ = start(ros_context, ros_executor, reference_mode="clean_twin", window=WINDOW)
    sent, taken = with_far_future(range(10), FAR_INDEX, first)
    for k, index in enumerate(sent):
        frame = frames[10 + k]
        parts = [("predicates", frame.degraded), ("reference", frame.clean), ("entities", frame.degraded_entities),
                 ("reference_entities", frame.clean_entities)]
        for topic, msg in parts:   # the evaluated predicates first: they decide a restart
            msg = copy.deepcopy(msg)
            msg.frame_index = index
            publishers[topic].publish(msg)
            run_until(ros_executor, lambda: accounted(node, topic) == k + 1, 5, f"{topic} of frame {k}")
    expected = ([FAR_INDEX] if first else []) + taken        # a far first frame has nothing to be judged by
    run_until(ros_executor, lambda: len(reports) == len(expected), 5, "the reports")
    assert [m.frame_index for m in reports] == expected
    assert node.counters.get(PREDICATES, OUT_OF_ORDER) == len(sent) - len(expected)
    assert node.counters.get(PREDICATES, RESTARTS) == int(first)


@pytest.mark.parametrize("topic", ["predicates", "reference", "entities", "reference_entities"])
def test_a_message_beyond_the_bounds_is_refused_at_once_and_the_bounds_change_at_runtime(
        ros_context, ros_executor, scenario, topic):
    """A PredicateArray or EntityArray with more items than the node's bound is counted too_large
    unread (the predicate node spent 13.5 s on 300 entities before there were bounds), the frames
    after it are processed, and a lower bound set at runtime refuses the next normal frame."""
    import time

    from predrel_ros.ros.kit.frame_counters import TOO_LARGE
    from predrel_ros.ros.messages.fields import MAX_ENTITIES_PER_MESSAGE, MAX_PREDICATES_PER_MESSAGE

    frames, _, _ = scenario
    node, publishers, reports, _ = start(ros_context, ros_executor, reference_mode="clean_twin")
    parts = {"predicates": "degraded", "reference": "clean", "entities": "degraded_entities",
             "reference_entities": "clean_entities"}

    def send(k, crowd=False):
        for part, field in parts.items():
            msg = copy.deepcopy(getattr(frames[k], field))
            if crowd and part == topic:
                items = "entities" if "entities" in part else "predicates"
                bound = MAX_ENTITIES_PER_MESSAGE if "entities" in part else MAX_PREDICATES_PER_MESSAGE
                setattr(msg, items, list(getattr(msg, items)) * (bound // len(getattr(msg, items)) + 1))
            publishers[part].publish(msg)

    started = time.monotonic()
    send(10, crowd=True)
    run_until(ros_executor, lambda: node.counters.get(topic, TOO_LARGE) == 1, 10, "the crowd to be refused")
    assert time.monotonic() - started < 5.0
    send(11)
    run_until(ros_executor, lambda: [m.frame_index for m in reports] == [frames[11].degraded.frame_index], 10,
              "the next frame's report")
    bound = "max_entities_per_message" if "entities" in topic else "max_predicates_per_message"
    assert node.set_parameters([Parameter(bound, value=1)])[0].successful
    send(12)
    run_until(ros_executor, lambda: node.counters.get(topic, TOO_LARGE) == 2, 10, "a frame beyond the new bound")
    assert node.counters.get(topic, PROCESSED) == 1


def test_a_new_window_at_runtime_builds_the_monitor_anew_and_a_profile_of_another_window_is_refused(
        ros_context, ros_executor, scenario, tmp_path):
    """SetParameters over DDS: window 10 takes effect from the next frame (the reports say so, the
    frame still waiting for its reference is counted unmatched); a clean profile measured over 30
    frames is then refused with the reason, and nothing changes."""
    from node_graph import set_parameters

    frames, _, profile = scenario
    node, publishers, reports, _ = start(ros_context, ros_executor, reference_mode="clean_twin", associate=False)
    probe = Probe(ros_context, name="setter")
    ros_executor.add_node(probe.node)
    for frame in frames[:3]:
        publishers["reference"].publish(frame.clean)
        publishers["predicates"].publish(frame.degraded)
    publishers["predicates"].publish(frames[3].degraded)                 # its reference never comes
    run_until(ros_executor, lambda: len(reports) == 3 and accounted(node, PREDICATES) == 4, 10, "three reports")
    accepted, = set_parameters(ros_executor, probe, "/reliability", {"window": 10})
    assert accepted.successful and node.monitor.config.window == 10
    assert node.counters.get(PREDICATES, "unmatched") == 1
    refused, = set_parameters(ros_executor, probe, "/reliability", {"clean_profile": str(profile)})
    assert not refused.successful and "window" in refused.reason and node.params["clean_profile"] == ""
    for frame in frames[4:6]:
        publishers["reference"].publish(frame.clean)
        publishers["predicates"].publish(frame.degraded)
    run_until(ros_executor, lambda: len(reports) == 5, 10, "reports after the change")
    assert [m.window for m in reports] == [WINDOW] * 3 + [10] * 2
