"""Training the embedded default instance-segmentation model (`predrel train`).

network (SegmentationNet, YoloSegExport) -> assignment (task-aligned targets) -> losses -> data
(augmented letterboxed samples) -> trainer (seeded loop, EMA, checkpoint selection) -> export (ONNX
and torch.export in the Ultralytics YOLO-seg layout) -> evaluation / detection_metrics (box AP50,
mask IoU). dataset_frames reads dataset folders; the CLI is predrel_ros.tools.cli.train; model_card writes the card.
Everything runs on the CPU with the project's own code: no third-party training framework.
"""
