"""Perception: camera frames -> the paper's entities (section 3.2).

Entry point: `perceiver.Perceiver(config.PerceptionConfig)`, `.process(image, frame_index, depth,
camera) -> list[Entity]`. Parts, one module each: `backends/` (TensorRT, ONNX Runtime, PyTorch behind
one interface; the TensorRT engine cache), `letterbox`, `yolo_seg` (decoder; NMS and box IoU are
`predrel_ros.core.boxes`), `detections`, `labels`, `tracker` (ByteTrack-style) with `kalman` and
`track_quality`, `visibility`, `depth`, `hand_sides` and `hands` (MediaPipe hand models,
`hand_models` reproduces them), `entity_json`, `overlay`. Offline, elsewhere: training in
`predrel_ros.tools.training`, tracker evaluation in `predrel_ros.tools.evaluation.tracking`, the
`predrel detect` command in `predrel_ros.tools.cli.detect`.
Nothing here imports torch, onnxruntime or tensorrt until a backend is loaded.
"""
