"""Pure-Python install of predrel_ros (`pip install -e .`): offline evaluation without ROS.

colcon builds the full ROS package (messages + nodes) from package.xml / CMakeLists.txt instead.
"""
from setuptools import find_packages, setup

setup(
    name="predrel_ros",
    version="0.1.0",
    description="Visual manipulation predicates with reliability scores for ROS 2",
    license="Apache-2.0",
    package_dir={"": "src"},
    packages=find_packages("src"),
    include_package_data=True,
    package_data={"predrel_ros.perception": ["models/*/*"], "predrel_ros.action": ["models/*.json"],
                  "predrel_ros.reliability": ["models/*.json"]},
    python_requires=">=3.10",
    install_requires=["numpy>=1.24", "scipy>=1.10", "opencv-python-headless>=4.8", "tqdm>=4.60",
                      "threadpoolctl>=3.1"],
    extras_require={
        "sim": ["mujoco>=3.2"],
        "bags": ["rosbags>=0.10"],
        "onnx": ["onnx>=1.15", "onnxruntime>=1.17"],
        "hands": ["onnxruntime>=1.17"],  # MediaPipe hand models (bundled as ONNX, perception/hands.py)
        "torch": ["torch>=2.1"],
        "eval": ["matplotlib>=3.7"],
        "dask": ["dask[distributed]>=2024.1"],  # predrel eval --scheduler
        "test": ["pytest>=7,<9", "hypothesis>=6.90"],
    },
    entry_points={"console_scripts": ["predrel = predrel_ros.tools.cli.main:main"]},
)
