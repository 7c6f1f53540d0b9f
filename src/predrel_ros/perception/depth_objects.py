"""Model-free objects from an RGB-D camera: the support plane, the object instances on it, their roles.

Per frame, from the registered depth (metres, NaN = unknown) and the intrinsics K:
  1. support plane: RANSAC (vectorised hypotheses on a random sample of valid pixels), refined by
     least squares on its inliers; the inlier tolerance grows with depth squared, like the noise of
     structured-light and stereo sensors. Up to `max_planes` planes are taken, each holding at least
     `min_plane_share` of the valid pixels; the largest is the support, every one is a surface.
  2. object pixels: valid pixels above the support (camera side) by more than the tolerance and less
     than `max_height_m`, on no plane, outside the given hand masks; speckle is opened away.
  3. instances: connected components of the object pixels, bridged over one-pixel depth holes, after
     cutting them along depth discontinuities (the farther side of a relative jump over `edge_jump`),
     so touching objects at different depths separate; the cut pixels rejoin their neighbouring
     component; each mask is closed over small holes and filled inside its outline (a container's
     inside, at table height, belongs to it). With the hands' masks known, the parts of an object seen
     either side of a finger in front of it (the strips of a held object) are joined into one
     instance when they meet across the hand within a finger's width at agreeing depths; its mask
     stays its visible pixels, with the depth holes along the finger's edge. An instance partly hidden
     by a hand nearer than it needs only `min_hidden_pixels`. A given hand mask (a landmark detector's:
     late, smooth, a few pixels too wide, narrow or shifted) is first refined by depth
     (`refine_hand_mask`): its pixels behind the hand leave it, the hand's uncovered edges join it; with
     the colour image, then by colour (perception/hand_colour.py): what it covers of another colour (a
     held object between the fingers) leaves it, the hand's colour beside it joins it.
  4. stacks: a cluster that is no container is cut at each shelf, a height (over the support) held by
     `shelf_peak` times more of its pixels than its median height window: the flat top of a lower object
     carrying an upper one. The faces in between rise continuously, so no depth jump separates
     them; a single object's only shelf is its own top, with nothing above it to cut. With no shelf
     (the upper object covers the lower one's top), the colour image can cut it where its colour
     changes with height.
  5. roles from geometry: an open concave cluster, whose highest points (its rim) form a ring around
     lower ones, is a container; the rest are objects; the planes are surfaces.
Scores are 1 - exp(-pixels / min_pixels): a cluster at the minimum size scores 0.63. Mask quality is
the share of the mask with valid depth (holes filled by the closing lower it).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from predrel_ros.core.planes import fit_plane
from predrel_ros.perception.depth import depth_edges
from predrel_ros.perception.detections import Detections
from predrel_ros.perception.hand_colour import refine_hand_mask_by_colour
from predrel_ros.perception.mask_parts import SQUARE, mask_box, parts_of_at_least

SURFACE_LABEL, CONTAINER_LABEL, OBJECT_LABEL = "surface", "container", "object"
DEPTH_LABELS = (SURFACE_LABEL, CONTAINER_LABEL, OBJECT_LABEL)
#: the frame size `min_pixels` is given for; other sizes scale it by their area
REFERENCE_PIXELS = 320 * 240
#: an object cut from a stack fills at least this share of its box (a band of a box's walls does not)
COMPACT = 0.5
_CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))
#: the steepest a hand's surface is taken to recede from the camera, in depth per pixel of image (63 degrees)
HAND_SLOPE = 2.0


@dataclass(frozen=True)
class DepthObjectConfig:
    enabled: bool = False
    ransac_iterations: int = 128  # plane hypotheses per plane
    ransac_points: int = 1500  # valid pixels each hypothesis is scored on
    plane_tolerance_m: float = 0.006  # inlier distance at 1 m depth; scales with depth squared (min at 0.5 m)
    min_plane_share: float = 0.15  # a plane holds at least this share of the valid pixels
    max_planes: int = 2
    max_height_m: float = 0.6  # object pixels lie at most this far above the support
    edge_jump: float = 0.04  # relative depth jump between neighbours that separates two clusters
    min_pixels: int = 40  # smallest instance at 320x240 (scaled by area for other sizes)
    container_rim: float = 0.75  # a cluster's rim: its points at least this share of its height
    container_hollow: float = 0.2  # share of the rim's filled outline lying below it: a container
    shelf_peak: float = 2.5  # a height window with this many times a cluster's median window count is a shelf
    colour_contrast: float = 32.0  # Fisher contrast of chromaticity below / above a height that cuts a stack
    hidden_gap_m: float = 0.03  # an object's parts either side of a hand this wide (a finger) are joined
    min_hidden_pixels: int = 20  # smallest instance partly hidden behind a hand at 320x240 (at most min_pixels)
    hand_reach_px: int = 5  # a given hand mask is refined by depth this far (at 320x240; 0: taken as it is)
    hand_depth_m: float = 0.01  # pixels beside a hand mask within this of its depth there join it (at least
    # twice the depth noise there)
    hand_behind_m: float = 0.05  # a hand mask's pixels this far behind the hand's nearest depth nearby leave it
    hand_colour_tolerance: float = 0.06  # then, with a colour image: pixels within this L1 chromaticity distance
    # of the hand's colour are the hand's (perception/hand_colour.py; 0: depth alone)
    hand_colour_spread: float = 3.0  # ... or within this many times the hand's own colour variation
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("ransac_iterations", "ransac_points", "max_planes", "min_pixels", "min_hidden_pixels"):
            if getattr(self, name) < 1:
                raise ValueError(f"depth_objects.{name} must be at least 1, got {getattr(self, name)}")
        if self.hand_reach_px < 0:
            raise ValueError(f"depth_objects.hand_reach_px must be at least 0, got {self.hand_reach_px}")
        if self.shelf_peak <= 1:
            raise ValueError(f"depth_objects.shelf_peak must exceed 1, got {self.shelf_peak}")
        if self.colour_contrast <= 0:
            raise ValueError(f"depth_objects.colour_contrast must be positive, got {self.colour_contrast}")
        for name in ("hand_colour_tolerance", "hand_colour_spread"):
            if getattr(self, name) < 0:
                raise ValueError(f"depth_objects.{name} must be at least 0, got {getattr(self, name)}")
        for name in ("plane_tolerance_m", "max_height_m", "edge_jump", "hidden_gap_m", "hand_depth_m",
                     "hand_behind_m"):
            if getattr(self, name) <= 0:
                raise ValueError(f"depth_objects.{name} must be positive, got {getattr(self, name)}")
        for name in ("min_plane_share", "container_rim", "container_hollow"):
            if not 0 < getattr(self, name) < 1:
                raise ValueError(f"depth_objects.{name} must lie in (0, 1), got {getattr(self, name)}")


@dataclass(frozen=True)
class Plane:
    """Unit normal n (towards the camera) and offset d: height of a point p is n . p + d."""

    normal: np.ndarray
    offset: float
    mask: np.ndarray  # (H, W) bool inliers


class DepthObjectSegmenter:
    """Surfaces, containers and objects of one depth frame as `Detections` (class ids index DEPTH_LABELS)."""

    def __init__(self, config: DepthObjectConfig | None = None) -> None:
        self.config = config or DepthObjectConfig()
        self._rng = np.random.default_rng(self.config.seed)
        self._rays: dict[tuple, np.ndarray] = {}

    def reset(self) -> None:
        self._rng = np.random.default_rng(self.config.seed)

    def detect(self, depth_m: np.ndarray, K: np.ndarray, exclude: np.ndarray | None = None,
               image: np.ndarray | None = None) -> Detections:
        """`depth_m`: (H, W) float metres, NaN unknown; `exclude`: (H, W) bool pixels that belong to
        something else (hands); `image`: the registered (H, W, 3) colour image in any channel order, for
        cutting stacks by colour (without it, stacks are cut at shelves only)."""
        config = self.config
        height, width = depth_m.shape
        rays = self._rays_for(K, height, width)
        valid = np.isfinite(depth_m)
        points = rays * np.where(valid, depth_m, 0)[..., None]  # (H, W, 3) camera frame
        tolerance = config.plane_tolerance_m * np.maximum(np.where(valid, depth_m, 0), 0.5) ** 2
        planes = self._planes(points, valid, tolerance)
        if not planes:
            return Detections.empty(height, width)
        support = planes[0]
        heights = np.where(valid, _heights(points, support.normal, support.offset), np.nan)
        with np.errstate(invalid="ignore"):
            above = valid & (heights > tolerance) & (heights < config.max_height_m)
        for plane in planes:
            above &= ~plane.mask
        scale = height * width / REFERENCE_PIXELS
        if exclude is not None and config.hand_reach_px:
            reach = max(1, int(round(config.hand_reach_px * np.sqrt(scale))))
            # the table is no hand, nor what a hand would grow over: only what stands on it takes part
            hand_noise = float(np.median(tolerance[exclude])) if exclude.any() else 0.0
            standing = np.where(above, depth_m, np.nan)
            given = exclude
            exclude = refine_hand_mask(given, standing, reach, max(config.hand_depth_m, 2 * hand_noise),
                                       config.hand_behind_m, float(K[0, 0]))
            if image is not None and config.hand_colour_tolerance > 0:
                exclude = refine_hand_mask_by_colour(exclude, given, image, standing, reach,
                                                     config.hand_colour_tolerance, config.hand_colour_spread,
                                                     self._min_pixels(scale)[1])
        if exclude is None:
            above = cv2.morphologyEx(above.astype(np.uint8), cv2.MORPH_OPEN, _CROSS).astype(bool)
        else:  # a strip seen between two fingers is thin because the hand hides the rest: no speckle
            above &= ~exclude
            above &= cv2.morphologyEx((above | exclude).astype(np.uint8), cv2.MORPH_OPEN, _CROSS).astype(bool)
        min_pixels, min_hidden = self._min_pixels(scale)
        masks, labels = [], []
        for plane in planes:
            masks.append(plane.mask)
            labels.append(DEPTH_LABELS.index(SURFACE_LABEL))
        clusters = self._clusters(depth_m, above, (min_pixels, min_hidden), exclude, K, tolerance)
        claims = None
        for cluster in clusters:
            rim = self._rim(cluster, heights, exclude)
            if rim is not None and _is_hollow(*rim[1:], self.config.container_hollow):
                # the filled inside of a container is its own, not what another cluster standing in it holds
                if claims is None:
                    claims = np.sum(clusters, axis=0, dtype=np.uint8)
                cluster = cluster & (claims == 1)
                contents = self._contents(cluster, heights, tolerance, *rim, min_pixels)
                masks.append(cluster & ~np.any(contents, axis=0) if contents else cluster)
                labels.append(DEPTH_LABELS.index(CONTAINER_LABEL))
                masks.extend(contents)
                labels.extend([DEPTH_LABELS.index(OBJECT_LABEL)] * len(contents))
                continue
            for part in self._split_stack(cluster, heights, tolerance, min_pixels, image, exclude):
                masks.append(part)
                labels.append(DEPTH_LABELS.index(OBJECT_LABEL))
        masks = np.stack(masks)
        areas = masks.reshape(len(masks), -1).sum(axis=1)
        boxes = np.array([mask_box(mask) for mask in masks], dtype=np.float64)
        scores = 1.0 - np.exp(-areas / min_pixels)
        quality = (masks & valid).reshape(len(masks), -1).sum(axis=1) / np.maximum(areas, 1)
        return Detections(boxes, scores, np.array(labels), masks, quality)

    def _min_pixels(self, scale: float) -> tuple[int, int]:
        """The smallest instance seen whole and partly hidden behind a hand, at `scale` times the
        reference frame's area."""
        config = self.config
        return (max(4, int(round(config.min_pixels * scale))),
                max(4, int(round(min(config.min_hidden_pixels, config.min_pixels) * scale))))

    # --- planes --------------------------------------------------------------------------------
    def _planes(self, points: np.ndarray, valid: np.ndarray, tolerance: np.ndarray) -> list[Plane]:
        config = self.config
        remaining = valid.copy()
        total = int(valid.sum())
        planes: list[Plane] = []
        while len(planes) < config.max_planes and total:
            flat = np.flatnonzero(remaining)
            if flat.size < max(3, config.min_plane_share * total):
                break
            sample = flat[self._rng.integers(0, flat.size, size=min(config.ransac_points, flat.size))]
            plane = self._ransac(points.reshape(-1, 3)[sample], tolerance.reshape(-1)[sample])
            if plane is None:
                break
            normal, offset = plane
            mask = remaining & (np.abs(_heights(points, normal, offset)) <= tolerance)
            if mask.sum() < config.min_plane_share * total:
                break
            # its connected parts of at least that share (far-off pixels that merely share its equation, such
            # as an object's flat top at table height elsewhere, are dropped), or its largest part
            planes.append(Plane(normal, offset, parts_of_at_least(mask, config.min_plane_share * total,
                                                                  largest_if_none=True)))
            remaining &= ~planes[-1].mask
        return planes

    def _ransac(self, pts: np.ndarray, tol: np.ndarray) -> tuple[np.ndarray, float] | None:
        """The best of `ransac_iterations` planes through 3 of the sample points `pts`, refined."""
        triples = pts[self._rng.integers(0, len(pts), size=(self.config.ransac_iterations, 3))]
        normals = np.cross(triples[:, 1] - triples[:, 0], triples[:, 2] - triples[:, 0])
        lengths = np.linalg.norm(normals, axis=1)
        good = lengths > 1e-9
        if not good.any():
            return None
        normals = (normals[good] / lengths[good, None]).astype(np.float32)
        offsets = -np.einsum("ij,ij->i", normals, triples[good, 0])
        # (points, hypotheses) heights as one matrix product: 25 times faster here than `_heights`'
        # broadcast over both axes, whose temporaries are this size
        distances = pts @ normals.T
        distances += offsets.astype(np.float32)
        inliers = np.abs(distances, out=distances) <= tol[:, None]
        best = inliers[:, int(np.argmax(np.count_nonzero(inliers, axis=0)))]
        if best.sum() < 3:
            return None
        return fit_plane(pts[best])

    # --- instances -----------------------------------------------------------------------------
    def _clusters(self, depth_m: np.ndarray, above: np.ndarray, min_pixels: tuple[int, int],
                  hidden: np.ndarray | None, K: np.ndarray, tolerance: np.ndarray) -> list[np.ndarray]:
        """Instance masks of the object pixels `above` of at least `min_pixels` (seen whole, partly
        hidden); `hidden`: pixels of something in front (hands) that may hide parts of an object, whose
        visible parts on either side are joined into one; a part it hides is smaller than it is."""
        bridged = cv2.morphologyEx(above.astype(np.uint8), cv2.MORPH_CLOSE, _CROSS).astype(bool)  # over holes
        # a hole takes its farthest neighbour's depth, so a hole on the border of two objects cuts them;
        # hidden pixels are holes too: an object's edge along a finger in front of it is no cut
        seen = depth_m if hidden is None else np.where(hidden, np.nan, depth_m)
        farthest = cv2.dilate(np.nan_to_num(seen, nan=0.0), SQUARE)
        patched = np.where(np.isfinite(seen), seen, np.where(farthest > 0, farthest, np.nan))
        core = bridged & ~depth_edges(patched, self.config.edge_jump, far_side_only=True)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(core.astype(np.uint8), connectivity=4)
        labels = labels.astype(np.uint16)
        grown = cv2.dilate(labels, SQUARE)
        labels = np.where(above & (labels == 0), grown, labels)
        roots, minimum = np.arange(count), np.full(count, min_pixels[0])
        area = stats[:, cv2.CC_STAT_AREA].astype(np.float64)
        if hidden is not None and count > 1:
            labels, roots, partly_hidden = self._join_behind(labels, depth_m, hidden, K, tolerance)
            minimum[partly_hidden] = min_pixels[1]
            # a partly hidden one counts its holes along the hand too: a sliver beside a finger is mostly edge
            area = np.where(partly_hidden, np.bincount(labels.reshape(-1), minlength=count), area)
        # each instance: its parts' core area and box (grown by a pixel, and by two more holes when joined)
        area = np.bincount(roots, weights=area, minlength=count)
        x, y = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
        box_x0, box_y0 = np.full(count, 1 << 30), np.full(count, 1 << 30)
        box_x1, box_y1 = np.zeros(count, int), np.zeros(count, int)
        np.minimum.at(box_x0, roots, x)
        np.minimum.at(box_y0, roots, y)
        np.maximum.at(box_x1, roots, x + stats[:, cv2.CC_STAT_WIDTH])
        np.maximum.at(box_y1, roots, y + stats[:, cv2.CC_STAT_HEIGHT])
        margin = 3 if hidden is None else 5
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
        height, width = above.shape
        clusters = []
        for label in 1 + np.flatnonzero((area[1:] >= minimum[1:] * 0.8) & (roots[1:] == np.arange(1, count))):
            x0, y0 = max(box_x0[label] - margin, 0), max(box_y0[label] - margin, 0)
            x1, y1 = min(box_x1[label] + margin + 1, width), min(box_y1[label] + margin + 1, height)
            crop = (labels[y0:y1, x0:x1] == label).astype(np.uint8)
            if int(crop.sum()) < minimum[label]:
                continue
            crop = cv2.morphologyEx(crop, cv2.MORPH_CLOSE, kernel)
            contours, _ = cv2.findContours(crop, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            cv2.drawContours(crop, contours, -1, 1, thickness=cv2.FILLED)  # the inside of a container too
            mask = np.zeros_like(above)
            mask[y0:y1, x0:x1] = crop.astype(bool)
            if hidden is not None:
                mask &= ~hidden  # the visible pixels only: the closing must not cover the fingers
            clusters.append(mask)
        return clusters

    def _join_behind(self, labels: np.ndarray, depth_m: np.ndarray, hidden: np.ndarray,
                     K: np.ndarray, tolerance: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Components joined across the `hidden` pixels (and the depth holes along them) when they meet
        within `hidden_gap_m` (a finger's width at the hidden pixels' depth), at depths agreeing within
        `edge_jump` either side of the meeting, both behind what hides them: the strips of a held object
        between the fingers. The holes reached from a component within two pixels join it (the band lost
        at a finger's edge). Returns the labels with the holes added, each label's root label and
        whether it is partly hidden (what hides it borders it nearer than twice the depth `tolerance`)."""
        count = int(labels.max()) + 1
        roots, partly_hidden = np.arange(count), np.zeros(count, bool)
        valid = np.isfinite(depth_m)
        hidden_depths = depth_m[hidden & valid]
        depth_ref = float(np.median(hidden_depths)) if hidden_depths.size else float(np.nanmedian(depth_m))
        steps = max(int(np.ceil(K[0, 0] * self.config.hidden_gap_m / max(depth_ref, 1e-3) / 2)), 2)
        near_hidden = cv2.dilate(hidden.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
        carrier = (hidden | (~valid & near_hidden)) & (labels == 0)
        # the work is done where a component's front can reach within `steps`
        zone = carrier & cv2.dilate((labels > 0).astype(np.uint8), np.ones((2 * steps + 1,) * 2, np.uint8)).astype(bool)
        if not zone.any():
            return labels, roots, partly_hidden
        left, top, right, bottom = mask_box(zone).astype(int)
        y0, x0 = max(top - steps - 1, 0), max(left - steps - 1, 0)
        y1, x1 = bottom + steps + 1, right + steps + 1
        crop_labels, crop_depth = labels[y0:y1, x0:x1], depth_m[y0:y1, x0:x1]
        crop_carrier, crop_hidden = carrier[y0:y1, x0:x1], hidden[y0:y1, x0:x1]
        reached, filled = crop_labels.copy(), crop_labels
        for step in range(steps):  # each component's front into the hidden pixels, a pixel a step
            reached = np.where(crop_carrier & (reached == 0), cv2.dilate(reached, _CROSS), reached)
            if step == 0:
                partly_hidden = self._partly_hidden(crop_labels, reached, crop_depth, crop_hidden,
                                                    tolerance[y0:y1, x0:x1], count)
            if step == 1:
                filled = np.where(crop_carrier & ~crop_hidden & ~valid[y0:y1, x0:x1], reached, crop_labels)
        # where two fronts met, or a front met another component (a third label at one pixel is missed)
        higher = cv2.dilate(reached, _CROSS)
        lower = cv2.erode(np.where(reached > 0, reached, np.uint16(65535)).astype(np.uint16), _CROSS)
        meetings = []
        for first, second in ((lower, reached), (reached, higher)):
            clash = crop_carrier & (reached > 0) & (first < second)
            meetings.append(np.stack([first[clash], second[clash], *np.nonzero(clash)], axis=1))
        pairs = np.concatenate(meetings).astype(np.int64)
        reach = np.ones((2 * steps + 3,) * 2, np.uint8)
        keys = pairs[:, 0] * count + pairs[:, 1]
        finite = np.isfinite(crop_depth)
        for key in np.unique(keys):
            a, b = divmod(int(key), count)
            ra, rb = _root(roots, a), _root(roots, b)
            if ra == rb:
                continue
            at = pairs[keys == key, 2:]
            r0, c0 = np.maximum(at.min(axis=0) - steps - 1, 0)
            r1, c1 = np.minimum(at.max(axis=0) + steps + 2, crop_labels.shape)
            near = np.zeros((r1 - r0, c1 - c0), np.uint8)
            near[at[:, 0] - r0, at[:, 1] - c0] = 1
            near = cv2.dilate(near, reach).astype(bool) & finite[r0:r1, c0:c1]  # either side of the meeting
            window, owner = crop_depth[r0:r1, c0:c1], crop_labels[r0:r1, c0:c1]
            da, db = _mean_or_nan(window[near & (owner == a)]), _mean_or_nan(window[near & (owner == b)])
            if not abs(da - db) <= self.config.edge_jump * min(da, db):
                continue  # far apart in depth (or a side without depth): two objects
            if _mean_or_nan(window[near & crop_hidden[r0:r1, c0:c1]]) >= min(da, db):
                continue  # what lies between is not in front of them: two objects side by side
            roots[max(ra, rb)] = min(ra, rb)
        roots = np.array([_root(roots, label) for label in range(count)])
        labels = labels.copy()
        labels[y0:y1, x0:x1] = filled
        np.logical_or.at(partly_hidden, roots, partly_hidden.copy())
        if np.any(roots != np.arange(count)):
            labels = roots[labels].astype(np.uint16)
        return labels, roots, partly_hidden

    @staticmethod
    def _partly_hidden(labels: np.ndarray, reached: np.ndarray, depth_m: np.ndarray, hidden: np.ndarray,
                       tolerance: np.ndarray, count: int) -> np.ndarray:
        """Per label: whether the hidden pixels it reaches first lie nearer than its own pixels beside
        them by twice the noise `tolerance` (a hand in front of it), not at its depth (the rest of the
        hand a hand mask missed)."""
        front = hidden & (labels == 0) & (reached > 0) & np.isfinite(depth_m)
        rim = (labels > 0) & np.isfinite(depth_m) & cv2.dilate(front.astype(np.uint8), _CROSS).astype(bool)

        def mean(where: np.ndarray, owner: np.ndarray, values: np.ndarray) -> np.ndarray:
            return (np.bincount(owner[where], weights=values[where], minlength=count)
                    / np.maximum(np.bincount(owner[where], minlength=count), 1))

        front_depth, rim_depth = mean(front, reached, depth_m), mean(rim, labels, depth_m)
        margin = 2 * mean(rim, labels, tolerance)
        return (front_depth > 0) & (rim_depth > 0) & (front_depth < rim_depth - margin)

    def _split_stack(self, mask: np.ndarray, heights: np.ndarray, tolerance: np.ndarray, min_pixels: int,
                     image: np.ndarray | None, hidden: np.ndarray | None = None) -> list[np.ndarray]:
        """The cluster cut into height bands at its shelves, else (with the colour image) at the one
        height where its colour changes, or the cluster itself when no cut leaves `min_pixels` on both
        sides with the upper side over the lower one, or when a band is no compact blob. Pixels without
        depth go to the band of their nearest neighbour. `hidden` pixels (hands in front) may be a band's
        own, hidden, and the colour of the pixels beside them is mixed with theirs: it does not count."""
        x1, y1, x2, y2 = mask_box(mask).astype(int)
        crop, crop_heights = mask[y1:y2, x1:x2], heights[y1:y2, x1:x2]
        known = crop & np.isfinite(crop_heights)
        values = crop_heights[known]
        if values.size < 2 * min_pixels:
            return [mask]
        columns = np.nonzero(known)[1]
        noise = 2.0 * float(np.median(tolerance[y1:y2, x1:x2][known]))
        cuts = self._shelf_cuts(values, columns, noise, min_pixels)
        crop_hidden = np.zeros_like(crop) if hidden is None else hidden[y1:y2, x1:x2]
        if not cuts and image is not None:
            clear = ~cv2.dilate(crop_hidden.astype(np.uint8), SQUARE).astype(bool)[known]
            cuts = self._colour_cut(values[clear], columns[clear], image[y1:y2, x1:x2][known][clear], min_pixels)
        if not cuts:
            return [mask]
        bands = np.zeros(crop.shape, np.uint8)
        bands[known] = 1 + np.searchsorted(np.array(cuts), crop_heights[known])
        for band in range(1, len(cuts) + 2):  # a stray piece of a band (noise across a cut) is the band around it
            _, pieces, stats, _ = cv2.connectedComponentsWithStats((bands == band).astype(np.uint8))
            stray = stats[:, cv2.CC_STAT_AREA] < min_pixels
            stray[0] = False
            bands[stray[pieces]] = 0
        for _ in range(8):  # pixels without depth (the filled outline, holes) take a neighbour's band
            missing = crop & (bands == 0)
            if not missing.any():
                break
            bands = np.where(missing, cv2.dilate(bands, _CROSS), bands)
        bands[~crop] = 0
        parts = []
        for band in range(1, len(cuts) + 2):
            part = np.zeros_like(mask)
            part[y1:y2, x1:x2] = bands == band
            area = int(part.sum())
            if area < min_pixels:
                continue
            bx1, by1, bx2, by2 = mask_box(part).astype(int) - [x1, y1, x1, y1]
            area += int(np.count_nonzero(crop_hidden[by1:by2, bx1:bx2]))
            if area < COMPACT * (bx2 - bx1) * (by2 - by1):  # a stripe: the walls of a box, an arm, no object
                return [mask]
            parts.append(part)
        return parts or [mask]

    def _shelf_cuts(self, values: np.ndarray, columns: np.ndarray, noise: float, min_pixels: int) -> list[float]:
        """Heights just above each shelf: a height window (`noise` wide, every half `noise`, so a shelf
        on the edge between two windows is not split between them) holding `shelf_peak` times the median
        window, the fullest of its neighbours, `min_pixels` below and above it, with what lies above
        staying over it."""
        halves, edges = np.histogram(values, bins=max(2, int(np.ceil(2 * (values.max() - values.min()) / noise))))
        counts = halves[:-1] + halves[1:]
        occupied = counts[counts > 0]
        peak = max(self.config.shelf_peak * np.median(occupied), min_pixels / 4)
        padded = np.concatenate([[0], counts, [0]])
        tops = (counts >= peak) & (counts >= padded[:-2]) & (counts > padded[2:])
        cuts, last = [], -np.inf
        for index in np.flatnonzero(tops):
            cut = (edges[index] + edges[index + 2]) / 2 + noise  # the shelf's own pixels lie within noise / 2
            upper, lower = values > cut, (values > last) & (values <= cut)
            if (edges[index] - values.min() >= 2 * noise and np.count_nonzero(upper) >= min_pixels
                    and np.count_nonzero(lower) >= min_pixels and _rests_on(columns[upper], columns[lower])):
                cuts.append(cut)
                last = cut
        return cuts

    def _colour_cut(self, values: np.ndarray, columns: np.ndarray, colours: np.ndarray,
                    min_pixels: int) -> list[float]:
        """The height splitting the cluster's pixels into a lower and an upper part of the most different
        chromaticity (colour without brightness, so shading does not count), when the parts differ by
        `colour_contrast` times their spread (Fisher's criterion): an object standing on another of
        another colour that covers its top, a hand above what it holds. One cut at most."""
        order = np.argsort(values, kind="stable")
        colours = colours[order].astype(np.float64)
        chroma = colours / np.maximum(colours.sum(axis=1, keepdims=True), 1.0)
        n = len(chroma)
        sums, squares = np.cumsum(chroma, axis=0), np.cumsum(chroma**2, axis=0)
        k = np.arange(min_pixels, n - min_pixels + 1)
        if k.size == 0:
            return []
        low_mean = sums[k - 1] / k[:, None]
        high_mean = (sums[-1] - sums[k - 1]) / (n - k)[:, None]
        low_var = (squares[k - 1] / k[:, None] - low_mean**2).sum(axis=1)
        high_var = ((squares[-1] - squares[k - 1]) / (n - k)[:, None] - high_mean**2).sum(axis=1)
        contrast = ((low_mean - high_mean) ** 2).sum(axis=1) / np.maximum(low_var + high_var, 1e-6)
        best = int(np.argmax(contrast))
        split = int(k[best])
        if contrast[best] < self.config.colour_contrast or not _rests_on(columns[order[split:]],
                                                                          columns[order[:split]]):
            return []
        return [float(values[order[split - 1]])]

    def _rim(self, mask: np.ndarray, heights: np.ndarray,
             hidden: np.ndarray | None = None) -> tuple[tuple[slice, slice], np.ndarray, np.ndarray] | None:
        """The cluster's box (a slice of the frame), its rim there (its points at `container_rim` of its
        height, closed over depth holes) and the rim's filled outline (uint8 each; neither holds a `hidden`
        pixel); None with too few heights. The outline is drawn with the `hidden` pixels (hands in front)
        as rim: a finger across a box's wall does not open its ring."""
        x1, y1, x2, y2 = mask_box(mask).astype(int)
        box = np.s_[y1:y2, x1:x2]
        crop, crop_heights = mask[box], heights[box]
        values = crop_heights[crop & np.isfinite(crop_heights)]
        if values.size < 8:
            return None
        rim = (crop & (crop_heights >= self.config.container_rim * np.percentile(values, 95))).astype(np.uint8)
        rim = cv2.morphologyEx(rim, cv2.MORPH_CLOSE, _CROSS)  # over depth holes in the rim
        in_front = np.zeros(rim.shape, bool) if hidden is None else hidden[box]
        contours, _ = cv2.findContours(rim | in_front, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        outline = np.zeros_like(rim)
        cv2.drawContours(outline, contours, -1, 1, thickness=cv2.FILLED)
        rim[in_front] = outline[in_front] = 0
        return box, rim, outline

    def _contents(self, mask: np.ndarray, heights: np.ndarray, tolerance: np.ndarray, box: tuple[slice, slice],
                  rim: np.ndarray, outline: np.ndarray, min_pixels: int) -> list[np.ndarray]:
        """Objects standing in a container and reaching its rim's height (a cube put into a box), which the
        container's filled outline would take in. Their tops are the parts of the rim apart from the ring
        on the outline's edge; each top and the ring grow together, a pixel a step, over the container's
        pixels above its floor (the floor: the median height of the hollow, plus twice the depth noise),
        so the walls' inner faces go to the ring and an object's sides to its top. An object keeps what
        its top reached, when that is at least `min_pixels`."""
        crop, crop_heights = mask[box], heights[box]
        count, parts = cv2.connectedComponents(rim, connectivity=8)
        edge = outline.astype(bool) & ~cv2.erode(outline, _CROSS, borderType=cv2.BORDER_CONSTANT,
                                                 borderValue=0).astype(bool)
        on_edge = np.zeros(count, bool)
        on_edge[parts[edge]] = True
        on_edge[0] = False
        tops = np.flatnonzero(~on_edge[1:]) + 1
        known = crop & np.isfinite(crop_heights)
        hollow = known & outline.astype(bool) & ~rim.astype(bool)
        if not tops.size or not hollow.any():
            return []
        floor = float(np.median(crop_heights[hollow])) + 2.0 * float(np.median(tolerance[box][known]))
        with np.errstate(invalid="ignore"):
            raised = crop & outline.astype(bool) & (crop_heights > floor)
        seed_of = on_edge.astype(np.uint16)  # per rim part its seed: 1 the ring, 2 + k the k-th top, 0 none
        seed_of[tops] = 2 + np.arange(len(tops))
        seeds = seed_of[parts]
        for _ in range(max(crop.shape)):  # a pixel reached by two fronts at once goes to the higher label
            grown = np.where(raised & (seeds == 0), cv2.dilate(seeds, _CROSS), seeds)
            if np.array_equal(grown, seeds):
                break
            seeds = grown
        contents = []
        for number in range(len(tops)):
            inside = (seeds == 2 + number) & crop
            if int(np.count_nonzero(inside)) >= min_pixels:
                part = np.zeros_like(mask)
                part[box] = inside
                contents.append(part)
        return contents

    def _rays_for(self, K: np.ndarray, height: int, width: int) -> np.ndarray:
        key = (height, width, *np.asarray(K, dtype=np.float64).reshape(-1).round(6))
        rays = self._rays.get(key)
        if rays is None:
            v, u = np.mgrid[0:height, 0:width].astype(np.float32)
            rays = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u)], axis=-1)
            self._rays = {key: rays.astype(np.float32)}
            rays = self._rays[key]
        return rays


def _heights(points: np.ndarray, normal: np.ndarray, offset) -> np.ndarray:
    """n . p + d over the last axis, written out: a BLAS product of these small sizes is slower, and
    much slower on a busy machine (its threads contend)."""
    normal = np.asarray(normal, dtype=np.float32)
    return (points[..., 0] * normal[..., 0] + points[..., 1] * normal[..., 1] + points[..., 2] * normal[..., 2]
            + np.asarray(offset, dtype=np.float32))


def refine_hand_mask(mask: np.ndarray, depth_m: np.ndarray, reach: int, depth_tolerance_m: float,
                     behind_m: float, focal_px: float) -> np.ndarray:
    """A hand mask that is off by up to `reach` pixels (a landmark detector's: late, smooth, too wide or
    narrow, shifted) made to follow the hand's edges in depth. The hand is what is nearest: the hand's
    depth spreads from the mask's pixels a pixel at a time, `reach` times, each step allowed to recede
    as far as a surface inclined at `HAND_SLOPE` would (depth / `focal_px` per pixel, times the slope),
    so a hand seen obliquely is still one surface. Mask pixels behind that depth by more than
    `depth_tolerance_m` are no hand's (an object between two fingers, the table beside them) and leave
    the mask; pixels beside the mask within the tolerance (and the slope) of its depth next to them join
    it, a pixel a step, up to `reach` (a finger's edge the mask missed). Pixels without depth keep their
    side; nothing farther than `reach` from the mask changes."""
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return mask
    height, width = mask.shape
    margin = reach + 1  # what grows, and the surface beyond it
    left, top, right, bottom = mask_box(mask).astype(int)
    y0, x0 = max(top - margin, 0), max(left - margin, 0)
    y1, x1 = min(bottom + margin, height), min(right + margin, width)
    crop, depth = mask[y0:y1, x0:x1], depth_m[y0:y1, x0:x1]
    valid = np.isfinite(depth)
    if not (crop & valid).any():
        return mask
    step = float(np.median(depth[crop & valid])) * HAND_SLOPE / focal_px
    nearest = np.where(crop & valid, depth, np.inf).astype(np.float32)
    for _ in range(reach):
        nearest = np.minimum(nearest, cv2.erode(nearest, SQUARE, borderType=cv2.BORDER_CONSTANT,
                                                borderValue=np.inf) + step)
    with np.errstate(invalid="ignore"):
        behind = crop & valid & (depth > nearest + behind_m)
    refined = crop & ~behind
    for _ in range(2 * reach + 1):  # what continues the rest of the hand is the hand's (a palm behind a finger)
        beside = _beside(refined & valid, depth)
        with np.errstate(invalid="ignore"):
            kept = behind & (np.abs(depth - beside) <= depth_tolerance_m + step)
        if not kept.any():
            break
        refined, behind = refined | kept, behind & ~kept
    shrunk = refined
    for grown_by in range(reach + 1):
        beside = _beside(refined & valid, depth)
        with np.errstate(invalid="ignore"):
            continuing = ~refined & valid & (np.abs(depth - beside) <= depth_tolerance_m + step)
        joining = continuing & (depth <= nearest + depth_tolerance_m)  # not over what lies behind the hand
        if grown_by == reach or not joining.any():
            break
        refined = refined | joining
    # where a surface still continues after `reach` pixels it is an object the hand touches, no edge of the
    # hand: what grew within `reach` of there is given back
    if continuing.any():
        touched = cv2.dilate(continuing.astype(np.uint8), np.ones((2 * reach + 1,) * 2, np.uint8)).astype(bool)
        refined = refined & ~(touched & ~shrunk)
    out = mask.copy()
    out[y0:y1, x0:x1] = refined
    return out


def _beside(where: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Per pixel, the nearest depth of its 8 neighbours (and itself) in `where`; inf with none."""
    return cv2.erode(np.where(where, depth, np.inf).astype(np.float32), SQUARE,
                     borderType=cv2.BORDER_CONSTANT, borderValue=np.inf)


def _is_hollow(rim: np.ndarray, outline: np.ndarray, hollow: float) -> bool:
    """Whether a cluster's rim (`DepthObjectSegmenter._rim`) leaves at least `hollow` of its filled outline
    below it: a ring around lower points, a container."""
    return 1.0 - rim.sum() / max(int(outline.sum()), 1) >= hollow


def _rests_on(upper_columns: np.ndarray, lower_columns: np.ndarray, margin: float = 0.15) -> bool:
    """Whether what lies above a shelf stays over the part below it from side to side (image columns,
    central 90 %, within the lower part's extent widened by `margin` of its width): an object standing
    on another does, an arm rising from the hand's flat palm does not."""
    low, high = np.percentile(lower_columns, (0, 100))
    slack = margin * (high - low + 1)
    left, right = np.percentile(upper_columns, (5, 95))
    return bool(left >= low - slack and right <= high + slack)


def _mean_or_nan(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def _root(roots: np.ndarray, label: int) -> int:
    """The representative of `label` in the union-find forest `roots` (parent per label)."""
    while roots[label] != label:
        label = roots[label]
    return int(label)
