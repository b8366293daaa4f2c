"""Live tool: a blend or a retarget posed on an armature at every frame change, nothing baked until asked.

``mocap.live_blend`` puts a live mix of clips A and B on a target armature (a
copy of A's rig, ``<A>_live``, unless named); ``mocap.live_retarget`` makes a
target follow a source's action.  What they are made of is ``target.mocap_live``
(saved with the file): the inputs, the options, the keyable ``mix`` and
``enabled``.  A persistent frame-change handler poses every enabled target from
a Python-side cache keyed by those settings (rebuilt lazily when they change or
after a file is opened): for a blend, the core's :class:`~...core.blend.live.LiveBlend`
(everything that does not depend on the mix done once); for a retarget, the
retargeted motion.  ``mocap.bake_live`` writes the live result as an action;
the action it replaces is kept with a fake user (as is one the live tool took
off the target).  ``mocap.draw_envelope`` draws a joint's paths for several mixes
as one curve object, redrawn when the options change, the current mix's path
highlighted; ``mocap.catch_game`` plays the catch game (``core.blend.catch``)
on a live mix.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import bpy
import numpy as np
from bpy.app.handlers import persistent
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from ...core.options import FEET, HIPS_TRAVEL
from ..bridge.armature import (
    armature_named,
    is_armature,
    make_active,
    named_or_selected,
    pose_bones,
)
from ..bridge.blend_inputs import (
    BLEND_OPTIONS,
    BlendOptions,
    clip_to_world,
    first_frame,
    prepare_blend,
    updating,
)
from ..bridge.choices import chosen, enum_property
from ..bridge.compat import add_properties, remove_properties, run_time_property
from ..bridge.read_rig import armature_action, keyed_curve
from ..bridge.rollback import nothing_left_behind
from ..bridge.sidebar import SidebarPanel
from ..bridge.write_rig import Poser, rig_copy

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

    from ...core import Pose

MIX_PATH = "mocap_live.mix"
MODE_ITEMS = [("BLEND", "Blend", "The mix of clips A and B"),
              ("RETARGET", "Retarget", "The source's action retargeted")]
RETARGET_OPTIONS = ("retarget_root", "retarget_feet")
ENVELOPE_COLOURS = ((0.25, 0.45, 0.9, 1.0), (1.0, 0.55, 0.1, 1.0))  # the paths, the current mix's


def _changed(self: MocapLiveSettings, context: bpy.types.Context) -> None:
    """An input or option changed: pose the target again now and redraw its envelope."""
    if _quiet:
        return
    obj = self.id_data
    if isinstance(obj, bpy.types.Object) and context.scene is not None:
        refresh(obj, context.scene)


class MocapLiveSettings(BlendOptions, bpy.types.PropertyGroup):
    """A target armature's live blend or retarget (``Object.mocap_live``): what the frame handler poses."""

    enabled: BoolProperty(name="Live", default=False, update=_changed,
                          description="Pose the armature from its inputs at every frame change")
    mode: EnumProperty(name="Mode", items=MODE_ITEMS, default="BLEND", update=_changed)
    mix: FloatProperty(name="Mix", default=0.5, min=0.0, max=1.0, update=_changed,
                       description="0 is A, 1 is B; key it to change the mix over time")
    clip_a: PointerProperty(type=bpy.types.Object, name="A", poll=is_armature, update=_changed,
                            description="Armature whose action is mix 0 (the live mix is on its frames)")
    clip_b: PointerProperty(type=bpy.types.Object, name="B", poll=is_armature, update=_changed,
                            description="Armature whose action is mix 1")
    source: PointerProperty(type=bpy.types.Object, name="Source", poll=is_armature, update=_changed,
                            description="Armature whose action the target follows")
    retarget_root: enum_property(HIPS_TRAVEL, update=_changed)
    retarget_feet: enum_property(FEET, update=_changed)
    kept: PointerProperty(type=bpy.types.Action, name="Kept Action",
                          description="The target's action before the live tool took it off (kept with a fake user)")
    envelope: PointerProperty(type=bpy.types.Object, name="Envelope", description="The envelope curve drawn")
    envelope_joint: StringProperty(name="Joint", default="hand_r",
                                   description="Canonical joint (or bone) whose envelope is drawn")
    envelope_mixes: IntProperty(name="Paths", default=11, min=2, max=101, description="Mixes from 0 to 1 drawn")


MocapLiveSettings.__annotations__.update(updating(BlendOptions, _changed))  # they re-pose the target too


def live_settings(obj: bpy.types.Object) -> MocapLiveSettings:
    settings: MocapLiveSettings = run_time_property(obj, "mocap_live")
    return settings


# The cache: what each live target needs, built once per set of settings --------------------------------------------

@dataclass
class _Live:
    """A target's live motion: each frame's pose at a mix, every frame at per-frame mixes, and where it goes."""

    key: tuple[Any, ...]
    first: int  # the Blender frame of the motion's frame 0
    frame_count: int
    frame: Callable[[int, float], tuple[np.ndarray, np.ndarray, np.ndarray | None]]
    poses: Callable[[np.ndarray], Pose]
    poser: Poser


_cache: dict[int, _Live | str] = {}  # target pointer -> its live motion, or why it could not be built
_quiet = False  # set while an operator fills a target's settings


@contextmanager
def _filling() -> Iterator[None]:
    global _quiet
    _quiet = True
    try:
        yield
    finally:
        _quiet = False


def _pointer(block: bpy.types.ID | None) -> int:
    return 0 if block is None else block.as_pointer()


def _key(obj: bpy.types.Object) -> tuple[Any, ...]:
    """What the target's live motion depends on: its inputs (and their actions) and options."""
    settings = live_settings(obj)
    if settings.mode == "BLEND":
        inputs = [settings.clip_a, settings.clip_b]
        options = tuple(getattr(settings, name) for name in BLEND_OPTIONS)
    else:
        inputs = [settings.source]
        options = tuple(getattr(settings, name) for name in RETARGET_OPTIONS)
    actions = [_pointer(armature_action(clip)) if clip is not None else 0 for clip in inputs]
    return (settings.mode, *map(_pointer, inputs), *actions, *options, len(obj.pose.bones) if obj.pose else 0)


def _build(obj: bpy.types.Object, key: tuple[Any, ...]) -> _Live:
    """The target's live motion for its settings (raises ``ValueError`` for missing or unusable inputs)."""
    settings = live_settings(obj)
    if settings.mode == "BLEND":
        from ...core.blend.live import LiveBlend

        if settings.clip_a is None or settings.clip_b is None:
            raise ValueError("the live blend needs clips A and B")
        prepared = prepare_blend(settings.clip_a, settings.clip_b, settings)
        mixer = LiveBlend.of(prepared.a, prepared.b, **prepared.options)
        return _Live(key, first_frame(settings.clip_a), mixer.frame_count, mixer.frame, mixer.poses,
                     Poser.of(obj, prepared.a.skeleton))
    from ..bridge.retarget_inputs import retargeted

    if settings.source is None or armature_action(settings.source) is None:
        raise ValueError("the live retarget needs a source armature with an action")
    if settings.source == obj:
        raise ValueError(f"{obj.name} cannot follow itself")
    motion = retargeted(settings.source, obj, chosen(HIPS_TRAVEL, settings.retarget_root),
                        chosen(FEET, settings.retarget_feet))
    scales = None if motion.scales is None else motion.scales

    def frame(index: int, _mix: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        return motion.rotations[index], motion.translations[index], None if scales is None else scales[index]

    return _Live(key, motion.start_frame, motion.frame_count, frame, lambda _mixes: motion,
                 Poser.of(obj, motion.skeleton))


def live_motion(obj: bpy.types.Object) -> _Live:
    """The target's live motion from the cache, built first where its settings changed."""
    key = _key(obj)
    found = _cache.get(obj.as_pointer())
    if isinstance(found, _Live) and found.key == key:
        return found
    if isinstance(found, str) and found.startswith(repr(key)):
        raise ValueError(found[len(repr(key)):])
    try:
        live = _build(obj, key)
    except ValueError as error:
        _cache[obj.as_pointer()] = repr(key) + str(error)
        print(f"Mocap live: {obj.name}: {error}")
        raise
    _cache[obj.as_pointer()] = live
    return live


def mix_at(obj: bpy.types.Object, frame: float) -> float:
    """The target's mix at ``frame``: its keyed curve's value there, else the property's."""
    settings = live_settings(obj)
    curve = keyed_curve(obj, MIX_PATH)
    mix = curve.evaluate(frame) if curve is not None else settings.mix
    return float(np.clip(mix, 0.0, 1.0))


def pose_live(obj: bpy.types.Object, frame: int) -> None:
    """Pose ``obj`` at ``frame`` from its live motion (frames outside it hold its ends)."""
    live = live_motion(obj)
    index = int(np.clip(frame - live.first, 0, live.frame_count - 1))
    live.poser.apply(obj, *live.frame(index, mix_at(obj, frame)))


def refresh(obj: bpy.types.Object, scene: bpy.types.Scene) -> None:
    """After a change of the target's settings: pose it at the scene's frame and redraw its envelope."""
    settings = live_settings(obj)
    if not settings.enabled:
        return
    try:
        pose_live(obj, scene.frame_current)
        if settings.envelope is not None and settings.mode == "BLEND":
            draw_envelope(obj, settings.envelope_joint, settings.envelope_mixes)
    except ValueError:
        return  # said once by live_motion; the panel shows it


@persistent
def _on_frame_change(scene: bpy.types.Scene, *_: Any) -> None:
    for obj in scene.objects:
        if obj.type == "ARMATURE" and live_settings(obj).enabled:
            try:
                pose_live(obj, scene.frame_current)
            except ValueError:
                continue  # said once by live_motion


@persistent
def _on_load(*_: Any) -> None:
    _cache.clear()


def live_problem(obj: bpy.types.Object) -> str | None:
    """Why the target's live motion cannot be built, if it cannot."""
    try:
        live_motion(obj)
    except ValueError as error:
        return str(error)
    return None


# Taking actions off and keeping them ----------------------------------------------------------------------------

def _keep(action: bpy.types.Action | None) -> None:
    """Keep ``action`` in the file with no user: a fake user."""
    if action is not None:
        action.use_fake_user = True


def _take_action_off(obj: bpy.types.Object) -> None:
    """A target's own action would override its live pose: kept (fake user, ``mocap_live.kept``) and taken off."""
    action = armature_action(obj)
    if action is None:
        return
    _keep(action)
    live_settings(obj).kept = action
    assert obj.animation_data is not None
    obj.animation_data.action = None


# Operators ------------------------------------------------------------------------------------------------------

class MOCAP_OT_live_blend(BlendOptions, bpy.types.Operator):
    """Put a live mix of two armatures' actions on a target (a copy of A's rig unless named)"""

    bl_idname = "mocap.live_blend"
    bl_label = "Live Blend"
    bl_options = {"REGISTER", "UNDO"}

    # Not remembered between runs: run again from F3 or the redo panel, the selection decides.
    clip_a: StringProperty(name="A", options={"SKIP_SAVE"},
                           description="Armature whose action is mix 0 (empty: the active armature)")
    clip_b: StringProperty(name="B", options={"SKIP_SAVE"},
                           description="Armature whose action is mix 1 (empty: the other selected one)")
    target: StringProperty(name="Target", options={"SKIP_SAVE"},
                           description="Armature posed live, with A's bones (empty: <A>_live)")
    mix: FloatProperty(name="Mix", default=0.5, min=0.0, max=1.0)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.blend.live import LiveBlend

        started = time.perf_counter()
        try:
            clip_a, clip_b = named_or_selected(context, self.clip_a, self.clip_b, ("A", "armature B"))
            target = armature_named(self.target) if self.target else None
            if self.target and target is None:
                raise LookupError(f"no armature called {self.target!r}")
        except LookupError as error:
            self.report({"ERROR"}, f"Live blend failed: {error}")
            return {"CANCELLED"}
        if target in (clip_a, clip_b):
            self.report({"ERROR"}, f"Live blend failed: {target.name} is one of the clips")
            return {"CANCELLED"}
        try:
            prepared = prepare_blend(clip_a, clip_b, self)
            mixer = LiveBlend.of(prepared.a, prepared.b, **prepared.options)
            poser = Poser.of(target if target is not None else clip_a, prepared.a.skeleton)
            with nothing_left_behind():
                target = target if target is not None else rig_copy(context, clip_a, f"{clip_a.name}_live")
        except (ValueError, RuntimeError) as error:
            self.report({"ERROR"}, f"Live blend failed: {error}")
            return {"CANCELLED"}
        with _filling():
            _take_action_off(target)
            settings = live_settings(target)
            settings.mode, settings.clip_a, settings.clip_b, settings.mix = "BLEND", clip_a, clip_b, self.mix
            for name in BLEND_OPTIONS:
                setattr(settings, name, getattr(self, name))
            settings.enabled = True
        key = _key(target)
        _cache[target.as_pointer()] = _Live(key, first_frame(clip_a), mixer.frame_count, mixer.frame, mixer.poses,
                                            poser)
        assert context.scene is not None
        refresh(target, context.scene)
        make_active(context, target)
        self.report({"INFO"}, f"{target.name}: live mix of {clip_a.name} and {clip_b.name} "
                              f"(prepared in {time.perf_counter() - started:.2f} s)")
        return {"FINISHED"}


class MOCAP_OT_live_retarget(bpy.types.Operator):
    """Make the target armature follow the source's action live (nothing baked until asked)"""

    bl_idname = "mocap.live_retarget"
    bl_label = "Live Retarget"
    bl_options = {"REGISTER", "UNDO"}

    source: StringProperty(name="Source", options={"SKIP_SAVE"},
                           description="Armature whose action is followed (empty: the other selected armature)")
    target: StringProperty(name="Target", options={"SKIP_SAVE"},
                           description="Armature posed live (empty: the active armature)")
    root: enum_property(HIPS_TRAVEL)
    feet: enum_property(FEET)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        try:
            target, source = named_or_selected(context, self.target, self.source, ("the target", "the source"))
        except LookupError as error:
            self.report({"ERROR"}, f"Live retarget failed: {error}")
            return {"CANCELLED"}
        if source == target or armature_action(source) is None:
            self.report({"ERROR"}, f"Live retarget failed: {source.name} is the target or has no action")
            return {"CANCELLED"}
        settings = live_settings(target)
        before = {name: getattr(settings, name) for name in ("mode", "source", "enabled", *RETARGET_OPTIONS)}
        with _filling():
            _take_action_off(target)
            settings.mode, settings.source = "RETARGET", source
            settings.retarget_root, settings.retarget_feet = self.root, self.feet
            settings.enabled = True
        problem = live_problem(target)
        if problem is not None:
            with _filling():
                for name, value in before.items():
                    setattr(settings, name, value)
            self.report({"ERROR"}, f"Live retarget failed: {problem}")
            return {"CANCELLED"}
        assert context.scene is not None
        refresh(target, context.scene)
        self.report({"INFO"}, f"{target.name} follows {source.name} live")
        return {"FINISHED"}


def _live_target(context: bpy.types.Context, name: str) -> bpy.types.Object:
    obj = armature_named(name) if name else context.active_object
    if obj is None or obj.type != "ARMATURE" or not live_settings(obj).enabled:
        raise LookupError(f"{name or 'the active object'} is not an armature with a live blend or retarget")
    return obj


class MOCAP_OT_bake_live(bpy.types.Operator):
    """Write the live result as a new action on the target (the action it replaces is kept with a fake user)"""

    bl_idname = "mocap.bake_live"
    bl_label = "Bake Live"
    bl_options = {"REGISTER", "UNDO"}

    target: StringProperty(name="Target", description="The live armature (empty: the active one)")

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ..bridge.read_rig import sample_fcurve
        from ..bridge.write_rig import write_pose

        try:
            obj = _live_target(context, self.target)
            live = live_motion(obj)
            frames = live.first + np.arange(live.frame_count, dtype=np.float64)
            old = armature_action(obj)
            curve = keyed_curve(obj, MIX_PATH)
            mixes = np.full(len(frames), live_settings(obj).mix) if curve is None else sample_fcurve(curve, frames)
            motion = live.poses(np.clip(mixes, 0.0, 1.0))
            with nothing_left_behind():
                action = write_pose(obj, motion, name=f"{obj.name}_baked", frame_start=live.first)
        except (LookupError, ValueError, RuntimeError) as error:
            self.report({"ERROR"}, f"Bake failed: {error}")
            return {"CANCELLED"}
        _keep(old)
        with _filling():
            live_settings(obj).enabled = False
        kept = f"; {old.name} kept (fake user)" if old is not None else ""
        self.report({"INFO"}, f"Baked {obj.name}'s live result into {action.name}{kept}")
        return {"FINISHED"}


def _envelope_bone(clip: bpy.types.Object, joint: str) -> str:
    """The bone of ``clip`` for a canonical joint (by its bone mapping), or the bone so named."""
    from ..bridge.bone_mapping import armature_mapping

    for bone, canonical in armature_mapping(clip).items():
        if canonical == joint:
            return bone
    if clip.pose is not None and joint in clip.pose.bones:
        return joint
    raise ValueError(f"{clip.name} has no bone for the joint {joint!r}")


def draw_envelope(obj: bpy.types.Object, joint: str, count: int) -> bpy.types.Object:
    """Draw (or redraw) the live blend's envelope of ``joint`` on ``obj``: one curve object named
    ``<target>_envelope``, one spline per mix from 0 to 1, then the current mix's spline, highlighted."""
    from ...core.blend.mixing import envelope

    settings = live_settings(obj)
    if settings.clip_a is None or settings.clip_b is None:
        raise ValueError(f"{obj.name} has no live blend")
    prepared = prepare_blend(settings.clip_a, settings.clip_b, settings)
    bone = _envelope_bone(settings.clip_a, joint)
    mixes = np.append(np.linspace(0.0, 1.0, count), settings.mix)
    paths = envelope(prepared.a, prepared.b, bone, mixes, **prepared.options)
    world = clip_to_world(obj)
    points = paths @ world[:3, :3].T + world[:3, 3]
    name = f"{obj.name}_envelope"
    with nothing_left_behind(bpy.data.curves, bpy.data.materials):
        curve_object = settings.envelope
        if curve_object is None or curve_object.type != "CURVE":
            curve_object = bpy.data.objects.new(name, bpy.data.curves.new(name, "CURVE"))
            for collection in obj.users_collection[:1]:
                collection.objects.link(curve_object)
        curve = curve_object.data
        assert isinstance(curve, bpy.types.Curve)
        curve.dimensions = "3D"
        _envelope_materials(curve)
        curve.splines.clear()
        for path in points:
            spline = curve.splines.new("POLY")
            spline.points.add(len(path) - 1)
            co = np.ones((len(path), 4), dtype=np.float32)
            co[:, :3] = path
            spline.points.foreach_set("co", co.ravel())
        spline.material_index = 1
    with _filling():
        settings.envelope, settings.envelope_joint, settings.envelope_mixes = curve_object, joint, count
    return curve_object


def _envelope_materials(curve: bpy.types.Curve) -> None:
    """The envelope's two materials (paths, current mix), made once."""
    while len(curve.materials) < len(ENVELOPE_COLOURS):
        which = ("paths", "current")[len(curve.materials)]
        material = bpy.data.materials.get(f"mocap_envelope_{which}") or bpy.data.materials.new(
            f"mocap_envelope_{which}")
        material.diffuse_color = ENVELOPE_COLOURS[len(curve.materials)]
        curve.materials.append(material)


class MOCAP_OT_draw_envelope(bpy.types.Operator):
    """Draw a joint's paths for several mixes of the live blend as one curve (the current mix highlighted)"""

    bl_idname = "mocap.draw_envelope"
    bl_label = "Draw Envelope"
    bl_options = {"REGISTER", "UNDO"}

    joint: StringProperty(name="Joint", default="hand_r", description="Canonical joint (or bone name)")
    mixes: IntProperty(name="Paths", default=11, min=2, max=101)
    target: StringProperty(name="Target", description="The live armature (empty: the active one)")

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        try:
            obj = _live_target(context, self.target)
            curve = draw_envelope(obj, self.joint, self.mixes)
        except (LookupError, ValueError, RuntimeError) as error:
            self.report({"ERROR"}, f"Envelope failed: {error}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Drew {self.mixes} paths of {self.joint} in {curve.name}")
        return {"FINISHED"}


class MOCAP_OT_catch_game(bpy.types.Operator):
    """Catch the balls: move the live mix with the arrow keys or the mouse wheel during playback; Esc ends"""

    bl_idname = "mocap.catch_game"
    bl_label = "Catch Game"

    joint: StringProperty(name="Hand", default="hand_r", description="Canonical joint (or bone) that catches")

    _game: Any = None
    _ball: Any = None
    _timer: Any = None

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return (obj is not None and obj.type == "ARMATURE" and live_settings(obj).enabled
                and live_settings(obj).mode == "BLEND" and context.window is not None)

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[OperatorReturnItems]:
        window, manager = context.window, context.window_manager
        assert window is not None and manager is not None, "poll: a window"
        if not self.start(context):
            return {"CANCELLED"}
        self._timer = manager.event_timer_add(1.0 / 60.0, window=window)
        manager.modal_handler_add(self)
        if not context.screen or not context.screen.is_animation_playing:
            bpy.ops.screen.animation_play()
        return {"RUNNING_MODAL"}

    def start(self, context: bpy.types.Context) -> bool:
        """The game on the active live mix (its hand's envelope at 11 mixes) and the ball, an Empty."""
        from ...core.blend.catch import CatchGame
        from ...core.blend.mixing import envelope

        obj, scene = context.active_object, context.scene
        assert obj is not None and scene is not None, "poll: a live mix"
        settings = live_settings(obj)
        try:
            prepared = prepare_blend(settings.clip_a, settings.clip_b, settings)
            self._bone = _envelope_bone(settings.clip_a, self.joint)
            mixes = np.linspace(0.0, 1.0, 11)
            paths = envelope(prepared.a, prepared.b, self._bone, mixes, **prepared.options)
        except ValueError as error:
            self.report({"ERROR"}, f"Catch game: {error}")
            return False
        world = clip_to_world(obj)
        standing = prepared.a.at([0]).world().positions[0] @ world[:3, :3].T  # A's figure at its first frame
        size = float(np.ptp(standing, axis=0).max()) or 1.0
        self._game = CatchGame(paths @ world[:3, :3].T + world[:3, 3], mixes, prepared.a.frame_time, size)
        self._first = first_frame(settings.clip_a)
        self._ball = bpy.data.objects.new("catch_ball", None)
        self._ball.empty_display_type = "SPHERE"
        self._ball.empty_display_size = 0.04 * size
        scene.collection.objects.link(self._ball)
        self._obj = obj
        return True

    def modal(self, context: bpy.types.Context, event: bpy.types.Event) -> set[OperatorReturnItems]:
        from ...core.blend.catch import moved_mix

        settings = live_settings(self._obj)
        if event.type == "ESC":
            return self._end(context)
        notches = {"WHEELUPMOUSE": 1, "UP_ARROW": 1, "WHEELDOWNMOUSE": -1, "DOWN_ARROW": -1}.get(event.type, 0)
        if notches and event.value in ("PRESS", "ANY", "NOTHING"):
            settings.mix = moved_mix(settings.mix, notches)
            return {"RUNNING_MODAL"}
        if event.type == "TIMER" and context.scene is not None:
            frame = context.scene.frame_current - self._first
            hand = self._obj.matrix_world @ pose_bones(self._obj)[self._bone].head
            judged = self._game.step(frame, np.array(hand))
            ball = self._game.ball
            if ball is not None:
                self._ball.location = ball.position(frame)
            if context.area is not None:
                context.area.header_text_set(f"Catch: mix {settings.mix:.2f}   {self._game.score}"
                                             + (f"   {judged}!" if judged else ""))
        return {"PASS_THROUGH"}

    def _end(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        if context.window_manager is not None and self._timer is not None:
            context.window_manager.event_timer_remove(self._timer)
        if context.area is not None:
            context.area.header_text_set(None)
        if self._ball is not None and self._ball.name in bpy.data.objects:
            bpy.data.objects.remove(self._ball)
        self.report({"INFO"}, f"Catch game over: {self._game.score}")
        return {"FINISHED"}


class VIEW3D_PT_mocap_live(SidebarPanel):
    """A live blend or retarget on the active armature: its mix and options, bake, envelope, game."""

    bl_label = "Live"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        assert layout is not None
        layout.use_property_split = True
        obj = context.active_object
        row = layout.row(align=True)
        row.operator(MOCAP_OT_live_blend.bl_idname, icon="MOD_ARRAY")
        row.operator(MOCAP_OT_live_retarget.bl_idname, icon="ARMATURE_DATA")
        if obj is None or obj.type != "ARMATURE" or not (live_settings(obj).clip_a or live_settings(obj).source):
            layout.label(text="Select A, then B (active) for a live mix")
            return
        settings = live_settings(obj)
        column = layout.column()
        column.prop(settings, "enabled")
        column.prop(settings, "mode")
        names = (("clip_a", "clip_b", "mix", *BLEND_OPTIONS) if settings.mode == "BLEND"
                 else ("source", *RETARGET_OPTIONS))
        for name in names:
            column.prop(settings, name)
        problem = live_problem(obj) if settings.enabled else None
        if problem:
            layout.label(text=problem, icon="ERROR")
        layout.operator(MOCAP_OT_bake_live.bl_idname, icon="REC")
        if settings.mode != "BLEND":
            return
        box = layout.box()
        box.prop(settings, "envelope_joint")
        box.prop(settings, "envelope_mixes")
        operator = box.operator(MOCAP_OT_draw_envelope.bl_idname, icon="CURVE_PATH")
        operator.joint, operator.mixes = settings.envelope_joint, settings.envelope_mixes
        box.operator(MOCAP_OT_catch_game.bl_idname, icon="PLAY").joint = settings.envelope_joint


CLASSES = (MocapLiveSettings, MOCAP_OT_live_blend, MOCAP_OT_live_retarget, MOCAP_OT_bake_live,
           MOCAP_OT_draw_envelope, MOCAP_OT_catch_game, VIEW3D_PT_mocap_live)
_HANDLERS = ((bpy.app.handlers.frame_change_pre, _on_frame_change), (bpy.app.handlers.load_pre, _on_load),
             (bpy.app.handlers.load_post, _on_load))


def register_properties() -> None:
    """``Object.mocap_live`` and the frame-change and file-load handlers."""
    add_properties(bpy.types.Object, mocap_live=PointerProperty(type=MocapLiveSettings))  # type: ignore[func-returns-value]
    for handlers, handler in _HANDLERS:
        if handler not in handlers:
            handlers.append(handler)


def unregister_properties() -> None:
    for handlers, handler in _HANDLERS:
        while handler in handlers:
            handlers.remove(handler)
    _cache.clear()
    remove_properties(bpy.types.Object, "mocap_live")
