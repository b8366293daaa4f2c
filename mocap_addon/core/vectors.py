"""Small vector helpers over the last axis, shared by the motion tools."""

from __future__ import annotations

import numpy as np

from .rotations import AXES, FloatArray


def dot(a: FloatArray, b: FloatArray) -> FloatArray:
    """Dot products over the last axis."""
    return np.einsum("...i,...i->...", a, b)


def unit(vectors: FloatArray) -> FloatArray:
    """``vectors`` scaled to length 1 (zero vectors stay zero)."""
    lengths = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(lengths > 0, lengths, 1.0)


def up_vector(up_axis: str) -> FloatArray:
    """The unit vector of an up axis named ``"Y"``, ``"+Z"``, ``"-X"`` …"""
    axis = up_axis.upper().lstrip("+-")
    if len(axis) != 1 or axis not in AXES:
        raise ValueError(f"not an up axis: {up_axis!r}")
    return np.eye(3)[AXES.index(axis)] * (-1.0 if up_axis.startswith("-") else 1.0)
