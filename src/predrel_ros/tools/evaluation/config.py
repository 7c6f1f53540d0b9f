"""Settings of an offline evaluation sweep (`predrel eval`), validated when built.

A sweep runs every degradation kind of `kinds` at every severity of `severities` (the clean
condition, severity 0, always runs: it is the reference of CWS, the s=0 column of Table 9 and the
clean downstream row of Table 13). Episode i of a split is degraded with seed `seed + i`, as
everywhere else in the project, so a sweep is reproducible and independent of `--jobs`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from predrel_ros.degradations import ALL_KINDS, KINDS, MAX_SEVERITY
from predrel_ros.reliability.association import MIN_IOU
from predrel_ros.tools.evaluation.fleet import check_scheduler

GROUND_TRUTH = "gt"
CLEAN = "clean"
REFERENCES = (GROUND_TRUTH, CLEAN)

DEFAULT_PERCEPTION = "default"
ORACLE = "oracle"

#: action-model choices besides a model file
FIT = "fit"
COMMITTED = "committed"
NO_ACTION = "none"


@dataclass(frozen=True)
class EvaluationConfig:
    """What one sweep evaluates.

    kinds / severities: degradations and their severities 1..5 (clean always runs; no kinds: clean only);
        the default, the protocol's six kinds, is 31 conditions; occlusion_flat runs only when named.
    reference: "gt" (ground-truth predicates; needs data that has them) or "clean" (the clean
        pipeline's own predicates, the paper's y^0).
    perception: "default" (the embedded model), "oracle" (ground-truth entities: perfect perception)
        or a model path (.onnx file or model folder); `perception_config` optionally a perception
        YAML whose `model` the path replaces.
    seed: degradation seed; episode i of a split uses seed + i.
    match_iou: least box IoU for an evaluated entity to stand for a reference entity of its class
        (`association`).
    tpc_tolerance: frames within which a degraded transition matches a reference one (TPC).
    calibration_bins: bins of the confidence-reliability diagram.
    moderate_severity / severe_severity: the s of Table 13's "s=3" and "s=5" rows (and Tables 14,
        15, which use the moderate one).
    test_split / selection_split / train_split: dataset splits evaluated, used for threshold and
        weight selection, and used to fit the action models.
    action_model: "fit" (fit the recognizers on the train split's clean predicates of this very
        pipeline), "committed" (the packaged model), "none", or a model file.
    jobs: episodes evaluated in parallel (worker processes).
    scheduler: None, or the Dask cluster the episodes are evaluated on instead (`evaluation.fleet`): a
        scheduler address (tcp://host:8786) or local:N (a LocalCluster of N worker processes); with jobs 1.
    max_episodes: evaluate only the first N episodes of the test split (a quick estimate); None: all.
    trust_profile: clean profile (`predrel profile`, JSON/YAML) of the reference-free trust measured in
        trust.json (`trust_measurement`); None: the absolute trust bounds, no expected agreement.
    trust_window: frames of the rolling window of trust.json (the reliability node's window).
    trust_model: trust estimator (`predrel trust fit`, JSON) whose expected agreement and levels
        trust.json measures instead of the trust bounds; None: the bounds (and the profile).
    depth_noise: every depth image goes through the RGB-D sensor model (`degradations.depth_noise`:
        axial noise growing with depth, disparity steps, holes at depth edges), seeded per episode
        (seed + index), before perception and predicates: the predicates as a real depth camera would
        give them. The images and their cached detections are unchanged.
    """

    kinds: tuple[str, ...] = KINDS
    severities: tuple[int, ...] = (1, 2, 3, 4, 5)
    reference: str = GROUND_TRUTH
    perception: str = DEFAULT_PERCEPTION
    perception_config: str | None = None
    predicate_config: str | None = None
    seed: int = 0
    match_iou: float = MIN_IOU
    tpc_tolerance: int = 2
    calibration_bins: int = 10
    moderate_severity: int = 3
    severe_severity: int = 5
    test_split: str = "test"
    selection_split: str = "val"
    train_split: str = "train"
    action_model: str = FIT
    jobs: int = 1
    max_episodes: int | None = None
    scheduler: str | None = None
    trust_profile: str | None = None
    trust_window: int = 30
    trust_model: str | None = None
    depth_noise: bool = False

    def __post_init__(self) -> None:
        kinds = tuple(self.kinds)
        unknown = [kind for kind in kinds if kind not in ALL_KINDS]
        if unknown:
            raise ValueError(f"kinds: unknown {unknown}; expected some of {list(ALL_KINDS)} "
                             f"(no kinds: the clean condition only)")
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"kinds: {list(kinds)} names a kind twice")
        object.__setattr__(self, "kinds", tuple(kind for kind in ALL_KINDS if kind in kinds))
        severities = tuple(sorted({int(s) for s in self.severities if int(s) != 0}))
        if not severities or any(not 1 <= s <= MAX_SEVERITY for s in severities):
            raise ValueError(f"severities: need one or more of 1..{MAX_SEVERITY} (0, clean, always runs), "
                             f"got {list(self.severities)}")
        object.__setattr__(self, "severities", severities)
        if self.reference not in REFERENCES:
            raise ValueError(f"reference must be one of {REFERENCES}, got {self.reference!r}")
        if not self.perception:
            raise ValueError("perception must be 'default', 'oracle' or a model path")
        if not 0.0 < self.match_iou <= 1.0:
            raise ValueError(f"match_iou must lie in (0, 1], got {self.match_iou}")
        if self.tpc_tolerance < 0:
            raise ValueError(f"tpc_tolerance must be >= 0 frames, got {self.tpc_tolerance}")
        if self.calibration_bins < 2:
            raise ValueError(f"calibration_bins must be >= 2, got {self.calibration_bins}")
        if self.trust_window < 1:
            raise ValueError(f"trust_window must be >= 1 frame, got {self.trust_window}")
        for name in ("moderate_severity", "severe_severity"):
            if not 1 <= getattr(self, name) <= MAX_SEVERITY:
                raise ValueError(f"{name} must lie in 1..{MAX_SEVERITY}, got {getattr(self, name)}")
        if self.max_episodes is not None and self.max_episodes < 1:
            raise ValueError(f"max_episodes must be >= 1, got {self.max_episodes}")
        if self.jobs < 1:
            raise ValueError(f"jobs must be >= 1, got {self.jobs}")
        if self.scheduler is not None:
            check_scheduler(self.scheduler)
            if self.jobs != 1:
                raise ValueError(f"jobs {self.jobs} and scheduler {self.scheduler!r}: give one of them (the Dask "
                                 f"workers are the parallelism)")
        if not 0 <= self.seed < 2**31:
            raise ValueError(f"seed must lie in 0..2**31-1, got {self.seed}")

    @property
    def oracle(self) -> bool:
        return self.perception == ORACLE

    @property
    def parallel(self) -> bool:
        """Whether episodes run in other processes (--jobs > 1 or a Dask cluster)."""
        return self.jobs > 1 or self.scheduler is not None

    def to_dict(self) -> dict:
        return asdict(self)


def parse_severities(text: str) -> tuple[int, ...]:
    """"0-5", "1-5", "3", "1,3,5" -> the degraded severities (0 is dropped: the clean condition
    always runs). ValueError with the accepted forms otherwise."""
    values: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                low, high = (int(v) for v in part.split("-", 1))
                if low > high:
                    raise ValueError
                values.update(range(low, high + 1))
            else:
                values.add(int(part))
        except ValueError:
            raise ValueError(f"severities: cannot read {text!r}; use a range (0-5), a list (1,3,5) or one "
                             f"number") from None
    if any(not 0 <= s <= MAX_SEVERITY for s in values):
        raise ValueError(f"severities must lie in 0..{MAX_SEVERITY}, got {text!r}")
    values.discard(0)
    if not values:
        raise ValueError(f"severities {text!r} name no degraded severity (1..{MAX_SEVERITY})")
    return tuple(sorted(values))
