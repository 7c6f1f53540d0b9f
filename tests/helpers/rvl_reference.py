"""A plain, pixel-by-pixel RVL codec written from the published algorithm (A. D. Wilson, "Fast
Lossless Depth Image Compression", ISS 2017, the form compressed_depth_image_transport ships): a
variable-length code of 3-bit groups per nibble, eight nibbles per 32-bit word filled from the
most significant end, runs of zeros and non-zeros, zigzag-coded differences between successive
non-zero pixels. It keeps the algorithm's state (the word being filled, the nibbles in it) as the
C code does, so that the vectorised codec of predrel_ros.ros.messages.rvl is checked against
something written another way. Slow: for small test images only."""
from __future__ import annotations

import struct


class _Words:
    """The word-and-nibble state of the algorithm."""

    def __init__(self, data: bytes = b"") -> None:
        self.words = list(struct.unpack(f"<{len(data) // 4}I", data[:len(data) // 4 * 4]))
        self.read = 0
        self.word = 0
        self.nibbles = 0

    def encode(self, value: int) -> None:
        while True:
            nibble = value & 0x7
            value >>= 3
            if value:
                nibble |= 0x8
            self.word = ((self.word << 4) | nibble) & 0xFFFFFFFF
            self.nibbles += 1
            if self.nibbles == 8:
                self.words.append(self.word)
                self.nibbles, self.word = 0, 0
            if not value:
                return

    def finish(self) -> bytes:
        if self.nibbles:
            self.words.append((self.word << 4 * (8 - self.nibbles)) & 0xFFFFFFFF)
        return struct.pack(f"<{len(self.words)}I", *self.words)

    def decode(self) -> int:
        value, bits = 0, 29
        while True:
            if not self.nibbles:
                self.word = self.words[self.read]          # IndexError: the stream ended
                self.read += 1
                self.nibbles = 8
            nibble = self.word & 0xF0000000
            value |= ((nibble << 1) & 0xFFFFFFFF) >> bits
            self.word = (self.word << 4) & 0xFFFFFFFF
            self.nibbles -= 1
            bits -= 3
            if not nibble & 0x80000000:
                return value


def encode(pixels: list[int]) -> bytes:
    out = _Words()
    previous, i = 0, 0
    while i < len(pixels):
        zeros = 0
        while i < len(pixels) and pixels[i] == 0:
            zeros += 1
            i += 1
        out.encode(zeros)
        nonzeros = 0
        while i + nonzeros < len(pixels) and pixels[i + nonzeros] != 0:
            nonzeros += 1
        out.encode(nonzeros)
        for _ in range(nonzeros):
            delta = pixels[i] - previous
            out.encode((delta << 1) ^ (delta >> 31))
            previous = pixels[i]
            i += 1
    return out.finish()


def decode(data: bytes, count: int) -> list[int]:
    source = _Words(data)
    output, previous = [], 0
    while len(output) < count:
        output += [0] * source.decode()
        for _ in range(source.decode()):
            code = source.decode()
            previous = (previous + ((code >> 1) ^ -(code & 1))) & 0xFFFF
            output.append(previous)
    return output
