"""Perception: camera frames -> the paper's entities (section 3.2).

Entry point: `perceiver.Perceiver(config.PerceptionConfig)`, `.process(image, frame_index, depth,
camera) -> list[Entity]`. Parts, one module each: `backends/` (TensorRT, ONNX Runtime, PyTorch behind
one interface; the TensorRT engine cache), `letterbox`, `yolo_seg` (decoder), `nms`, `detections`,
`labels`, `tracker` (ByteTrack-style) with `kalman` and `track_quality`, `visibility`, `depth`,
`hand_sides` and `hands` (MediaPipe hand models, `hand_models` reproduces them), `entity_json`,
`overlay`, `tracking_metrics` (IDF1, CLEAR-MOT), `tracking_evaluation` (`predrel track-eval`),
`synthetic_tracks`, `detect_command` (`predrel detect`). `training/` trains the default model.
Nothing here imports torch, onnxruntime or tensorrt until a backend is loaded.
"""
