"""Reduce Keys: the active armature's action keeps only the keys it needs (``core.reduce``).

The action is read as a core pose (``bridge.read_rig.armature_pose``: what
Blender plays at every frame), reduced so that every bone's head and tail stays
within a tolerance of it, and written again with LINEAR keys at the frames
kept (``write_pose(..., keep=...)``), in each bone's own rotation mode; the
worst error is then measured on the keys written.  Imports, retargeting,
blending and synthesis all leave actions it can work on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import bpy
import numpy as np
from bpy.props import FloatProperty

from ...core.reduce import DEFAULT_TOLERANCE
from ..bridge.armature import armature_data, pose_bones
from ..bridge.compat import (
    add_properties,
    assign_action,
    id_properties,
    id_property,
    remove_properties,
    run_time_property,
)
from ..bridge.import_record import CAPTURES, FRAME_TIME
from ..bridge.progress import Progress
from ..bridge.read_rig import armature_action, captured_action, curves_by_path, key_count
from ..bridge.rollback import nothing_left_behind
from ..bridge.sidebar import SidebarPanel

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

    from ...core import Pose
    from ..bridge.clip_to_armature import KeyReport

# The operator's Tolerance and the panel's (on the scene).
TOLERANCE: dict[str, Any] = {
    "name": "Tolerance", "default": DEFAULT_TOLERANCE, "min": 0.0, "max": 0.1, "soft_max": 0.01, "step": 1,
    "precision": 4, "description": "How far any bone head or tail may move, as a fraction of the figure's height "
                                   "(0.002: 3.6 mm on a 1.8 m figure)"}
ROTATIONS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle")


def _unheld(obj: bpy.types.Object, action: bpy.types.Action, pose: Pose) -> list[str]:
    """The F-curves of ``action`` that rewriting ``pose`` would not write again (other properties, bones
    outside the skeleton, moves or scales its channels do not hold)."""
    from ...core.model import MOVE_CHANNELS, SCALE_CHANNEL
    from ..bridge.armature import bone_path

    held: set[str] = set()
    for name, layout in zip(pose.skeleton.names, pose.skeleton.channels):
        props = ROTATIONS + (("location",) if any(c in MOVE_CHANNELS for c in layout) else ()) + (
            ("scale",) if SCALE_CHANNEL in layout else ())
        held.update(bone_path(name, prop) for prop in props)
    return sorted({path for path, _ in curves_by_path(obj, action) if path not in held})


def reduce_action(context: bpy.types.Context, obj: bpy.types.Object, tolerance: float) -> KeyReport:
    """Reduce the keys of ``obj``'s action to what keeps every bone head and tail within ``tolerance`` (a
    fraction of the figure's height) of it at every frame; the new action replaces the old one (same name).

    Rotations are modelled as the bones key them: Euler angles where every bone
    is in an Euler mode, else quaternions, and then bones in Euler or axis-angle
    modes keep every key.  Returns keys before (the action's) and after, and the
    worst error measured on the keys written (Blender units).
    """
    from ...core.reduce import EulerKeys, bone_points, reduce_keys
    from ..bridge.clip_to_armature import KeyReport
    from ..bridge.read_rig import armature_bone_frames, armature_pose, clip_space, clip_tails
    from ..bridge.write_rig import write_pose

    action = armature_action(obj)
    if action is None:
        raise ValueError(f"{obj.name} has no action to reduce")
    with Progress(context) as progress:
        pose = armature_pose(obj)
        unheld = _unheld(obj, action, pose)
        if unheld:
            raise ValueError(f"{action.name} also animates {', '.join(unheld[:3])}"
                             f"{' …' if len(unheld) > 3 else ''}: Reduce Keys rewrites bone rotations and the "
                             "moves and scales of the joints that have them only")
        progress.update(0.1)
        skeleton = pose.skeleton
        conversion, scale = clip_space(obj)
        modes = [pose_bones(obj)[name].rotation_mode for name in skeleton.names]
        quaternions = [mode == "QUATERNION" for mode in modes]
        euler = None
        if not any(quaternions) and "AXIS_ANGLE" not in modes:
            frames = armature_bone_frames(obj, skeleton, conversion)
            euler = EulerKeys([mode[::-1] for mode in modes], frames.left, frames.to_bone)
        tails = clip_tails(obj, skeleton)
        reduction = reduce_keys(pose, tolerance, euler, tails)
        progress.update(0.5)
        everything = np.arange(pose.frame_count)
        keep = None if reduction.tolerance <= 0 else [
            kept if euler is not None or quaternion else everything
            for kept, quaternion in zip(reduction.frames, quaternions)]
        before = key_count(obj, action)
        try:
            with nothing_left_behind():
                reduced = write_pose(obj, pose, name=action.name, keep=keep, progress=progress.part(0.5, 0.9))
                back = armature_pose(obj, reduced)
        except BaseException:
            assign_action(obj, action)
            raise
    worst = float(np.linalg.norm(bone_points(back, tails) - bone_points(pose, tails), axis=-1).max(initial=0.0))
    for key, value in id_properties(action).items():  # what else the action's custom properties say (takes, ...)
        if key not in (FRAME_TIME, "mocap_reduction"):
            reduced[key] = value
    if captured_action(obj) == action:  # the reduced captures stand for the imported ones
        armature_data(obj)[CAPTURES] = reduced
    if action.users == int(action.use_fake_user):  # nothing else plays it: the reduced action takes its place
        name = action.name
        bpy.data.actions.remove(action)
        reduced.name = name
    report = KeyReport(before, key_count(obj, reduced), worst * scale, reduction.height * scale)
    reduced["mocap_reduction"] = report.record(tolerance)
    return report


def _armature_with_action(context: bpy.types.Context) -> bpy.types.Object | None:
    obj = context.active_object
    return obj if obj is not None and obj.type == "ARMATURE" and armature_action(obj) is not None else None


FLOAT32_NOISE = 1e-6  # of the figure's height: what float32 keys may move a point without any reduction


class MOCAP_OT_reduce_keys(bpy.types.Operator):
    """Keep only the keys the active armature's action needs: every bone's head and tail within Tolerance
    of it at every frame (LINEAR keys)"""

    bl_idname = "mocap.reduce_keys"
    bl_label = "Reduce Keys"
    bl_options = {"REGISTER", "UNDO"}

    tolerance: FloatProperty(**TOLERANCE)

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if _armature_with_action(context) is None:
            cls.poll_message_set("Select an armature with an action")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        obj = _armature_with_action(context)
        assert obj is not None, "poll: an armature with an action"
        started = time.perf_counter()
        try:
            report = reduce_action(context, obj, self.tolerance)
        except ValueError as error:
            self.report({"ERROR"}, f"Reduce Keys failed: {error}")
            return {"CANCELLED"}
        text = f"Reduced {obj.name}: {report.summary()} in {time.perf_counter() - started:.2f} s"
        # Keys are float32: rounding moves a point by up to about 1e-7 of the figure, at any tolerance (0 too).
        if report.worst_error <= (self.tolerance * (1 + 1e-3) + FLOAT32_NOISE) * report.height:
            self.report({"INFO"}, text)
        else:  # bones keyed in Euler or axis-angle modes beside quaternion ones keep their keys, not the bound
            self.report({"WARNING"}, f"{text}: more than the tolerance")
        return {"FINISHED"}


class VIEW3D_PT_mocap_reduce(SidebarPanel):
    """Key reduction of the active armature's action."""

    bl_label = "Keys"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        assert layout is not None and context.scene is not None
        obj = _armature_with_action(context)
        if obj is None:
            layout.label(text="Select an armature with an action")
            return
        action = armature_action(obj)
        assert action is not None
        layout.label(text=f"{action.name}: {key_count(obj, action)} keys")
        reduced = id_property(action, "mocap_reduction")
        if reduced is not None:
            layout.label(text=f"reduced at {reduced['tolerance']:g}: worst error {reduced['worst_error']:.3g}")
        row = layout.row(align=True)
        row.prop(context.scene, "mocap_reduce_tolerance")
        row.operator(MOCAP_OT_reduce_keys.bl_idname, icon="IPO_LINEAR").tolerance = run_time_property(
            context.scene, "mocap_reduce_tolerance")


CLASSES = (MOCAP_OT_reduce_keys, VIEW3D_PT_mocap_reduce)


def register_properties() -> None:
    add_properties(bpy.types.Scene, mocap_reduce_tolerance=FloatProperty(**TOLERANCE))  # type: ignore[func-returns-value]


def unregister_properties() -> None:
    remove_properties(bpy.types.Scene, "mocap_reduce_tolerance")
