"""Helpers for tests that drive real Blender (the bpy wheel)."""

from __future__ import annotations

import numpy as np


def pose_heads(bpy, obj, frames) -> tuple[np.ndarray, list[str]]:
    """World-space pose-bone heads (len(frames), bones, 3) by evaluating the scene at each frame."""
    scene = bpy.context.scene
    world = np.array(obj.matrix_world)
    names = [pb.name for pb in obj.pose.bones]
    heads = []
    for frame in frames:
        scene.frame_set(int(frame))
        local = np.array([pb.head for pb in obj.pose.bones]).reshape(-1, 3)
        heads.append(local @ world[:3, :3].T + world[:3, 3])
    return np.array(heads), names


def extent(points: np.ndarray) -> float:
    return float(np.ptp(points.reshape(-1, 3), axis=0).max())


def ids(bpy) -> dict[str, set[str]]:
    """Names of every ID in the data collections an import could touch."""
    return {attr: {block.name for block in getattr(bpy.data, attr)}
            for attr in ("objects", "armatures", "actions", "collections", "meshes", "materials")}


def blender_axes(points: np.ndarray) -> np.ndarray:
    """Points in file axes (Y up, Z forward) turned into Blender's, as the importers do by default."""
    from bpy_extras.io_utils import axis_conversion

    return points @ np.array(axis_conversion(from_forward="-Z", from_up="Y")).T
