"""An armature's animation as a core clip, and a core clip as a new action on an armature.

Both work in the space File > Export writes: for an armature this add-on
imported, the file's own skeleton, axes and units (from its import record);
for any other rig, a skeleton made from its bones with the exporters' default
axes (-Z forward, Y up) in Blender units.  So ``write_clip(obj,
armature_clip(obj))`` reproduces the armature's poses, and core tools (retarget,
blend) can work on any rig and hand their result back.
"""

from __future__ import annotations

from dataclasses import replace

import bpy
import numpy as np

from ..core import Clip, Skeleton
from ..core.kinematics import rest_pose
from ..core.model import SCALE_CHANNEL, TRANSLATION_CHANNELS
from .animation import write_action
from .armature import rest_matrices
from .files.base import conversion_matrix
from .files.exporter import ExportSettings, export_clip, frame_range, joint_bones, skeleton_from_bones
from .rig_math import BoneFrames, RestRig, joint_basis
from .storage import PROPERTY, skeleton_from_json

DEFAULT_AXES = ("-Z", "Y")  # the exporters' default forward and up


def clip_space(obj: bpy.types.Object) -> tuple[np.ndarray, float]:
    """File axes -> Blender axes (3x3) and Blender units per clip unit, as File > Export uses them."""
    stored = obj.data.get(PROPERTY)
    if stored is None:
        return conversion_matrix(*DEFAULT_AXES), 1.0
    _, record = skeleton_from_json(stored)
    return np.array(record["conversion"], dtype=np.float64), float(record["scale"])


def armature_skeleton(obj: bpy.types.Object) -> Skeleton:
    """The armature's skeleton in clip space: its import record's (under the bones' current names), else one
    made from its bones; the skeleton :func:`armature_clip` gives."""
    stored = obj.data.get(PROPERTY)
    if stored is not None:
        skeleton = skeleton_from_json(stored)[0]
        return replace(skeleton, names=joint_bones(obj, skeleton))
    conversion, scale = clip_space(obj)
    return skeleton_from_bones(obj, ExportSettings(conversion), scale)


def armature_clip(obj: bpy.types.Object, action: bpy.types.Action | None = None) -> Clip:
    """The armature's animation (``action``, else its own) as a clip over the action's frame range.

    The clip's ``start_frame`` is the first Blender frame, so :func:`write_clip`
    puts keys back where they were.
    """
    conversion, _ = clip_space(obj)
    settings = ExportSettings(conversion)
    clip = export_clip(obj, settings, action)
    clip.start_frame = int(frame_range(obj, settings, action)[0])
    return clip


def write_clip(obj: bpy.types.Object, clip: Clip, *, name: str, rotation_mode: str = "KEEP",
               frame_start: int | None = None) -> bpy.types.Action:
    """A new action on ``obj`` holding ``clip``, whose joints are bones of ``obj``, in clip space.

    Keys go against the armature's own rest pose (any rolls and rest), one per
    clip frame from ``frame_start`` (the clip's ``start_frame`` when ``None``),
    in each bone's own rotation mode (``"KEEP"``) or ``"QUATERNION"`` /
    ``"EULER"`` (each joint's own order).  The action is assigned to ``obj``.
    """
    skeleton = clip.skeleton
    if not clip.frame_count:
        raise ValueError("the clip has no frames to write")
    bones = obj.pose.bones
    for joint_name, parent in zip(skeleton.names, skeleton.parents):
        if joint_name not in bones:
            raise ValueError(f"{obj.name} has no bone {joint_name!r}")
        bone_parent = bones[joint_name].parent
        wanted = skeleton.names[parent] if parent >= 0 else None
        if (bone_parent.name if bone_parent else None) != wanted:
            raise ValueError(f"bone {joint_name!r} of {obj.name} hangs from "
                             f"{bone_parent.name if bone_parent else 'nothing'}, the clip's joint from {wanted}")
    conversion, scale = clip_space(obj)
    orientations, heads = rest_matrices(obj, skeleton.names)
    rig = RestRig(heads, heads, orientations, conversion @ rest_pose(skeleton)[0])
    frames = BoneFrames.of(skeleton.parents, rig, conversion)
    poses = ((*joint_basis(clip, frames, joint, scale), clip.channel_values(joint, SCALE_CHANNEL))
             for joint in range(skeleton.joint_count))
    first = clip.start_frame if frame_start is None else frame_start
    keys = first + np.arange(clip.frame_count, dtype=np.float64)
    moves = [any(c in TRANSLATION_CHANNELS or c == "l" for c in layout) for layout in skeleton.channels]
    orders = frames.euler_orders(skeleton)
    action = write_action(obj, name, skeleton.names, keys, rotation_mode, orders, moves, poses)
    action["mocap_frame_time"] = clip.frame_time
    return action
