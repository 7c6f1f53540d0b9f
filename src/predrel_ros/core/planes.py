"""Planes in 3D camera coordinates: the least-squares fit that the depth-object detector's RANSAC
refines with (`perception.depth_objects`) and the predicates' support plane (`predicates.gravity`)."""
from __future__ import annotations

import numpy as np


def fit_plane(points: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares plane n . p + d = 0 through points (N x 3, N >= 3) as (unit normal n, offset d),
    the normal turned towards the camera (the origin lies at height d >= 0)."""
    centre = points.mean(axis=0)
    centred = points - centre
    # the direction of least spread: the eigenvector of the scatter matrix's smallest eigenvalue (the
    # last right singular vector of the centred points, from a 3 x 3 problem instead of an N x 3 one)
    normal = np.linalg.eigh(centred.T @ centred)[1][:, 0]
    offset = -float(normal @ centre)
    if offset < 0:  # the camera (origin) must lie at positive height
        normal, offset = -normal, -offset
    return normal.astype(np.float32), offset
