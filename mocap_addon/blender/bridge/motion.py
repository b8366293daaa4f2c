"""An armature's animation as a core pose, and a core pose as a new action on an armature.

Both work in the space File > Export writes: for an armature this add-on
imported, the file's own skeleton, axes and units (from its import record);
for any other rig, a skeleton made from its bones with the exporters' default
axes (-Z forward, Y up) in Blender units.  So ``write_pose(obj,
armature_pose(obj))`` reproduces the armature's poses, and core tools (retarget,
blend, key reduction) work on any rig and hand their result back.  Keys are
read and written as quaternions (Euler-mode bones convert at their own curves
only), with no detour through the clip's Euler channels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import bpy
import numpy as np

from ...core import Pose, Skeleton
from ...core.model import MOVE_CHANNELS, SCALE_CHANNEL
from .animation import write_action
from .armature import pose_bones
from .armature_to_clip import (
    ExportSettings,
    armature_bone_frames,
    frame_range,
    joint_bones,
    read_armature,
    skeleton_from_bones,
)
from .conversion import DEFAULT_AXES, conversion_matrix
from .import_record import skeleton_from_json, stored_record
from .rig_math import local_basis


def clip_space(obj: bpy.types.Object) -> tuple[np.ndarray, float]:
    """File axes -> Blender axes (3x3) and Blender units per clip unit, as File > Export uses them."""
    stored = stored_record(obj)
    if stored is None:
        return conversion_matrix(*DEFAULT_AXES), 1.0
    _, record = skeleton_from_json(stored)
    return np.array(record["conversion"], dtype=np.float64), float(record["scale"])


def armature_skeleton(obj: bpy.types.Object) -> Skeleton:
    """The armature's skeleton in clip space: its import record's (under the bones' current names), else one
    made from its bones; the skeleton :func:`armature_pose` gives."""
    stored = stored_record(obj)
    if stored is not None:
        skeleton = skeleton_from_json(stored)[0]
        return replace(skeleton, names=joint_bones(obj, skeleton))
    conversion, scale = clip_space(obj)
    return skeleton_from_bones(obj, ExportSettings(conversion), scale)


def armature_pose(obj: bpy.types.Object, action: bpy.types.Action | None = None) -> Pose:
    """The armature's animation (``action``, else its own) over the action's frame range as the local
    pose of every joint of :func:`armature_skeleton`: the bones as Blender shows them (turns and moves
    a joint's channels could not hold included), the exact inverse of :func:`write_pose`.  Its
    ``start_frame`` is the first Blender frame, so :func:`write_pose` puts keys back where they were."""
    settings = ExportSettings(clip_space(obj)[0])
    pose = read_armature(obj, settings, action).pose()
    pose.start_frame = int(frame_range(obj, settings, action)[0])
    return pose


def write_pose(obj: bpy.types.Object, pose: Pose, *, name: str, frame_start: int | None = None,
               rotation_mode: str = "KEEP", keep: list[np.ndarray] | None = None,
               progress: Callable[[float], None] = lambda _: None) -> bpy.types.Action:
    """A new action on ``obj`` holding ``pose``, whose joints are bones of ``obj``, in clip space.

    Keys go against the armature's own rest pose (any rolls and rest), one per
    frame from ``frame_start`` (the pose's ``start_frame`` when ``None``), in
    each bone's own rotation mode (``"KEEP"``) or ``"QUATERNION"`` / ``"EULER"``
    (each joint's own order); ``keep`` (a key reduction's frames per joint)
    keys only the frames each curve needs.  The action is assigned to ``obj``;
    it and the action it replaces are kept (:func:`keep_action`).
    """
    skeleton = pose.skeleton
    if not pose.frame_count:
        raise ValueError("the motion has no frames to write")
    bones = pose_bones(obj)
    for joint_name, parent in zip(skeleton.names, skeleton.parents):
        if joint_name not in bones:
            raise ValueError(f"{obj.name} has no bone {joint_name!r}")
        bone_parent = bones[joint_name].parent
        wanted = skeleton.names[parent] if parent >= 0 else None
        if (bone_parent.name if bone_parent else None) != wanted:
            raise ValueError(f"bone {joint_name!r} of {obj.name} hangs from "
                             f"{bone_parent.name if bone_parent else 'nothing'}, the clip's joint from {wanted}")
    conversion, scale = clip_space(obj)
    frames = armature_bone_frames(obj, skeleton, conversion)
    scales = pose.scale_values()

    def bases() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        for joint, layout in enumerate(skeleton.channels):
            progress(joint / skeleton.joint_count)
            yield (*local_basis(frames, joint, pose.rotations[:, joint], pose.translations[:, joint], scale),
                   scales[:, joint] if SCALE_CHANNEL in layout else None)

    first = pose.start_frame if frame_start is None else frame_start
    moves = [any(c in MOVE_CHANNELS for c in layout) for layout in skeleton.channels]
    replaced = obj.animation_data.action if obj.animation_data else None
    action = write_action(obj, name, skeleton.names, first + np.arange(pose.frame_count, dtype=np.float64),
                          rotation_mode, frames.euler_orders(skeleton), moves, bases(), keep)
    action["mocap_frame_time"] = pose.frame_time
    keep_action(action)
    if replaced is not None:
        keep_action(replaced)
    return action


def keep_action(action: bpy.types.Action) -> None:
    """Give ``action`` a fake user, so it is saved with the file when no rig plays it any more: every action
    the add-on makes, and every action it takes off a rig, is kept (Blender's Action editor lists them)."""
    action.use_fake_user = True
