"""An armature's animation as a core clip, and a core clip written back onto an armature.

Minimal version for the blend tool (the retarget branch owns this module and
its fuller version).  A clip is in the armature's file axes and units: those
its import record stores (axis conversion and scale), else Blender's BVH
defaults (-Z forward, Y up) and metres.
"""

from __future__ import annotations

from collections.abc import Iterator

import bpy
import numpy as np
from bpy_extras.io_utils import axis_conversion

from ..core import Clip
from ..core.kinematics import rest_pose
from ..core.model import SCALE_CHANNEL, TRANSLATION_CHANNELS, rotation_order
from .animation import write_action
from .armature import rest_matrices
from .files.exporter import ExportSettings, export_clip
from .rig_math import BoneFrames, RestRig, joint_basis
from .storage import PROPERTY, skeleton_from_json


def clip_space(obj: bpy.types.Object) -> tuple[np.ndarray, float]:
    """The armature's file axes (file -> Blender, 3x3) and Blender units per file unit."""
    stored = obj.data.get(PROPERTY)
    if stored is None:
        return np.array(axis_conversion(from_forward="-Z", from_up="Y").to_3x3()), 1.0
    _, record = skeleton_from_json(stored)
    return np.array(record["conversion"]), float(record["scale"])


def armature_clip(obj: bpy.types.Object, action: bpy.types.Action | None = None) -> Clip:
    """The armature's animation (its assigned action, over the action's frame range) as a core clip."""
    animation = obj.animation_data
    assigned = animation.action if animation else None
    if action is not None and action != assigned:
        raise ValueError(f"{obj.name}: only the assigned action can be read")
    conversion, _ = clip_space(obj)
    return export_clip(obj, ExportSettings(conversion))


def write_clip(obj: bpy.types.Object, clip: Clip, *, name: str, rotation_mode: str = "KEEP",
               frame_start: int | None = None) -> bpy.types.Action:
    """A new action on ``obj`` (assigned) holding ``clip``, whose joints are bones of ``obj``.

    Keys go on every frame from ``frame_start`` (default 1), posed against the
    armature's own rest bones; ``rotation_mode`` is ``"QUATERNION"``, ``"EULER"``
    (each joint's channel order) or ``"KEEP"`` (the first bone's mode decides).
    """
    skeleton = clip.skeleton
    missing = [n for n in skeleton.names if n not in obj.pose.bones]
    if missing:
        raise ValueError(f"{obj.name} lacks bones {', '.join(missing[:5])}")
    conversion, scale = clip_space(obj)
    if rotation_mode == "KEEP":
        first = obj.pose.bones[skeleton.names[0]].rotation_mode
        rotation_mode = "QUATERNION" if first == "QUATERNION" else "EULER"
    orientations, heads = rest_matrices(obj, skeleton.names)
    rest_rotations, _ = rest_pose(skeleton)
    rig = RestRig(heads, heads, orientations, conversion @ rest_rotations)
    bone_frames = BoneFrames.of(skeleton.parents, rig, conversion)

    def poses() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        for joint in range(skeleton.joint_count):
            rotation, location = joint_basis(clip, bone_frames, joint, scale)
            yield rotation, location, clip.channel_values(joint, SCALE_CHANNEL)

    frames = (1 if frame_start is None else frame_start) + np.arange(clip.frame_count, dtype=np.float64)
    moves = [any(c in TRANSLATION_CHANNELS or c == "l" for c in layout) for layout in skeleton.channels]
    orders = [rotation_order(layout) for layout in skeleton.channels]
    action = write_action(obj, name, skeleton.names, frames, rotation_mode, orders, moves, poses())
    action["mocap_frame_time"] = clip.frame_time
    return action
