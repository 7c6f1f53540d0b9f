"""The per-message bounds of nodes that decode EntityArray or PredicateArray, as parameters: a
message with more items is refused before any work and counted `too_large` (one EntityArray of 300
entities used to hold the predicate node for 13.5 s). The defaults leave room for every scene the
perception node produces (its detections per frame are bounded far below)."""
from __future__ import annotations

from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.messages.fields import MAX_ENTITIES_PER_MESSAGE, MAX_PREDICATES_PER_MESSAGE

MAX_ENTITIES = ParameterSpec(
    "max_entities_per_message", MAX_ENTITIES_PER_MESSAGE, "an EntityArray with more entities is refused unread "
    "(counted too_large)", minimum=1, maximum=100_000, runtime=True)
MAX_PREDICATES = ParameterSpec(
    "max_predicates_per_message", MAX_PREDICATES_PER_MESSAGE, "a PredicateArray with more predicates is refused "
    "unread (counted too_large)", minimum=1, maximum=1_000_000, runtime=True)
