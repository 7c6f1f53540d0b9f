"""`Perceiver`: one frame (+ optional aligned depth and camera intrinsics) -> the paper's entities.

Per frame: letterbox -> inference backend -> YOLO-seg decoding (boxes, classes, scores, masks,
mask quality) [+ MediaPipe hands] [+ model-free surfaces and objects from depth] -> tracking
(persistent ids, track quality) -> roles (role map, hand sides) ->
visibility (visible size against the track's typical size) -> 3D point (median of masked depth).
Confirmed tracks not detected in this frame are reported for `report_lost_frames` frames with their
predicted box, no mask, score 0 and visibility 0, so predicates about them become UNK instead of
vanishing. A detection whose mask the threshold leaves empty (the few visible pixels of an object
mostly hidden in a hand are below the prototypes' resolution) is passed on as a box-only detection
(no mask, visibility from its box area): its box still says where it is, and an empty mask would
make it invisible and every predicate about it UNK while it is held. Frame indices must increase
within a sequence (gaps are fine: dropped frames keep their indices); call `reset()` between
sequences.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from predrel_ros.core.boxes import box_iou, class_aware_nms
from predrel_ros.core.entities import HAND_ROLES, SURFACE, Entity, RoleMap
from predrel_ros.core.errors import UserError
from predrel_ros.core.masks import mask_centroid
from predrel_ros.perception import letterbox
from predrel_ros.perception.backends import create_backend
from predrel_ros.perception.config import DEFAULT_MODEL_DIR, NO_MODEL, PerceptionConfig
from predrel_ros.perception.cpu_threads import hold_native_libraries
from predrel_ros.perception.depth import depth_in_metres, entity_point, intrinsics_matrix
from predrel_ros.perception.depth_objects import DEPTH_LABELS, DepthObjectSegmenter
from predrel_ros.perception.detections import Detections
from predrel_ros.perception.hand_sides import HandSideAssigner
from predrel_ros.perception.hands import HAND_LABELS, HandLandmarker
from predrel_ros.perception.labels import labels_for_model
from predrel_ros.perception.tracker import ByteTracker, TrackedObject
from predrel_ros.perception.visibility import VisibilityEstimator
from predrel_ros.perception.yolo_seg import YoloSegDecoder

log = logging.getLogger(__name__)


def check_model_exists(config: PerceptionConfig) -> None:
    """UserError when the config names a model that is not there (cheap: nothing is loaded)."""
    if config.model == NO_MODEL:
        return
    model = Path(config.model)
    if not model.exists():
        hint = (" (the project's default model is not installed: give your own model)"
                if model.resolve() == DEFAULT_MODEL_DIR.resolve() else "")
        raise UserError(f"model {model} does not exist{hint}")


class Perceiver:
    def __init__(self, config: PerceptionConfig | None = None) -> None:
        self.config = config = config or PerceptionConfig()
        hold_native_libraries(config.backend.threads)  # the process's per-frame work runs here
        self.backend = self.model_file = self.decoder = None
        self.model_labels: list[str] = []
        if config.model != NO_MODEL:
            check_model_exists(config)
            model = Path(config.model)
            self.backend, self.model_file = create_backend(config.backend, model)
            self.model_labels = labels_for_model(self.model_file, config.labels)
            self.decoder = YoloSegDecoder(len(self.model_labels), config.decoder)
        self.labels = list(self.model_labels)  # model classes, then hand and depth classes the model lacks
        self.hands = None
        if config.hand_landmarks.enabled:
            self.hands = HandLandmarker(config.hand_landmarks, config.backend)
            self.labels += [label for label in HAND_LABELS if label not in self.labels]
        self.depth_objects = None
        if config.depth_objects.enabled:
            self.depth_objects = DepthObjectSegmenter(config.depth_objects)
            self.labels += [label for label in DEPTH_LABELS if label not in self.labels]
        mapping = config.role_mapping(self.model_file)
        self.role_map = RoleMap(mapping, config.default_role)
        self._generic_hands = {label for label in config.hands.generic_labels if label not in mapping}
        # the object model's hand classes, left out where the hand landmarks find the hands (`model_hands`)
        self._model_hand_ids = [i for i, label in enumerate(self.model_labels) if self._family(label) == 0]
        self.tracker = ByteTracker(config.tracker, [self._family(label) for label in self.labels])
        self.visibility = VisibilityEstimator(config.visibility)
        self.hand_sides = HandSideAssigner(config.hands)
        self._geometry: dict[tuple[int, int], letterbox.Letterbox] = {}
        if self.backend is not None:
            self.backend.load(self.model_file, None)
            log.info("perception: %s", self.backend.describe().as_dict())

    def _family(self, label: str) -> int:
        """The tracker's class family of a label: hands, surfaces, everything else (objects, tools,
        containers: the classes a detector confuses with one another)."""
        role = self.role_map.role_of(label)
        if label in self._generic_hands or role in HAND_ROLES:
            return 0
        return 1 if role == SURFACE else 2

    # --- detection -----------------------------------------------------------------------------
    def detect(self, image: np.ndarray, bgr: bool = True, depth_m: np.ndarray | None = None,
               K: np.ndarray | None = None) -> Detections:
        """Detections of one H x W x 3 uint8 image (BGR, or RGB with bgr=False) in image pixels; with
        `depth_objects` enabled and `depth_m` (registered, metres, NaN unknown) and K given, also the
        surfaces and objects found in depth (`_with_depth_objects`)."""
        detections = self.image_detections(image, bgr)
        if self.depth_objects is not None and depth_m is not None:
            detections = self._with_depth_objects(detections, depth_m, K, image)
        return detections

    def image_detections(self, image: np.ndarray, bgr: bool = True) -> Detections:
        """What the image alone gives: the model's detections and the hands (the part of `detect` the
        offline evaluator caches per image condition)."""
        image = np.asarray(image)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise UserError(f"perception needs H x W x 3 uint8 colour images, got {image.dtype} {image.shape}")
        detections = self._model_detections(image, bgr)
        if self.hands is not None:
            model_hands = np.isin(detections.class_ids, self._model_hand_ids)
            if model_hands.any() and not self.config.hand_landmarks.model_hands:
                detections = detections.subset(np.flatnonzero(~model_hands))
            hands = self.hands.detect(image[:, :, ::-1] if bgr else image)
            class_ids = {label: self.labels.index(label) for label in HAND_LABELS}
            merged = Detections.concatenate(detections, self.hands.as_detections(hands, class_ids, *image.shape[:2]))
            keep = class_aware_nms(merged.boxes, merged.scores, merged.class_ids, self.config.decoder.iou_threshold)
            detections = merged.subset(np.sort(keep))
        return detections

    def _model_detections(self, image: np.ndarray, bgr: bool) -> Detections:
        if self.backend is None:
            return Detections.empty(*image.shape[:2])
        geometry = self.letterbox_for(image.shape[0], image.shape[1])
        outputs = self.backend.run(letterbox.apply(image, geometry, bgr=bgr))
        try:
            return self.decoder.decode(outputs, geometry, with_masks=self.config.masks)
        except ValueError as error:
            raise UserError(f"{self.model_file}: {error}") from None

    def _with_depth_objects(self, detections: Detections, depth_m: np.ndarray, K: np.ndarray,
                            image: np.ndarray) -> Detections:
        """`detections` plus the depth objects: hand pixels are kept out of them, and a depth object or
        surface whose box overlaps a detection of the model by `decoder.iou_threshold` is left out (the
        model's class is the more specific)."""
        hand_ids = [self.labels.index(label) for label in HAND_LABELS if label in self.labels]
        is_hand = np.isin(detections.class_ids, hand_ids)
        exclude = None
        if detections.masks is not None and is_hand.any():
            exclude = detections.masks[is_hand].any(axis=0)
        found = self.depth_objects.detect(depth_m, K, exclude, image)
        found.class_ids = np.array([self.labels.index(DEPTH_LABELS[i]) for i in found.class_ids], dtype=np.int64)
        modelled = ~is_hand
        if len(found) and modelled.any():
            overlap = box_iou(found.boxes, detections.boxes[modelled]).max(axis=1)
            found = found.subset(np.flatnonzero(overlap < self.config.decoder.iou_threshold))
        if detections.masks is None:
            found.masks = None
        return Detections.concatenate(detections, found)

    def letterbox_for(self, height: int, width: int) -> letterbox.Letterbox:
        geometry = self._geometry.get((height, width))
        if geometry is None:
            input_h, input_w = self._input_size(height, width)
            geometry = letterbox.plan(height, width, input_h, input_w)
            self._geometry[(height, width)] = geometry
            log.info("perception: %dx%d frames -> %dx%d network input (scale %.3f)", width, height,
                     input_w, input_h, geometry.scale)
        return geometry

    def _input_size(self, height: int, width: int) -> tuple[int, int]:
        declared = self.backend.input_shape
        static = len(declared) == 4 and declared[2] is not None and declared[3] is not None
        if static:
            size = (int(declared[2]), int(declared[3]))
            if self.config.input_size is not None and tuple(self.config.input_size) != size:
                raise UserError(f"input_size {list(self.config.input_size)} is set, but {self.model_file} "
                                f"has a fixed input of {list(size)}")
            return size
        if self.config.input_size is not None:
            return tuple(self.config.input_size)
        return letterbox.input_size_for(height, width)

    # --- entities ------------------------------------------------------------------------------
    def process(self, image: np.ndarray, frame_index: int, depth: np.ndarray | None = None,
                camera=None, bgr: bool = True) -> list[Entity]:
        """The entities of one frame. `depth`: aligned depth image (uint16 millimetres or float
        metres); `camera`: its intrinsics (3x3 K, CameraInfo.k, or an object with `.K`)."""
        height, width = image.shape[:2]
        depth_m = K = None
        if depth is None and self.depth_objects is not None:
            raise UserError("depth_objects is enabled: every frame needs its registered depth image")
        if depth is not None:
            if camera is None:
                raise UserError("a depth image needs the camera intrinsics (CameraInfo) to give 3D points")
            depth_m = depth_in_metres(depth, self.config.depth)
            if depth_m.shape != (height, width):
                raise UserError(f"the depth image ({depth_m.shape[1]}x{depth_m.shape[0]}) is not aligned "
                                f"with the colour image ({width}x{height}); use the registered depth topic")
            K = intrinsics_matrix(camera)
        detections = self.detect(image, bgr=bgr, depth_m=depth_m, K=K)
        tracked = self.tracker.update(frame_index, detections)
        alive = [track.id for track in self.tracker.tracks]
        self.visibility.forget_except(alive)
        self.hand_sides.forget_except(alive)
        sides = self.hand_sides.assign(
            [(obj.track_id, obj.box if obj.detection is None else detections.boxes[obj.detection])
             for obj in tracked if self.labels[obj.class_id] in self._generic_hands], width)
        entities = []
        for obj in tracked:
            role = sides.get(obj.track_id) or self.role_map.role_of(self.labels[obj.class_id])
            if obj.detection is None:
                entity = self._lost_entity(obj, role, frame_index, width, height)
            else:
                entity = self._seen_entity(obj, role, detections, frame_index, depth_m, K)
            if entity is not None:
                entities.append(entity)
        return entities

    def _seen_entity(self, obj: TrackedObject, role: str, detections: Detections, frame_index: int,
                     depth_m: np.ndarray | None, K: np.ndarray | None) -> Entity:
        index = obj.detection
        box = detections.boxes[index]
        mask = None if detections.masks is None or not detections.masks[index].any() else detections.masks[index]
        point = None if depth_m is None else entity_point(depth_m, K, box, mask, self.config.depth)
        area = float(np.count_nonzero(mask)) if mask is not None else float((box[2] - box[0]) * (box[3] - box[1]))
        visibility = self.visibility.estimate(obj.track_id, area, None if point is None else point[2])
        centroid = None
        if point is not None:
            xy = None if mask is None else mask_centroid(mask)
            if xy is None:
                xy = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            centroid = np.array([xy[0], xy[1], point[2]])
        return Entity(id=obj.track_id, label=self.labels[obj.class_id], role=role, box=box, mask=mask,
                      score=float(np.clip(detections.scores[index], 0, 1)), visibility=visibility,
                      track_quality=obj.quality.value,
                      mask_quality=float(detections.mask_quality[index]) if detections.masks is not None else 1.0,
                      centroid=centroid, point3d=point, frame_index=frame_index,
                      attributes={"track_state": "tracked", "class_id": obj.class_id,
                                  "track_quality": obj.quality.as_dict()})

    def _lost_entity(self, obj: TrackedObject, role: str, frame_index: int, width: int,
                     height: int) -> Entity | None:
        if obj.frames_since_seen > self.config.report_lost_frames:
            return None
        box = np.clip(obj.box, [0, 0, 0, 0], [width, height, width, height])
        if box[2] <= box[0] or box[3] <= box[1]:
            return None  # predicted out of the image
        return Entity(id=obj.track_id, label=self.labels[obj.class_id], role=role, box=box, mask=None,
                      score=0.0, visibility=0.0, track_quality=obj.quality.value, mask_quality=0.0,
                      frame_index=frame_index,
                      attributes={"track_state": "lost", "class_id": obj.class_id,
                                  "frames_since_seen": obj.frames_since_seen,
                                  "track_quality": obj.quality.as_dict()})

    # --- lifecycle -----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget all tracks (a new video, a new episode, a looped bag)."""
        self.tracker.reset()
        self.visibility.reset()
        self.hand_sides.reset()
        if self.hands is not None:
            self.hands.reset()
        if self.depth_objects is not None:
            self.depth_objects.reset()

    def describe(self) -> dict:
        backend = {"backend": NO_MODEL} if self.backend is None else self.backend.describe().as_dict()
        return {**backend, "labels": list(self.labels),
                "roles": {label: self.role_map.role_of(label) for label in self.labels}}

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
        if self.hands is not None:
            self.hands.close()

    def __enter__(self) -> "Perceiver":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

