import numpy as np

from predrel_ros.perception.detections import Detections
from predrel_ros.tools.evaluation.detection_cache import DetectionCache, cache_key, pack, unpack


def detections(rng, n, shape, masks=True):
    boxes = np.sort(rng.uniform(0, 40, (n, 4)), axis=1)[:, [0, 2, 1, 3]]
    return Detections(boxes, rng.uniform(0, 1, n), rng.integers(0, 3, n),
                      rng.random((n, *shape)) > 0.5 if masks else None, rng.uniform(0, 1, n))


def same(a, b):
    return (np.array_equal(a.boxes, b.boxes) and np.array_equal(a.scores, b.scores)
            and np.array_equal(a.class_ids, b.class_ids) and np.array_equal(a.mask_quality, b.mask_quality)
            and ((a.masks is None and b.masks is None) or np.array_equal(a.masks, b.masks)))


def test_pack_unpack_round_trip_with_and_without_masks():
    rng = np.random.default_rng(0)
    for masks in (True, False):
        frames = [detections(rng, n, (7, 9), masks) for n in (3, 0, 5)]
        back = unpack(pack(frames, (7, 9)))
        assert len(back) == 3 and all(same(a, b) for a, b in zip(frames, back))
    mixed = [detections(rng, 2, (7, 9), True), detections(rng, 1, (7, 9), False), detections(rng, 3, (7, 9), True)]
    assert all(same(a, b) for a, b in zip(mixed, unpack(pack(mixed, (7, 9)))))


def test_masks_are_stored_as_their_crops_and_empty_masks_survive():
    rng = np.random.default_rng(2)
    frame = detections(rng, 3, (20, 30))
    frame.masks[0] = False                      # empty
    frame.masks[1] = False
    frame.masks[1, 4:7, 10:12] = True           # a 3 x 2 blob
    arrays = pack([frame], (20, 30))
    assert arrays["crops"][:2].tolist() == [[0, 0, 0, 0], [10, 4, 2, 3]]
    assert same(frame, unpack(arrays)[0])


def test_cache_hits_after_put_and_keys_change_with_every_input(tmp_path):
    rng = np.random.default_rng(1)
    frames = [detections(rng, 2, (4, 4))]
    cache = DetectionCache(tmp_path)
    key = cache_key("model", {"decoder": 1}, {"kind": "blur", "severity": 3}, "episode")
    assert cache.get(key) is None
    cache.put(key, frames, (4, 4))
    cached, measures = cache.get(key)
    assert same(cached[0], frames[0]) and measures is None and (cache.hits, cache.misses) == (1, 1)
    others = {cache_key("other", {"decoder": 1}, {"kind": "blur", "severity": 3}, "episode"),
              cache_key("model", {"decoder": 2}, {"kind": "blur", "severity": 3}, "episode"),
              cache_key("model", {"decoder": 1}, {"kind": "blur", "severity": 4}, "episode"),
              cache_key("model", {"decoder": 1}, {"kind": "blur", "severity": 3}, "changed")}
    assert key not in others and len(others) == 4
    assert not list(tmp_path.rglob("*.tmp.npz"))
    assert DetectionCache(None).get(key) is None


def test_image_measures_are_kept_with_the_detections_exactly(tmp_path):
    rng = np.random.default_rng(3)
    frames = [detections(rng, 2, (4, 4)), detections(rng, 1, (4, 4))]
    measures = {0: {"sharpness": 0.1 + 1e-17, "exposure": 1 / 3}, 1: {"sharpness": 2.5, "exposure": float(np.pi)}}
    cache = DetectionCache(tmp_path)
    cache.put("ab" * 32, frames, (4, 4), measures, "v1")
    cached, back = cache.get("ab" * 32, "v1")
    assert back == measures and all(same(a, b) for a, b in zip(cached, frames))
    assert all(type(value) is float for values in back.values() for value in values.values())
    cached, stale = cache.get("ab" * 32, "v2")            # measured by other code: detections alone
    assert stale is None and all(same(a, b) for a, b in zip(cached, frames))
