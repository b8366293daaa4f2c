"""Acclaim joint limits as Limit Rotation / Limit Location constraints in the bone's local space."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import bpy
import numpy as np

from ...core import Clip
from ..bridge.armature import pose_bones

_ALIGNED = 0.999


def add_limit_constraints(obj: bpy.types.Object, clip: Clip, orientations: np.ndarray, joint_axes: np.ndarray,
                          scale: float, enforce: bool) -> list[str]:
    """Add constraints for every finite ASF limit; returns the bones whose limits could not be mapped.

    Captured motion often strays past its skeleton's limits, so unless
    ``enforce`` the constraints are created switched off: the pose stays the
    file's, and the limits are there to switch on when animating by hand.

    A limit is about an axis of the ASF bone's own frame; the Blender bone's
    local frame (Y along the bone) is that frame turned by a constant rotation.
    Where that rotation maps each limited axis onto a local axis (always so for
    CMU skeletons: the bones run along their axis frames), the bounds carry over,
    sign-flipped where the axes point opposite ways; otherwise the bone is named.
    """
    limits = clip.metadata.get("asf", {}).get("limits", {})
    dofs = clip.metadata.get("asf", {}).get("dof", {})
    skipped = []
    bones = pose_bones(obj)
    for joint, name in enumerate(clip.skeleton.names):
        bounds = limits.get(name)
        if not bounds or name not in bones:
            continue
        # Columns: the ASF frame's axes in armature space; rows of the map: the bone's local axes.
        mapping = np.linalg.inv(orientations[joint]) @ joint_axes[joint]
        rotation: dict[int, tuple[float, float]] = {}
        location: dict[int, tuple[float, float]] = {}
        unmapped = False
        for token, (low, high) in zip(dofs.get(name, []), bounds):
            if token == "l":
                source = np.asarray(clip.skeleton.length_directions[joint])
            else:
                source = np.eye(3)["xyz".index(token[1])]
            local = mapping @ source
            axis = int(np.argmax(np.abs(local)))
            if abs(local[axis]) < _ALIGNED * np.linalg.norm(local):
                unmapped = True
                continue
            sign = 1.0 if local[axis] > 0 else -1.0
            low, high = sorted((sign * low, sign * high))
            (rotation if token[0] == "r" else location)[axis] = (low, high)
        if unmapped:
            skipped.append(name)
        _limit(bones[name], "LIMIT_ROTATION", rotation, math.radians, enforce)
        _limit(bones[name], "LIMIT_LOCATION", location, lambda v: v * scale, enforce)
    return skipped


def _limit(pose_bone: bpy.types.PoseBone, kind: Literal["LIMIT_ROTATION", "LIMIT_LOCATION"],
           bounds: dict[int, tuple[float, float]], convert: Callable[[float], float], enforce: bool) -> None:
    finite = {axis: pair for axis, pair in bounds.items() if all(math.isfinite(v) for v in pair)}
    if not finite:
        return
    constraint = pose_bone.constraints.new(kind)
    constraint.owner_space = "LOCAL"
    constraint.enabled = enforce
    prefix = "rotation" if kind == "LIMIT_ROTATION" else ""
    for axis, (low, high) in finite.items():
        letter = "xyz"[axis]
        if prefix:
            setattr(constraint, f"use_limit_{letter}", True)
        else:
            setattr(constraint, f"use_min_{letter}", True)
            setattr(constraint, f"use_max_{letter}", True)
        setattr(constraint, f"min_{letter}", convert(low))
        setattr(constraint, f"max_{letter}", convert(high))
