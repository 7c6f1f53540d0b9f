"""On-disk cache of TensorRT engines, keyed by everything that makes an engine unusable elsewhere.

An engine only runs on the TensorRT version and GPU it was built with, for the input shape and
precision it was built for, and only reflects the ONNX file it was built from. The cache key is
sha256(ONNX) + TensorRT version + GPU name + precision + input shape (+ max batch and DLA core,
which shape the build the same way). Each engine `NAME.KEY16.engine` sits next to
`NAME.KEY16.json` holding the key fields, the build time and date. A lookup loads only an engine
whose metadata matches the key field by field; otherwise it says which fields differ (for the
log: "TensorRT version 8.6.1 -> 10.3.0"), and storing a fresh engine removes the cached engines
of the same model that can never be used again (another ONNX content, another TensorRT version).
Engines for other shapes, precisions or GPUs stay (several cameras, a shared cache directory).

With an explicit `engine_file_path` (the Isaac ROS parameter) the cache is that single file with
its metadata at `ENGINE.json`, rebuilt whenever the metadata does not match.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger(__name__)

ENGINE_SUFFIX = ".engine"
METADATA_SUFFIX = ".json"
#: key fields whose change makes an old engine useless forever (pruned when a new one is stored)
OBSOLETING_FIELDS = ("onnx_sha256", "tensorrt_version")


@dataclass(frozen=True)
class EngineKey:
    onnx_sha256: str
    tensorrt_version: str
    gpu_name: str
    precision: str  # fp16 | fp32
    input_shape: tuple[int, ...]  # the shape built for (batch = max batch for dynamic batch)
    max_batch_size: int = 1
    dla_core: int = -1  # -1: GPU only

    def digest(self) -> str:
        text = json.dumps(self.as_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def as_dict(self) -> dict:
        data = asdict(self)
        data["input_shape"] = list(self.input_shape)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "EngineKey":
        fields = {name: data[name] for name in cls.__dataclass_fields__}
        fields["input_shape"] = tuple(int(d) for d in fields["input_shape"])
        return cls(**fields)

    def differences(self, other: "EngineKey") -> list[str]:
        """'field: other -> self' for each differing field."""
        mine, theirs = self.as_dict(), other.as_dict()
        return [f"{name}: {theirs[name]} -> {mine[name]}" for name in mine if mine[name] != theirs[name]]


def sha256_of_file(path: str | Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


class EngineCache:
    def __init__(self, cache_dir: str | Path, model_name: str,
                 engine_file_path: str | Path | None = None) -> None:
        self.cache_dir = Path(cache_dir).expanduser()
        self.model_name = model_name
        self.engine_file_path = None if engine_file_path is None else Path(engine_file_path).expanduser()

    def engine_path(self, key: EngineKey) -> Path:
        if self.engine_file_path is not None:
            return self.engine_file_path
        return self.cache_dir / f"{self.model_name}.{key.digest()[:16]}{ENGINE_SUFFIX}"

    @staticmethod
    def metadata_path(engine_path: Path) -> Path:
        if engine_path.suffix == ENGINE_SUFFIX:
            return engine_path.with_suffix(METADATA_SUFFIX)
        return engine_path.with_name(engine_path.name + METADATA_SUFFIX)

    def lookup(self, key: EngineKey) -> tuple[Path | None, str]:
        """(path of a matching cached engine or None, why: a sentence for the log)."""
        path = self.engine_path(key)
        stored = self._read_key(path)
        if path.is_file() and stored == key:
            return path, f"cached engine {path} matches (built for {key.gpu_name}, TensorRT " \
                         f"{key.tensorrt_version}, {key.precision}, input {list(key.input_shape)})"
        if path.is_file() and stored is None:
            return None, f"engine {path} has no readable metadata {self.metadata_path(path).name}; rebuilding"
        if stored is not None:
            return None, (f"cached engine {path} was built for something else "
                          f"({'; '.join(key.differences(stored))}); rebuilding")
        others = [(p, k) for p, k in self._entries() if p != path]
        if others:
            closest = min(others, key=lambda entry: len(key.differences(entry[1])))
            return None, (f"no cached engine for this key in {self.cache_dir}; the closest, "
                          f"{closest[0].name}, differs in {'; '.join(key.differences(closest[1]))}; building")
        return None, f"no cached engine for {self.model_name} in {path.parent}; building"

    def store(self, key: EngineKey, engine: bytes, build_seconds: float) -> Path:
        path = self.engine_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        metadata = {**key.as_dict(), "build_seconds": round(build_seconds, 3),
                    "built_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                    "engine_bytes": len(engine), "model_name": self.model_name}
        _atomic_write(path, engine)
        _atomic_write(self.metadata_path(path), (json.dumps(metadata, indent=2) + "\n").encode())
        if self.engine_file_path is None:
            self._prune_obsolete(key, path)
        return path

    def _prune_obsolete(self, key: EngineKey, keep: Path) -> None:
        for path, stored in self._entries():
            if path == keep:
                continue
            if any(getattr(stored, name) != getattr(key, name) for name in OBSOLETING_FIELDS):
                log.info("removing obsolete cached engine %s (%s)", path.name,
                         "; ".join(key.differences(stored)))
                path.unlink(missing_ok=True)
                self.metadata_path(path).unlink(missing_ok=True)

    def _entries(self) -> list[tuple[Path, EngineKey]]:
        if self.engine_file_path is not None or not self.cache_dir.is_dir():
            return []
        entries = []
        for path in sorted(self.cache_dir.glob(f"{self.model_name}.*{ENGINE_SUFFIX}")):
            stored = self._read_key(path)
            if stored is not None:
                entries.append((path, stored))
        return entries

    def _read_key(self, engine_path: Path) -> EngineKey | None:
        try:
            return EngineKey.from_dict(json.loads(self.metadata_path(engine_path).read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None


def _atomic_write(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename, so a crash mid-write never leaves a truncated engine."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
