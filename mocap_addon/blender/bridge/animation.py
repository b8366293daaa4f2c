"""F-curves in bulk: write a clip's bone poses as keys, read keys back as poses (numpy throughout)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

import bpy
import numpy as np

from ...core import rotations
from ...core.reduce import curve_keys
from .armature import pose_bones
from .compat import LINEAR, VECTOR, Channels

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import ObjectRotationModeItems


def bone_path(name: str, prop: str) -> str:
    return f'pose.bones["{bpy.utils.escape_identifier(name)}"].{prop}'


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


def sample_fcurve(fcurve: bpy.types.FCurve, frames: np.ndarray) -> np.ndarray:
    """``fcurve`` at ``frames``: from the keys directly where possible, else Blender's evaluation."""
    keys = fcurve.keyframe_points
    count = len(keys)
    if count == 0:
        return np.full(len(frames), fcurve.evaluate(float(frames[0])) if len(frames) else 0.0)
    co = np.empty(2 * count, dtype=np.float32)
    keys.foreach_get("co", co)
    x, y = co[0::2].astype(np.float64), co[1::2].astype(np.float64)
    plain = len(fcurve.modifiers) == 0 and fcurve.extrapolation == "CONSTANT"
    if plain and np.array_equal(frames, x):  # a curve passes through its keys, whatever the interpolation
        return y
    interpolation = np.empty(count, dtype=np.uint8)  # the enum's own size: copied straight
    keys.foreach_get("interpolation", interpolation)
    if plain and np.all(interpolation[:-1] == LINEAR):
        return np.interp(frames, x, y)
    return np.array([fcurve.evaluate(float(f)) for f in frames])


def fill_curve(fcurve: bpy.types.FCurve, frames: np.ndarray, values: np.ndarray,
               interpolation: int = LINEAR) -> None:
    """Replace ``fcurve``'s keys by ``values`` at ``frames``, in bulk (``interpolation``: an enum value)."""
    keys = fcurve.keyframe_points
    keys.clear()
    keys.add(len(frames))
    keys.foreach_set("co", np.column_stack([frames, values]).astype(np.float32).ravel())
    keys.foreach_set("interpolation", np.full(len(frames), interpolation, dtype=np.uint8))
    fcurve.update()


def curves_by_path(obj: bpy.types.Object | bpy.types.Armature,
                   action: bpy.types.Action) -> dict[tuple[str, int], bpy.types.FCurve]:
    """The F-curves ``obj`` reads from ``action``, by (data path, index)."""
    return {(fc.data_path, fc.array_index): fc for fc in Channels(action, obj, create=False).all()}


def key_count(obj: bpy.types.Object | bpy.types.Armature, action: bpy.types.Action) -> int:
    """How many keys the F-curves ``obj`` reads from ``action`` hold."""
    return sum(len(fcurve.keyframe_points) for fcurve in Channels(action, obj, create=False).all())


def has_keys(curves: dict[tuple[str, int], bpy.types.FCurve], bone_name: str, prop: str) -> bool:
    """Whether any F-curve in ``curves`` animates ``prop`` (e.g. ``"location"``) of the named pose bone."""
    path = bone_path(bone_name, prop)
    return any((path, index) in curves for index in range(4))


def read_bone(pose_bone: bpy.types.PoseBone, curves: dict[tuple[str, int], bpy.types.FCurve],
              frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One bone's ``matrix_basis`` rotation (unit quaternions ``(F, 4)``), location ``(F, 3)`` and uniform
    scale ``(F,)`` at ``frames``, from its F-curves (its current value where a channel has none)."""
    name = pose_bone.name
    count = len(frames)

    def channel(prop: str, size: int, current: object) -> np.ndarray:
        path = bone_path(name, prop)
        fallback = np.array(current, dtype=np.float64)
        return np.stack([sample_fcurve(curves[(path, i)], frames) if (path, i) in curves
                         else np.full(count, fallback[i]) for i in range(size)], axis=-1)

    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        turns = channel("rotation_quaternion", 4, pose_bone.rotation_quaternion)
        turns /= np.maximum(np.linalg.norm(turns, axis=1, keepdims=True), 1e-300)
    elif mode == "AXIS_ANGLE":
        axis_angle = channel("rotation_axis_angle", 4, pose_bone.rotation_axis_angle)
        half = 0.5 * axis_angle[:, 0]
        axis = axis_angle[:, 1:] / np.maximum(np.linalg.norm(axis_angle[:, 1:], axis=1, keepdims=True), 1e-12)
        turns = np.concatenate([np.cos(half)[:, None], np.sin(half)[:, None] * axis], axis=1)
    else:
        ours = mode[::-1]
        by_axis = channel("rotation_euler", 3, pose_bone.rotation_euler)
        turns = rotations.euler_to_quaternion(by_axis[:, ["XYZ".index(a) for a in ours]], ours)
    scale = np.cbrt(np.prod(channel("scale", 3, pose_bone.scale), axis=1))
    return turns, channel("location", 3, pose_bone.location), scale
