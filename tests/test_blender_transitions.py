"""The Transitions panel's operators in headless Blender, on the two bundled samples."""

from __future__ import annotations

import numpy as np
import pytest

from tests.blender_helpers import Layout, ids
from tests.conftest import SAMPLES

pytestmark = pytest.mark.blender

WALK, JOG = "walk_turn", "jog_wave"


@pytest.fixture
def scene(addon):
    """Both samples imported, selected, the jog active, a graph built; returns (bpy, library)."""
    from mocap_addon.blender.tools.transitions import library

    bpy = addon
    for name in (WALK, JOG):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLES / f"{name}.bvh")) == {"FINISHED"}
    for name in (WALK, JOG):
        bpy.data.objects[name].select_set(True)
    bpy.context.view_layer.objects.active = bpy.data.objects[JOG]
    assert bpy.ops.mocap.build_graph() == {"FINISHED"}
    return bpy, library(bpy.context.scene)


def test_build_matches_the_selected_clips_and_keys_the_counts(scene):
    from mocap_addon.blender.bridge.read_rig import curves_by_path, sample_fcurve

    bpy, lib = scene
    graph = lib.graph
    assert lib.objects == [JOG, WALK]  # the active armature first
    assert graph.clip_names == [JOG, WALK] and graph.fps == 30.0
    assert len(graph.sources) > 10
    counts = graph.transition_counts()
    for clip, name in enumerate(lib.objects):
        data = bpy.data.objects[name].data
        curve = curves_by_path(data, data.animation_data.action)[('["mocap_transitions"]', 0)]
        frames = np.arange(1, 121, dtype=np.float64)
        keyed = sample_fcurve(curve, frames)
        np.testing.assert_array_equal(keyed, counts[graph.offsets[clip]:graph.offsets[clip] + 120])
    # the armatures' own actions are untouched
    assert {a.name for a in bpy.data.actions} >= {WALK, JOG}


def test_adding_a_clip_is_building_with_it(addon):
    from mocap_addon.blender.tools.transitions import library

    bpy = addon
    for name in (WALK, JOG):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLES / f"{name}.bvh")) == {"FINISHED"}
    bpy.ops.object.select_all(action="DESELECT")
    jog = bpy.data.objects[JOG]
    jog.select_set(True)
    bpy.context.view_layer.objects.active = jog
    assert bpy.ops.mocap.build_graph() == {"FINISHED"}
    bpy.data.objects[WALK].select_set(True)
    assert bpy.ops.mocap.add_to_graph() == {"FINISHED"}
    grown = library(bpy.context.scene)
    assert grown.objects == [JOG, WALK]
    assert bpy.ops.mocap.build_graph() == {"FINISHED"}
    built = library(bpy.context.scene)
    np.testing.assert_array_equal(grown.graph.sources, built.graph.sources)
    np.testing.assert_array_equal(grown.graph.targets, built.graph.targets)
    with pytest.raises(RuntimeError, match="not in the graph"):
        bpy.ops.mocap.add_to_graph()


def test_nothing_selected_is_refused(addon):
    bpy = addon
    before = ids(bpy)
    with pytest.raises(RuntimeError, match="select armatures with actions"):
        bpy.ops.mocap.build_graph()
    assert ids(bpy) == before


def test_save_and_load_find_the_clips_again(scene, tmp_path):
    from mocap_addon.blender.tools.transitions import _LIBRARIES, library

    bpy, lib = scene
    path = tmp_path / "samples"
    assert bpy.ops.mocap.save_graph(filepath=str(path)) == {"FINISHED"}
    assert (tmp_path / "samples.npz").is_file()
    _LIBRARIES.clear()
    assert bpy.ops.mocap.load_graph(filepath=str(tmp_path / "samples.npz")) == {"FINISHED"}
    loaded = library(bpy.context.scene)
    np.testing.assert_array_equal(loaded.graph.targets, lib.graph.targets)
    assert loaded.objects == lib.objects and loaded.firsts == lib.firsts and loaded.rates == lib.rates
    # a clip that changed is refused, by name and frame count
    bpy.data.objects[WALK].name = "someone else"
    with pytest.raises(RuntimeError, match="no armature 'walk_turn' with an action"):
        bpy.ops.mocap.load_graph(filepath=str(tmp_path / "samples.npz"))
    bpy.data.objects["someone else"].name = WALK
    action = bpy.data.objects[JOG].animation_data.action
    bpy.data.objects[JOG].keyframe_insert('pose.bones["mixamorig:Hips"].location', frame=200)
    with pytest.raises(RuntimeError, match="jog_wave has 200 frames, the graph's clip 120"):
        bpy.ops.mocap.load_graph(filepath=str(tmp_path / "samples.npz"))
    assert action.frame_range[1] == 200


def test_preview_jumps_to_the_target_and_take_makes_a_walk(scene):
    bpy, lib = scene
    graph = lib.graph
    scene_ = bpy.context.scene
    source = int(graph.sources[len(graph.sources) // 2])
    option = graph.transitions_from(source)[0]
    rig = bpy.data.objects[WALK]
    scene_.mocap_graph.target = rig
    assert bpy.ops.mocap.preview_transition(target=option.target) == {"FINISHED"}
    clip, frame = lib.blender_frame(option.target)
    assert bpy.context.object.name == lib.objects[clip] and scene_.frame_current == round(frame)
    assert bpy.ops.mocap.take_transition(source=option.source, target=option.target) == {"FINISHED"}
    walk = list(scene_["mocap_graph_walk"])
    first = int(graph.offsets[graph.clip_of(source)])
    assert walk[:walk.index(source) + 1] == list(range(first, source + 1))  # the source clip from its start
    assert walk[walk.index(source) + 1] == option.target
    assert rig.animation_data.action.name == WALK  # a clip of the graph is never written over: its copy is
    rig = bpy.data.objects[f"{WALK}_walk"]
    action = rig.animation_data.action
    assert action.name.startswith(f"{WALK}_walk walk")
    assert round(action.frame_range[1] - action.frame_range[0]) + 1 == len(walk)
    markers = [m for m in scene_.timeline_markers if m.name.startswith("graph: ")]
    assert len(markers) == 1 and markers[0].frame == scene_.frame_start + walk.index(option.target)
    # a second take from further on extends the same walk
    later = next(int(s) for s in graph.sources if s >= option.target + 16 and graph.clip_of(s) == clip
                 and int(s) in walk)
    second = graph.transitions_from(later)[0]
    assert bpy.ops.mocap.take_transition(source=second.source, target=second.target) == {"FINISHED"}
    longer = list(scene_["mocap_graph_walk"])
    assert longer[:longer.index(second.source) + 1] == walk[:walk.index(second.source) + 1]
    assert len([m for m in scene_.timeline_markers if m.name.startswith("graph: ")]) == 2


def test_synthesize_writes_a_new_action_with_markers(scene):
    bpy, _ = scene
    rig = bpy.data.objects[WALK]
    bpy.context.scene.mocap_graph.target = rig
    assert bpy.ops.mocap.synthesize(frames=240, seed=3, blend_frames=4) == {"FINISHED"}
    rig = bpy.data.objects[f"{WALK}_walk"]  # a clip of the graph is never written over: its copy is
    action = rig.animation_data.action
    assert action.name.startswith(f"{WALK}_walk synthesized")
    assert round(action.frame_range[1] - action.frame_range[0]) + 1 == 240
    markers = [m for m in bpy.context.scene.timeline_markers if m.name.startswith("graph: ")]
    assert len(markers) >= 3
    assert all(m.name.startswith(f"graph: {JOG} ") for m in markers)
    # the clips' own actions are still what the graph reads
    assert bpy.ops.mocap.synthesize(frames=240, seed=3, blend_frames=4) == {"FINISHED"}
    again = rig.animation_data.action
    assert again != action and again.frame_range[:] == action.frame_range[:]


def test_a_failed_synthesis_leaves_the_data_as_it_was(scene):
    bpy, _ = scene
    bpy.context.scene.mocap_graph.target = None
    bpy.ops.object.select_all(action="DESELECT")
    bpy.context.view_layer.objects.active = None
    before = ids(bpy)
    with pytest.raises(RuntimeError, match="choose a target rig"):
        bpy.ops.mocap.synthesize(frames=50)
    assert ids(bpy) == before


class _Labelled(Layout):
    """A layout that also keeps the labels drawn."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: _Labelled(self.bpy, self.drawn)

    def label(self, text="", **kwargs):
        self.drawn.append(f"label: {text}")


def test_panel_lists_the_transitions_of_the_current_frame(scene):
    from mocap_addon.blender.tools.transitions import VIEW3D_PT_mocap_transitions

    bpy, lib = scene
    drawn: list[str] = []

    class Panel:
        layout = _Labelled(bpy, drawn)
        _transitions = VIEW3D_PT_mocap_transitions._transitions

    source = int(lib.graph.sources[0])
    clip, frame = lib.blender_frame(source)
    bpy.context.view_layer.objects.active = bpy.data.objects[lib.objects[clip]]
    bpy.context.scene.frame_set(round(frame))
    VIEW3D_PT_mocap_transitions.draw(Panel(), bpy.context)
    options = lib.graph.transitions_from(source)
    assert drawn[:8] == ["sigma", "nu", "threshold", "min_gap", "contacts", "mocap.build_graph", "mocap.add_to_graph",
                         "mocap.save_graph"]
    assert f"label: Frame {round(frame)}: {len(options)} transitions" in drawn
    assert drawn.count("mocap.take_transition") == min(len(options), 12)
    assert drawn[-9:] == ["frames", "seed", "use_frame_range", "frame_start", "frame_end", "mocap.synthesize", "curve",
                          "mocap.synthesize_along", "mocap.prune_walk"]
    drawn.clear()
    bpy.context.view_layer.objects.active = None
    VIEW3D_PT_mocap_transitions.draw(Panel(), bpy.context)
    assert "label: Make a clip of the graph active to see its transitions" in drawn


def _curve(bpy, points, name="Path"):
    """A poly Curve object through ``points`` (world X, Y on the floor)."""
    data = bpy.data.curves.new(name, type="CURVE")
    spline = data.splines.new("POLY")
    spline.points.add(len(points) - 1)
    for point, (x, y) in zip(spline.points, points):
        point.co = (x, y, 0.0, 1.0)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    return obj


@pytest.mark.slow
def test_synthesize_along_walks_the_curve_and_prune_cuts_a_stretch(scene):
    bpy, _ = scene
    unit = 1.0  # the samples' rigs import in metres (Unit Auto reads their centimetres): so is the curve
    angles = np.linspace(0, np.pi / 2, 40)
    bend = np.stack([6 - 6 * np.cos(angles), 6 * np.sin(angles)], axis=1)  # 6 m straight, a quarter of radius 6 m
    points = np.concatenate([np.stack([np.zeros(30), np.linspace(-6, 0, 30, endpoint=False)], 1), bend])
    path = _curve(bpy, points * unit)
    rig = bpy.data.objects[WALK]
    bpy.context.scene.mocap_graph.target = rig
    assert bpy.ops.mocap.synthesize_along(curve=path.name) == {"FINISHED"}
    rig = bpy.data.objects[f"{WALK}_walk"]
    action = rig.animation_data.action
    assert action.name.startswith(f"{WALK}_walk along {path.name}")
    first, last = (round(v) for v in action.frame_range)
    frames = np.arange(first, last + 1, dtype=np.float64)
    hips = np.empty((len(frames), 3))
    for k, frame in enumerate(frames):  # the hips where Blender shows them
        bpy.context.scene.frame_set(int(frame))
        hips[k] = np.array(rig.matrix_world @ rig.pose.bones[0].head) / unit
    dense = np.concatenate([np.stack([np.zeros(300), np.linspace(-6, 0, 300)], 1),
                            np.stack([6 - 6 * np.cos(np.linspace(0, np.pi / 2, 600)),
                                      6 * np.sin(np.linspace(0, np.pi / 2, 600))], 1)])
    gaps = np.min(np.linalg.norm(hips[:, None, :2] - dense[None], axis=-1), axis=1)
    assert gaps.mean() <= 0.15 and gaps.max() <= 0.5
    assert np.linalg.norm(hips[0, :2] - points[0]) <= 0.2 and np.linalg.norm(hips[-1, :2] - points[-1]) <= 0.5
    markers = [m for m in bpy.context.scene.timeline_markers if m.name.startswith("graph: ")]
    assert len(markers) >= 2
    # prune: the stretch at the second marker's frame is cut, the rest joined
    landings = sorted(m.frame for m in markers)
    bpy.context.scene.frame_set(landings[0])
    assert bpy.ops.mocap.prune_walk() == {"FINISHED"}
    pruned = rig.animation_data.action
    assert pruned != action and pruned.name.startswith(f"{WALK}_walk pruned")
    bpy.context.scene.frame_set(landings[0] - 2)
    kept = np.array(rig.matrix_world @ rig.pose.bones[0].head) / unit
    # the frames before the cut stay; only as high as the retarget's floor (each written motion's own planted
    # feet, feet="planted") may shift them, the same for all frames: within a millimetre
    np.testing.assert_allclose(kept[:2], hips[landings[0] - 2 - first, :2], atol=1e-4)
    assert abs(kept[2] - hips[landings[0] - 2 - first, 2]) <= 1e-3
    with pytest.raises(RuntimeError, match="between two of the action's"):
        bpy.ops.mocap.prune_walk(first=0, last=99)


def test_synthesize_along_refuses_what_is_not_a_curve(scene):
    bpy, _ = scene
    bpy.context.scene.mocap_graph.target = bpy.data.objects[WALK]
    bpy.context.view_layer.objects.active = bpy.data.objects[JOG]
    before = ids(bpy)
    with pytest.raises(RuntimeError, match="choose a Curve object"):
        bpy.ops.mocap.synthesize_along()
    assert ids(bpy) == before
