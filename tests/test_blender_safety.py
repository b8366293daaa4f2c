"""Issue 30 in headless Blender: no action lost, the selection obeyed, results that do not depend on what a
rig held before, the motion graph kept with the file, and poll messages that say what is missing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.blender_helpers import armature_from_bones, pose_heads
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


def hips_heads(bpy, obj, frames, bone: str) -> np.ndarray:
    heads, names = pose_heads(bpy, obj, frames)
    return heads[:, names.index(bone)]


def test_in_place_removes_the_hips_travel_over_the_ground(addon):
    """Item 9: root="in_place": at most 1 % of the source's travel left, the hips' height kept."""
    bpy = addon
    walk, rig = imported(bpy, WALK), imported(bpy, JOG, "rig")
    frames = range(1, 121)
    source = hips_heads(bpy, walk, frames, "Hips")
    assert bpy.ops.mocap.retarget(source=walk.name, target="rig", root="SCALE") == {"FINISHED"}
    scaled = hips_heads(bpy, rig, frames, "mixamorig:Hips")
    assert bpy.ops.mocap.retarget(source=walk.name, target="rig", root="IN_PLACE") == {"FINISHED"}
    in_place = hips_heads(bpy, rig, frames, "mixamorig:Hips")
    travel = np.linalg.norm(source[:, :2] - source[0, :2], axis=1).max()
    left = np.linalg.norm(in_place[:, :2] - in_place[0, :2], axis=1).max()
    assert travel > 1.0 and left <= 0.01 * travel
    np.testing.assert_allclose(in_place[:, 2], scaled[:, 2], atol=1e-4)  # up and down as before


def rig_with_root(bpy, name: str):
    """The retarget tests' Mixamo rig with a root bone on the ground above its hips."""
    from tests.test_blender_retarget import RIG, bone_name

    rows = [(n.replace("Left", side), p and p.replace("Left", side), (sign * h[0], *h[1:]), (sign * t[0], *t[1:]))
            for side, sign in (("Left", 1), ("Right", -1)) for n, p, h, t in RIG
            if n.startswith("Left") or side == "Left"]
    bones = [("root", None, (0, 0, 0), (0, 0.3, 0), 0.0)]
    bones += [(bone_name("mixamo", n), bone_name("mixamo", p) if p else "root", h, t, 0.0) for n, p, h, t in rows]
    return armature_from_bones(bpy, name, bones)


def test_to_root_bone_puts_the_travel_on_the_root(addon):
    """Item 9: root="to_root_bone": the root bone follows the hips over the ground (on the ground), the hips
    stay where "scale" puts them; a rig without a bone above the hips is refused."""
    bpy = addon
    walk = imported(bpy, WALK)
    plain, rooted = rig_with_root(bpy, "plain"), rig_with_root(bpy, "rooted")
    frames = range(1, 121)
    assert bpy.ops.mocap.retarget(source=walk.name, target="plain", root="SCALE") == {"FINISHED"}
    assert bpy.ops.mocap.retarget(source=walk.name, target="rooted", root="TO_ROOT_BONE") == {"FINISHED"}
    heads, names = pose_heads(bpy, rooted, frames)
    root, hips = heads[:, names.index("root")], heads[:, names.index("mixamorig:Hips")]
    np.testing.assert_allclose(root[:, :2], hips[:, :2], atol=1e-4)
    np.testing.assert_allclose(root[:, 2], 0.0, atol=1e-5)
    assert np.linalg.norm(root[:, :2] - root[0, :2], axis=1).max() > 0.5  # it travels
    below = [j for j, name in enumerate(names) if name != "root"]
    np.testing.assert_allclose(heads[:, below], pose_heads(bpy, plain, frames)[0][:, below], atol=1e-4)
    with pytest.raises(RuntimeError, match="no bone above it to carry the root motion"):
        bpy.ops.mocap.retarget(source=walk.name, target=imported(bpy, JOG, "rootless").name, root="TO_ROOT_BONE")


def test_a_frame_range_uses_those_frames_of_the_source(addon):
    """Item 10: Start/End on retarget and blend: the result spans those frames and equals the whole run there."""
    bpy = addon
    walk, jog, rig = imported(bpy, WALK), imported(bpy, JOG), imported(bpy, JOG, "rig")
    assert bpy.ops.mocap.retarget(source=walk.name, target="rig", feet="FREE") == {"FINISHED"}
    whole = pose_heads(bpy, rig, range(31, 91))[0]
    assert bpy.ops.mocap.retarget(source=walk.name, target="rig", feet="FREE", use_frame_range=True,
                                  frame_start=31, frame_end=90) == {"FINISHED"}
    assert rig.animation_data.action.frame_range[:] == (31.0, 90.0)
    # the same to float32 (the source's twists are measured over the frames used: 2e-6 of the figure here)
    np.testing.assert_allclose(pose_heads(bpy, rig, range(31, 91))[0], whole, atol=1e-5 * np.ptp(whole))
    assert bpy.ops.mocap.blend(clip_a=walk.name, clip_b=jog.name, feet="FREE", use_frame_range=True,
                               frame_start=11, frame_end=50) == {"FINISHED"}
    result = bpy.data.objects[f"{WALK}_blend"]
    assert result.animation_data.action.frame_range[:] == (11.0, 50.0)
    assert result.data.mocap_blend.use_frame_range and result.data.mocap_blend.frame_end == 50
    with pytest.raises(RuntimeError, match="hold none of the source's 1-120"):
        bpy.ops.mocap.retarget(source=walk.name, target="rig", use_frame_range=True, frame_start=200, frame_end=300)


def test_synthesize_walks_only_the_frames_of_its_range(graph_scene):
    """Item 10 for Synthesize: with Frame Range, the walk plays only the frames every clip shows from Start to
    End (both clips start at frame 1: their frames 21-100), starting there whatever the current frame."""
    from mocap_addon.blender.tools.transitions import MADE_PROPERTY, library

    bpy = graph_scene
    lib = library(bpy.context.scene)
    local = np.arange(lib.graph.frame_count) - lib.graph.offsets[lib.graph.clip_of(np.arange(lib.graph.frame_count))]
    bpy.context.scene.frame_current = 110
    assert bpy.ops.mocap.synthesize(frames=400, seed=3) == {"FINISHED"}
    walked = np.array(json.loads(bpy.data.objects[f"{JOG}_walk"].animation_data.action[MADE_PROPERTY])["path"])
    assert not ((local[walked] >= 20) & (local[walked] <= 99)).all()  # the whole graph: beyond the range
    for seed in range(3):
        assert bpy.ops.mocap.synthesize(frames=400, seed=seed, use_frame_range=True, frame_start=21,
                                        frame_end=100) == {"FINISHED"}
        action = bpy.data.objects[f"{JOG}_walk"].animation_data.action
        walked = np.array(json.loads(action[MADE_PROPERTY])["path"])
        assert len(walked) == 400 and ((local[walked] >= 20) & (local[walked] <= 99)).all()
        assert len(json.loads(action[MADE_PROPERTY])["transitions"]) >= 3
    with pytest.raises(RuntimeError, match="no frame of the graph's kept part is usable"):
        bpy.ops.mocap.synthesize(frames=100, use_frame_range=True, frame_start=500, frame_end=600)
