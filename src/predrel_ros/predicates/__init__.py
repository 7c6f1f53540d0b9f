"""Visual predicates (paper 3.3-3.4): vocabulary, extraction rules, confidence and logic rules.

    from predrel_ros.predicates import PredicateExtractor
    extractor = PredicateExtractor()                 # or PredicateExtractor(PredicateConfig.load(path))
    estimates = extractor.update(frame_index, entities)
"""
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, NO_OBJECT, PredicateEstimate
from predrel_ros.predicates.extractor import FrameOrderError, PredicateExtractor

__all__ = ["EVIDENCE_FACTORS", "NO_OBJECT", "FrameOrderError", "PredicateConfig", "PredicateEstimate",
           "PredicateExtractor"]
