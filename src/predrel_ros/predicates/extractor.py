"""Per-frame predicate extraction with confidence (paper 3.3 and 3.4), stateful over frames.

`PredicateExtractor(config).update(frame_index, entities)` returns the `PredicateEstimate`s of one
frame, in a deterministic order: per entity pair (ids ascending) contact, static (each evaluated
orientation), dynamic, then grasp / release / containment_event / support_event, and finally
active_hand per hand.

Pairs and orientation. Only pairs allowed by the config's pair rules are evaluated (hand-object,
object-container, object-surface, object-object; paper 4.2); distractors by default take part in
none. Contact and dynamic predicates are unordered and emitted once per pair as (subject, object)
in the rule's orientation: the hand first, the object before its container or surface; two
entities that fit a symmetric rule (object-object) go lower id first. Static predicates are
per ordered pair: (object, container), (object, surface), (hand, object), and both orders of an
object-object pair. Derived predicates use the orientation of their base pair; active_hand has
the hand as subject and `NO_OBJECT` as object.

State over frames. The extractor keeps per track the centroid samples of the last `window` frames
(the dynamic relations and q_trk continuity) and, with a depth image and camera intrinsics, its 3D
positions (`point_sets`; the dynamic relations in metres per second, `DynamicConfig`), per predicate
stream the raw values of the window (q_tmp; one ring-buffer array for all streams, `stream_windows`),
the hold state of each hand-object pair (grasp and release, `hold_state`), the contact of an
object inside a hand's image box (`enclosed_contact`) and the boundary test's memory of a hand and what
it touches (`boundary_hold`: the gaps of a grip held after a carry is put down, the creeps of the gap
and the proximity), and the last known static value of each pair (onset events).
- Pairs exist only for tracks seen together: a pair is evaluated on the frames where both entities
  are present and, reported as UNK (missing evidence), for `track_memory` frames after the last
  frame they were seen together; a track not seen for `track_memory` frames is forgotten. A new
  (or false) track never pairs with remembered tracks it never co-occurred with.
- At most `max_entities` entities of a frame are evaluated: the lowest-scoring rest (ties: the
  higher track id) is dropped, as if not seen this frame, and its ids are `dropped_entities`.
- An entity whose visibility is below `confidence.min_visibility`, or whose mask is empty, gives UNK
  for all its pairs.
- Frame indices may skip (dropped frames): a gap is missing evidence, not motion. Speeds are per
  frame index, and q_trk counts the window's frames in which both tracks were seen.
- Frames must arrive in increasing frame_index, by the one stream-order policy
  (`predrel_ros.core.stream_order`, the extractor's `order`): an older or repeated index, or one
  implausibly far ahead, is refused with `FrameOrderError` and changes nothing (a node can catch it
  and count it); the `restart_after`-th such frame in a row (default 5) starts a new sequence (the
  extractor resets and takes it). `StreamOrder(restart_after=0)` is the strict mode: always refused.

Arrays over the frame's pairs: the static and dynamic rules of all observed pairs at once, and every
estimate as a row of `engine.FrameRows` (q_tmp, confidence and floor of a stage at once: the base
predicates, then the derived ones from their reported values); the estimates are built last.

UNK: insufficient evidence (missing or invisible entity, too few window samples for a dynamic
relation, an UNK base predicate of a derived one) or a confidence under `confidence.floor`. The
floor acts on the reported values: derived predicates and events are computed from the reported
base values, while q_tmp counts the raw values, so one weak frame does not drag the following
frames under the floor.
"""
from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np

from predrel_ros.core.entities import CONTAINER, HAND_ROLES, Entity
from predrel_ros.core.stream_order import FrameOrderError, StreamOrder  # noqa: F401  (FrameOrderError: re-exported)
from predrel_ros.predicates import rules, vocabulary
from predrel_ros.predicates.boundary_depth import boundary_depth_gap_m, boundary_separation_m
from predrel_ros.predicates.boundary_hold import BoundaryHold
from predrel_ros.predicates.co_motion import moving_together
from predrel_ros.predicates.confidence import GeometricMeanConfidence
from predrel_ros.predicates.config import PairRule, PredicateConfig, Threshold
from predrel_ros.predicates.enclosed_contact import EnclosedContact
from predrel_ros.predicates.engine import FrameRows, PairFactors
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate
from predrel_ros.predicates.geometry import EntityGeometry, FrameGeometry, inside_fraction, support_fraction
from predrel_ros.predicates.gravity import Support
from predrel_ros.predicates.hold_state import HoldState, motion_codes
from predrel_ros.predicates.point_sets import FramePoints
from predrel_ros.predicates.steady_position import SteadyPosition
from predrel_ros.predicates.stream_windows import StreamWindows

if TYPE_CHECKING:                     # core.frame imports predicates.estimate
    from predrel_ros.core.frame import CameraIntrinsics

UNK = vocabulary.UNK
_T = rules.T
_CONTACT, _STATIC, _DYNAMIC = vocabulary.CONTACT, vocabulary.STATIC, vocabulary.DYNAMIC
_GRASP, _RELEASE, _ACTIVE = vocabulary.GRASP, vocabulary.RELEASE, vocabulary.ACTIVE_HAND
_CONTAINMENT, _SUPPORT = vocabulary.CONTAINMENT_EVENT, vocabulary.SUPPORT_EVENT
_ENCLOSING_ROLES = (CONTAINER, *HAND_ROLES)     # roles whose image box hides the contact of what lies in it
#: order keys of one pair's estimates: pair index * _PAIR_SLOTS + position within the pair
_PAIR_SLOTS = 64

ConfidenceModel = Callable[[str, Sequence[float]], float]


Sample = tuple  # (frame, coordinates...): reference px in the image, or metres in 3D


class _Track:
    """Centroid samples (reference px) and 3D positions (m) of one track over the window, and when
    it was last seen."""

    __slots__ = ("role", "last_seen", "samples", "motion", "positions", "motion3d", "steady")

    def __init__(self, role: str) -> None:
        self.role = role
        self.last_seen = -1
        self.samples: deque[Sample] = deque()
        self.motion: _Motion | None = None
        self.positions: deque[Sample] = deque()
        self.motion3d: _Motion | None = None
        self.steady = SteadyPosition()


class _Motion:
    """One track's motion over the current window (per frame, in the samples' units)."""

    __slots__ = ("frames", "coordinates", "velocity", "speed", "early", "late")

    def __init__(self, samples: Sequence[Sample]) -> None:
        self.coordinates = {sample[0]: sample[1:] for sample in samples}    # frame -> coordinates
        self.frames = self.coordinates.keys()
        self.velocity = _velocity(samples)
        self.speed = math.hypot(*self.velocity)
        self.early = _segment_speed(samples[0], samples[1]) if len(samples) > 1 else 0.0
        self.late = _segment_speed(samples[-2], samples[-1]) if len(samples) > 1 else 0.0


def _segment_speed(a: Sample, b: Sample) -> float:
    return math.dist(a[1:], b[1:]) / (b[0] - a[0])


def _velocity(samples: Sequence[Sample]) -> tuple[float, ...]:
    """Least-squares slope of each coordinate over the frame indices (0 for fewer than two samples);
    the frames' offsets and their sum of squares once for all coordinates."""
    n = len(samples)
    if n < 2:
        return (0.0,) * (len(samples[0]) - 1)
    frames = [sample[0] for sample in samples]
    mean_f = sum(frames) / n
    offsets = [f - mean_f for f in frames]
    sxx = sum([d ** 2 for d in offsets])
    velocity = []
    for k in range(1, len(samples[0])):
        values = [sample[k] for sample in samples]
        mean_v = sum(values) / n
        velocity.append(sum([d * (v - mean_v) for d, v in zip(offsets, values)]) / sxx)
    return tuple(velocity)


def _slopes(frames: np.ndarray, values: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """Least-squares slope of each row of values over frames (as `_velocity`), on the row's `taken`
    cells only (0 for fewer than two)."""
    count = np.count_nonzero(taken, axis=1)
    safe = np.maximum(count, 1)
    mean_f = np.sum(np.where(taken, frames, 0.0), axis=1) / safe
    mean_v = np.sum(np.where(taken, values, 0.0), axis=1) / safe
    offsets = np.where(taken, frames - mean_f[:, None], 0.0)
    sxx = np.sum(offsets ** 2, axis=1)
    products = np.sum(np.where(taken, offsets * (values - mean_v[:, None]), 0.0), axis=1)
    return np.where(count >= 2, products / np.where(sxx > 0, sxx, 1.0), 0.0)


def _window_motion(samples: deque[Sample], window_start: int, frame_index: int) -> _Motion | None:
    """Drop the samples before the window; the motion over it when the track has this frame's sample."""
    while samples and samples[0][0] < window_start:
        samples.popleft()
    return _Motion(samples) if samples and samples[-1][0] == frame_index else None


class _PairPlan:
    """How one unordered pair of roles is evaluated (cached per role pair and id order)."""

    __slots__ = ("rule", "swap", "static_orders", "allowed")

    def __init__(self, rule: PairRule, swap: bool, static_orders: list[tuple[bool, tuple[str, ...]]]) -> None:
        self.rule = rule
        self.swap = swap                      # True: the higher id is the subject
        self.static_orders = static_orders    # (swap, allowed relations) per evaluated orientation
        self.allowed = tuple(name in rule.static_relations for name in rules.STATIC_RELATIONS)


class _PairRows:
    """A hand pair's rows of a frame (`FrameRows`): the pair's orientation, evidence factors, the rows
    its grasp and release read (`PredicateExtractor._derived`) and the order key of its grasp row."""

    __slots__ = ("order", "subject", "object", "factors", "contact", "dynamic")

    def __init__(self, order: int, subject: int, obj: int, factors: PairFactors, contact: int, dynamic: int) -> None:
        self.order = order                  # grasp's; release's the next
        self.subject, self.object = subject, obj
        self.factors = factors
        self.contact, self.dynamic = contact, dynamic


class _PairLayout:
    """The frame's pairs as id-level arrays, kept while the pairs stay the same and none of their streams
    is forgotten: each pair's (subject, object) in its rule's orientation, one row per static
    orientation of a pair, the order keys of the pair's rows (`FrameRows`) and the windows' rows of
    their streams (`StreamWindows`), and each id's position among the pairs' `entities`."""

    def __init__(self, pairs: tuple[tuple[int, int, _PairPlan], ...], windows: StreamWindows) -> None:
        self.pairs = pairs
        subjects = [id_b if plan.swap else id_a for id_a, id_b, plan in pairs]
        objects = [id_a if plan.swap else id_b for id_a, id_b, plan in pairs]
        self.subjects, self.objects = np.array(subjects, np.int64), np.array(objects, np.int64)
        orientations = [(index, slot, *((id_b, id_a) if swap else (id_a, id_b)))
                        for index, (id_a, id_b, plan) in enumerate(pairs)
                        for slot, (swap, _) in enumerate(plan.static_orders)]
        static = np.array(orientations, np.int64).reshape(-1, 4)
        self.static_pairs, self.static_slots, self.static_subjects, self.static_objects = static.T
        self.static_allowed = np.array([pairs[index][2].allowed for index, *_ in orientations], bool).reshape(
            -1, len(rules.STATIC_RELATIONS))
        self.hand_subject = np.array([plan.rule.hand_subject for *_, plan in pairs], bool)
        self.entities = sorted(set(subjects) | set(objects))
        position = {entity_id: k for k, entity_id in enumerate(self.entities)}
        self.subject_entities, self.object_entities, self.static_subject_entities, self.static_object_entities = (
            np.array([position[entity_id] for entity_id in ids.tolist()], np.intp)
            for ids in (self.subjects, self.objects, self.static_subjects, self.static_objects))
        # order keys: contact, the static orientations, dynamic, then grasp and release (hand pairs), then
        # per static orientation its containment and support events where its rule allows In / Sup
        self.contact_orders = np.arange(len(pairs), dtype=np.int64) * _PAIR_SLOTS
        statics = np.bincount(self.static_pairs, minlength=len(pairs))
        self.static_orders = self.contact_orders[self.static_pairs] + self.static_slots + 1
        self.dynamic_orders = self.contact_orders + statics + 1
        derived_orders = self.dynamic_orders + 1
        allowed_in, allowed_sup = self.static_allowed[:, 0], self.static_allowed[:, 1]
        self.onset_orders = (derived_orders[self.static_pairs] + 2 * self.hand_subject[self.static_pairs]
                             + self.static_slots * (allowed_in.astype(np.int64) + allowed_sup))
        self.streams = {name: windows.rows(zip([name] * len(subjects), subjects.tolist(), objects.tolist()))
                        for name, subjects, objects in (
                            (_CONTACT, self.subjects, self.objects), (_DYNAMIC, self.subjects, self.objects),
                            (_STATIC, self.static_subjects, self.static_objects),
                            (_CONTAINMENT, self.static_subjects[allowed_in], self.static_objects[allowed_in]),
                            (_SUPPORT, self.static_subjects[allowed_sup], self.static_objects[allowed_sup]))}

    def rows(self, table: dict[int, int]) -> np.ndarray:
        """Each of `entities`' row in `table` (id -> row), -1 where it has none."""
        return np.array([table.get(entity_id, -1) for entity_id in self.entities], np.intp)


class _PairTable:
    """This frame's pairs: the `_PairLayout` and each pair's rows in the frame's geometry (-1: not
    observed)."""

    def __init__(self, layout: _PairLayout, geometry_rows: dict[int, int]) -> None:
        self.layout = layout
        rows = layout.rows(geometry_rows)
        self.subject_rows, self.object_rows = rows[layout.subject_entities], rows[layout.object_entities]
        self.observed = (self.subject_rows >= 0) & (self.object_rows >= 0)
        self.static_subject_rows = rows[layout.static_subject_entities]
        self.static_object_rows = rows[layout.static_object_entities]
        self.factors = np.zeros((len(layout.pairs), 4))             # (det, seg, trk, vis), `_bases`
        # `FrameRows` rows of the pairs' contact and dynamic (`_bases`, `_dynamics`) and of the static orientations
        self.contact_rows = self.dynamic_rows = self.static_rows = np.zeros(0, np.intp)


class PredicateExtractor:
    """Stateful extractor of contact / static / dynamic / derived predicates with confidence.

    config: thresholds, window and weights (`PredicateConfig`; defaults when None).
    confidence: g_k, called as confidence(name, factors) -> [0, 1]; default the weighted geometric
        mean of the config's weights (`CalibratedConfidence` for a fitted one).
    order: the frame order of its input (`StreamOrder()` by default; a node passes the one it decides
        with).
    """

    def __init__(self, config: PredicateConfig | None = None,
                 confidence: ConfidenceModel | None = None, order: StreamOrder | None = None) -> None:
        self.order = order if order is not None else StreamOrder()
        self.config = config if config is not None else PredicateConfig()
        self.confidence = confidence or GeometricMeanConfidence(self.config.confidence.weights)
        self._floor = self.config.confidence.floor
        self._motion_codes = motion_codes(self.config.grasp)
        self._dynamic_3d = self.config.dynamic.in_metres()
        self._plans: dict[tuple[str, str], _PairPlan | None] = {}
        self.reset()

    def reset(self) -> None:
        """Forget all history (a new sequence starts)."""
        self._tracks: dict[int, _Track] = {}
        self._windows = StreamWindows(self.config.window)      # raw values per stream (q_tmp, FMT contact share)
        self._known: dict[tuple[str, int, int], tuple[int, int]] = {}
        self._holds: dict[tuple[str, int, int], HoldState] = {}
        self._enclosed_contacts: dict[tuple[str, int, int], EnclosedContact] = {}
        self._boundary_holds: dict[tuple[str, int, int], BoundaryHold] = {}
        self._touching: set[tuple[int, int]] = set()        # (subject, object) of the contacts T last frame
        self._touching_now: set[tuple[int, int]] = set()
        self._carrying: set[tuple[int, int]] = set()        # the contacts of last frame carried since they began
        self._carrying_now: set[tuple[int, int]] = set()
        self._put_down: set[tuple[int, int]] = set()        # the contacts of last frame held since a carry put down
        self._put_down_now: set[tuple[int, int]] = set()
        self._together: dict[tuple[int, int], int] = {}     # evaluated pair (ids ascending) -> last frame together
        self._layout: _PairLayout | None = None
        self.dropped_entities: tuple[int, ...] = ()
        self._first_frame: int | None = None
        self.order.reset()
        self.frames_processed = 0

    @property
    def last_frame(self) -> int | None:
        """The newest frame processed in this sequence."""
        return self.order.last

    # ------------------------------------------------------------------------------------ frame

    def update(self, frame_index: int, entities: Iterable[Entity], image_size: tuple[int, int] | None = None,
               depth_m=None, camera: CameraIntrinsics | None = None, gravity_up=None) -> list[PredicateEstimate]:
        """Predicates of one frame. image_size (width, height) scales pixel thresholds; it defaults
        to the masks' size, and to the reference resolution when no entity has a mask. depth_m: the
        frame's depth image in metres (H x W, registered to the masks; NaN or <= 0 where unknown),
        for contact at the touching boundary (`ContactConfig`); camera: its intrinsics (of the same
        size), for the 3D separation of an object inside a hand's image box. gravity_up: which way is
        up in the camera's optical frame (x right, y down, z forward; e.g. from the robot's tf), for
        the static relations in 3D; None: the support plane fitted in depth, else image up
        (`gravity.Support`)."""
        frame_index = int(frame_index)
        entities = list(entities)
        present = self._check_entities(entities)
        entities, dropped = self._bounded(entities)
        present = {entity.id: entity for entity in entities} if dropped else present
        to_ref = self._reference_scale(entities, image_size)
        if depth_m is not None:
            depth_m = np.asarray(depth_m)
            mask = next((e.mask for e in entities if e.mask is not None), None)
            if depth_m.ndim != 2 or (mask is not None and depth_m.shape != mask.shape):
                raise ValueError(f"depth_m must be an H x W image like the masks "
                                 f"{None if mask is None else mask.shape}, got shape {depth_m.shape}")
        if camera is not None:
            if not all(hasattr(camera, name) for name in ("width", "height", "fx", "fy", "cx", "cy")):
                raise TypeError(f"camera must be predrel_ros.core.frame.CameraIntrinsics, got {type(camera).__name__}")
            if depth_m is not None and depth_m.shape != (camera.height, camera.width):
                raise ValueError(f"camera intrinsics of {camera.width}x{camera.height} do not match depth_m of "
                                 f"{depth_m.shape[1]}x{depth_m.shape[0]}")
        if gravity_up is not None:
            gravity_up = np.asarray(gravity_up, dtype=np.float64)
            if gravity_up.shape != (3,) or not np.all(np.isfinite(gravity_up)) or np.linalg.norm(gravity_up) < 1e-9:
                raise ValueError(f"gravity_up must be a finite, non-zero 3-vector, got {gravity_up.tolist()}")
        self.order.admit(frame_index, self.reset)           # FrameOrderError: nothing changed
        config = self.config
        min_visibility = config.confidence.min_visibility

        if self._first_frame is None:
            self._first_frame = frame_index
        self.order.accept(frame_index)
        self.frames_processed += 1
        self.dropped_entities = dropped
        window_start = frame_index - config.window + 1
        self._window_frames = frame_index - max(window_start, self._first_frame) + 1
        self._window_start = window_start

        geometries: dict[int, EntityGeometry] = {}
        in_3d = depth_m is not None and camera is not None and self._dynamic_3d is not None
        points = FramePoints(depth_m, camera) if depth_m is not None and camera is not None else None
        for entity in entities:
            track = self._tracks.get(entity.id)
            if track is not None and track.role != entity.role:   # the id now names something else
                self._forget({entity.id})
                track = None
            if track is None:
                track = self._tracks[entity.id] = _Track(entity.role)
            track.last_seen = frame_index
            if entity.visibility >= min_visibility:
                geometry = EntityGeometry(entity)
                if not geometry.empty:
                    geometries[entity.id] = geometry
                    track.samples.append((frame_index, geometry.cx * to_ref, geometry.cy * to_ref))
                    position = None if not in_3d else points.position_m(geometry)
                    if position is not None:
                        steady = track.steady.update(position, geometry, depth_m, camera, config.dynamic.containment)
                        track.positions.append((frame_index, *steady))
        self._forget_old(frame_index)
        for track in self._tracks.values():
            track.motion = _window_motion(track.samples, window_start, frame_index)
            track.motion3d = _window_motion(track.positions, window_start, frame_index)

        self._frame = frame_index
        self._to_ref = to_ref
        self._depth_m = depth_m
        self._camera = camera
        self._gravity_up = gravity_up
        self._points = points           # the entities' depth samples, shared by position and extent
        self._enclosed_now: set[tuple[str, int, int]] = set()
        self._boundary_now: set[tuple[str, int, int]] = set()
        self._touching, self._touching_now = self._touching_now, set()
        self._carrying, self._carrying_now = self._carrying_now, set()
        self._put_down, self._put_down_now = self._put_down_now, set()
        self._present = present
        self._geometries = geometries
        hand_evidence: dict[int, list[tuple[rules.Truth, rules.Truth]]] = {
            track_id: [] for track_id, track in sorted(self._tracks.items()) if track.role in HAND_ROLES}
        present_ids = sorted(present)
        for index, id_a in enumerate(present_ids):
            role_a = self._tracks[id_a].role
            for id_b in present_ids[index + 1:]:
                if self._plan(role_a, self._tracks[id_b].role) is not None:
                    self._together[(id_a, id_b)] = frame_index
        pairs = tuple((id_a, id_b, self._plan(self._tracks[id_a].role, self._tracks[id_b].role))
                      for id_a, id_b in sorted(self._together))
        self._frame_geometry = FrameGeometry(geometries.values())
        if self._layout is None or self._layout.pairs != pairs:
            self._layout = _PairLayout(pairs, self._windows)
        table = _PairTable(self._layout, {entity_id: row for row, entity_id in enumerate(geometries)})
        contacts = self._contacts(table)
        rows = FrameRows(self._windows, self.confidence, self._floor, frame_index, window_start)
        self._bases(table, contacts, self._statics(table, contacts), rows)
        rows.push()                         # the contact windows, this frame included, for the dynamic rule
        self._dynamics(table, rows)
        rows.evaluate()                     # the base predicates' reported values, for the derived ones
        held = {(subject, obj) for (_, subject, obj), hold in self._holds.items() if hold.holding}  # last frame
        for pair in self._hand_pairs(table):
            self._derived(pair, rows, hand_evidence, held)
        self._onsets(table, rows)
        for index, (hand_id, evidence) in enumerate(hand_evidence.items()):
            self._active_hand(len(pairs) * _PAIR_SLOTS + index, hand_id, evidence, rows)
        estimates = rows.estimates()
        for states, now in ((self._enclosed_contacts, self._enclosed_now),
                            (self._boundary_holds, self._boundary_now)):
            for key in [key for key in states if key not in now]:
                del states[key]                     # its history spans consecutive frames only
        return estimates

    def _check_entities(self, entities: list[Entity]) -> dict[int, Entity]:
        present: dict[int, Entity] = {}
        shape = None
        for entity in entities:
            if not isinstance(entity, Entity):
                raise TypeError(f"entities must be predrel_ros.core.entities.Entity, got {type(entity).__name__}")
            if entity.id in present:
                raise ValueError(f"two entities with track id {entity.id} in one frame")
            if entity.mask is not None:
                if shape is not None and entity.mask.shape != shape:
                    raise ValueError(f"entity {entity.id}: mask shape {entity.mask.shape} differs from "
                                     f"the frame's other masks {shape}")
                shape = entity.mask.shape
            present[entity.id] = entity
        return present

    def _bounded(self, entities: list[Entity]) -> tuple[list[Entity], tuple[int, ...]]:
        """The frame's entities within `max_entities` (the highest scores, ties: lower id first), and the
        ids of the dropped rest."""
        limit = self.config.max_entities
        if len(entities) <= limit:
            return entities, ()
        ranked = sorted(entities, key=lambda entity: (-entity.score, entity.id))
        return ranked[:limit], tuple(sorted(entity.id for entity in ranked[limit:]))

    def _reference_scale(self, entities: list[Entity], image_size: tuple[int, int] | None) -> float:
        """Factor from this frame's pixels to reference pixels."""
        mask = next((e.mask for e in entities if e.mask is not None), None)
        if image_size is not None:
            width, height = image_size
            if mask is not None and mask.shape != (height, width):
                raise ValueError(f"image_size {tuple(image_size)} (width, height) does not match the masks' "
                                 f"{mask.shape[1]}x{mask.shape[0]}")
        elif mask is None:
            return 1.0
        else:
            height, width = mask.shape
        if width <= 0 or height <= 0:
            raise ValueError(f"image_size must be positive (width, height), got {image_size}")
        return self.config.reference_diagonal / math.hypot(width, height)

    def _forget_old(self, frame_index: int) -> None:
        oldest = frame_index - self.config.track_memory
        expired = {track_id for track_id, track in self._tracks.items() if track.last_seen < oldest}
        if expired:
            self._forget(expired)
        self._forget_pairs({pair for pair, last in self._together.items() if last < oldest})

    def _forget(self, track_ids: set[int]) -> None:
        """Drop tracks and every pair they are part of."""
        self._windows.forget(lambda key: key[0] == _ACTIVE and key[1] in track_ids)
        for track_id in track_ids:
            self._tracks.pop(track_id, None)
        self._forget_pairs({pair for pair in self._together if pair[0] in track_ids or pair[1] in track_ids})

    def _forget_pairs(self, pairs: set[tuple[int, int]]) -> None:
        """Drop pairs (ids ascending) and every stream, remembered value and hold state of theirs."""
        if not pairs:
            return
        for pair in pairs:
            del self._together[pair]
        self._layout = None                     # its streams' rows may be freed
        def gone(key: tuple[str, int, int]) -> bool:
            return (min(key[1], key[2]), max(key[1], key[2])) in pairs
        self._windows.forget(gone)
        for table in (self._known, self._holds, self._enclosed_contacts, self._boundary_holds):
            for key in [key for key in table if gone(key)]:
                del table[key]

    def _plan(self, role_a: str, role_b: str) -> _PairPlan | None:
        """The pair rule for roles (a, b) with a the lower id, or None when the pair is not evaluated."""
        key = (role_a, role_b)
        if key not in self._plans:
            self._plans[key] = None
            for rule in self.config.pair_rules:
                forward = role_a in rule.subject_roles and role_b in rule.object_roles
                backward = role_b in rule.subject_roles and role_a in rule.object_roles
                if forward or backward:
                    orders = [(False, rule.static_relations)] if forward else []
                    if backward:
                        orders.append((True, rule.static_relations))
                    self._plans[key] = _PairPlan(rule, swap=not forward, static_orders=orders)
                    break
        return self._plans[key]

    # ------------------------------------------------------------------------------------ pairs

    def _pair_factors(self, table: _PairTable) -> np.ndarray:
        """(det, seg, trk, vis) of every pair (pairs x 4); an absent entity contributes zeros."""
        layout = table.layout
        factors = np.zeros((len(layout.pairs), 4))
        present = self._present
        if not present or not len(factors):
            return factors
        index = {entity_id: k for k, entity_id in enumerate(present)}
        box_quality = self.config.confidence.box_only_seg_quality
        entity_factors = np.array([(entity.score, entity.mask_quality if entity.mask is not None else box_quality,
                                    entity.track_quality, entity.visibility) for entity in present.values()])
        window = range(self._window_start, self._window_start + self.config.window)
        motions = [self._tracks[entity_id].motion for entity_id in present]    # None: no sample this frame
        seen = np.array([[motion is not None and frame in motion.frames for frame in window] for motion in motions])
        rows = layout.rows(index)
        i, j = rows[layout.subject_entities], rows[layout.object_entities]
        both = np.flatnonzero((i >= 0) & (j >= 0))
        i, j = i[both], j[both]
        continuity = np.count_nonzero(seen[i] & seen[j], axis=1) / self._window_frames
        paired = np.minimum(entity_factors[i], entity_factors[j])
        paired[:, 2] *= continuity
        factors[both] = paired
        return factors

    def _contacts(self, table: _PairTable) -> tuple[np.ndarray, np.ndarray]:
        """(codes, sp) of every pair's contact rule; (UNK, 0) unless both entities are observed. The
        boundary distances of all observed pairs at once; the depth test for the pairs whose masks meet."""
        layout = table.layout
        codes, sps = np.full(len(layout.pairs), UNK), np.zeros(len(layout.pairs))
        observed = np.flatnonzero(table.observed)
        if not observed.size:
            return codes, sps
        contact = self.config.contact
        limit = (contact.distance.value + contact.distance.eta) / self._to_ref
        subject_rows, object_rows = table.subject_rows[observed], table.object_rows[observed]
        distances = self._frame_geometry.boundary_distances(subject_rows, object_rows, limit) * self._to_ref
        codes[observed] = np.where(distances <= contact.distance.value, _T, rules.N)
        sps[observed] = contact.distance.margins(distances)
        geometries = self._frame_geometry.geometries
        for k in np.flatnonzero(distances <= limit * self._to_ref).tolist():
            depth_tests = self._depth_tests(geometries[subject_rows[k]], geometries[object_rows[k]], limit)
            if depth_tests:
                codes[observed[k]], sps[observed[k]] = rules.contact_rule(float(distances[k]), depth_tests, contact)
        for k in np.flatnonzero(codes == _T).tolist():
            self._touching_now.add((int(layout.subjects[k]), int(layout.objects[k])))
        self._carrying_now &= self._touching_now
        self._put_down_now &= self._touching_now
        return codes, sps

    def _statics(self, table: _PairTable, contacts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(codes, sp) of the static rule of every static orientation of the table: the rule of every
        observed ordered pair of the frame at once (`rules.static_rules`), UNK for the others."""
        layout = table.layout
        count = len(layout.static_pairs)
        codes, sps = np.full(count, UNK), np.zeros(count)
        observed = np.flatnonzero(table.observed[layout.static_pairs])
        if not observed.size:
            return codes, sps
        config = self.config.static
        geometry = self._frame_geometry
        band = max(1, round(config.support_band / self._to_ref))
        subjects, objects = table.static_subject_rows[observed], table.static_object_rows[observed]
        allowed = layout.static_allowed[observed]
        pair_rows = layout.static_pairs[observed]
        inside = np.zeros(len(observed))
        judged = np.flatnonzero(allowed[:, 0])                           # In allowed
        inside[judged] = geometry.inside_fractions(subjects[judged], objects[judged])
        touching = contacts[0][pair_rows] == _T
        support = np.zeros(len(observed))
        geometries = geometry.geometries
        for k in np.flatnonzero(allowed[:, 1] & touching).tolist():     # Sup allowed, in contact
            support[k] = support_fraction(geometries[subjects[k]], geometries[objects[k]], band)
        fields = geometry.rows(subjects), geometry.rows(objects)          # one gather per side
        x1, x2, y2, cx, cy, width, height, half_diagonal = (
            (fields[0][k], fields[1][k]) for k in (0, 2, 3, 4, 5, 6, 7, 8))
        overlap_x = np.minimum(x2[0], x2[1]) - np.maximum(x1[0], x1[1]) + (fields[0][10] > 0)
        measurements = rules.StaticMeasurements(
            inside_fraction=inside,
            bottom_within=y2[0] <= y2[1],
            contact=(touching, contacts[1][pair_rows]),
            support_fraction=support,
            vertical_offset=(cy[1] - cy[0]) / np.maximum(0.5 * (height[0] + height[1]), 1e-9),
            horizontal_overlap=np.maximum(overlap_x, 0.0) / np.maximum(np.minimum(width[0], width[1]), 1e-9),
            centroid_distance=np.hypot(cx[0] - cx[1], cy[0] - cy[1])
            / np.maximum(half_diagonal[0] + half_diagonal[1], 1e-9),
        )
        flags = dict(zip(rules.STATIC_RELATIONS, allowed.T))
        decided = rules.static_rules(measurements, flags, config)
        if self._depth_m is not None and self._camera is not None and config.support_gap_m is not None:
            rows = list(zip(layout.static_subjects[observed].tolist(), layout.static_objects[observed].tolist()))
            decided = self._statics_3d(rows, measurements, flags, *decided)
        codes[observed], sps[observed] = decided
        return codes, sps

    def _statics_3d(self, rows: list[tuple[int, int]], image: rules.StaticMeasurements, allowed: dict[str, np.ndarray],
                    codes: np.ndarray, margins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rule along gravity (`rules.static_rules_3d`) in place of the image rule's codes and
        margins for the rows whose two entities both have an extent (`gravity.Support.extents`)."""
        support = Support(self._geometries, self._points, self._gravity_up)
        extents = support.extents(self._geometries, {entity for row in rows for entity in row})
        in_3d = np.array([s in extents and o in extents for s, o in rows])
        if not in_3d.any():
            return codes, margins
        chosen = [row for row, taken in zip(rows, in_3d) if taken]
        corners = [np.array([getattr(extents[row[k]], side) for row in chosen])
                   for k in (0, 1) for side in ("low", "high")]
        measurements = rules.StaticMeasurements3D.of(image.inside_fraction[in_3d], image.bottom_within[in_3d], *corners)
        flags_3d = {name: flags[in_3d] for name, flags in allowed.items()}
        codes_3d, margins_3d = rules.static_rules_3d(measurements, flags_3d, self.config.static)
        codes, margins = codes.copy(), margins.copy()
        codes[in_3d], margins[in_3d] = codes_3d, margins_3d
        return codes, margins

    def _bases(self, table: _PairTable, contacts: tuple[np.ndarray, np.ndarray],
               statics: tuple[np.ndarray, np.ndarray], rows: FrameRows) -> None:
        """Add every pair's contact and static rows from their rules' (codes, sp) (`_contacts`, `_statics`)."""
        layout = table.layout
        factors = table.factors = self._pair_factors(table)
        table.contact_rows = rows.add_many(layout.contact_orders, _CONTACT, layout.subjects, layout.objects,
                                           *contacts, factors, layout.streams[_CONTACT])
        table.static_rows = rows.add_many(layout.static_orders, _STATIC, layout.static_subjects, layout.static_objects,
                                          *statics, factors[layout.static_pairs], layout.streams[_STATIC])

    def _hand_pairs(self, table: _PairTable) -> list[_PairRows]:
        """The rows of the pairs with a hand subject (grasp and release, `_derived`; their order keys
        follow the pair's dynamic row)."""
        layout = table.layout
        return [_PairRows(int(layout.dynamic_orders[index]) + 1, int(layout.subjects[index]),
                          int(layout.objects[index]), tuple(table.factors[index].tolist()),
                          int(table.contact_rows[index]), int(table.dynamic_rows[index]))
                for index in np.flatnonzero(layout.hand_subject).tolist()]

    def _dynamics(self, table: _PairTable, rows: FrameRows) -> None:
        """Add every pair's dynamic row (unordered; the contact windows must hold this frame's values): the
        rule of all observed pairs at once, in 3D (m/s) for those whose tracks both have 3D positions on
        min_frames joint frames of the window, else in the image; UNK for the pairs not observed."""
        layout = table.layout
        observed = np.flatnonzero(table.observed)
        codes, margins = np.full(len(layout.pairs), UNK), np.zeros(len(layout.pairs))
        if observed.size:
            subjects, objects = layout.subjects[observed].tolist(), layout.objects[observed].tolist()
            touching = self._windows.shares(rows.window_rows(table.contact_rows[observed]), _T, self._window_start)
            in_image = np.ones(len(observed), bool)
            if self._dynamic_3d is not None:
                tracks = self._tracks
                in_3d = np.array([tracks[s].motion3d is not None and tracks[o].motion3d is not None
                                  for s, o in zip(subjects, objects)])
                if in_3d.any():
                    chosen = np.flatnonzero(in_3d)
                    measured = self._measure([subjects[k] for k in chosen], [objects[k] for k in chosen], True,
                                             touching[chosen], self.config.dynamic.frame_rate_hz)
                    enough = measured.samples >= self._dynamic_3d.min_frames
                    chosen = chosen[enough]
                    decided = rules.dynamic_rules(measured, self._dynamic_3d)
                    codes[observed[chosen]], margins[observed[chosen]] = decided[0][enough], decided[1][enough]
                    in_image[chosen] = False
            if in_image.any():
                chosen = np.flatnonzero(in_image)
                measured = self._measure([subjects[k] for k in chosen], [objects[k] for k in chosen], False,
                                         touching[chosen], 1.0)
                codes[observed[chosen]], margins[observed[chosen]] = rules.dynamic_rules(measured, self.config.dynamic)
        table.dynamic_rows = rows.add_many(layout.dynamic_orders, _DYNAMIC, layout.subjects, layout.objects, codes,
                                           margins, table.factors, layout.streams[_DYNAMIC])

    def _derived(self, pair: _PairRows, rows: FrameRows, hand_evidence: dict[int, list[rules.Truth]],
                 held: set[tuple[int, int]]) -> None:
        """Add a hand pair's grasp and release rows from its base predicates' reported values (rows
        evaluated), and its evidence for active_hand; held: the (hand, object) pairs holding on the
        previous frame (`_handed_over`)."""
        subject, obj = pair.subject, pair.object
        contact, dynamic = rows.output(pair.contact), rows.output(pair.dynamic)
        key = (_GRASP, subject, obj)
        hold = self._holds.get(key)
        if hold is None:
            hold = self._holds[key] = HoldState()
        grasp, release = hold.update(contact, dynamic, self.config.grasp, self._motion_codes,
                                     self._handed_over(subject, obj, held), self._carried_now(subject, obj))
        rows.add(pair.order, _GRASP, subject, obj, *grasp, pair.factors)
        rows.add(pair.order + 1, _RELEASE, subject, obj, *release, pair.factors)
        hand_evidence[subject].append((contact, dynamic))

    def _carried_now(self, hand: int, obj: int) -> bool | None:
        """Whether `hand` carries `obj` on this frame (`_still_carried`); None where a carry cannot be
        told (`_carry_motions`)."""
        if self._carry_motions(hand, obj) is None:
            return None
        return (hand, obj) in self._carrying_now or (obj, hand) in self._carrying_now

    def _handed_over(self, hand: int, obj: int, held: set[tuple[int, int]]) -> bool:
        """Whether `obj` is being handed over to `hand` (`hold_state`): the other hand held it on the
        previous frame (held: the (hand, object) pairs then holding) and `hand` held nothing else. A
        hand inserting what it holds into a box the other hand holds is not taking the box, and a
        second track with the same hand role, as perception makes, is not the other hand."""
        role = self._tracks[hand].role
        if any(holder == hand and thing != obj for holder, thing in held):
            return False
        return any(thing == obj and self._tracks[holder].role != role for holder, thing in held)

    def _onsets(self, table: _PairTable, rows: FrameRows) -> None:
        """Add the containment and support events of every static orientation whose rule allows In / Sup
        (after the pair's other rows), from its reported static value and the last one known within
        event_memory frames; then remember the known values."""
        layout = table.layout
        if not len(layout.static_pairs):
            return
        codes, margins = rows.outputs(table.static_rows)
        keys = list(zip([_STATIC] * len(codes), layout.static_subjects.tolist(), layout.static_objects.tolist()))
        known, oldest = self._known, self._frame - self.config.event_memory
        previous = np.array([rules.NOTHING_KNOWN if entry is None or entry[0] < oldest else entry[1]
                             for entry in map(known.get, keys)], np.int64)
        allowed_in, allowed_sup = layout.static_allowed[:, 0], layout.static_allowed[:, 1]
        factors = table.factors[layout.static_pairs]
        for name, state, taken, orders in ((_CONTAINMENT, rules.IN, allowed_in, layout.onset_orders),
                                           (_SUPPORT, rules.SUP, allowed_sup, layout.onset_orders + allowed_in)):
            events = rules.onset_rules(previous[taken], codes[taken], margins[taken], state)
            rows.add_many(orders[taken], name, layout.static_subjects[taken], layout.static_objects[taken], *events,
                          factors[taken], layout.streams[name])
        frame = self._frame
        for key, code in zip(keys, codes.tolist()):
            if code != UNK:
                known[key] = (frame, code)

    def _depth_tests(self, geo_i: EntityGeometry, geo_j: EntityGeometry, radius_px: float
                     ) -> list[tuple[float, Threshold]]:
        """The depth tests (value in m, its threshold; contact needs all to pass) of a pair whose masks
        meet, where there is a depth image: for an object inside a hand's image box the 3D separation
        against its hold level (`enclosed_contact`), for a pair without such an enclosure the gap at
        the touching boundary and, where that passes, the proximity there; else from the
        entities' depths; none when depth cannot tell."""
        contact = self.config.contact
        if self._depth_m is not None:
            enclosure = self._enclosure(geo_i, geo_j)
            if enclosure is None and contact.boundary_depth_gap_m is not None:
                hold = self._boundary_hold(geo_i, geo_j)
                threshold = self._boundary_gap_threshold(geo_i, geo_j, hold)
                boundary = boundary_depth_gap_m(geo_i, geo_j, self._depth_m, radius_px,
                                                None if contact.boundary_proximity_m is None else threshold.value)
                if boundary is not None:
                    if hold is None:
                        return [(boundary.gap_m, threshold)] if boundary.proximity_m is None else \
                            [(boundary.gap_m, threshold), (boundary.proximity_m, contact.boundary_proximity_m)]
                    return self._held_tests(geo_i, geo_j, hold, boundary.gap_m, threshold, boundary.proximity_m)
            elif enclosure is not None and enclosure[1].entity.role in HAND_ROLES and self._camera is not None \
                    and contact.hold_separation_rise_m is not None:
                inner, hand = enclosure
                separation = boundary_separation_m(inner, hand, self._depth_m, self._camera,
                                                   contact.separation_band / self._to_ref)
                if separation is not None:
                    key = (_CONTACT, geo_i.entity.id, geo_j.entity.id)
                    state = self._enclosed_contacts.get(key)
                    if state is None:
                        state = self._enclosed_contacts[key] = EnclosedContact(contact.hold_separation_frames)
                    self._enclosed_now.add(key)
                    carried = self._still_carried(hand, inner, (geo_i.entity.id, geo_j.entity.id))
                    # a carry is paused (its creep judged) only well under the moving speed: one that
                    # slows to turn back passes through it
                    share = contact.paused_carry_speed_share if carried else 1.0
                    still = self._standing_still(inner, hand, share=share)
                    return [state.test(separation, inner.area, contact, still, carried,
                                       still and self._resting(inner.entity.id),
                                       not carried and self._moves_alone(inner, hand))]
        if contact.depth_gap is None:
            return []
        entity_i, entity_j = geo_i.entity, geo_j.entity
        if entity_i.role in contact.depth_ignored_roles or entity_j.role in contact.depth_ignored_roles:
            return []
        depth_i, depth_j = entity_i.depth, entity_j.depth
        if depth_i is None or depth_j is None:
            return []
        return [(abs(depth_i - depth_j), contact.depth_gap)]

    def _boundary_hold(self, geo_i: EntityGeometry, geo_j: EntityGeometry) -> BoundaryHold | None:
        """The boundary test's memory of a hand pair (`boundary_hold`), kept while the test runs on
        consecutive frames; None for a pair without a hand."""
        if geo_i.entity.role not in HAND_ROLES and geo_j.entity.role not in HAND_ROLES:
            return None
        key = (_CONTACT, geo_i.entity.id, geo_j.entity.id)
        hold = self._boundary_holds.get(key)
        if hold is None:
            hold = self._boundary_holds[key] = BoundaryHold(self.config.contact.hold_separation_frames)
        self._boundary_now.add(key)
        return hold

    def _held_tests(self, geo_i: EntityGeometry, geo_j: EntityGeometry, hold: BoundaryHold, gap_m: float,
                    gap_threshold: Threshold, proximity_m: float | None) -> list[tuple[float, Threshold]]:
        """The boundary tests of a hand pair, with its creeps (`boundary_hold`) while both stand still:
        the gap of a contact held since a carry put down at most where its current rise began + the
        put-down creep, the proximity of what the hand touched on the previous frame at most where its
        rise began + boundary_proximity_creep_m (None: never); the gap joins the contact's history."""
        contact = self.config.contact
        pair = (geo_i.entity.id, geo_j.entity.id)
        still = self._standing_still(geo_i, geo_j)
        gap_limit = hold.gap_creep.limit(gap_m, still and pair in self._put_down_now, contact.put_down_creep_m,
                                         contact.creep_min_steps)
        if pair not in self._touching:
            hold.gaps.clear()                   # a new contact: its own gaps
        hold.gaps.append(gap_m)
        tests = [(gap_m, gap_threshold.at_most(gap_limit))]
        if proximity_m is not None:
            proximity_limit = hold.proximity_creep.limit(proximity_m, still and pair in self._touching,
                                                         contact.boundary_proximity_creep_m, contact.creep_min_steps)
            tests.append((proximity_m, contact.boundary_proximity_m.at_most(proximity_limit)))
        return tests

    def _standing_still(self, *geometries: EntityGeometry, share: float = 1.0) -> bool:
        """Whether every one of these entities moves slower than `share` of the 3D rule's moving speed
        over the window (False without 3D positions or without that rule)."""
        if self._dynamic_3d is None:
            return False
        bound = share * self._moving_step()
        motions = [self._tracks[geometry.entity.id].motion3d for geometry in geometries]
        return all(motion is not None and motion.speed < bound for motion in motions)

    def _moving_step(self) -> float:
        """The 3D rule's moving speed per frame (m; with that rule only)."""
        return self._dynamic_3d.moving_speed.value / self.config.dynamic.frame_rate_hz

    def _moves_alone(self, obj: EntityGeometry, hand: EntityGeometry) -> bool:
        """Whether `obj` moves faster than the 3D rule's moving speed over the window while `hand`
        stands still: in 3D its window speed and its first and last steps under still_hand_speed_share
        of that speed (a hand turning back has a slow window but fast steps), and in the image slower
        than the image rule's moving speed (the steadied 3D position of a hand whose mask moves by a
        pixel a frame may not move); False where that cannot be told (`enclosed_contact`: an object
        that moves on its own is not held)."""
        share = self.config.contact.still_hand_speed_share
        if share is None or self._dynamic_3d is None:
            return False
        bound = self._moving_step()
        hand_track = self._tracks[hand.entity.id]
        hand_motion, obj_motion = hand_track.motion3d, self._tracks[obj.entity.id].motion3d
        if hand_motion is None or obj_motion is None or hand_track.motion is None:
            return False
        hand_still = max(hand_motion.speed, hand_motion.early, hand_motion.late) < share * bound \
            and hand_track.motion.speed < self.config.dynamic.moving_speed.value
        return hand_still and obj_motion.speed > bound

    def _carry_motions(self, hand: int, obj: int) -> tuple | None:
        """The 3D window motions of both tracks, where a carry can be told (the 3D dynamic rule,
        carried_relative_speed set, both tracks with 3D positions), else None."""
        if self._dynamic_3d is None or self.config.contact.carried_relative_speed is None:
            return None
        motions = self._tracks[hand].motion3d, self._tracks[obj].motion3d
        return None if motions[0] is None or motions[1] is None else motions

    def _carried(self, hand: EntityGeometry, other: EntityGeometry) -> bool:
        """Whether `hand` carries `other`: both move together in 3D (`co_motion`; False where a carry
        cannot be told, `_carry_motions`)."""
        motions = self._carry_motions(hand.entity.id, other.entity.id)
        if motions is None:
            return False
        return moving_together(motions[0].velocity, motions[1].velocity, self._moving_step(),
                               self.config.contact.carried_relative_speed)

    def _boundary_gap_threshold(self, geo_i: EntityGeometry, geo_j: EntityGeometry,
                                hold: BoundaryHold | None) -> Threshold:
        """boundary_depth_gap_m; for a hand and what it touched on the previous frame the larger
        boundary_exit_gap_m (hysteresis); for a hand and what it carries, or carried since their
        contact began while nothing else held the object up on the previous frame (a carry that pauses
        in the air, the grip unchanged: seed 1403 `ep0006_stack` lost 10 frames of a carry and began a
        second hold; `_still_carried`), the larger carried_gap_m; for a contact carried until the
        object was put down (it rests), for as long as it lasts, the gap where the fingers held it
        (`boundary_hold`: its level + hold_separation_rise_m, within the exit and the carried gap)."""
        contact = self.config.contact
        threshold = contact.boundary_depth_gap_m
        hand, other = (geo_i, geo_j) if geo_i.entity.role in HAND_ROLES else (geo_j, geo_i)
        if hand.entity.role not in HAND_ROLES:
            return threshold
        bound = threshold.value
        pair = (geo_i.entity.id, geo_j.entity.id)
        if contact.boundary_exit_gap_m is not None and pair in self._touching:
            bound = max(bound, contact.boundary_exit_gap_m)
        if self._still_carried(hand, other, pair):
            bound = max(bound, contact.carried_gap_m)
        elif (pair in self._carrying or pair in self._put_down) and hold is not None and hold.gaps \
                and contact.hold_separation_rise_m is not None:
            self._put_down_now.add(pair)
            bound = max(bound, min(contact.carried_gap_m, hold.level() + contact.hold_separation_rise_m.value))
        return Threshold(bound, threshold.eta)

    def _still_carried(self, hand: EntityGeometry, other: EntityGeometry, pair: tuple[int, int]) -> bool:
        """Whether `hand` carries `other` (`_carried`), or carried it since their contact began while
        nothing but a hand held it up on the previous frame (a carry that pauses keeps its grip); such a
        pair (subject, object) is remembered for the next frame, kept only if its contact is T
        (`_contacts`)."""
        carried = self._carried(hand, other) or (pair in self._carrying and not self._resting(other.entity.id))
        if carried:
            self._carrying_now.add(pair)
        return carried

    def _resting(self, track_id: int) -> bool:
        """Whether the entity touched something other than a hand on the previous frame (a track
        forgotten since, after a gap in the frames, touches nothing)."""
        for subject, obj in self._touching:
            if track_id in (subject, obj):
                other = self._tracks.get(obj if subject == track_id else subject)
                if other is not None and other.role not in HAND_ROLES:
                    return True
        return False

    def _enclosure(self, geo_i: EntityGeometry, geo_j: EntityGeometry
                   ) -> tuple[EntityGeometry, EntityGeometry] | None:
        """(inner, outer) when one of the pair is a container or a hand and the other lies in its image
        box (the static In test's fraction), else None: the container's walls or the gripping hand
        then hide where the two touch, and the depth where their masks meet is that of the wall or
        hand in front, not of the contact (a held object is mostly hidden behind the hand, 1-4 cm
        behind its pixels)."""
        threshold = self.config.static.inside_fraction.value
        exit_fraction = self.config.contact.hold_exit_fraction
        if exit_fraction is not None:
            state = self._enclosed_contacts.get((_CONTACT, geo_i.entity.id, geo_j.entity.id))
            if state is not None and state.touching:
                threshold = min(threshold, exit_fraction)
        for inner, outer in ((geo_i, geo_j), (geo_j, geo_i)):
            if outer.entity.role in _ENCLOSING_ROLES and inside_fraction(inner, outer) >= threshold:
                return inner, outer
        return None

    def _measure(self, ids_i: list[int], ids_j: list[int], in_3d: bool, touching: np.ndarray, per_frame: float
                 ) -> rules.DynamicMeasurements:
        """Dynamic measurements of pairs (ids_i[k], ids_j[k]) from their tracks' windows, in 3D (positions
        in m) or in the image (reference px); per_frame: frames per unit of time; touching: each pair's
        share of contact T over the window."""
        ids = sorted(set(ids_i) | set(ids_j))
        index = {track_id: k for k, track_id in enumerate(ids)}
        window, start = self.config.window, self._window_start
        dims = 3 if in_3d else 2
        coordinates = np.full((len(ids), window, dims), np.nan)
        seen = np.zeros((len(ids), window), bool)
        tracks = [self._tracks[track_id] for track_id in ids]
        histories = [track.positions if in_3d else track.samples for track in tracks]
        # the window samples of all tracks as one array, each one's track, and its cell (Python ints: frame
        # indices may exceed what a float or an int64 difference holds)
        samples = np.array([sample for history in histories for sample in history], np.float64).reshape(-1, dims + 1)
        owners = np.repeat(np.arange(len(ids)), [len(history) for history in histories])
        cells = [sample[0] - start for history in histories for sample in history]
        coordinates[owners, cells] = samples[:, 1:]
        seen[owners, cells] = True
        motions = [track.motion3d if in_3d else track.motion for track in tracks]
        motion = np.array([(moving.speed, moving.early, moving.late, *moving.velocity) for moving in motions])
        rows_i = np.array([index[track_id] for track_id in ids_i])
        rows_j = np.array([index[track_id] for track_id in ids_j])
        joint = seen[rows_i] & seen[rows_j]
        offsets = coordinates[rows_i] - coordinates[rows_j]
        distances = np.sqrt(np.sum(offsets * offsets, axis=2))
        velocity = motion[rows_i, 3:] - motion[rows_j, 3:]
        m_i, m_j = motion[rows_i] * per_frame, motion[rows_j] * per_frame
        return rules.DynamicMeasurements(
            samples=np.count_nonzero(joint, axis=1),
            speed_i=m_i[:, 0], speed_j=m_j[:, 0], early_speed_i=m_i[:, 1], early_speed_j=m_j[:, 1],
            late_speed_i=m_i[:, 2], late_speed_j=m_j[:, 2],
            relative_speed=np.sqrt(np.sum(velocity * velocity, axis=1)) * per_frame,
            distance_rate=_slopes(np.arange(window, dtype=np.float64), distances, joint) * per_frame,   # from start
            contact_fraction=touching,
        )

    # --------------------------------------------------------------------------------- derived

    def _active_hand(self, order: int, hand_id: int, evidence: list[tuple[rules.Truth, rules.Truth]],
                     rows: FrameRows) -> None:
        entity = self._present.get(hand_id)
        if hand_id not in self._geometries:
            code, sp = UNK, 0.0
        else:
            code, sp = rules.active_hand_rule([c for c, _ in evidence], [d for _, d in evidence])
        motion = self._tracks[hand_id].motion
        if entity is None:
            factors = (0.0, 0.0, 0.0, 0.0)
        else:
            seg = entity.mask_quality if entity.mask is not None else self.config.confidence.box_only_seg_quality
            continuity = len(motion.frames) / self._window_frames if motion is not None else 0.0
            factors = (entity.score, seg, entity.track_quality * continuity, entity.visibility)
        rows.add(order, _ACTIVE, hand_id, NO_OBJECT, code, sp, factors)
