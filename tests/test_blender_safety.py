"""Issue 30 in headless Blender: no action lost, the selection obeyed, results that do not depend on what a
rig held before, the motion graph kept with the file, and poll messages that say what is missing."""

from __future__ import annotations

import numpy as np
import pytest

from tests.blender_helpers import pose_heads
from tests.conftest import SAMPLES

pytestmark = pytest.mark.blender

WALK, JOG = "walk_turn", "jog_wave"


def imported(bpy, name: str, as_name: str | None = None):
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLES / f"{name}.bvh")) == {"FINISHED"}
    obj = bpy.context.object
    if as_name:
        obj.name = as_name
    return obj


def select(bpy, *objects) -> None:
    """Select ``objects`` only, the last one active."""
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in objects)
    bpy.context.view_layer.objects.active = objects[-1] if objects else None


def reopened(bpy, path):
    """Save the file to ``path``, start a new one, open the saved one."""
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    assert not bpy.data.objects
    bpy.ops.wm.open_mainfile(filepath=str(path))


def test_every_action_made_or_replaced_is_saved_with_the_file(addon, tmp_path):
    """Item 1: six retargets onto one rig and a blend update: every action survives save and reopen."""
    bpy = addon
    rig = imported(bpy, WALK, "rig")
    hand_made = bpy.data.actions.new("keyed by hand")
    rig.animation_data.action = hand_made  # the rig's own action, replaced by the first retarget
    sources = [imported(bpy, name, f"source {n}") for n, name in enumerate((WALK, JOG, WALK))]
    made = []
    for source in sources * 2:
        assert bpy.ops.mocap.retarget(source=source.name, target="rig", feet="FREE") == {"FINISHED"}
        made.append(rig.animation_data.action.name)
    assert len(set(made)) == 6
    assert bpy.ops.mocap.blend(clip_a="source 0", clip_b="source 1", feet="FREE") == {"FINISHED"}
    assert bpy.ops.mocap.blend_update() == {"FINISHED"}
    blended = {a.name for a in bpy.data.actions if a.name.startswith("source 0_blend")}
    assert len(blended) == 2  # the first bake is kept beside the update
    reopened(bpy, tmp_path / "kept.blend")
    kept = {a.name for a in bpy.data.actions}
    assert kept >= {*made, "keyed by hand", *blended}
    assert bpy.data.objects["rig"].animation_data.action.name == made[-1]


@pytest.fixture
def graph_scene(addon):
    """Both samples imported, selected, the jog active, a graph built."""
    bpy = addon
    clips = [imported(bpy, name) for name in (WALK, JOG)]
    select(bpy, *clips)
    assert bpy.ops.mocap.build_graph() == {"FINISHED"}
    return bpy


def test_synthesize_never_writes_over_a_clip_of_the_graph(graph_scene, tmp_path):
    """Item 1: no target rig, a clip of the graph active: the walk goes onto a copy of the clip's rig, the
    clip keeps its action, and the graph still finds its clips."""
    bpy = graph_scene
    jog = bpy.data.objects[JOG]
    action = jog.animation_data.action
    path = tmp_path / "graph.npz"
    assert bpy.ops.mocap.save_graph(filepath=str(path)) == {"FINISHED"}
    assert bpy.ops.mocap.synthesize(frames=200, seed=1) == {"FINISHED"}
    assert jog.animation_data.action == action and action.frame_range[:] == (1.0, 120.0)
    walk = bpy.data.objects[f"{JOG}_walk"]
    assert walk.animation_data.action.name == f"{JOG}_walk synthesized"
    assert round(walk.animation_data.action.frame_range[1]) == 200
    assert walk.data != jog.data and walk.data.bones.keys() == jog.data.bones.keys()
    select(bpy, jog)
    assert bpy.ops.mocap.synthesize(frames=100, seed=2) == {"FINISHED"}  # the same copy again
    assert not any(o.name.startswith(f"{JOG}_walk.") for o in bpy.data.objects)
    assert bpy.ops.mocap.load_graph(filepath=str(path)) == {"FINISHED"}


def test_source_and_target_come_from_the_selection_each_run(addon):
    """Item 2: the names are not remembered between runs (F3, Repeat, the redo panel start from the
    selection): SKIP_SAVE on each, and an unnamed run follows the selection."""
    bpy = addon
    chosen = {bpy.ops.mocap.retarget: ("source", "target"), bpy.ops.mocap.blend: ("clip_a", "clip_b")}
    for operator, names in chosen.items():
        properties = operator.get_rna_type().properties
        assert all(properties[name].is_skip_save for name in names), operator
    a, b, c, d = (imported(bpy, WALK, name) for name in "ABCD")
    assert bpy.ops.mocap.retarget(source="A", target="B", feet="FREE") == {"FINISHED"}
    select(bpy, c, d)
    assert bpy.ops.mocap.retarget("INVOKE_DEFAULT", feet="FREE") == {"FINISHED"}
    assert d.animation_data.action.name.endswith("on D")
    select(bpy, a, b)
    assert bpy.ops.mocap.blend("INVOKE_DEFAULT", feet="FREE") == {"FINISHED"}
    assert "B_blend" in bpy.data.objects


def test_a_retarget_does_not_depend_on_what_the_rig_held(addon):
    """Item 3: the same retarget onto a bare rig, onto it holding another action and a hand-made pose, and
    repeated: the same result to the float (no drift)."""
    bpy = addon
    walk, jog, rig = imported(bpy, WALK), imported(bpy, JOG), imported(bpy, JOG, "rig")
    rig.animation_data.action = None
    frames = range(1, 121)

    def retargeted() -> np.ndarray:
        assert bpy.ops.mocap.retarget(source=walk.name, target="rig") == {"FINISHED"}
        return pose_heads(bpy, rig, frames)[0]

    bare = retargeted()
    assert bpy.ops.mocap.retarget(source=jog.name, target="rig") == {"FINISHED"}  # the rig now plays a jog
    after_jog = retargeted()
    repeated = [retargeted() for _ in range(2)]
    rig.animation_data.action = None
    rig.pose.bones[1].rotation_quaternion = (0.8, 0.6, 0.0, 0.0)
    posed = retargeted()
    for other in (after_jog, *repeated, posed):
        np.testing.assert_allclose(other, bare, atol=1e-6)


def test_the_graph_is_kept_with_the_file(graph_scene, tmp_path):
    """Item 4: saved and reopened, the graph is there (same transitions, clips found); File > New and a
    file without a graph start without one; undoing the build takes it away."""
    from mocap_addon.blender.tools.transitions import library

    bpy = graph_scene
    lib = library(bpy.context.scene)
    reopened(bpy, tmp_path / "graph.blend")
    again = library(bpy.context.scene)
    assert again is not None and again is not lib
    np.testing.assert_array_equal(again.graph.targets, lib.graph.targets)
    assert again.objects == lib.objects and again.actions == lib.actions and again.rates == lib.rates
    select(bpy, bpy.data.objects[JOG])
    assert bpy.ops.mocap.synthesize(frames=60) == {"FINISHED"}  # it reads its clips in the reopened file
    bpy.ops.wm.read_homefile(use_empty=True)
    assert library(bpy.context.scene) is None
    with pytest.raises(RuntimeError, match="No motion graph in this file"):
        bpy.ops.mocap.add_to_graph()
    imported(bpy, WALK)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "none.blend"))
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "graph.blend"))
    assert library(bpy.context.scene) is not None
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "none.blend"))
    assert library(bpy.context.scene) is None


POLLS = {  # operator: words its poll message says, with nothing in the scene
    "map_bones": "Make an armature active", "load_mapping_preset": "Make an armature active",
    "save_mapping_preset": "Make an armature active", "to_canonical": "Make an armature with an action active",
    "set_reference_pose": "Make an armature active", "blend_update": "Make a blend result active",
    "envelope": "Make a blend result active", "solve_mix": "Make a blend result active",
    "add_to_graph": "No motion graph", "save_graph": "No motion graph", "synthesize": "No motion graph",
    "take_transition": "No motion graph", "preview_transition": "No motion graph"}


@pytest.mark.parametrize("name", sorted(POLLS))
def test_a_failed_poll_says_what_is_missing(addon, name):
    """Item 5: the thirteen operators' polls say what is missing instead of "context is incorrect"."""
    bpy = addon
    with pytest.raises(RuntimeError, match=POLLS[name]):
        getattr(bpy.ops.mocap, name)()
