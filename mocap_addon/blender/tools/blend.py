"""Blend tool: two armatures' actions mixed into a third armature, the envelope of a bone, and solving the mix.

``mocap.blend`` bakes ``core.blend`` of clip A and clip B onto ``<A>_blend``, a
copy of A's rig.  The result's armature data keeps the settings it was made
with; its ``mix`` is animatable, so keying it over time gives a mix profile
that the next bake ("Update") follows frame by frame.  ``mocap.envelope`` draws
a bone's path for several mixes as curve objects; ``mocap.solve_mix`` keys the
mix that brings a bone onto an Empty (or the 3D cursor) at the current frame
and bakes again.  Every operator computes first and creates data last, and a
failure leaves ``bpy.data`` as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import bpy
import numpy as np
from bpy.props import FloatProperty, IntProperty, PointerProperty, StringProperty

from ..bridge.armature import (
    armature_data,
    armature_named,
    is_armature,
    make_active,
    named_or_selected,
    pose_bones,
)
from ..bridge.blend_inputs import BLEND_OPTIONS, BlendOptions, Prepared, clip_to_world, prepare_blend
from ..bridge.compat import add_properties, assign_action, remove_properties, run_time_property
from ..bridge.frame_range import FrameRange, in_range
from ..bridge.progress import Progress
from ..bridge.read_rig import armature_action, key_points, keyed_curve, sample_fcurve
from ..bridge.rollback import nothing_left_behind
from ..bridge.sidebar import SidebarPanel
from ..bridge.write_rig import rig_copy

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

    from ...core import Pose

MIX_PATH = "mocap_blend.mix"


def _is_empty(self: Any, obj: bpy.types.Object) -> bool:
    return obj.type == "EMPTY"


class _BlendOptions(BlendOptions, FrameRange):
    """How A and B are blended, besides which they are: the blend operator's and :class:`MocapBlendSettings`'."""

    mix: FloatProperty(name="Mix", default=0.5, soft_min=0.0, soft_max=1.0,
                       description="0 is A, 1 is B; key it over time for a mix profile")


OPTIONS = ("mix", *BLEND_OPTIONS, *FrameRange.__annotations__)  # the frame range: A's frames used


class MocapBlendSettings(_BlendOptions, bpy.types.PropertyGroup):
    """What a blend is made of: on the scene (the panel's inputs) and on each result's armature data."""

    clip_a: PointerProperty(type=bpy.types.Object, name="A", poll=is_armature,
                            description="Armature whose action is mix 0 (the result is on its rig and frames)")
    clip_b: PointerProperty(type=bpy.types.Object, name="B", poll=is_armature,
                            description="Armature whose action is mix 1")


class MocapBlendTools(bpy.types.PropertyGroup):
    """The panel's envelope and solve inputs (on the scene)."""

    bone: StringProperty(name="Bone", description="Bone whose path is drawn or brought onto the target")
    count: IntProperty(name="Paths", default=11, min=2, max=101, description="Mixes from 0 to 1 drawn as paths")
    target: PointerProperty(type=bpy.types.Object, name="Target", poll=_is_empty,
                            description="Empty the bone should meet (none: the 3D cursor)")


def blend_settings(owner: bpy.types.Scene | bpy.types.Object) -> MocapBlendSettings:
    """The blend settings of a scene (the panel's inputs) or of a blend result's armature (what made it)."""
    holder = owner if isinstance(owner, bpy.types.Scene) else armature_data(owner)
    settings: MocapBlendSettings = run_time_property(holder, "mocap_blend")
    return settings


def blend_result(obj: bpy.types.Object | None) -> bpy.types.Object | None:
    """``obj`` if it is an armature made by ``mocap.blend`` whose clips still exist."""
    if obj is None or obj.type != "ARMATURE":
        return None
    settings = blend_settings(obj)
    return obj if settings.clip_a is not None and settings.clip_b is not None else None


def _mix_profile(result: bpy.types.Object | None, frames: np.ndarray, mix: float) -> np.ndarray | float:
    """The keyed mix of an existing result at ``frames``, else ``mix``."""
    curve = keyed_curve(armature_data(result), MIX_PATH) if result is not None else None
    return mix if curve is None else sample_fcurve(curve, frames)


def _prepare(clip_a: bpy.types.Object, clip_b: bpy.types.Object, settings: _BlendOptions) -> Prepared:
    """:func:`prepare_blend`, A cut to the settings' frame range (the result spans A's frames used)."""
    prepared = prepare_blend(clip_a, clip_b, settings)
    prepared.a = in_range(prepared.a, settings)
    return prepared


def bake(context: bpy.types.Context, clip_a: bpy.types.Object, clip_b: bpy.types.Object,
         settings: _BlendOptions, result: bpy.types.Object | None,
         prepared: Prepared | None = None) -> bpy.types.Object:
    """Blend ``clip_a`` and ``clip_b``'s actions (read from them unless ``prepared``) with ``settings``
    onto ``result`` (made as a copy of A's rig when ``None``) and record what it is made of on it; returns it.

    The mix is the result's keyed profile where it has one.  Blender's progress
    indicator follows reading, blending (time warping included) and keying.
    """
    from ...core.blend.mixing import blend

    with Progress(context) as progress:
        prepared = _prepare(clip_a, clip_b, settings) if prepared is None else prepared
        progress.update(0.3)
        a = prepared.a
        first = a.start_frame
        frames = first + np.arange(a.frame_count, dtype=np.float64)
        mixed = blend(a, prepared.b, _mix_profile(result, frames, settings.mix), **prepared.options)
        progress.update(0.7)
        return _keyed(context, clip_a, clip_b, settings, result, mixed, first, progress.part(0.7, 1.0))


def _keyed(context: bpy.types.Context, clip_a: bpy.types.Object, clip_b: bpy.types.Object,
           settings: _BlendOptions, result: bpy.types.Object | None, mixed: Pose, first: int,
           progress: Callable[[float], None]) -> bpy.types.Object:
    """``mixed`` keyed onto ``result`` (made as a copy of A's rig when ``None``), with what made it."""
    from ..bridge.write_rig import write_pose

    old = armature_action(result) if result is not None else None
    try:
        with nothing_left_behind():
            if result is None:
                result = rig_copy(context, clip_a, f"{clip_a.name}_blend")
            write_pose(result, mixed, name=result.name, frame_start=first, progress=progress)
    except BaseException:
        if old is not None and result is not None and result.name in bpy.data.objects:
            assign_action(result, old)
        raise
    made = blend_settings(result)
    made.clip_a, made.clip_b = clip_a, clip_b
    for name in OPTIONS:
        setattr(made, name, getattr(settings, name))
    return result


class MOCAP_OT_blend(_BlendOptions, bpy.types.Operator):
    """Blend two armatures' actions into <A>_blend (made, or updated following its keyed mix)"""

    bl_idname = "mocap.blend"
    bl_label = "Blend Clips"
    bl_options = {"REGISTER", "UNDO"}

    # Not remembered between runs: run again from F3 or the redo panel, the selection decides.
    clip_a: StringProperty(name="A", options={"SKIP_SAVE"},
                           description="Armature whose action is mix 0 (empty: the active armature)")
    clip_b: StringProperty(name="B", options={"SKIP_SAVE"},
                           description="Armature whose action is mix 1 (empty: the other selected armature)")

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        started = time.perf_counter()
        try:
            clip_a, clip_b = named_or_selected(context, self.clip_a, self.clip_b, ("A", "armature B"))
        except LookupError as error:
            self.report({"ERROR"}, f"Blend failed: {error}")
            return {"CANCELLED"}
        existing = blend_result(armature_named(f"{clip_a.name}_blend"))
        result = existing if existing is not None and blend_settings(existing).clip_a == clip_a else None
        try:
            result = bake(context, clip_a, clip_b, self, result)
        except (ValueError, RuntimeError) as error:
            self.report({"ERROR"}, f"Blend failed: {error}")
            return {"CANCELLED"}
        make_active(context, result)
        self.report({"INFO"}, f"Blended {clip_a.name} and {clip_b.name} into {result.name} "
                              f"in {time.perf_counter() - started:.2f} s")
        return {"FINISHED"}


class _OnBlendResult(bpy.types.Operator):
    """Operators that work on the active blend result."""

    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if blend_result(context.active_object) is None:
            cls.poll_message_set("Make a blend result active (an armature made by Blend Clips, its clips still there)")
            return False
        return True


def _active_result(context: bpy.types.Context) -> bpy.types.Object:
    result = blend_result(context.active_object)
    assert result is not None, "poll: a blend result is active"
    return result


class MOCAP_OT_blend_update(_OnBlendResult):
    """Bake the active blend result again from its clips, following its keyed mix"""

    bl_idname = "mocap.blend_update"
    bl_label = "Update Blend"

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        result = _active_result(context)
        try:
            made = blend_settings(result)
            bake(context, made.clip_a, made.clip_b, made, result)
        except (ValueError, RuntimeError) as error:
            self.report({"ERROR"}, f"Update failed: {error}")
            return {"CANCELLED"}
        return {"FINISHED"}


def _bone_of(result: bpy.types.Object, bone: str) -> str:
    if bone not in pose_bones(result):
        raise ValueError(f"{result.name} has no bone {bone!r}")
    return bone


class MOCAP_OT_envelope(_OnBlendResult):
    """Draw a bone's path for several mixes between A and B as curves (the envelope), in their own collection"""

    bl_idname = "mocap.envelope"
    bl_label = "Draw Envelope"

    bone: StringProperty(name="Bone")
    count: IntProperty(name="Paths", default=11, min=2, max=101)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.blend.mixing import envelope

        result = _active_result(context)
        settings = blend_settings(result)
        mixes = np.linspace(0.0, 1.0, self.count)
        try:
            bone = _bone_of(result, self.bone)
            prepared = _prepare(settings.clip_a, settings.clip_b, settings)
            paths = envelope(prepared.a, prepared.b, bone, mixes, **prepared.options)
            with nothing_left_behind(bpy.data.curves, bpy.data.collections):
                collection = _envelope_collection(context, f"{result.name}_envelope")
                world = clip_to_world(result)
                for mix, path in zip(mixes, paths):
                    points = path @ world[:3, :3].T + world[:3, 3]
                    collection.objects.link(_path_object(f"{result.name} {bone} mix {mix:.2f}", points, mix))
        except (ValueError, RuntimeError) as error:
            self.report({"ERROR"}, f"Envelope failed: {error}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Drew {self.count} paths of {bone} in {collection.name}")
        return {"FINISHED"}


def _envelope_collection(context: bpy.types.Context, name: str) -> bpy.types.Collection:
    """The collection ``name`` emptied of its curves, or a new one in the scene."""
    collection = bpy.data.collections.get(name)
    if collection is None:
        collection = bpy.data.collections.new(name)
        assert context.scene is not None, "a scene to show the paths in"
        context.scene.collection.children.link(collection)
    for obj in list(collection.objects):
        data = obj.data
        bpy.data.objects.remove(obj)
        if isinstance(data, bpy.types.Curve) and data.users == 0:
            bpy.data.curves.remove(data)
    return collection


def _path_object(name: str, points: np.ndarray, mix: float) -> bpy.types.Object:
    """A poly curve through ``points`` (world space), coloured from blue (mix 0) to orange (mix 1)."""
    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions = "3D"
    spline = curve.splines.new("POLY")
    spline.points.add(len(points) - 1)
    co = np.ones((len(points), 4), dtype=np.float32)
    co[:, :3] = points
    spline.points.foreach_set("co", co.ravel())
    obj = bpy.data.objects.new(name, curve)
    obj.color = (0.2 + 0.8 * mix, 0.4, 1.0 - 0.8 * mix, 1.0)
    return obj


class MOCAP_OT_solve_mix(_OnBlendResult):
    """Key the mix that brings the bone onto the target (an Empty, or the 3D cursor) at the current frame"""

    bl_idname = "mocap.solve_mix"
    bl_label = "Solve Mix"

    bone: StringProperty(name="Bone")
    target: StringProperty(name="Target", description="Empty to reach (empty: the 3D cursor)")

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.blend.mixing import solve_mix

        result, scene = _active_result(context), context.scene
        assert scene is not None, "a scene's current frame"
        settings = blend_settings(result)
        frame = scene.frame_current
        try:
            bone = _bone_of(result, self.bone)
            goal = self._goal(context)
            prepared = _prepare(settings.clip_a, settings.clip_b, settings)
            index = frame - prepared.a.start_frame
            if not 0 <= index < prepared.a.frame_count:
                raise ValueError(f"frame {frame} is outside A's frames")
            world = clip_to_world(result)
            target = np.linalg.solve(world, np.append(goal, 1.0))[:3]
            mix, distance = solve_mix(prepared.a, prepared.b, bone, index, target, **prepared.options)
            undo = _key_mix(armature_data(result), frame, mix)
            try:
                bake(context, settings.clip_a, settings.clip_b, settings, result, prepared)
            except BaseException:
                undo()
                raise
        except (ValueError, RuntimeError) as error:
            self.report({"ERROR"}, f"Solve failed: {error}")
            return {"CANCELLED"}
        distance *= float(np.linalg.norm(world[:3, 0]))
        if distance <= 1e-4:
            self.report({"INFO"}, f"Mix {mix:.4f} keyed at frame {frame}: {bone} meets the target")
        else:
            self.report({"WARNING"}, f"Out of reach: mix {mix:.4f} keyed at frame {frame} brings {bone} "
                                     f"nearest, {distance:.4g} m away")
        return {"FINISHED"}

    def _goal(self, context: bpy.types.Context) -> np.ndarray:
        """The target's world position: the named Empty's, else the 3D cursor's."""
        if not self.target:
            assert context.scene is not None, "a scene's 3D cursor"
            return np.array(context.scene.cursor.location)
        empty = bpy.data.objects.get(self.target)
        if empty is None:
            raise ValueError(f"no object called {self.target!r}")
        return np.array(empty.matrix_world.translation)


def _key_mix(data: bpy.types.Armature, frame: int, mix: float) -> Callable[[], None]:
    """Set and key the result's mix at ``frame``; returns what undoes it."""
    settings: MocapBlendSettings = run_time_property(data, "mocap_blend")
    value = settings.mix
    action = armature_action(data)
    curve = keyed_curve(data, MIX_PATH)
    keyed = curve is not None and np.any(key_points(curve)[0] == frame)
    keyed_value = float(sample_fcurve(curve, np.array([float(frame)]))[0]) if curve is not None and keyed else 0.0
    settings.mix = mix
    data.keyframe_insert(MIX_PATH, frame=frame)

    def undo() -> None:
        if action is None:
            if (made := armature_action(data)) is not None:
                bpy.data.actions.remove(made)
            data.animation_data_clear()
        elif keyed:
            settings.mix = keyed_value
            data.keyframe_insert(MIX_PATH, frame=frame)
        else:
            data.keyframe_delete(MIX_PATH, frame=frame)
        settings.mix = value

    return undo


class VIEW3D_PT_mocap_blend(SidebarPanel):
    """Blend two clips, draw a bone's envelope, solve the mix that reaches a target."""

    bl_label = "Blend"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        layout, scene = self.layout, context.scene
        assert layout is not None and scene is not None
        layout.use_property_split = True
        settings = blend_settings(scene)
        column = layout.column()
        for name in ("clip_a", "clip_b", *OPTIONS):
            column.prop(settings, name)
        row = layout.row()
        row.enabled = settings.clip_a is not None and settings.clip_b is not None
        operator = row.operator(MOCAP_OT_blend.bl_idname, icon="MOD_ARRAY")
        if row.enabled:
            operator.clip_a, operator.clip_b = settings.clip_a.name, settings.clip_b.name
            for name in OPTIONS:
                setattr(operator, name, getattr(settings, name))
        result = blend_result(context.active_object)
        if result is None:
            layout.label(text="Select a blend result to key its mix")
            return
        box = layout.box()
        made = blend_settings(result)
        box.label(text=f"{result.name}: {made.clip_a.name} / {made.clip_b.name}")
        box.prop(made, "mix", text="Mix (keyable)")
        box.operator(MOCAP_OT_blend_update.bl_idname, icon="FILE_REFRESH")
        tools = run_time_property(scene, "mocap_blend_tools")
        box.prop_search(tools, "bone", armature_data(result), "bones")
        box.prop(tools, "count")
        operator = box.operator(MOCAP_OT_envelope.bl_idname, icon="CURVE_PATH")
        operator.bone, operator.count = tools.bone, tools.count
        box.prop(tools, "target")
        operator = box.operator(MOCAP_OT_solve_mix.bl_idname, icon="CON_TRACKTO")
        operator.bone, operator.target = tools.bone, tools.target.name if tools.target else ""


CLASSES = (MocapBlendSettings, MocapBlendTools, MOCAP_OT_blend, MOCAP_OT_blend_update, MOCAP_OT_envelope,
           MOCAP_OT_solve_mix, VIEW3D_PT_mocap_blend)


def register_properties() -> None:
    # The stubs say bpy.props functions return nothing.
    add_properties(bpy.types.Scene, mocap_blend=PointerProperty(type=MocapBlendSettings),  # type: ignore[func-returns-value]
                   mocap_blend_tools=PointerProperty(type=MocapBlendTools))  # type: ignore[func-returns-value]
    add_properties(bpy.types.Armature, mocap_blend=PointerProperty(type=MocapBlendSettings))  # type: ignore[func-returns-value]


def unregister_properties() -> None:
    remove_properties(bpy.types.Scene, "mocap_blend_tools")
    remove_properties(bpy.types.Armature, "mocap_blend")
    remove_properties(bpy.types.Scene, "mocap_blend")
