"""Counter-based random draws: a pure function of (seed, stream, integer keys).

Every random choice of a degradation (a motion direction, an occluder's place, whether frame 17 is
dropped, the jitter of entity 3's box) is read from a hash of the seed, a named stream and integer
keys such as the frame index and the entity id. Nothing is carried from call to call, so the same
(seed, frame_index, kind, severity) gives the same result in any call order: a replay, a parallel
evaluation worker and a live node agree frame by frame.

Severity never enters a key. A severity only sets thresholds or amplitudes on the same draws, which is
what makes the degradations nested (what is dropped, missed or occluded at severity s is also at s+1).
"""
from __future__ import annotations

import zlib

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _splitmix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser on uint64 arrays (wrapping arithmetic)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


def _as_uint64(key) -> np.ndarray:
    return np.atleast_1d(np.asarray(key, dtype=np.int64)).view(np.uint64)


def _stream_code(stream: str) -> int:
    return zlib.crc32(stream.encode("utf-8"))


def hashes(seed: int, stream: str, *keys) -> np.ndarray:
    """64-bit hashes for every broadcast combination of the integer `keys` (at least 1-D)."""
    with np.errstate(over="ignore"):
        h = _splitmix(_as_uint64(seed) ^ _as_uint64(_stream_code(stream)))
        for key in keys:
            h = _splitmix(h ^ _as_uint64(key))
    return h


def uniform(seed: int, stream: str, *keys) -> np.ndarray:
    """Uniform draws in [0, 1), one per broadcast combination of `keys`."""
    return (hashes(seed, stream, *keys) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def normal(seed: int, stream: str, *keys) -> np.ndarray:
    """Standard normal draws (Box-Muller on two independent uniform streams)."""
    u1 = uniform(seed, stream + "#radius", *keys)
    u2 = uniform(seed, stream + "#angle", *keys)
    return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
