import subprocess
import sys


def test_perception_imports_without_loading_torch_onnxruntime_or_tensorrt():
    code = ("import sys; import predrel_ros.perception.perceiver, predrel_ros.tools.cli.detect, "
            "predrel_ros.tools.evaluation.tracking, predrel_ros.perception.hands, "
            "predrel_ros.tools.benchmarks.perception; "
            "print(sorted(m for m in ('torch', 'onnxruntime', 'tensorrt', 'onnx') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
