"""Choose MuJoCo's offscreen OpenGL backend before MuJoCo is imported.

MuJoCo reads MUJOCO_GL once, when it is first imported, so `predrel_ros.tools.simulator` calls
`configure_backend()` on import. An explicit MUJOCO_GL (egl, osmesa, glfw) always wins; otherwise
EGL is used when libEGL is present (headless, CPU via Mesa or a GPU), else OSMesa (Debian package
libosmesa6). PYOPENGL_PLATFORM follows MUJOCO_GL unless set.
"""
from __future__ import annotations

import ctypes.util
import os
import sys

_LIBRARIES = {"egl": "EGL", "osmesa": "OSMesa"}


def configure_backend() -> str:
    """Set MUJOCO_GL / PYOPENGL_PLATFORM if unset; return the backend in effect ("" if none)."""
    backend = os.environ.get("MUJOCO_GL", "").strip().lower()
    if not backend:
        for candidate, library in _LIBRARIES.items():
            if ctypes.util.find_library(library):
                backend = candidate
                break
        if backend and "mujoco" not in sys.modules:
            os.environ["MUJOCO_GL"] = backend
    if backend in _LIBRARIES:
        os.environ.setdefault("PYOPENGL_PLATFORM", backend)
    return backend


def backend_in_effect() -> str:
    """The backend MuJoCo is using in this process (what MUJOCO_GL said when it was imported)."""
    return os.environ.get("MUJOCO_GL", "") or "glfw"


def missing_backend_message(error: Exception) -> str:
    return (f"MuJoCo cannot render offscreen ({error}). Install Mesa's EGL (libegl1 libegl-mesa0) or "
            f"OSMesa (apt-get install libosmesa6), or set MUJOCO_GL=egl|osmesa before starting.")
