"""Golden predicate outputs: what `PredicateExtractor.update` gave on deterministic scenarios, recorded
once so that a faster extractor can be checked to give the same predicates frame by frame.

Scenarios (the shipped `config/predicates.yaml`, a fresh extractor each):
- `controlled/<episode>/{depth,no_depth}`: the tiny controlled dataset's episodes
  (`controlled_dataset`: simulator ground-truth entities, depth images and intrinsics), the evaluator's
  oracle path; `controlled/<episode>/depth_holes`: the same with a tenth of the depth pixels NaN.
- `scripted/{depth,no_depth}`: the benchmark's scripted 8-entity scene (`benchmarks.core`) at 160x120,
  every third frame (gaps in the frame indices), with the benchmark's depth image and intrinsics.
- `crowd/{depth,no_depth}`: 36 random rectangles at 160x120 (`benchmarks.predicates.crowd`, seed 13)
  beyond `max_entities` (32), 6 frames.

Regenerate (only from the implementation the outputs are meant to pin, never to make a test pass):

    python tests/helpers/predicate_golden.py      # writes tests/predicates/data/predicate_golden.json.gz
"""
from __future__ import annotations

import gzip
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import numpy as np

GOLDEN_FILE = Path(__file__).resolve().parents[1] / "predicates" / "data" / "predicate_golden.json.gz"
SCENE_SIZE = (160, 120)
SCENE_FRAMES = range(0, 150, 3)
CROWD_ENTITIES, CROWD_FRAMES, CROWD_SEED = 36, 6, 13
HOLE_SHARE, HOLE_SEED = 0.1, 7

#: one frame's input: (frame_index, entities, depth_m or None, camera or None)
FrameInput = tuple


def _controlled(dataset: Path) -> Iterator[tuple[str, list[FrameInput]]]:
    from predrel_ros.sources.dataset import open_dataset

    for reader in open_dataset(dataset).episodes():
        frames = list(reader.frames())
        name = reader.meta.name
        yield f"controlled/{name}/depth", [(f.index, f.entities, f.depth, f.camera) for f in frames]
        yield f"controlled/{name}/no_depth", [(f.index, f.entities, None, None) for f in frames]
        rng = np.random.default_rng(HOLE_SEED)
        holed = []
        for f in frames:
            depth = f.depth.copy()
            depth[rng.random(depth.shape) < HOLE_SHARE] = np.nan
            holed.append((f.index, f.entities, depth, f.camera))
        yield f"controlled/{name}/depth_holes", holed


def _synthetic() -> Iterator[tuple[str, list[FrameInput]]]:
    from predrel_ros.core.frame import CameraIntrinsics
    from predrel_ros.tools.benchmarks.core import scripted_scene
    from predrel_ros.tools.benchmarks.predicates import crowd, scene_depth

    width, height = SCENE_SIZE
    focal = 0.8 * width
    camera = CameraIntrinsics(width, height, focal, focal, (width - 1) / 2, (height - 1) / 2)
    scene = scripted_scene(max(SCENE_FRAMES) + 1, width, height)
    picked = [(t, scene[t]) for t in SCENE_FRAMES]
    yield "scripted/depth", [(t, e, scene_depth(e, width, height), camera) for t, e in picked]
    yield "scripted/no_depth", [(t, e, None, None) for t, e in picked]
    make = crowd(CROWD_ENTITIES, width, height, CROWD_SEED)
    people = [(t, make(t)) for t in range(CROWD_FRAMES)]
    yield "crowd/depth", [(t, e, scene_depth(e, width, height), camera) for t, e in people]
    yield "crowd/no_depth", [(t, e, None, None) for t, e in people]


def scenarios(dataset: Path) -> Iterator[tuple[str, list[FrameInput]]]:
    """(name, frames) of every golden scenario; dataset: the `controlled_dataset` folder."""
    yield from _controlled(dataset)
    yield from _synthetic()


def fingerprint(frames: list[FrameInput]) -> str:
    """Digest of a scenario's input (masks, boxes, scores, depth, camera), to tell a changed input
    (e.g. a changed simulator) from a changed extractor."""
    digest = hashlib.sha256()
    for index, entities, depth, camera in frames:
        digest.update(repr(index).encode())
        for e in entities:
            digest.update(repr((e.id, e.role, e.score, e.visibility, e.track_quality, e.mask_quality,
                                np.asarray(e.box).tolist(), np.asarray(e.centroid).tolist())).encode())
            if e.mask is not None:
                digest.update(np.ascontiguousarray(e.mask).tobytes())
        if depth is not None:
            digest.update(np.ascontiguousarray(depth, dtype=np.float32).tobytes())
        if camera is not None:
            digest.update(repr((camera.width, camera.height, camera.fx, camera.fy, camera.cx, camera.cy)).encode())
    return digest.hexdigest()


def record(frames: list[FrameInput]) -> list[dict]:
    """Per frame: the dropped entity ids and every estimate as [name, subject, object, value,
    confidence, [factors in the order of EVIDENCE_FACTORS]], in the extractor's order."""
    from predrel_ros.core.package_files import config_path
    from predrel_ros.predicates import PredicateConfig, PredicateExtractor
    from predrel_ros.predicates.estimate import EVIDENCE_FACTORS

    extractor = PredicateExtractor(PredicateConfig.load(config_path("predicates.yaml"), section="predicates"))
    out = []
    for index, entities, depth, camera in frames:
        estimates = extractor.update(index, entities, depth_m=depth, camera=camera)
        out.append({"frame": index, "dropped": list(extractor.dropped_entities),
                    "estimates": [[e.name, e.subject, e.object, e.value, e.confidence,
                                   [e.evidence[k] for k in EVIDENCE_FACTORS]]
                                  for e in estimates]})
    return out


def load() -> dict:
    with gzip.open(GOLDEN_FILE, "rt") as handle:
        return json.load(handle)


def main() -> int:
    from controlled_dataset import build_tiny_dataset

    golden = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, frames in scenarios(build_tiny_dataset(Path(tmp) / "dataset")):
            golden[name] = {"input": fingerprint(frames), "frames": record(frames)}
    GOLDEN_FILE.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(GOLDEN_FILE, "wb", mtime=0) as handle:
        handle.write(json.dumps(golden, sort_keys=True).encode())
    counts = {name: sum(len(f["estimates"]) for f in entry["frames"]) for name, entry in golden.items()}
    print(f"{GOLDEN_FILE}: {GOLDEN_FILE.stat().st_size} bytes, estimates {counts}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
