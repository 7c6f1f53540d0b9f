"""predicate_node: tracked entities (`predrel_ros/EntityArray`) -> visual predicates with confidence
(`predrel_ros/PredicateArray`).

The work is `predrel_ros.predicates.PredicateExtractor` (paper 3.3-3.4), configured by the
`predicates` section of a predicates YAML (`config`, default `config/predicates.yaml`). The
extractor is stateful (tracks, dynamic window, events), so frames must come in increasing
frame_index (the stream-order policy, `predrel_ros.core.stream_order`, shared with the extractor):
an older or repeated index, or one implausibly far ahead, is counted `out_of_order` and skipped;
`restart_after` such frames in a row mean the producer restarted its numbering (a respawned
perception node), and the extractor starts a new sequence (counted `restarts`, logged rate-limited).
Gaps (frames dropped upstream) are
passed through: the extractor treats them as missing evidence. Each PredicateArray carries the
EntityArray's header, frame_index, source and degradation.

A frame with more entities than the config's `max_entities` (default 32; pairs grow with its square)
is processed without its lowest-scoring rest: each entity dropped so is counted `entities_dropped`
and the frame logged (rate-limited).

Every EntityArray ends in one outcome under `entities.*` on /diagnostics: processed, malformed
(bad masks, NaN boxes or centroids, duplicate track ids, unknown roles, a mask that contradicts
the image size, a bad degradation), out_of_order, no_subscribers (`lazy` and nobody listens) or
failed.

    ros2 run predrel_ros predicate_node --ros-args -r __ns:=/degraded
"""
from __future__ import annotations

import sys
import time

from predrel_ros.core.errors import UserError
from predrel_ros.core.package_files import config_path
from predrel_ros.core.stream_order import StreamOrder
from predrel_ros.msg import EntityArray, PredicateArray
from predrel_ros.predicates import PredicateConfig, PredicateExtractor
from predrel_ros.ros.kit.frame_counters import NO_SUBSCRIBERS, PROCESSED
from predrel_ros.ros.kit.frame_order import admit, restart_after_parameter
from predrel_ros.ros.kit.message_bounds import MAX_ENTITIES
from predrel_ros.ros.kit.node_base import PredrelNode, wanted
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.qos import STREAM_QOS
from predrel_ros.ros.kit.runtime import run_node
from predrel_ros.ros.kit.topic_specs import DIAGNOSTICS, PUBLISHES, STREAM_QOS_TEXT, SUBSCRIBES, TopicSpec
from predrel_ros.ros.messages.degradations import checked_degradation_from_msg
from predrel_ros.ros.messages.entities import entities_from_msg
from predrel_ros.ros.messages.predicates import predicates_to_msg

NODE_NAME = "predicates"
#: its params file in config/ (predicates.yaml is the library config)
PARAMS_FILE = "predicate_node.yaml"
#: the stream every input's outcome is counted under
ENTITIES = "entities"
#: entities beyond the extractor's max_entities, dropped from their frame (an event, not an outcome)
ENTITIES_DROPPED = "entities_dropped"

PARAMETERS = (
    ParameterSpec("config", "predicates.yaml", "predicates YAML whose `predicates` section configures the extractor "
                  "(thresholds, window, confidence weights, pair rules); a bare file name is looked up in the "
                  "package's config/ folder"),
    ParameterSpec("source_name", "", "PredicateArray.source of the published predicates; empty: the EntityArray's "
                  "source (perception, ground_truth, ...)"),
    restart_after_parameter("entity", "the extractor"),
    ParameterSpec("lazy", True, "skip extraction while nobody subscribes to predicates (counted no_subscribers)"),
    MAX_ENTITIES,
)

TOPICS = (
    TopicSpec("entities", "predrel_ros/EntityArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "tracked entities of each frame (perception node, or ground truth in oracle runs)"),
    TopicSpec("predicates", "predrel_ros/PredicateArray", PUBLISHES, STREAM_QOS_TEXT,
              "the frame's predicates with confidence and evidence, same header, frame_index and degradation"),
    DIAGNOSTICS,
)


def load_extractor(value: str, order: StreamOrder | None = None) -> PredicateExtractor:
    """The extractor configured by the predicates YAML the `config` parameter names."""
    path = config_path(value)
    try:
        return PredicateExtractor(PredicateConfig.load(path, section="predicates"), order=order)
    except (OSError, ValueError) as error:
        raise UserError(f"parameter config: {path}: {error}") from None


class PredicateNode(PredrelNode):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, **kwargs)
        p = self.params
        self.order = StreamOrder(p["restart_after"])
        self.extractor = load_extractor(p["config"], self.order)
        self.predicates_publisher = self.publisher(PredicateArray, "predicates", STREAM_QOS)
        self.subscription(EntityArray, "entities", self._on_entities, STREAM_QOS, stream=ENTITIES)

    def _on_entities(self, msg: EntityArray) -> None:
        start = time.perf_counter()
        if self.params["lazy"] and not wanted(self.predicates_publisher):
            self.count(ENTITIES, NO_SUBSCRIBERS)
            return
        entities = entities_from_msg(msg, max_entities=self.params["max_entities_per_message"])  # counted malformed
        checked_degradation_from_msg(msg.degradation)
        frame_index = int(msg.frame_index)
        if not admit(self, self.order, ENTITIES, frame_index, "predicate extraction", self.extractor.reset):
            return
        image_size = (int(msg.image_width), int(msg.image_height)) if msg.image_width and msg.image_height else None
        estimates = self.extractor.update(frame_index, entities, image_size)   # ValueError: nothing changed
        dropped = self.extractor.dropped_entities
        if dropped:
            self.count(None, ENTITIES_DROPPED, len(dropped))
            self.log_throttled(ENTITIES_DROPPED, f"frame {frame_index}: {len(entities)} entities, the "
                               f"{len(dropped)} lowest-scoring beyond max_entities "
                               f"{self.extractor.config.max_entities} dropped (track ids {list(dropped)})")
        self.predicates_publisher.publish(predicates_to_msg(
            estimates, frame_index=frame_index, source=self.params["source_name"] or msg.source, header=msg.header,
            degradation=msg.degradation))
        self.count(ENTITIES, PROCESSED)
        self.latency.add(time.perf_counter() - start)

    def diagnostic_values(self) -> dict[str, object]:
        return {"last_frame_index": -1 if self.order.last is None else self.order.last}


def main(args: list[str] | None = None) -> int:
    return run_node(PredicateNode, args)


if __name__ == "__main__":
    sys.exit(main())
