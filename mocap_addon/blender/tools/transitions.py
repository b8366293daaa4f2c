"""Transitions panel: a motion graph of the selected armatures' actions, where each frame can jump to, and new
motion made from it.

``mocap.build_graph`` matches the selected armatures' actions (each read through its stored bone mapping
and reference pose onto the canonical skeleton) with ``core.transitions.build`` (``mocap.add_to_graph``
adds more) and keys each armature data's ``mocap_transitions`` property with the transitions leaving
each frame (the thesis's graph, in the Graph Editor).  The graph is kept in the scene, so in the .blend
(``bridge.graph_store``: saved, undone and reopened with the file; a new or opened file has its own);
``mocap.save_graph`` / ``mocap.load_graph`` write and read it as a file (a loaded graph finds its clips again by
armature name and frame count, and is refused when they changed).  The panel lists the transitions from
the current frame of the active clip: ``mocap.preview_transition`` jumps the view to one,
``mocap.take_transition`` takes it into the walk being made (a new action on the target rig each time),
``mocap.synthesize`` walks the graph at random (with Frame Range: only the frames every clip shows from Start to
End), ``mocap.synthesize_along`` along a Curve object (its evaluated points on the floor,
``core.transitions.follow``), and ``mocap.prune_walk`` cuts the stretch between two transitions out of such an
action and joins the rest through the graph (``core.transitions.prune``).  Every operator computes first and
creates data last; a failure leaves ``bpy.data`` as it was.
"""

from __future__ import annotations

import copy
import json
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import bpy
import numpy as np
from bpy.app.handlers import persistent
from bpy.props import BoolProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from ..bridge.armature import armature_data, armature_named, is_armature, make_active
from ..bridge.compat import add_properties, assign_action, id_property, remove_properties, run_time_property
from ..bridge.conversion import scene_fps
from ..bridge.frame_range import FrameRange
from ..bridge.graph_store import store_graph, stored_graph, stored_token
from ..bridge.progress import Progress
from ..bridge.read_rig import action_frame_time, action_frames, armature_action, keyed_curve
from ..bridge.reference_pose import reference_rotations
from ..bridge.rollback import nothing_left_behind
from ..bridge.sidebar import SidebarPanel
from ..bridge.write_rig import fill_curve, rig_copy

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

    from ...core import Clip
    from ...core.pose import Pose
    from ...core.transitions import MotionGraph

COUNT_PROPERTY = "mocap_transitions"  # on each clip's armature data, keyed per frame
WALK_PROPERTY = "mocap_graph_walk"  # on the scene: the global frames of the walk taken so far
MADE_PROPERTY = "mocap_graph_made"  # on an action made from the graph: its walk (JSON), for pruning
MARKER_PREFIX = "graph: "
CONSTANT = 0  # Keyframe.interpolation enum value for 'CONSTANT'
LISTED = 12  # transitions listed in the panel


@dataclass
class Library:
    """A scene's motion graph and where its clips are: armature and action names, each action's first
    Blender frame and frame rate."""

    graph: MotionGraph
    objects: list[str]
    actions: list[str]
    firsts: list[int]
    rates: list[float]

    def clip_index(self, obj: bpy.types.Object | None) -> int | None:
        return self.objects.index(obj.name) if obj is not None and obj.name in self.objects else None

    def global_frame(self, clip: int, frame: float) -> int | None:
        """The graph frame shown at Blender ``frame`` of clip ``clip`` (``None`` outside the clip)."""
        local = round((frame - self.firsts[clip]) * self.graph.fps / self.rates[clip])
        if not 0 <= local < self.graph.clip_frames[clip]:
            return None
        return int(self.graph.offsets[clip] + local)

    def blender_frame(self, frame: int) -> tuple[int, float]:
        """The clip of graph ``frame`` and the Blender frame that shows it."""
        clip, local = self.graph.local_frame(frame)
        return clip, self.firsts[clip] + local * self.rates[clip] / self.graph.fps

    def shown_within(self, first: int, last: int) -> np.ndarray:
        """Which graph frames are shown at Blender frames ``first`` to ``last`` of their clip's action."""
        frames = np.arange(self.graph.frame_count)
        clip = self.graph.clip_of(frames)
        shown = np.asarray(self.firsts)[clip] + (frames - self.graph.offsets[clip]) * np.asarray(self.rates)[clip] \
            / self.graph.fps
        return np.asarray((shown >= first - 1e-6) & (shown <= last + 1e-6))

    def clips(self) -> list[Pose]:
        """Each clip's action on the canonical skeleton, read again (a graph holds no motion)."""
        actions = bpy.data.actions
        # Not actions.get(name): the stubs say it returns nothing.
        return [_canonical(_armature(name), actions[action] if action in actions else None)  # noqa: SIM401
                for name, action in zip(self.objects, self.actions)]


_LIBRARIES: dict[str, tuple[str, Library]] = {}  # per scene: the token of the graph it keeps, and it read


def library(scene: bpy.types.Scene | None) -> Library | None:
    """The motion graph kept in ``scene`` (the .blend keeps it), ``None`` without one or where it is damaged."""
    token = None if scene is None else stored_token(scene)
    if scene is None or token is None:
        return None
    cached = _LIBRARIES.get(scene.name)
    if cached is None or cached[0] != token:
        try:
            graph, places = stored_graph(scene)
        except ValueError:
            return None
        cached = token, Library(graph, **places)
        _LIBRARIES[scene.name] = cached
    return cached[1]


def _keep(scene: bpy.types.Scene, lib: Library) -> None:
    """Make ``lib`` the scene's motion graph, kept in the .blend."""
    places = {"objects": lib.objects, "actions": lib.actions, "firsts": lib.firsts, "rates": lib.rates}
    _LIBRARIES[scene.name] = store_graph(scene, lib.graph, places), lib


@persistent
def _forget_libraries(*_: object) -> None:
    """A file opened or made new (File > New) starts with the graph it keeps, if any."""
    _LIBRARIES.clear()


def _scene(context: bpy.types.Context) -> bpy.types.Scene:
    scene = context.scene
    assert scene is not None, "a scene"
    return scene


def _armature(name: str) -> bpy.types.Object:
    obj = armature_named(name)
    if obj is None:
        raise ValueError(f"the graph's armature {name!r} is gone")
    return obj


def _with_actions(objects: list[bpy.types.Object]) -> list[tuple[bpy.types.Object, bpy.types.Action]]:
    """The armatures of ``objects`` that have an action, with it."""
    out = []
    for obj in objects:
        action = armature_action(obj) if obj.type == "ARMATURE" else None
        if action is not None:
            out.append((obj, action))
    return out


def _canonical(obj: bpy.types.Object, action: bpy.types.Action | None) -> Pose:
    """``obj``'s ``action`` on the canonical skeleton, through its stored mapping and reference pose."""
    from ...core.retarget.transfer import to_canonical
    from ..bridge.bone_mapping import armature_mapping
    from ..bridge.read_rig import armature_pose

    if action is None:
        raise ValueError(f"{obj.name}'s action is gone")
    pose = to_canonical(armature_pose(obj, action), mapping=armature_mapping(obj), reference=reference_rotations(obj))
    pose.metadata["name"] = obj.name
    return pose


def _rate(action: bpy.types.Action, scene: bpy.types.Scene) -> float:
    """Frames per second of an action: its recorded frame time (imports keep it), else the scene's."""
    return 1.0 / action_frame_time(action, 1.0 / scene_fps(scene))


def _library(graph: MotionGraph, chosen: list[tuple[bpy.types.Object, bpy.types.Action]],
             scene: bpy.types.Scene) -> Library:
    return Library(graph, [o.name for o, _ in chosen], [a.name for _, a in chosen],
                   [action_frames(a)[0] for _, a in chosen], [_rate(a, scene) for _, a in chosen])


def _key_counts(lib: Library) -> None:
    """Key each clip's armature data ``mocap_transitions`` with the transitions leaving each frame (steps)."""
    graph = lib.graph
    counts = graph.transition_counts()
    path = f'["{COUNT_PROPERTY}"]'
    for clip, name in enumerate(lib.objects):
        data = armature_data(_armature(name))
        first, count = int(graph.offsets[clip]), int(graph.clip_frames[clip])
        frames = lib.firsts[clip] + np.arange(count) * lib.rates[clip] / graph.fps
        if armature_action(data) is None:
            assign_action(data, bpy.data.actions.new(f"{name} transitions"))  # not the object's action
        data[COUNT_PROPERTY] = 0
        data.keyframe_insert(path, frame=float(frames[0]))
        curve = keyed_curve(data, path)
        assert curve is not None, "keyed just now"
        fill_curve(curve, frames, counts[first:first + count], CONSTANT)


def _set_markers(scene: bpy.types.Scene, result: Clip, lib: Library, first: int) -> None:
    """Timeline markers at a result's transitions (ours from before removed)."""
    for marker in [m for m in scene.timeline_markers if m.name.startswith(MARKER_PREFIX)]:
        scene.timeline_markers.remove(marker)
    names = lib.objects
    for landing, source, target in result.metadata["transitions"]:
        (a, i), (b, j) = lib.graph.local_frame(source), lib.graph.local_frame(target)
        scene.timeline_markers.new(f"{MARKER_PREFIX}{names[a]} {i} > {names[b]} {j}", frame=first + landing)


def _write_onto(context: bpy.types.Context, rig: bpy.types.Object, motion: Clip, name: str,
                lib: Library) -> tuple[bpy.types.Object, bpy.types.Action]:
    """``motion`` (canonical) retargeted onto ``rig`` as a new action ``<rig> <name>`` from the scene's first
    frame; a clip of the graph is never written over: its copy ``<clip>_walk`` (made once) gets the action.
    Returns the rig written and the action."""
    from ...core.pose import as_pose
    from ...core.retarget.transfer import retarget
    from ..bridge.bone_mapping import armature_mapping
    from ..bridge.read_rig import armature_skeleton
    from ..bridge.write_rig import write_pose

    scene = _scene(context)
    result = retarget(as_pose(motion), armature_skeleton(rig), target_mapping=armature_mapping(rig),
                      target_reference=reference_rotations(rig))
    with nothing_left_behind():
        if rig.name in lib.objects:
            rig = armature_named(f"{rig.name}_walk") or rig_copy(context, rig, f"{rig.name}_walk")
        action = write_pose(rig, result, name=f"{rig.name} {name}", frame_start=scene.frame_start)
        made = {key: motion.metadata[key] for key in ("path", "transitions", "start", "steer")
                if key in motion.metadata}
        action[MADE_PROPERTY] = json.dumps({**made, "frame_start": scene.frame_start})
    _set_markers(scene, motion, lib, scene.frame_start)
    return rig, action


def graph_settings(scene: bpy.types.Scene) -> MocapGraphSettings:
    """The Transitions panel's settings on ``scene``."""
    settings: MocapGraphSettings = run_time_property(scene, "mocap_graph")
    return settings


def _target_rig(context: bpy.types.Context) -> bpy.types.Object:
    rig = graph_settings(_scene(context)).target or context.active_object
    if rig is None or rig.type != "ARMATURE":
        raise ValueError("choose a target rig (or make an armature active)")
    return rig


def _show(context: bpy.types.Context, lib: Library, frame: int) -> None:
    """Make the clip of graph ``frame`` the active, selected armature and go to the frame."""
    clip, blender_frame = lib.blender_frame(frame)
    make_active(context, _armature(lib.objects[clip]))
    _scene(context).frame_set(round(blender_frame))


class _BuildSettings:
    """What a graph is built with (the operator's and the panel's)."""

    sigma: FloatProperty(name="Sigma", default=3.0, min=1e-6, description="P = exp(-D / sigma)")
    nu: FloatProperty(name="Nu", default=2.0, min=0.0, description="Weight of joint velocities in D")
    threshold: FloatProperty(name="Threshold", default=0.9, min=1e-6, max=1.0, description="Lowest P kept")
    min_gap: FloatProperty(name="Min Gap", default=0.5, min=0.0, unit="TIME_ABSOLUTE",
                           description="Seconds between the two frames of a transition within one clip")
    contacts: BoolProperty(name="Contacts", default=True, description="Only join frames whose feet agree")


class _WalkSettings:
    """How motion is made from a graph (the operators' and the panel's)."""

    frames: IntProperty(name="Frames", default=600, min=1, max=10_000_000, description="Frames to synthesize")
    seed: IntProperty(name="Seed", default=0, min=0, description="The same seed gives the same motion")
    blend_frames: IntProperty(name="Blend Frames", default=5, min=0, max=1000,
                              description="Frames each transition is blended over (at least 0.2 s)")


BUILD_SETTINGS = ("sigma", "nu", "threshold", "min_gap", "contacts")


class MOCAP_OT_build_graph(_BuildSettings, bpy.types.Operator):
    """Match the selected armatures' actions into a motion graph (the active one's rate; others resampled)"""

    bl_idname = "mocap.build_graph"
    bl_label = "Build Graph"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.transitions import build

        started = time.perf_counter()
        scene = _scene(context)
        active = context.active_object
        chosen = _with_actions(sorted(context.selected_objects, key=lambda o: (o != active, o.name)))
        if not chosen:
            self.report({"ERROR"}, "Build Graph: select armatures with actions")
            return {"CANCELLED"}
        try:
            with Progress(context) as progress:
                clips = []
                for number, (obj, action) in enumerate(chosen):
                    clips.append(_canonical(obj, action))
                    progress.update(0.3 * (number + 1) / len(chosen))
                graph = build(clips, sigma=self.sigma, nu=self.nu, threshold=self.threshold, min_gap=self.min_gap,
                              contacts=self.contacts, progress=progress.part(0.3, 1.0))
                lib = _library(graph, chosen, scene)
                _key_counts(lib)
        except ValueError as error:
            self.report({"ERROR"}, f"Build Graph failed: {error}")
            return {"CANCELLED"}
        _keep(scene, lib)
        scene.pop(WALK_PROPERTY, None)
        self.report({"INFO"}, f"Motion graph of {len(chosen)} clips: {len(graph.sources)} transitions, "
                              f"{graph.alive.mean():.1%} of {graph.frame_count} frames kept "
                              f"({time.perf_counter() - started:.1f} s)")
        return {"FINISHED"}


class _WithGraph(bpy.types.Operator):
    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if library(context.scene) is None:
            cls.poll_message_set("No motion graph in this file: build one from the selected armatures, or load one")
            return False
        return True


class MOCAP_OT_add_to_graph(_WithGraph, bpy.types.Operator):
    """Match the selected armatures' actions that are not in the graph into it (the same as building with them)"""

    bl_idname = "mocap.add_to_graph"
    bl_label = "Add to Graph"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        scene = _scene(context)
        lib = library(scene)
        assert lib is not None, "poll: a graph"
        chosen = _with_actions(sorted((o for o in context.selected_objects if o.name not in lib.objects),
                                      key=lambda o: o.name))
        if not chosen:
            self.report({"ERROR"}, "Add to Graph: select armatures with actions that are not in the graph")
            return {"CANCELLED"}
        graph = copy.deepcopy(lib.graph)
        try:
            for obj, action in chosen:
                graph.add(_canonical(obj, action))
            new = _library(graph, chosen, scene)
            added = Library(graph, lib.objects + new.objects, lib.actions + new.actions, lib.firsts + new.firsts,
                            lib.rates + new.rates)
            _key_counts(added)
        except ValueError as error:
            self.report({"ERROR"}, f"Add to Graph failed: {error}")
            return {"CANCELLED"}
        _keep(scene, added)
        self.report({"INFO"}, f"Added {len(chosen)} clips: {len(graph.sources)} transitions, "
                              f"{graph.alive.mean():.1%} of {graph.frame_count} frames kept")
        return {"FINISHED"}


class _GraphFile(bpy.types.Operator):
    """An operator on a graph file the user picks (.npz)."""

    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.npz", options={"HIDDEN"})

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[OperatorReturnItems]:
        self.filepath = self.filepath or "motion_graph.npz"
        assert context.window_manager is not None, "a window manager"
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}


class MOCAP_OT_save_graph(_WithGraph, _GraphFile):
    """Write the scene's motion graph to a file (.npz), so the matching is not done again"""

    bl_idname = "mocap.save_graph"
    bl_label = "Save Graph"

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        path = self.filepath if self.filepath.lower().endswith(".npz") else f"{self.filepath}.npz"
        lib = library(context.scene)
        assert lib is not None, "poll: a graph"
        try:
            lib.graph.save(bpy.path.abspath(path))
        except OSError as error:
            self.report({"ERROR"}, f"Save Graph failed: {error}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Saved the motion graph to {path}")
        return {"FINISHED"}


class MOCAP_OT_load_graph(_GraphFile):
    """Read a motion graph (.npz); its clips are found again by armature name and frame count"""

    bl_idname = "mocap.load_graph"
    bl_label = "Load Graph"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.transitions import load_graph

        scene = _scene(context)
        try:
            graph = load_graph(bpy.path.abspath(self.filepath))
            problems, chosen = [], []
            for name, frames in zip(graph.clip_names, graph.source_frames):
                obj = armature_named(name)
                action = armature_action(obj) if obj is not None else None
                if obj is None or action is None:
                    problems.append(f"no armature {name!r} with an action")
                    continue
                first, last = action_frames(action)
                have = last - first + 1
                if have != frames:
                    problems.append(f"{name} has {have} frames, the graph's clip {frames}")
                chosen.append((obj, action))
            if problems:
                raise ValueError(f"{os.path.basename(self.filepath)} does not fit this scene: " + "; ".join(problems))
            lib = _library(graph, chosen, scene)
            _key_counts(lib)
        except (ValueError, OSError) as error:
            self.report({"ERROR"}, f"Load Graph failed: {error}")
            return {"CANCELLED"}
        _keep(scene, lib)
        scene.pop(WALK_PROPERTY, None)
        self.report({"INFO"}, f"Loaded a motion graph of {len(graph.clip_names)} clips, "
                              f"{len(graph.sources)} transitions")
        return {"FINISHED"}


class MOCAP_OT_preview_transition(_WithGraph, bpy.types.Operator):
    """Jump the view to where this transition goes: its clip, active, at its frame"""

    bl_idname = "mocap.preview_transition"
    bl_label = "Preview Transition"

    target: IntProperty(name="Target", description="Graph frame the transition plays next", min=0)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        lib = library(context.scene)
        assert lib is not None, "poll: a graph"
        try:
            _show(context, lib, self.target)
        except ValueError as error:
            self.report({"ERROR"}, f"Preview failed: {error}")
            return {"CANCELLED"}
        return {"FINISHED"}


class MOCAP_OT_take_transition(_WithGraph, bpy.types.Operator):
    """Take this transition into the walk: the walk so far up to here, then the target clip on, as a new
    action on the target rig"""

    bl_idname = "mocap.take_transition"
    bl_label = "Take Transition"
    bl_options = {"REGISTER", "UNDO"}

    source: IntProperty(name="Source", description="Graph frame the transition leaves", min=0)
    target: IntProperty(name="Target", description="Graph frame the transition plays next", min=0)
    blend_frames: IntProperty(name="Blend Frames", default=5, min=0, max=1000)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.transitions import assemble
        from ...core.transitions.graph import run_ends

        scene = _scene(context)
        lib = library(scene)
        assert lib is not None, "poll: a graph"
        graph = lib.graph
        try:
            if not any(t.target == self.target for t in graph.transitions_from(self.source)):
                raise ValueError(f"the graph has no transition from frame {self.source} to {self.target}")
            walk = [int(f) for f in id_property(scene, WALK_PROPERTY, [])]
            if self.source in walk:
                walk = walk[:len(walk) - walk[::-1].index(self.source)]  # back to its last visit
            else:
                clip = int(graph.clip_of(self.source))
                walk = list(range(int(graph.offsets[clip]), self.source + 1))
            end = int(run_ends(graph.alive, graph.clip_ends)[self.target])
            walk += list(range(self.target, max(end, self.target + 1)))
            rig = _target_rig(context)
            motion = assemble(graph, lib.clips(), walk, blend_frames=self.blend_frames)
            rig, action = _write_onto(context, rig, motion, "walk", lib)
            _show(context, lib, self.target)
        except ValueError as error:
            self.report({"ERROR"}, f"Take failed: {error}")
            return {"CANCELLED"}
        scene[WALK_PROPERTY] = walk
        self.report({"INFO"}, f"{action.name} on {rig.name}: {len(walk)} frames, "
                              f"{len(motion.metadata['transitions'])} transitions")
        return {"FINISHED"}


class MOCAP_OT_synthesize(_WithGraph, _WalkSettings, FrameRange, bpy.types.Operator):
    """Walk the motion graph at random from the active clip's current frame and put the new motion on the
    target rig (retargeted through the canonical skeleton) as a new action, with markers at transitions"""

    bl_idname = "mocap.synthesize"
    bl_label = "Synthesize"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.transitions import synthesize

        started = time.perf_counter()
        scene = _scene(context)
        lib = library(scene)
        assert lib is not None, "poll: a graph"
        clip = lib.clip_index(context.active_object)
        start = None if clip is None else lib.global_frame(clip, scene.frame_current)
        try:
            graph = lib.graph.within(lib.shown_within(self.frame_start, self.frame_end)) if self.use_frame_range \
                else lib.graph
            if start is None or not graph.alive[start:int(graph.clip_ends[graph.clip_of(start)])].any() or (
                    self.use_frame_range and not graph.alive[start]):
                start = int(np.argmax(graph.alive))  # the first frame of the kept part (in the range)
            rig = _target_rig(context)
            motion = synthesize(graph, lib.clips(), frames=self.frames, start=start, seed=self.seed,
                                blend_frames=self.blend_frames)
            rig, action = _write_onto(context, rig, motion, "synthesized", lib)
        except ValueError as error:
            self.report({"ERROR"}, f"Synthesize failed: {error}")
            return {"CANCELLED"}
        transitions = motion.metadata["transitions"]
        between = sum(int(graph.clip_of(a)) != int(graph.clip_of(b)) for _, a, b in transitions)
        self.report({"INFO"}, f"{action.name} on {rig.name}: {motion.frame_count} frames, {len(transitions)} "
                              f"transitions ({between} between clips) in {time.perf_counter() - started:.1f} s")
        return {"FINISHED"}


def curve_ground(context: bpy.types.Context, obj: bpy.types.Object) -> np.ndarray:
    """The evaluated points of Curve object ``obj`` in world space, on the floor, as ``X - iY`` (the ground
    of a Y-up clip seen from Blender's Z-up world: x is X, z is -Y)."""
    evaluated = obj.evaluated_get(context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    try:
        local = np.empty(3 * len(mesh.vertices))
        mesh.vertices.foreach_get("co", local)
    finally:
        evaluated.to_mesh_clear()
    matrix = np.array(obj.matrix_world)
    world = local.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    return np.asarray(world[:, 0] - 1j * world[:, 1])


def ground_map(rig: bpy.types.Object, motion: Clip) -> tuple[complex, complex]:
    """``(a, b)`` with the ground ``X - iY`` of ``motion``'s hips on ``rig`` (retargeted, in world space)
    ``a * c + b`` for the canonical ground ``c = x + iz`` (a turn, scale and move: least squares)."""
    from ...core.kinematics import world_positions
    from ...core.pose import as_pose
    from ...core.retarget.transfer import retarget
    from ..bridge.bone_mapping import armature_mapping
    from ..bridge.read_rig import armature_skeleton, clip_space

    on_rig = retarget(as_pose(motion), armature_skeleton(rig), target_mapping=armature_mapping(rig),
                      target_reference=reference_rotations(rig))
    conversion, scale = clip_space(rig)
    matrix = np.array(rig.matrix_world)
    world = (scale * world_positions(on_rig)[:, 0] @ conversion.T) @ matrix[:3, :3].T + matrix[:3, 3]
    hips = world_positions(motion)[:, 0]
    canonical = hips[:, 0] + 1j * hips[:, 2]
    (a, b), *_ = np.linalg.lstsq(np.stack([canonical, np.ones_like(canonical)], axis=1),
                                 world[:, 0] - 1j * world[:, 1], rcond=None)
    if abs(a) < 1e-6:
        raise ValueError(f"{rig.name}'s root does not move with the motion's hips")
    return complex(a), complex(b)


class MOCAP_OT_synthesize_along(_WithGraph, bpy.types.Operator):
    """Walk the motion graph along a Curve object (its points on the floor) and put the new motion on the target
    rig (retargeted through the canonical skeleton) as a new action, with markers at transitions"""

    bl_idname = "mocap.synthesize_along"
    bl_label = "Synthesize Along Curve"
    bl_options = {"REGISTER", "UNDO"}

    curve: StringProperty(name="Curve", description="The Curve object to walk along (empty: the active object)")
    seed: IntProperty(name="Seed", default=0, min=0, description="Picks among the best starting frames")
    blend_frames: IntProperty(name="Blend Frames", default=5, min=0, max=1000,
                              description="Frames each transition is blended over (at least 0.2 s)")
    min_interval: FloatProperty(name="Min Interval", default=1.0, min=0.0, unit="TIME_ABSOLUTE",
                                description="Seconds between transitions at least")

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.transitions import follow

        started = time.perf_counter()
        lib = library(_scene(context))
        assert lib is not None, "poll: a graph"
        # Not objects.get(name, default): the stubs say it returns nothing.
        obj = bpy.data.objects[self.curve] if self.curve in bpy.data.objects else context.active_object  # noqa: SIM401
        try:
            if obj is None or obj.type != "CURVE":
                raise ValueError("choose a Curve object to walk along (or make one active)")
            rig = _target_rig(context)
            ground = curve_ground(context, obj)
            clips = lib.clips()
            settings = {"seed": self.seed, "blend_frames": self.blend_frames, "min_interval": self.min_interval}
            guess = follow(lib.graph, clips, np.stack([ground.real, ground.imag], axis=1), **settings)
            a, b = ground_map(rig, guess)
            asked = (ground - b) / a
            motion = follow(lib.graph, clips, np.stack([asked.real, asked.imag], axis=1), **settings)
            rig, action = _write_onto(context, rig, motion, f"along {obj.name}", lib)
        except ValueError as error:
            self.report({"ERROR"}, f"Synthesize Along failed: {error}")
            return {"CANCELLED"}
        distance = {key: value * abs(a) for key, value in motion.metadata["path_error"].items()}
        self.report({"INFO"}, f"{action.name} on {rig.name}: {motion.frame_count} frames, "
                              f"{len(motion.metadata['transitions'])} transitions; hips from {obj.name}: mean "
                              f"{distance['mean']:.3f}, max {distance['max']:.3f}, end {distance['end']:.3f} (scene "
                              f"units) in {time.perf_counter() - started:.1f} s")
        return {"FINISHED"}


class MOCAP_OT_prune_walk(_WithGraph, bpy.types.Operator):
    """Cut the stretch between two transitions out of the target rig's action made from the graph (by default the
    stretch at the current frame) and join what remains through the graph, as a new action"""

    bl_idname = "mocap.prune_walk"
    bl_label = "Prune"
    bl_options = {"REGISTER", "UNDO"}

    first: IntProperty(name="First Transition", default=-1, min=-1,
                       description="Cut from this transition of the action (-1: the last at or before the current "
                                   "frame)")
    last: IntProperty(name="Last Transition", default=-1, min=-1,
                      description="Cut up to this transition (-1: the one after the first)")

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.transitions import prune

        scene = _scene(context)
        lib = library(scene)
        assert lib is not None, "poll: a graph"
        try:
            rig = _target_rig(context)
            if rig.name in lib.objects:
                rig = armature_named(f"{rig.name}_walk") or rig
            action = armature_action(rig)
            stored = None if action is None else id_property(action, MADE_PROPERTY)
            if action is None or stored is None:
                raise ValueError(f"{rig.name}'s action was not made from the graph (Synthesize or Synthesize Along)")
            made = json.loads(stored)
            landings = [landing for landing, _, _ in made["transitions"]]
            first = self.first
            if first < 0:
                first = sum(landing <= scene.frame_current - made["frame_start"] for landing in landings) - 1
            last = first + 1 if self.last < 0 else self.last
            if first < 0 or last >= len(landings):
                raise ValueError(f"the cut must lie between two of the action's {len(landings)} transitions "
                                 f"(at frames {', '.join(str(made['frame_start'] + t) for t in landings)})")
            motion = prune(lib.graph, lib.clips(), made, first, last)
            rig, pruned = _write_onto(context, rig, motion, "pruned", lib)
        except ValueError as error:
            self.report({"ERROR"}, f"Prune failed: {error}")
            return {"CANCELLED"}
        start, removed, added = motion.metadata["pruned"]
        self.report({"INFO"}, f"{pruned.name} on {rig.name}: frames {made['frame_start'] + start} to "
                              f"{made['frame_start'] + start + removed - 1} cut ({removed} frames), joined by "
                              f"{added} frames; {motion.frame_count} frames")
        return {"FINISHED"}


class MocapGraphSettings(_BuildSettings, _WalkSettings, FrameRange, bpy.types.PropertyGroup):
    """The Transitions panel's inputs (on the scene)."""

    target: PointerProperty(type=bpy.types.Object, name="Target Rig", poll=is_armature,
                            description="Rig that gets taken and synthesized motion (none: the active armature; a clip "
                                        "of the graph: its copy <clip>_walk)")
    curve: PointerProperty(type=bpy.types.Object, name="Curve", poll=lambda _, obj: obj.type == "CURVE",
                           description="Curve object Synthesize Along walks (none: the active object)")


class VIEW3D_PT_mocap_transitions(SidebarPanel):
    """Build a motion graph, browse its transitions, take them or walk it at random."""

    bl_label = "Transitions"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        layout, scene = self.layout, context.scene
        assert layout is not None and scene is not None
        settings = graph_settings(scene)
        column = layout.column(align=True)
        for name in BUILD_SETTINGS:
            column.prop(settings, name)
        row = layout.row(align=True)
        operator = row.operator(MOCAP_OT_build_graph.bl_idname, icon="GRAPH")
        for name in BUILD_SETTINGS:
            setattr(operator, name, getattr(settings, name))
        row.operator(MOCAP_OT_add_to_graph.bl_idname, icon="ADD")
        row = layout.row(align=True)
        row.operator(MOCAP_OT_save_graph.bl_idname, icon="FILE_TICK")
        row.operator(MOCAP_OT_load_graph.bl_idname, icon="FILE_FOLDER")
        lib = library(scene)
        if lib is None:
            layout.label(text="No graph: select armatures and build one, or load one")
            return
        graph = lib.graph
        layout.label(text=f"{len(graph.clip_names)} clips, {len(graph.sources)} transitions, "
                          f"{graph.alive.mean():.1%} kept")
        layout.prop(settings, "target")
        layout.prop(settings, "blend_frames")
        self._transitions(context, layout, scene, lib, settings.blend_frames)
        box = layout.box()
        row = box.row(align=True)
        row.prop(settings, "frames")
        row.prop(settings, "seed")
        row = box.row(align=True)
        for name in FrameRange.__annotations__:
            row.prop(settings, name)
        operator = box.operator(MOCAP_OT_synthesize.bl_idname, icon="PLAY")
        for name in ("frames", "seed", "blend_frames", *FrameRange.__annotations__):
            setattr(operator, name, getattr(settings, name))
        box.prop(settings, "curve")
        row = box.row(align=True)
        along = row.operator(MOCAP_OT_synthesize_along.bl_idname, icon="CURVE_PATH")
        along.curve = settings.curve.name if settings.curve else ""
        along.seed, along.blend_frames = settings.seed, settings.blend_frames
        row.operator(MOCAP_OT_prune_walk.bl_idname, icon="X")

    def _transitions(self, context: bpy.types.Context, layout: bpy.types.UILayout, scene: bpy.types.Scene,
                     lib: Library, blend_frames: int) -> None:
        """The transitions from the active clip's current frame, with Preview and Take buttons."""
        box = layout.box()
        clip = lib.clip_index(context.active_object)
        frame = None if clip is None else lib.global_frame(clip, scene.frame_current)
        if frame is None:
            box.label(text="Make a clip of the graph active to see its transitions")
            return
        options = lib.graph.transitions_from(frame)
        box.label(text=f"Frame {scene.frame_current}: {len(options)} transitions")
        for option in options[:LISTED]:
            target, shown = lib.blender_frame(option.target)
            row = box.row(align=True)
            row.label(text=f"{lib.objects[target]} {shown:g}  D {option.cost:.3f}  P {option.probability:.2f}")
            row.operator(MOCAP_OT_preview_transition.bl_idname, text="", icon="HIDE_OFF").target = option.target
            take = row.operator(MOCAP_OT_take_transition.bl_idname, text="Take")
            take.source, take.target, take.blend_frames = option.source, option.target, blend_frames


CLASSES = (MocapGraphSettings, MOCAP_OT_build_graph, MOCAP_OT_add_to_graph, MOCAP_OT_save_graph, MOCAP_OT_load_graph,
           MOCAP_OT_preview_transition, MOCAP_OT_take_transition, MOCAP_OT_synthesize, MOCAP_OT_synthesize_along,
           MOCAP_OT_prune_walk, VIEW3D_PT_mocap_transitions)


def register_properties() -> None:
    # The stubs say bpy.props functions return nothing.
    add_properties(bpy.types.Scene, mocap_graph=PointerProperty(type=MocapGraphSettings))  # type: ignore[func-returns-value]
    bpy.app.handlers.load_post.append(_forget_libraries)


def unregister_properties() -> None:
    remove_properties(bpy.types.Scene, "mocap_graph")
    if _forget_libraries in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(_forget_libraries)
    _LIBRARIES.clear()
