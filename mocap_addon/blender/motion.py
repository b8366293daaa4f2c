"""An armature's animation as a core clip, and a core clip as a new action on an armature.

Both work in the space File > Export writes: for an armature this add-on
imported, the file's own skeleton, axes and units (from its import record);
for any other rig, a skeleton made from its bones with the exporters' default
axes (-Z forward, Y up) in Blender units.  So ``write_clip(obj,
armature_clip(obj))`` reproduces the armature's poses, and core tools (retarget,
blend) can work on any rig and hand their result back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import bpy
import numpy as np

from ..core import Clip, Skeleton
from ..core.blend import LocalPose, Posed
from ..core.model import MOVE_CHANNELS, SCALE_CHANNEL
from .animation import write_action
from .armature import pose_bones
from .armature_to_clip import (
    ExportSettings,
    armature_bone_frames,
    export_clip,
    frame_range,
    joint_bones,
    read_armature,
    skeleton_from_bones,
)
from .conversion import DEFAULT_AXES, conversion_matrix
from .import_record import skeleton_from_json, stored_record
from .rig_math import BoneFrames, basis_to_local, joint_basis, local_basis


def clip_space(obj: bpy.types.Object) -> tuple[np.ndarray, float]:
    """File axes -> Blender axes (3x3) and Blender units per clip unit, as File > Export uses them."""
    stored = stored_record(obj)
    if stored is None:
        return conversion_matrix(*DEFAULT_AXES), 1.0
    _, record = skeleton_from_json(stored)
    return np.array(record["conversion"], dtype=np.float64), float(record["scale"])


def armature_skeleton(obj: bpy.types.Object) -> Skeleton:
    """The armature's skeleton in clip space: its import record's (under the bones' current names), else one
    made from its bones; the skeleton :func:`armature_clip` gives."""
    stored = stored_record(obj)
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


def armature_pose(obj: bpy.types.Object, action: bpy.types.Action | None = None) -> Posed:
    """The armature's animation as the local pose of every joint of :func:`armature_skeleton`, with no
    detour through Euler angles or matrices: the bones as Blender shows them (turns and moves a
    joint's channels could not hold included), the exact inverse of :func:`write_pose`."""
    reading = read_armature(obj, ExportSettings(clip_space(obj)[0]), action)
    skeleton = reading.skeleton
    shape = (skeleton.joint_count, len(reading.frames))
    pose = LocalPose(np.empty(shape + (4,)), np.empty(shape + (3,)), np.empty(shape))
    for joint, rotation, location, local_scale in reading.joints():
        pose.rotations[joint], pose.translations[joint] = basis_to_local(reading.bone_frames, joint, rotation,
                                                                         location, reading.native)
        pose.scales[joint] = local_scale
    return Posed(skeleton, pose, reading.frame_time, str(reading.clip_fields["up_axis"]))


def write_clip(obj: bpy.types.Object, clip: Clip, *, name: str, rotation_mode: str = "KEEP",
               frame_start: int | None = None) -> bpy.types.Action:
    """A new action on ``obj`` holding ``clip``, whose joints are bones of ``obj``, in clip space.

    Keys go against the armature's own rest pose (any rolls and rest), one per
    clip frame from ``frame_start`` (the clip's ``start_frame`` when ``None``),
    in each bone's own rotation mode (``"KEEP"``) or ``"QUATERNION"`` /
    ``"EULER"`` (each joint's own order).  The action is assigned to ``obj``.
    """
    if not clip.frame_count:
        raise ValueError("the clip has no frames to write")

    def bases(frames: BoneFrames, scale: float) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        for joint in range(clip.skeleton.joint_count):
            yield (*joint_basis(clip, frames, joint, scale), clip.channel_values(joint, SCALE_CHANNEL))

    first = clip.start_frame if frame_start is None else frame_start
    return _write(obj, clip.skeleton, bases, first + np.arange(clip.frame_count, dtype=np.float64),
                  clip.frame_time, name, rotation_mode)


def write_pose(obj: bpy.types.Object, posed: Posed, *, name: str, frame_start: int,
               rotation_mode: str = "KEEP") -> bpy.types.Action:
    """:func:`write_clip` for a motion held as local poses (:func:`armature_pose`'s, or a blend's)."""
    skeleton, pose = posed.skeleton, posed.pose
    if not posed.frame_count:
        raise ValueError("the motion has no frames to write")

    def bases(frames: BoneFrames, scale: float) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        for joint, layout in enumerate(skeleton.channels):
            yield (*local_basis(frames, joint, pose.rotations[joint], pose.translations[joint], scale),
                   pose.scales[joint] if SCALE_CHANNEL in layout else None)

    return _write(obj, skeleton, bases, frame_start + np.arange(posed.frame_count, dtype=np.float64),
                  posed.frame_time, name, rotation_mode)


def _write(obj: bpy.types.Object, skeleton: Skeleton,
           bases: Callable[[BoneFrames, float], Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]],
           keys: np.ndarray, frame_time: float, name: str, rotation_mode: str) -> bpy.types.Action:
    """A new action on ``obj`` with keys at ``keys`` from each joint's ``matrix_basis`` rotation, location
    and scale (``bases``, given the bone frames and the Blender length of a clip unit)."""
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
    moves = [any(c in MOVE_CHANNELS for c in layout) for layout in skeleton.channels]
    action = write_action(obj, name, skeleton.names, keys, rotation_mode, frames.euler_orders(skeleton), moves,
                          bases(frames, scale))
    action["mocap_frame_time"] = frame_time
    return action
