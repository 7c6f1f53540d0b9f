"""Byte-reproducible .npz files: the same arrays always give the same bytes.

`numpy.savez_compressed` stamps the current time into every zip entry, so two identical datasets
differ on disk. Ground truth must be byte-identical for the same seed, hence this writer with a
fixed entry time and a fixed entry order. `numpy.load` reads the result.
"""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Mapping

import numpy as np

_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def save_npz(path: Path | str, arrays: Mapping[str, np.ndarray]) -> None:
    """Write `arrays` (name -> array, no object dtypes) compressed, entries sorted by name."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            array = np.ascontiguousarray(arrays[name])
            if array.dtype.hasobject:
                raise ValueError(f"save_npz: array {name!r} has an object dtype; store plain numbers")
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, buffer.getvalue())
    tmp.replace(path)


def load_npz(path: Path | str) -> dict[str, np.ndarray]:
    """All arrays of an .npz file, loaded eagerly (no pickles)."""
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}
