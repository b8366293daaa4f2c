"""Writing a rig: the one place that turns the core's skeleton into a new armature and its poses into
the armature's keys (an action, in bulk with ``foreach_set``) or, live, into its pose bones.

Everything is written in the space :mod:`.read_rig` reads (the armature's
clip space: its import record's axes and units, else the exporters' default
axes in Blender units), against the armature's own rest (any rolls), so
``write_pose(obj, armature_pose(obj))`` reproduces the armature's poses, and
core tools (retarget, blend, key reduction) work on any rig and hand their
result back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import bpy
import numpy as np
from mathutils import Matrix

from ...core import Pose, Skeleton, rotations
from ...core.model import MOVE_CHANNELS, SCALE_CHANNEL
from ...core.reduce import curve_keys
from ...core.rotations import FloatArray
from .armature import armature_data, bone_path, pose_bones
from .compat import LINEAR, VECTOR, Channels
from .import_record import FRAME_TIME
from .read_rig import armature_action, armature_bone_frames, clip_space
from .rig_math import RestRig, local_basis

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import ObjectRotationModeItems


def build_armature(name: str, skeleton: Skeleton, rig: RestRig,
                   context: bpy.types.Context) -> bpy.types.Object:
    """A new armature object linked to the active collection, one bone per joint, in object mode."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    view_layer = context.view_layer
    assert context.collection is not None and view_layer is not None, "a scene to build in"
    context.collection.objects.link(obj)
    previous = view_layer.objects.active
    if context.object is not None and context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        bones = []
        for joint, joint_name in enumerate(skeleton.names):
            bone = data.edit_bones.new(joint_name)
            bone.head = rig.heads[joint]
            bone.tail = rig.tails[joint]
            frame = np.eye(4)
            frame[:3, :3] = rig.orientations[joint]
            frame[:3, 3] = rig.heads[joint]
            bone.matrix = Matrix(frame.tolist())
            bones.append(bone)
        for joint, parent in enumerate(skeleton.parents):
            if parent >= 0:
                bones[joint].parent = bones[parent]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        if previous is not None and previous.name in view_layer.objects:
            view_layer.objects.active = previous
    dropped = [joint_name for joint_name in skeleton.names if joint_name not in data.bones]
    if dropped:  # build_rest_rig gives every bone a length Blender keeps: this would be a new Blender rule
        raise ValueError(f"Blender dropped {len(dropped)} bone(s) on leaving edit mode: {', '.join(dropped[:5])}")
    return obj


def rig_copy(context: bpy.types.Context, obj: bpy.types.Object, name: str) -> bpy.types.Object:
    """A copy of the armature ``obj`` (object and data, no animation) called ``name``, in the active collection:
    where a tool writes motion made from ``obj``'s own action without writing over it."""
    copy = obj.copy()
    copy.name = name
    copy.animation_data_clear()
    data = armature_data(obj).copy()
    data.animation_data_clear()
    copy.data = data
    assert context.collection is not None, "a collection to add the copy to"
    context.collection.objects.link(copy)
    return copy


class _KeyWriter:
    """Writes F-curves keyed at (some of) the same frames, reusing one buffer for every curve."""

    def __init__(self, channels: Channels, frames: np.ndarray) -> None:
        self.channels = channels
        self.co = np.empty((len(frames), 2), dtype=np.float32)
        self.co[:, 0] = frames
        # The enums' own size (a byte): foreach_set copies them straight, where int32 goes item by item.
        self.interpolation = np.full(len(frames), LINEAR, dtype=np.uint8)
        # Vector handles suit LINEAR keys (a curve switched to Bezier keeps its shape) and cost
        # fcurve.update() a third less to place than the default automatic ones.
        self.handles = np.full(len(frames), VECTOR, dtype=np.uint8)

    def write(self, path: str, index: int, group: str, values: np.ndarray, kept: np.ndarray | None = None) -> None:
        """A curve with ``values`` (one per frame) keyed at every frame, or at the frame indices ``kept``."""
        fcurve = self.channels.new(path, index, group)
        keys = fcurve.keyframe_points
        co = self.co if kept is None else self.co[kept]
        co[:, 1] = values if kept is None else values[kept]
        keys.add(len(co))
        keys.foreach_set("co", co.ravel())
        keys.foreach_set("interpolation", self.interpolation[:len(co)])
        keys.foreach_set("handle_left_type", self.handles[:len(co)])
        keys.foreach_set("handle_right_type", self.handles[:len(co)])
        fcurve.update()

    def write_all(self, bone: str, prop: str, values: np.ndarray, frames_kept: np.ndarray | None) -> None:
        """One curve per column of ``values`` for a pose bone's ``prop``, each keyed at the frames it needs
        of ``frames_kept`` (frame indices; every frame when ``None``)."""
        path = bone_path(bone, prop)
        for index in range(values.shape[1]):
            kept = None if frames_kept is None else curve_keys(values[:, index], frames_kept)
            self.write(path, index, bone, values[:, index], kept)


def euler_mode(order: str) -> str:
    """Blender's rotation_mode for rotations composed in ``order`` (ours; missing axes follow, none: XYZ)."""
    full = order + "".join(a for a in "XYZ" if a not in order) if order else "ZYX"
    return rotations.blender_order(full)


def write_action(obj: bpy.types.Object, name: str, names: list[str], frames: np.ndarray, rotation_mode: str,
                 orders: list[str], location_joints: list[bool],
                 poses: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray | None]],
                 keep: list[np.ndarray] | None = None) -> bpy.types.Action:
    """A new action on ``obj`` with one group per bone and keys at ``frames``.

    ``poses`` yields, bone by bone, the ``matrix_basis`` rotations as unit quaternions
    ``(F, 4)``, locations ``(F, 3)`` and uniform scales ``(F,)`` (``None`` when constant 1).
    ``rotation_mode``: ``"QUATERNION"``, ``"EULER"`` (each joint's own order) or
    ``"KEEP"`` (each bone's current rotation mode, axis-angle included).  Euler
    rotations are composed in the bone's ``orders`` entry (ours, on the bone's
    axes) or its kept mode, continuous over time and starting nearest zero.
    With ``keep`` (a reduction's frame indices per bone), each curve is keyed at
    those of its bone's frames it needs (:func:`~..core.reduce.curve_keys`).
    """
    action = bpy.data.actions.new(name)
    writer = _KeyWriter(Channels(action, obj), frames)
    for joint, (bone_name, (turns, locations, scales)) in enumerate(zip(names, poses)):
        frames_kept = None if keep is None else keep[joint]
        pose_bone = pose_bones(obj)[bone_name]
        mode: str = pose_bone.rotation_mode if rotation_mode == "KEEP" else rotation_mode
        if mode in ("QUATERNION", "AXIS_ANGLE"):
            pose_bone.rotation_mode = cast("ObjectRotationModeItems", mode)
            values = rotations.quaternion_continuity(turns)
            prop = "rotation_quaternion"
            if mode == "AXIS_ANGLE":
                values, prop = axis_angle_values(values), "rotation_axis_angle"
        else:
            mode = euler_mode(orders[joint]) if mode == "EULER" else mode
            pose_bone.rotation_mode = cast("ObjectRotationModeItems", mode)
            ours = mode[::-1]
            angles = rotations.euler_continuity(rotations.quaternion_to_euler(turns, ours), np.zeros(3))
            values = angles[:, [ours.index(axis) for axis in "XYZ"]]
            prop = "rotation_euler"
        writer.write_all(bone_name, prop, values, frames_kept)
        if location_joints[joint]:
            writer.write_all(bone_name, "location", locations, frames_kept)
        if scales is not None and np.abs(scales - 1.0).max(initial=0.0) > 1e-9:
            writer.write_all(bone_name, "scale", np.repeat(scales[:, None], 3, axis=1), frames_kept)
    return action


def axis_angle_values(quaternions: np.ndarray) -> np.ndarray:
    """Blender's axis-angle values (angle, x, y, z) for continuous quaternions ``(F, 4)``."""
    vector = quaternions[:, 1:]
    length = np.linalg.norm(vector, axis=1)
    axis = np.where(length[:, None] > 1e-12, vector / np.maximum(length, 1e-300)[:, None], [0.0, 1.0, 0.0])
    return np.column_stack([2.0 * np.arctan2(length, quaternions[:, 0]), axis])


def fill_curve(fcurve: bpy.types.FCurve, frames: np.ndarray, values: np.ndarray,
               interpolation: int = LINEAR) -> None:
    """Replace ``fcurve``'s keys by ``values`` at ``frames``, in bulk (``interpolation``: an enum value)."""
    keys = fcurve.keyframe_points
    keys.clear()
    keys.add(len(frames))
    keys.foreach_set("co", np.column_stack([frames, values]).astype(np.float32).ravel())
    keys.foreach_set("interpolation", np.full(len(frames), interpolation, dtype=np.uint8))
    fcurve.update()


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
    replaced = armature_action(obj)
    action = write_action(obj, name, skeleton.names, first + np.arange(pose.frame_count, dtype=np.float64),
                          rotation_mode, frames.euler_orders(skeleton), moves, bases(), keep)
    action[FRAME_TIME] = pose.frame_time
    keep_action(action)
    if replaced is not None:
        keep_action(replaced)
    return action


def keep_action(action: bpy.types.Action) -> None:
    """Give ``action`` a fake user, so it is saved with the file when no rig plays it any more: every action
    the add-on makes, and every action it takes off a rig, is kept (Blender's Action editor lists them)."""
    action.use_fake_user = True


@dataclass
class Poser:
    """How one skeleton's local poses become one armature's pose-bone values: what a live tool does each frame.

    The constant matrices between the skeleton's joints and the armature's
    bones (:mod:`.rig_math`) are folded into per-joint arrays once, so a frame
    is a few array products and one ``foreach_set`` per pose-bone property, the
    same values :func:`write_pose` keys (each bone in its own rotation mode).
    """

    turns: FloatArray  # (J, 4, 4): a joint's local quaternion times this is its bone's basis rotation
    moves: FloatArray  # (J, 3, 3): a joint's local translation times this (transposed), less rest, ...
    rest_offset: FloatArray  # (J, 3)
    rest_inverse: FloatArray  # (J, 3, 3)
    bone_joints: list[int]  # for each pose bone, its joint
    modes: dict[str, list[int]]  # rotation mode -> pose bones (positions in pose.bones)

    @classmethod
    def of(cls, obj: bpy.types.Object, skeleton: Skeleton) -> Poser:
        """For ``skeleton`` (its joints named as ``obj``'s bones, in clip space) on ``obj``."""
        conversion, scale = clip_space(obj)
        frames = armature_bone_frames(obj, skeleton, conversion)
        turns = np.stack([rotations.quaternion_product_matrix(left, to_bone) for left, to_bone in frames.turns])
        assert obj.pose is not None, "an armature object has a pose"
        bones = obj.pose.bones
        missing = [bone.name for bone in bones if bone.name not in skeleton.names]
        if missing:
            raise ValueError(f"{obj.name}'s bones {', '.join(missing[:5])} are not in the motion's skeleton")
        modes: dict[str, list[int]] = {}
        for position, bone in enumerate(bones):
            modes.setdefault(bone.rotation_mode, []).append(position)
        return cls(turns, scale * frames.from_parent, frames.rest_offset, frames.rest_inverse,
                   [skeleton.index(bone.name) for bone in bones], modes)

    def apply(self, obj: bpy.types.Object, turns: FloatArray, moves: FloatArray, scales: FloatArray | None) -> None:
        """Pose ``obj``'s bones as the skeleton's local rotations ``(J, 4)``, translations ``(J, 3)`` and
        scales ``(J,)`` (clip space; ``None``: leave the scales) and tag it for redrawing."""
        joints = self.bone_joints
        assert obj.pose is not None, "an armature object has a pose"
        turned = np.einsum("jk,jkl->jl", turns[joints], self.turns[joints])
        moved = np.einsum("jk,jlk->jl", moves[joints], self.moves[joints]) - self.rest_offset[joints]
        located = np.einsum("jk,jlk->jl", moved, self.rest_inverse[joints])
        bones = obj.pose.bones
        count = len(joints)
        for mode, where in self.modes.items():
            if mode == "QUATERNION":
                values = np.empty((count, 4), dtype=np.float32)
                bones.foreach_get("rotation_quaternion", values.ravel())
                values[where] = turned[where]
                bones.foreach_set("rotation_quaternion", values.ravel())
            elif mode == "AXIS_ANGLE":
                values = np.empty((count, 4), dtype=np.float32)
                bones.foreach_get("rotation_axis_angle", values.ravel())
                values[where] = axis_angle_values(turned[where])
                bones.foreach_set("rotation_axis_angle", values.ravel())
            else:
                values = np.empty((count, 3), dtype=np.float32)
                bones.foreach_get("rotation_euler", values.ravel())
                ours = mode[::-1]
                angles = rotations.quaternion_to_euler(turned[where], ours)
                values[where] = angles[:, [ours.index(axis) for axis in "XYZ"]]
                bones.foreach_set("rotation_euler", values.ravel())
        bones.foreach_set("location", located.astype(np.float32).ravel())
        if scales is not None:
            bones.foreach_set("scale", np.repeat(scales[joints].astype(np.float32)[:, None], 3, axis=1).ravel())
        obj.update_tag(refresh={"DATA"})
