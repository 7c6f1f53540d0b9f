"""Predicate extraction settings: every threshold, margin, window and weight in one validated object.

Thresholds are selected on clean validation sequences (paper 4.8, `predicates.selection`) and then
fixed. Each decision threshold theta comes with its margin scale eta, which turns the distance of a
measurement from the threshold into the spatial evidence factor q_sp = min(1, |x - theta| / eta)
(paper 3.4).

Pixel quantities are expressed at a reference resolution: a measurement made on an image whose
diagonal is D pixels is multiplied by `reference_diagonal / D` before it is compared with a
threshold, so one config serves the 320x240 controlled set and a 640x480 or 1280x720 camera alike.
The default reference diagonal, 800 px, is that of a 640x480 image.

Files: `PredicateConfig.load(path)` / `.save(path)` (YAML or JSON), `to_dict()` / `from_dict()`.
Unknown keys and invalid values are refused with the dotted name of the field.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from predrel_ros.core.config_io import ConfigFile
from predrel_ros.core.entities import (
    CONTAINER,
    HAND_ROLES,
    LEFT_HAND,
    MANIPULATED_OBJECT,
    RIGHT_HAND,
    ROLES,
    SURFACE,
    TARGET,
    TOOL,
)
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import EVIDENCE_FACTORS


@dataclass
class Threshold:
    """A decision threshold theta (`value`) and its margin scale eta.

    `margin(x)` is the paper's q_sp = min(1, |x - theta| / eta): 0 on the threshold, 1 at eta away.
    """

    value: float
    eta: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.value):
            raise ValueError(f"value must be finite, got {self.value}")
        if not (math.isfinite(self.eta) and self.eta > 0):
            raise ValueError(f"eta must be a positive number, got {self.eta}")

    def margin(self, x: float) -> float:
        margin = abs(x - self.value) / self.eta
        return margin if margin < 1.0 else 1.0      # min(1.0, margin) without the call (per test, per pair)

    def margins(self, x: np.ndarray) -> np.ndarray:
        """`margin` of every element of x."""
        margins = np.abs(x - self.value) / self.eta
        return np.where(margins < 1.0, margins, 1.0)

    def at_most(self, limit: float) -> Threshold:
        """This threshold, its value lowered to `limit` where that is lower (the same eta)."""
        return self if limit >= self.value else Threshold(limit, self.eta)


@dataclass
class ContactConfig:
    """contact(i, j) = T when the mask boundary distance is <= distance.value (reference px), and
    where depth tells, the entities also meet in depth:

    - with a depth image (`PredicateExtractor.update(..., depth_m=...)`): the depth gap where the
      masks meet (`predicates.boundary_depth`) <= boundary_depth_gap_m.value (metres), surfaces
      included; for a hand and what it touched on the previous frame <= boundary_exit_gap_m
      (hysteresis: where fingers rest on an object the gap hovers about the threshold); and the
      proximity there (the distance to the nearest depth of the other mask next to each boundary
      pixel, `boundary_depth`) <= boundary_proximity_m.value (metres: a hand inside a container
      lies within the range of the container's depths, its rim in front and its walls behind, but 3-4
      cm from either); not for an entity inside a container's or a hand's image box (the walls or the
      gripping hand hide the contact); for a hand and what it touched on the previous frame, both
      standing still (slower than dynamic.moving_speed_mps), contact also ends once that proximity
      has risen on consecutive frames by more than boundary_proximity_creep_m (m; None: never) in
      all (`predicates.separation_creep`: fingers opening beside an object);
    - for an object inside a hand's image box, with a depth image and the camera intrinsics: the 3D
      separation where the masks meet (`boundary_depth.boundary_separation_m`) judged against its
      level during the contact (`predicates.enclosed_contact`): contact ends when it rises more than
      hold_separation_rise_m.value above the median of the last hold_separation_frames contact
      frames, and is never T beyond hold_separation_max_m; a frame on which the object's visible
      area changed by more than hold_separation_area_change (a fraction), or on which the separation
      rose by more than hold_separation_jump_m (m; None: never) since the previous frame, starts a
      new level; while hand and object stand still (slower than dynamic.moving_speed_mps), contact
      also ends once the separation has risen on consecutive frames by more than
      hold_separation_creep_m (m; None: never) in all, or by more than hold_separation_put_down_creep_m
      (m; None: hold_separation_creep_m) when the object was put down (it touched something other than
      a hand on the previous frame), and for such an object a reseen or jumped frame is judged against
      the level instead of starting a new one when hold_separation_put_down_keeps_level is set (the
      fingers opening beside a placed object); the separation is measured over the masks'
      pixels within separation_band reference px of each other; an enclosure's first contact needs a
      separation within hold_separation_begin_m (m; None: hold_separation_max_m);
      once in contact, the object stays enclosed while at least hold_exit_fraction of it lies in the
      hand's box (the static In fraction to begin: a fraction hovering at the threshold otherwise
      switches to the boundary gap, in front of the object by the fingers' 1-3 cm); None: no
      hysteresis;
    - a hand and an object that move together (`predicates.co_motion`: the hand faster than
      dynamic.moving_speed_mps, the object's 3D velocity within carried_relative_speed of the hand's
      speed; None: never) are carried: an enclosed object's separation is then not judged against its
      level (only against hold_separation_max_m, and it begins a contact at any separation up to
      it), and a boundary gap up to carried_gap_m (m) is contact, for as long as that contact lasts
      (a carry that pauses keeps its grip; while hand and object move slower than
      paused_carry_speed_share of dynamic.moving_speed_mps, the pause, an enclosed object's
      separation is judged by the creep bound); a contact carried until the object was put down
      (resting on something other than a hand) keeps, for as long as it lasts, a boundary gap up to
      the median of its last gaps + hold_separation_rise_m (within boundary_exit_gap_m and
      carried_gap_m), and standing still it ends once that gap has risen on consecutive frames by
      more than hold_separation_put_down_creep_m (`predicates.boundary_hold`); an enclosed object that
      moves faster than dynamic.moving_speed_mps while the hand stands still (its window speed and
      first and last steps under still_hand_speed_share of that speed; None: never) is not held;
      every creep above is judged once its rise spans creep_min_steps rising frames (depth noise);
    - else, or where no pixel of the boundary has a valid depth, when both entities carry a depth
      (point3d or a 3-element centroid) and neither has a role in `depth_ignored_roles`:
      |z_i - z_j| <= depth_gap.value (metres). Surfaces are ignored by default: one depth value
      cannot describe a table's extent.

    None disables a test.
    """

    distance: Threshold = field(default_factory=lambda: Threshold(3.0, 3.0))
    boundary_depth_gap_m: Threshold | None = field(default_factory=lambda: Threshold(0.01, 0.01))
    boundary_proximity_m: Threshold | None = field(default_factory=lambda: Threshold(0.03, 0.005))
    depth_gap: Threshold | None = field(default_factory=lambda: Threshold(0.06, 0.04))
    depth_ignored_roles: tuple[str, ...] = (SURFACE,)
    hold_separation_rise_m: Threshold | None = field(default_factory=lambda: Threshold(0.004, 0.002))
    hold_separation_max_m: float = 0.05
    hold_separation_frames: int = 8
    hold_separation_area_change: float = 0.1
    hold_separation_jump_m: float | None = 0.006
    hold_separation_creep_m: float | None = 0.0025
    hold_separation_put_down_creep_m: float | None = 0.0015
    hold_separation_put_down_keeps_level: bool = True
    separation_band: float = 15.0
    hold_exit_fraction: float | None = 0.5
    boundary_exit_gap_m: float | None = 0.0125
    boundary_proximity_creep_m: float | None = 0.01
    hold_separation_begin_m: float | None = 0.025
    carried_relative_speed: float | None = 0.5
    carried_gap_m: float = 0.02
    paused_carry_speed_share: float = 0.5
    still_hand_speed_share: float | None = 0.25
    creep_min_steps: int = 2

    @property
    def put_down_creep_m(self) -> float | None:
        """The creep bound of an object put down: hold_separation_put_down_creep_m, else
        hold_separation_creep_m (None: creeps are not judged)."""
        if self.hold_separation_creep_m is None or self.hold_separation_put_down_creep_m is None:
            return self.hold_separation_creep_m
        return self.hold_separation_put_down_creep_m

    def __post_init__(self) -> None:
        if self.distance.value < 0:
            raise ValueError(f"distance.value must be >= 0 px, got {self.distance.value}")
        if not self.hold_separation_max_m > 0:
            raise ValueError(f"hold_separation_max_m must be > 0 m, got {self.hold_separation_max_m}")
        if not self.hold_separation_area_change > 0:
            raise ValueError(f"hold_separation_area_change must be > 0, got {self.hold_separation_area_change}")
        if self.hold_separation_frames < 1:
            raise ValueError(f"hold_separation_frames must be >= 1, got {self.hold_separation_frames}")
        if not self.carried_gap_m > 0:
            raise ValueError(f"carried_gap_m must be > 0 m, got {self.carried_gap_m}")
        if not 0.0 < self.paused_carry_speed_share <= 1.0:
            raise ValueError(f"paused_carry_speed_share must lie in (0, 1], got {self.paused_carry_speed_share}")
        if self.creep_min_steps < 1:
            raise ValueError(f"creep_min_steps must be >= 1 frame, got {self.creep_min_steps}")
        if self.still_hand_speed_share is not None and not 0.0 < self.still_hand_speed_share <= 1.0:
            raise ValueError(f"still_hand_speed_share must lie in (0, 1] or be None, got {self.still_hand_speed_share}")
        for name, unit in (("hold_separation_jump_m", " m"), ("hold_separation_creep_m", " m"),
                           ("hold_separation_put_down_creep_m", " m"),
                           ("hold_separation_begin_m", " m"), ("carried_relative_speed", ""),
                           ("boundary_exit_gap_m", " m"),
                           ("boundary_proximity_creep_m", " m")):         # settings that None switches off
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be > 0{unit} or None, got {value}")
        if self.hold_exit_fraction is not None and not 0.0 < self.hold_exit_fraction <= 1.0:
            raise ValueError(f"hold_exit_fraction must lie in (0, 1] or be None, got {self.hold_exit_fraction}")
        if not self.separation_band >= 1.0:
            raise ValueError(f"separation_band must be >= 1 reference px, got {self.separation_band}")
        for name in ("boundary_depth_gap_m", "boundary_proximity_m", "depth_gap", "hold_separation_rise_m"):
            threshold = getattr(self, name)
            if threshold is not None and threshold.value < 0:
                raise ValueError(f"{name}.value must be >= 0 m, got {threshold.value}")
        _check_roles("depth_ignored_roles", self.depth_ignored_roles)


@dataclass
class StaticConfig:
    """Static relation of an ordered pair (i, j), decided in priority In > Sup > Ab > Be > Ar > none.

    In:  the fraction of i's mask inside j's box >= inside_fraction, and i's bottom is not below j's.
    Sup: contact(i, j) = T and the fraction of i's bottom-boundary columns that have j's mask within
         `support_band` reference px of i's lowest pixel >= support_fraction.
    Ab / Be: the vertical centroid offset (cy_j - cy_i) / ((h_i + h_j) / 2) >= above_offset
         (Ab) or <= -above_offset (Be), with horizontal overlap / min(w_i, w_j) >= horizontal_overlap.
    Ar:  centroid distance / (sum of the two boxes' half-diagonals) <= around_distance (two boxes
         touching corner to corner are 1 apart).

    In 3D, with a depth image and the camera intrinsics, for pairs whose entities both have masked
    depth samples (`rules.static_rules_3d`; gravity from the surface's fitted plane, else image up,
    `predicates.gravity`), in metres along gravity: In as above; Sup when i's lowest visible point is
    within support_gap_m of j's top (the surface: its plane) and the footprints meet; Ab when i's
    lowest point is at least above_clearance_m above j's top (room for the fingers a hand above an
    object hides), Be when i's top is at least below_clearance_m below j's bottom (what stands on i
    shows its lowest visible point a few mm above i's top: its contact line is hidden), the
    footprints at most footprint_gap_m apart laterally and footprint_depth_gap_m along the view
    (negative: overlapping by as much; the far sides are hidden, so the second is the larger); Ar
    when the two extents are at most around_distance_m apart. support_gap_m None keeps the 2D rule.
    """

    inside_fraction: Threshold = field(default_factory=lambda: Threshold(0.7, 0.15))
    support_fraction: Threshold = field(default_factory=lambda: Threshold(0.3, 0.15))
    support_band: float = 4.0
    above_offset: Threshold = field(default_factory=lambda: Threshold(0.7, 0.2))
    horizontal_overlap: Threshold = field(default_factory=lambda: Threshold(0.3, 0.15))
    around_distance: Threshold = field(default_factory=lambda: Threshold(1.2, 0.3))
    support_gap_m: Threshold | None = field(default_factory=lambda: Threshold(0.012, 0.006))
    above_clearance_m: Threshold = field(default_factory=lambda: Threshold(0.01, 0.005))
    below_clearance_m: Threshold = field(default_factory=lambda: Threshold(0.005, 0.005))
    footprint_gap_m: Threshold = field(default_factory=lambda: Threshold(0.01, 0.01))
    footprint_depth_gap_m: Threshold = field(default_factory=lambda: Threshold(0.02, 0.01))
    around_distance_m: Threshold = field(default_factory=lambda: Threshold(0.1, 0.03))

    def __post_init__(self) -> None:
        if self.support_gap_m is not None and self.support_gap_m.value <= 0:
            raise ValueError(f"support_gap_m.value must be > 0, got {self.support_gap_m.value}")
        if self.around_distance_m.value <= 0:
            raise ValueError(f"around_distance_m.value must be > 0, got {self.around_distance_m.value}")
        for name in ("inside_fraction", "support_fraction", "horizontal_overlap"):
            value = getattr(self, name).value
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{name}.value is a fraction in (0, 1], got {value}")
        if not self.support_band >= 1.0:
            raise ValueError(f"support_band must be >= 1 reference px, got {self.support_band}")
        if self.above_offset.value <= 0 or self.around_distance.value <= 0:
            raise ValueError("above_offset.value and around_distance.value must be > 0")


@dataclass
class DynamicConfig:
    """Dynamic relation of a pair over the window (paper 3.3; speeds in reference px per frame).

    An entity moves when its window speed (least-squares slope of its centroid) > moving_speed.
    Decision order: fewer than `min_frames` joint samples -> UNK; neither moves -> HT if both moved
    at the start of the window, else S; both move with relative speed <= relative_speed -> MT;
    exactly one moves while contact was T on >= fmt_contact_fraction of the window -> FMT;
    centroid distance rate < -distance_rate -> GC, > distance_rate -> MA; otherwise S.

    In 3D, with a depth image and the camera intrinsics, when both entities have a 3D position
    (`predicates.point_sets`) on at least min_frames frames of the window: the same rule on 3D
    velocities in metres per second (per-frame slopes times frame_rate_hz) against the `*_mps`
    thresholds; None for moving_speed_mps keeps the 2D rule. containment (a fraction): when two
    consecutive masks of a track share at least this share of the smaller one's pixels (the silhouette
    did not move, only what is visible of it), the track's 3D position moves by the shift of the
    pixels visible in both frames, not by its median's (`predicates.steady_position`: a hand covering a
    still object moves its visible median); None: the median's shift always.
    """

    min_frames: int = 3
    moving_speed: Threshold = field(default_factory=lambda: Threshold(0.5, 0.3))
    relative_speed: Threshold = field(default_factory=lambda: Threshold(2.0, 0.4))
    distance_rate: Threshold = field(default_factory=lambda: Threshold(0.7, 0.4))
    fmt_contact_fraction: float = 0.5
    frame_rate_hz: float = 30.0
    moving_speed_mps: Threshold | None = field(default_factory=lambda: Threshold(0.05, 0.04))
    relative_speed_mps: Threshold = field(default_factory=lambda: Threshold(0.1, 0.05))
    distance_rate_mps: Threshold = field(default_factory=lambda: Threshold(0.04, 0.025))
    containment: float | None = 0.98

    def __post_init__(self) -> None:
        if self.min_frames < 2:
            raise ValueError(f"min_frames must be >= 2 (a velocity needs two samples), got {self.min_frames}")
        for name in ("moving_speed", "relative_speed", "distance_rate", "moving_speed_mps", "relative_speed_mps",
                     "distance_rate_mps"):
            threshold = getattr(self, name)
            if threshold is not None and threshold.value <= 0:
                raise ValueError(f"{name}.value must be > 0, got {threshold.value}")
        if not (math.isfinite(self.frame_rate_hz) and self.frame_rate_hz > 0):
            raise ValueError(f"frame_rate_hz must be > 0, got {self.frame_rate_hz}")
        if not 0.0 < self.fmt_contact_fraction <= 1.0:
            raise ValueError(f"fmt_contact_fraction must lie in (0, 1], got {self.fmt_contact_fraction}")
        if self.containment is not None and not 0.0 < self.containment <= 1.0:
            raise ValueError(f"containment must lie in (0, 1] or be None, got {self.containment}")

    def in_metres(self) -> "DynamicConfig | None":
        """The 3D rule's config: the `*_mps` thresholds in place of the pixel ones (None: 2D only)."""
        if self.moving_speed_mps is None:
            return None
        return dataclasses.replace(self, moving_speed=self.moving_speed_mps, relative_speed=self.relative_speed_mps,
                                   distance_rate=self.distance_rate_mps)


@dataclass
class GraspConfig:
    """grasp / release from the persistent hold state of a hand-object pair (`predicates.hold_state`).

    onset_frames: consecutive frames of contact T, counted from the first frame of that contact with
        one of `motion`, before a hold begins (UNK frames neither count nor break the run): a grip is
        a contact that lasts once the hand moves with or on the object, a touch that ends within
        onset_frames of that motion is no hold.
    motion: dynamic values that start the count (the object carried: MT; the hand moving on what it
        touches: FMT; both halting: HT).
    still_hold_frames: a hold in which the object never moved with the hand (`predicates.co_motion`,
        told only with 3D positions) ends with a release only once it lasted this many frames (a hand
        holding a box still for the other to insert into holds it for seconds; a touch read as a hold
        lasts under a second); None: every hold ends with a release.
    """

    onset_frames: int = 4
    motion: tuple[str, ...] = ("MT", "FMT", "HT")
    still_hold_frames: int | None = 30

    def __post_init__(self) -> None:
        if self.onset_frames < 1:
            raise ValueError(f"onset_frames must be >= 1 frame, got {self.onset_frames}")
        if self.still_hold_frames is not None and self.still_hold_frames < 1:
            raise ValueError(f"still_hold_frames must be >= 1 frame or None, got {self.still_hold_frames}")
        unknown = [value for value in self.motion if value not in vocabulary.DYNAMIC_VALUES]
        if unknown:
            raise ValueError(f"motion: unknown dynamic value(s) {unknown}; expected some of "
                             f"{list(vocabulary.DYNAMIC_VALUES)}")


def _default_weights() -> dict[str, dict[str, float]]:
    contact = {"det": 1.0, "seg": 2.0, "trk": 0.5, "vis": 1.5, "sp": 2.0, "tmp": 1.0}
    static = {"det": 1.0, "seg": 1.0, "trk": 0.5, "vis": 1.0, "sp": 2.0, "tmp": 1.0}
    dynamic = {"det": 0.5, "seg": 0.25, "trk": 2.0, "vis": 1.0, "sp": 1.5, "tmp": 1.0}
    derived = {"det": 1.0, "seg": 1.0, "trk": 1.0, "vis": 1.0, "sp": 1.0, "tmp": 1.0}
    weights = {vocabulary.CONTACT: contact, vocabulary.STATIC: static, vocabulary.DYNAMIC: dynamic}
    weights.update({name: dict(derived) for name in vocabulary.DERIVED_PREDICATES})
    return weights


@dataclass
class ConfidenceConfig:
    """Confidence c = g_k(z) of the six evidence factors (paper 3.4).

    weights: predicate name -> factor -> weight of the default g_k, a weighted geometric mean
        c = exp(sum_f w_f log q_f / sum_f w_f); a factor with weight 0 is ignored.
    floor: an estimate whose confidence is below the floor is reported as UNK (insufficient evidence).
    min_visibility: an entity seen less than this is treated as invisible (its predicates are UNK).
    box_only_seg_quality: q_seg of an entity that has a box but no mask.
    """

    weights: dict[str, dict[str, float]] = field(default_factory=_default_weights)
    floor: float = 0.2
    min_visibility: float = 0.05
    box_only_seg_quality: float = 0.5

    def __post_init__(self) -> None:
        missing = sorted(set(vocabulary.PREDICATES) - set(self.weights))
        if missing:
            raise ValueError(f"weights: no weights for predicate(s) {missing}")
        for name, factors in self.weights.items():
            vocabulary.group_of(name)
            if set(factors) != set(EVIDENCE_FACTORS):
                raise ValueError(f"weights.{name}: needs exactly the factors {list(EVIDENCE_FACTORS)}, "
                                 f"got {sorted(factors)}")
            values = [factors[f] for f in EVIDENCE_FACTORS]
            if any(not (math.isfinite(v) and v >= 0) for v in values) or sum(values) <= 0:
                raise ValueError(f"weights.{name}: weights must be >= 0 with a positive sum, got {factors}")
        for name in ("floor", "min_visibility", "box_only_seg_quality"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {value}")


@dataclass
class PairRule:
    """Which ordered role pairs (subject, object) are evaluated, and which static relations apply.

    kind names the scenario group (hand_object, object_container, object_surface, object_object).
    Contact and dynamic predicates are emitted once per unordered pair, oriented as the rule states
    (subject first; two entities that both fit a symmetric rule: lower id first). Grasp and release
    apply when the subject is a hand, containment_event when "In" is allowed, support_event when
    "Sup" is allowed.
    """

    kind: str
    subject_roles: tuple[str, ...]
    object_roles: tuple[str, ...]
    static_relations: tuple[str, ...] = ("Ab", "Be", "Ar")

    def __post_init__(self) -> None:
        _check_roles("subject_roles", self.subject_roles)
        _check_roles("object_roles", self.object_roles)
        if not self.subject_roles or not self.object_roles:
            raise ValueError(f"pair rule {self.kind!r}: subject_roles and object_roles must not be empty")
        for relation in self.static_relations:
            if relation not in vocabulary.STATIC_VALUES or relation == "none":
                raise ValueError(f"pair rule {self.kind!r}: unknown static relation {relation!r}; "
                                 f"expected some of {vocabulary.STATIC_PRIORITY[:-1]}")

    @property
    def hand_subject(self) -> bool:
        return all(role in HAND_ROLES for role in self.subject_roles)


_OBJECTS = (MANIPULATED_OBJECT, TOOL, TARGET)


def _default_pair_rules() -> list[PairRule]:
    return [
        PairRule("hand_object", (LEFT_HAND, RIGHT_HAND), _OBJECTS + (CONTAINER,), ("Ab", "Be", "Ar")),
        PairRule("object_container", _OBJECTS, (CONTAINER,), ("In", "Sup", "Ab", "Be", "Ar")),
        PairRule("object_surface", _OBJECTS + (CONTAINER,), (SURFACE,), ("Sup", "Ab", "Be", "Ar")),
        PairRule("object_object", _OBJECTS, _OBJECTS, ("Sup", "Ab", "Be", "Ar")),
    ]


def _check_roles(name: str, roles: tuple[str, ...]) -> None:
    unknown = [role for role in roles if role not in ROLES]
    if unknown:
        raise ValueError(f"{name}: unknown role(s) {unknown}; expected some of {list(ROLES)}")


@dataclass
class PredicateConfig(ConfigFile):
    """Everything the predicate extractor decides with.

    window: frames of the dynamic-relation window and of q_tmp (paper: w = 5), ending at the
        current frame (causal, so a live stream gets its estimate without delay).
    reference_diagonal: image diagonal (px) at which pixel thresholds are expressed.
    track_memory: frames a track that vanished keeps its pairs alive, reported as UNK.
    event_memory: frames back that containment / support events look for the prior state.
    max_entities: entities per frame the extractor evaluates (pairs grow with its square); the
        lowest-scoring rest of a frame is dropped, counted in `PredicateExtractor.dropped_entities`.
    grasp: the hold state behind grasp and release.
    """

    window: int = 5
    reference_diagonal: float = 800.0
    track_memory: int = 15
    event_memory: int = 15
    max_entities: int = 32
    contact: ContactConfig = field(default_factory=ContactConfig)
    static: StaticConfig = field(default_factory=StaticConfig)
    dynamic: DynamicConfig = field(default_factory=DynamicConfig)
    grasp: GraspConfig = field(default_factory=GraspConfig)
    confidence: ConfidenceConfig = field(default_factory=ConfidenceConfig)
    pair_rules: list[PairRule] = field(default_factory=_default_pair_rules)

    NAME = "predicates"

    def __post_init__(self) -> None:
        if self.window < 2:
            raise ValueError(f"window must be >= 2 frames, got {self.window}")
        if self.dynamic.min_frames > self.window:
            raise ValueError(f"dynamic.min_frames ({self.dynamic.min_frames}) exceeds window ({self.window})")
        if not self.reference_diagonal > 0:
            raise ValueError(f"reference_diagonal must be > 0 px, got {self.reference_diagonal}")
        for name in ("track_memory", "event_memory"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1 frame, got {getattr(self, name)}")
        if self.max_entities < 1:
            raise ValueError(f"max_entities must be >= 1, got {self.max_entities}")
        kinds = [rule.kind for rule in self.pair_rules]
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"pair_rules: duplicate kinds in {kinds}")

    def replace(self, path: str, value: Any) -> "PredicateConfig":
        """A copy with the field at dotted `path` (e.g. "contact.distance.value") set to `value`."""
        data = self.to_dict()
        node = data
        keys = path.split(".")
        for key in keys[:-1]:
            if not isinstance(node, dict) or key not in node:
                raise ValueError(f"no config field {path!r}")
            node = node[key]
        if not isinstance(node, dict) or keys[-1] not in node:
            raise ValueError(f"no config field {path!r}")
        node[keys[-1]] = value
        return PredicateConfig.from_dict(data)

    def get(self, path: str) -> Any:
        """The value of the field at dotted `path`."""
        node: Any = self
        for key in path.split("."):
            if not dataclasses.is_dataclass(node) or not hasattr(node, key):
                raise ValueError(f"no config field {path!r}")
            node = getattr(node, key)
        return node
