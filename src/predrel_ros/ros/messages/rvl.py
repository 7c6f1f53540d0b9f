"""RVL, the lossless depth codec of compressed_depth_image_transport's `rvl` format (A. D. Wilson,
"Fast Lossless Depth Image Compression", ISS 2017), in numpy.

The stream codes a 16-bit image, row-major, as alternating runs: the length of a run of zeros, the
length of the run of non-zero pixels after it, then each of those pixels as the zigzag-coded
difference to the previous non-zero pixel (the first to 0). Every number is a variable-length code
of 3-bit groups, least significant first, one per nibble whose high bit says "more follows"; eight
nibbles fill a 32-bit little-endian word from its most significant nibble, and the last word is
padded with zero nibbles.

Decoding refuses what the reference decoder would read past its buffer or loop on (a truncated
stream, runs beyond the image, a run of no pixels, a difference no 16-bit image has) with a
ValueError; only the run lengths are parsed in Python (one step per run), the rest is vectorised.
"""
from __future__ import annotations

import numpy as np

#: nibbles per 32-bit word, and the shifts that take them out most significant first
_NIBBLES = 8
_SHIFTS = np.arange(28, -1, -4, dtype=np.uint32)
#: the most nibbles a 32-bit value needs (3 bits each)
_MAX_NIBBLES = 11
#: the largest zigzag code of a difference of two 16-bit values
_MAX_CODE = 2 * 65535


def _starts(counts: np.ndarray) -> np.ndarray:
    """Where each of consecutive groups of `counts` items begins."""
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenation of range(start, start + count) for each pair."""
    total = int(counts.sum())
    return np.arange(total, dtype=np.int64) + np.repeat(starts - _starts(counts), counts)


def encode(pixels: np.ndarray) -> bytes:
    """The RVL stream of a 16-bit image (any shape; row-major order)."""
    flat = np.ascontiguousarray(pixels, dtype=np.uint16).reshape(-1)
    if flat.size == 0:
        return b""
    nonzero = flat != 0
    edges = np.flatnonzero(np.diff(nonzero.view(np.int8))) + 1
    bounds = np.concatenate(([0], edges, [flat.size]))
    lengths = np.diff(bounds)
    if nonzero[0]:                              # the stream starts with a (here empty) run of zeros
        lengths = np.concatenate(([0], lengths))
    if len(lengths) % 2:                        # and ends with a (here empty) run of non-zeros
        lengths = np.concatenate((lengths, [0]))
    runs = lengths.reshape(-1, 2)
    values = flat[nonzero].astype(np.int64)
    delta = values - np.concatenate(([0], values[:-1]))
    codes = (delta << 1) ^ (delta >> 63)
    heads = 2 * np.arange(len(runs)) + _starts(runs[:, 1])
    stream = np.empty(2 * len(runs) + len(codes), np.int64)
    is_head = np.zeros(len(stream), bool)
    is_head[heads] = is_head[heads + 1] = True
    stream[heads], stream[heads + 1] = runs[:, 0], runs[:, 1]
    stream[~is_head] = codes
    return _pack(stream)


def _pack(numbers: np.ndarray) -> bytes:
    """Variable-length nibble codes of non-negative numbers, packed in 32-bit words."""
    count = np.ones(len(numbers), np.int64)
    for group in range(1, _MAX_NIBBLES):
        count += (numbers >> (3 * group)) > 0
    owner = np.repeat(np.arange(len(numbers)), count)
    position = np.arange(len(owner)) - np.repeat(_starts(count), count)
    nibbles = (numbers[owner] >> (3 * position)) & 7
    nibbles |= (position < count[owner] - 1).astype(np.int64) << 3
    nibbles = np.concatenate((nibbles, np.zeros(-len(nibbles) % _NIBBLES, np.int64)))
    words = (nibbles.reshape(-1, _NIBBLES).astype(np.uint32) << _SHIFTS).sum(axis=1, dtype=np.uint32)
    return words.astype("<u4").tobytes()


def _unpack(data: bytes) -> np.ndarray:
    """The numbers of a stream of nibble codes (an unterminated code at the end is left out)."""
    words = np.frombuffer(data, "<u4", count=len(data) // 4)
    nibbles = ((words[:, None] >> _SHIFTS) & 0xF).reshape(-1).astype(np.int32)
    ends = np.flatnonzero((nibbles & 8) == 0)
    if len(ends) == 0:
        return np.zeros(0, np.int64)
    used = int(ends[-1]) + 1
    first = np.zeros(used, np.int32)                      # each nibble's code starts at first[i]
    first[ends[:-1] + 1] = ends[:-1] + 1
    np.maximum.accumulate(first, out=first)
    position = np.arange(used, dtype=np.int32) - first
    if position.max() >= _MAX_NIBBLES:
        raise ValueError(f"RVL stream holds a code of more than {_MAX_NIBBLES} nibbles; a 32-bit value needs at "
                         f"most {_MAX_NIBBLES}")
    total = np.cumsum((nibbles[:used] & 7).astype(np.int64) << (3 * position))
    numbers = total[ends]
    numbers[1:] -= total[ends[:-1]]
    return numbers


def decode(data: bytes, pixels: int) -> np.ndarray:
    """The `pixels` uint16 values (row-major) of an RVL stream; ValueError when it is malformed."""
    numbers = _unpack(bytes(data))
    listed = numbers.tolist()
    # the one sequential step: where each run's pair of lengths is (a run of no pixels, which would
    # loop the reference decoder for ever, only moves `at` on here, and is refused below)
    heads, at, done, available = [], 0, 0, len(listed) - 1
    while done < pixels and at < available:
        heads.append(at)
        count = listed[at + 1]
        done += listed[at] + count
        at += 2 + count
    image = np.zeros(pixels, np.uint16)
    if pixels == 0:
        return image
    heads = np.array(heads, np.int64)
    zeros, counts = numbers[heads], numbers[heads + 1]
    covered = np.cumsum(zeros + counts)
    empty = np.flatnonzero(zeros + counts == 0)
    if len(empty) and (len(covered) == 0 or covered[empty[0]] < pixels):
        raise ValueError(f"RVL stream holds a run of no pixels after {covered[empty[0]]} of {pixels} pixels")
    if done < pixels:
        raise ValueError(f"RVL stream ends after {done} of {pixels} pixels")
    if done > pixels:
        raise ValueError(f"RVL runs cover more than the image's {pixels} pixels")
    if at > len(listed):
        raise ValueError(f"RVL stream ends inside a run, after {covered[-2] if len(covered) > 1 else 0} of "
                         f"{pixels} pixels")
    codes = numbers[_ranges(heads + 2, counts)]
    if codes.size and codes.max() > _MAX_CODE:
        raise ValueError(f"RVL stream holds the difference code {codes.max()}; 16-bit pixels differ by at most "
                         f"{_MAX_CODE // 2}")
    delta = (codes >> 1) ^ -(codes & 1)
    image[_ranges(covered - counts, counts)] = np.cumsum(delta) & 0xFFFF
    return image
