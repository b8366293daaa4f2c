"""Retarget panel: one armature's action onto any other rig, an armature onto the canonical skeleton,
and reference poses for rigs whose automatic T-pose is wrong.

Each operator reads the armatures as core poses (``bridge.read_rig``) with their
stored bone mappings (the Bone Mapping panel's, detected when missing), calls
one core function (``core.retarget``) and writes the result with
``foreach_set`` keys; core errors become reports, and a failure leaves the
scene's objects, armatures and actions as they were.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import bpy
from bpy.props import BoolProperty, PointerProperty, StringProperty

from ...core.options import BONE_LENGTHS, CANONICAL_FEET, CANONICAL_METHOD, FEET, HIPS_TRAVEL, RIG_CONTROLS
from ..bridge.armature import is_armature, named_or_selected
from ..bridge.bone_mapping import armature_mapping
from ..bridge.choices import chosen, enum_property
from ..bridge.compat import add_properties, remove_properties, run_time_property
from ..bridge.frame_range import FrameRange
from ..bridge.progress import Progress
from ..bridge.read_rig import armature_action
from ..bridge.reference_pose import clear_reference_pose, has_reference_pose, reference_rotations, store_reference_pose
from ..bridge.retarget_inputs import retargeted
from ..bridge.sidebar import SidebarPanel

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

class _RootOption:
    """How a retarget moves the hips and the feet, and what it keys on a control rig (the retarget operator's
    and the panel's)."""

    root: enum_property(HIPS_TRAVEL)
    feet: enum_property(FEET)
    controls: enum_property(RIG_CONTROLS)


class _CanonicalOptions:
    """How an armature goes onto the canonical skeleton (the operator's and the panel's)."""

    method: enum_property(CANONICAL_METHOD)
    lengths: enum_property(BONE_LENGTHS)


class MOCAP_OT_retarget(_RootOption, FrameRange, bpy.types.Operator):
    """Write the source armature's action onto the target armature as a new action"""

    bl_idname = "mocap.retarget"
    bl_label = "Retarget"
    bl_options = {"REGISTER", "UNDO"}

    # Not remembered between runs: run again from F3 or the redo panel, the selection decides.
    source: StringProperty(name="Source", options={"SKIP_SAVE"},
                           description="Armature whose action is read (empty: the other selected armature)")
    target: StringProperty(name="Target", options={"SKIP_SAVE"},
                           description="Armature that gets the new action (empty: the active armature)")
    control_mapping: StringProperty(name="Control Mapping", subtype="FILE_PATH", options={"SKIP_SAVE"},
                                    description="A JSON file naming each deform bone's control bones, kept on the "
                                                "target (empty: the target's kept one; Rigify's for a generated "
                                                "Rigify rig)")

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ..bridge.control_rig import check_controls, control_rig, key_controls, load_controls, store_controls
        from ..bridge.rollback import nothing_left_behind
        from ..bridge.write_rig import write_pose

        started = time.perf_counter()
        try:
            target, source = named_or_selected(context, self.target, self.source,
                                               ("the target", "the source armature"))
        except LookupError as error:
            self.report({"ERROR"}, f"Retarget: {error}")
            return {"CANCELLED"}
        if source == target:
            self.report({"ERROR"}, f"Retarget: {source.name} is both source and target")
            return {"CANCELLED"}
        source_action = armature_action(source)
        if source_action is None:
            self.report({"ERROR"}, f"Retarget: {source.name} has no action")
            return {"CANCELLED"}
        try:
            keys = chosen(RIG_CONTROLS, self.controls)
            rig = None if keys == "bones" else (
                load_controls(self.control_mapping) if self.control_mapping else control_rig(target, keys == "ik"))
            if rig is not None:
                check_controls(target, rig)
            with Progress(context) as progress:
                result = retargeted(source, target, chosen(HIPS_TRAVEL, self.root), chosen(FEET, self.feet), self,
                                    rig)
                progress.update(0.5)
                name = f"{source_action.name} on {target.name}"
                with nothing_left_behind():
                    if rig is None:
                        action = write_pose(target, result, name=name, progress=progress.part(0.5, 1.0))
                    else:
                        action = key_controls(target, rig, result, name=name)
                        if self.control_mapping:
                            store_controls(target, rig)
        except ValueError as error:
            self.report({"ERROR"}, f"Retarget failed: {error}")
            return {"CANCELLED"}
        for warning in result.metadata.get("warnings", []):
            self.report({"WARNING"}, f"Retarget: {warning}")
        keyed = "" if rig is None else f" (controls of {rig.name})"
        self.report({"INFO"}, f"Retargeted {source.name} onto {target.name}{keyed}: {action.name}, "
                              f"{result.frame_count} frames in {time.perf_counter() - started:.2f} s")
        return {"FINISHED"}


class MOCAP_OT_to_canonical(_CanonicalOptions, bpy.types.Operator):
    """Make a new armature <name>_canonical on the canonical skeleton carrying the active armature's action"""

    bl_idname = "mocap.to_canonical"
    bl_label = "To Canonical Skeleton"
    bl_options = {"REGISTER", "UNDO"}

    feet: enum_property(CANONICAL_FEET)

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            cls.poll_message_set("Make an armature with an action active")
            return False
        if armature_action(obj) is None:
            cls.poll_message_set(f"{obj.name} has no action to convert")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.retarget.transfer import to_canonical
        from ..bridge.clip_to_armature import ImportSettings, import_clip
        from ..bridge.conversion import DEFAULT_AXES, conversion_matrix
        from ..bridge.read_rig import armature_pose

        obj, view_layer = context.active_object, context.view_layer
        assert obj is not None and view_layer is not None, "poll: an active armature"
        try:
            pose = armature_pose(obj)
            canonical = to_canonical(pose, method=chosen(CANONICAL_METHOD, self.method),
                                     lengths=chosen(BONE_LENGTHS, self.lengths),
                                     feet=chosen(CANONICAL_FEET, self.feet),
                                     mapping=armature_mapping(obj), reference=reference_rotations(obj))
            settings = ImportSettings(conversion_matrix(*DEFAULT_AXES), frame_start=pose.start_frame)
            result = import_clip(context, canonical.to_clip(), f"{obj.name}_canonical", settings)
        except ValueError as error:
            self.report({"ERROR"}, f"Canonical conversion failed: {error}")
            return {"CANCELLED"}
        for other in view_layer.objects.selected:
            other.select_set(False)
        result.obj.select_set(True)
        view_layer.objects.active = result.obj
        self.report({"INFO"}, f"Made {result.summary()}")
        return {"FINISHED"}


class MOCAP_OT_set_reference_pose(bpy.types.Operator):
    """Store the active armature's current pose as the pose it stands in for retargeting (its T-pose)"""

    bl_idname = "mocap.set_reference_pose"
    bl_label = "Set Reference Pose"
    bl_options = {"REGISTER", "UNDO"}

    clear: BoolProperty(name="Clear", default=False, description="Forget the stored pose: use the automatic T-pose")

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if context.active_object is None or context.active_object.type != "ARMATURE":
            cls.poll_message_set("Make an armature active: its current pose is stored")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        obj, view_layer = context.active_object, context.view_layer
        assert obj is not None and view_layer is not None, "poll: an active armature"
        if self.clear:
            clear_reference_pose(obj)
            self.report({"INFO"}, f"{obj.name}: reference pose cleared (automatic T-pose)")
            return {"FINISHED"}
        view_layer.update()
        store_reference_pose(obj)
        self.report({"INFO"}, f"{obj.name}: current pose stored as its reference pose")
        return {"FINISHED"}


class MOCAP_PG_retarget(_RootOption, FrameRange, _CanonicalOptions, bpy.types.PropertyGroup):
    """The Retarget panel's choices, kept on the scene."""

    source: PointerProperty(type=bpy.types.Object, name="Source", poll=is_armature,
                            description="Armature whose active action is retargeted")
    target: PointerProperty(type=bpy.types.Object, name="Target", poll=is_armature,
                            description="Any rig: gets a new action")
    canonical_feet: enum_property(CANONICAL_FEET)  # To Canonical's (the retarget's Feet is the other)


class VIEW3D_PT_mocap_retarget(SidebarPanel):
    """Retargeting and canonical conversion in the 3D View sidebar (Mocap tab)."""

    bl_label = "Retarget"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        assert layout is not None and context.scene is not None
        settings = run_time_property(context.scene, "mocap_retarget")
        column = layout.column(align=True)
        column.prop(settings, "source")
        column.prop(settings, "target")
        for name in ("root", "feet", "controls", *FrameRange.__annotations__):
            column.prop(settings, name)
        row = layout.row()
        row.enabled = settings.source is not None and settings.target is not None
        operator = row.operator(MOCAP_OT_retarget.bl_idname, icon="ARMATURE_DATA")
        operator.source = settings.source.name if settings.source else ""
        operator.target = settings.target.name if settings.target else ""
        for name in ("root", "feet", "controls", *FrameRange.__annotations__):
            setattr(operator, name, getattr(settings, name))
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            layout.label(text="Select an armature for the tools below")
            return
        box = layout.box()
        box.label(text=f"Active: {obj.name}")
        column = box.column(align=True)
        column.prop(settings, "method")
        column.prop(settings, "lengths")
        column.prop(settings, "canonical_feet")
        operator = box.operator(MOCAP_OT_to_canonical.bl_idname, icon="OUTLINER_OB_ARMATURE")
        operator.method, operator.lengths = settings.method, settings.lengths
        operator.feet = settings.canonical_feet
        row = box.row(align=True)
        row.operator(MOCAP_OT_set_reference_pose.bl_idname, icon="POSE_HLT").clear = False
        row.operator(MOCAP_OT_set_reference_pose.bl_idname, text="", icon="X").clear = True
        box.label(text="Reference pose: stored" if has_reference_pose(obj) else "Reference pose: automatic T-pose")


CLASSES = (MOCAP_OT_retarget, MOCAP_OT_to_canonical, MOCAP_OT_set_reference_pose, MOCAP_PG_retarget,
           VIEW3D_PT_mocap_retarget)


def register_properties() -> None:
    add_properties(bpy.types.Scene, mocap_retarget=PointerProperty(  # type: ignore[func-returns-value]  # stubs
                       type=MOCAP_PG_retarget))


def unregister_properties() -> None:
    remove_properties(bpy.types.Scene, "mocap_retarget")
