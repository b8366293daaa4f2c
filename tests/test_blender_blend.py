"""The Blend panel's operators in headless Blender, on imported corpus files (two Bandai walks, one skeleton)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.blender_helpers import Layout, extent, ids, pose_heads
from tests.conftest import CORPUS

pytestmark = pytest.mark.blender

WALK = CORPUS / "bvh" / "bandai_dataset-1_walk_normal_001.bvh"  # 195 frames
ELDERLY = CORPUS / "bvh" / "bandai_dataset-2_walk_elderly_004.bvh"  # 466 frames, same skeleton
A, B = WALK.stem, ELDERLY.stem
RESULT = f"{A}_blend"
FRAMES = range(1, 196)


@pytest.fixture
def clips(addon):
    """Both walks imported; returns bpy."""
    if not WALK.is_file():
        pytest.skip("../shared/corpus is absent")
    bpy = addon
    for path in (WALK, ELDERLY):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(path)) == {"FINISHED"}
    return bpy


def heads(bpy, name, frames=FRAMES):
    return pose_heads(bpy, bpy.data.objects[name], frames)[0]


def tolerance(points) -> float:
    return 1e-5 * extent(points)  # keys are float32


def test_mix_0_and_1_reproduce_a_and_b_at_every_frame(clips):
    bpy = clips
    a, b = heads(bpy, A), heads(bpy, B)
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=0.0) == {"FINISHED"}
    assert bpy.context.object.name == RESULT
    assert np.abs(heads(bpy, RESULT) - a).max() <= tolerance(a)
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=1.0, root="BLEND") == {"FINISHED"}
    assert np.abs(heads(bpy, RESULT) - b).max() <= tolerance(a)
    assert np.abs(a - b).max() > 100 * tolerance(a)
    # Blending again updates the one result and its action: nothing piles up.
    assert sorted(o.name for o in bpy.data.objects) == sorted([A, B, RESULT])
    # the first bake is kept beside the second (issue 30: no action an operator replaces is lost)
    assert sorted(x.name for x in bpy.data.actions) == sorted([A, B, RESULT, f"{RESULT}.001"])


def test_a_mask_preset_keeps_the_other_joints_of_a(clips):
    bpy = clips
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=1.0, mask="UPPER_BODY") == {"FINISHED"}
    names = [b.name for b in bpy.data.objects[A].pose.bones]
    legs = [names.index(n) for n in ("Hips", "UpperLeg_L", "Foot_L", "Toes_R")]
    hands = [names.index(n) for n in ("Hand_L", "Hand_R")]
    a, mixed = heads(bpy, A), heads(bpy, RESULT)
    assert np.abs(mixed[:, legs] - a[:, legs]).max() <= tolerance(a)
    assert np.abs(mixed[:, hands] - a[:, hands]).max() > 100 * tolerance(a)


def test_mask_presets_follow_the_stored_bone_mapping(clips):
    """Swap the arms in A's stored mapping by hand: the left-arm mask then blends the right arm."""
    from mocap_addon.blender.bridge.bone_mapping import armature_mapping, store_mapping

    bpy = clips
    armature = bpy.data.objects[A]
    mapping = armature_mapping(armature)
    arm = {"clavicle", "upper_arm", "lower_arm", "hand"}

    def other_side(canonical):
        base, _, side = canonical.rpartition("_")
        return f"{base}_{'r' if side == 'l' else 'l'}" if base in arm else canonical

    swap = {name: canonical and other_side(canonical) for name, canonical in mapping.items()}
    assert swap["Hand_L"] == "hand_r"
    store_mapping(armature, swap, {})
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=1.0, mask="LEFT_ARM") == {"FINISHED"}
    names = [b.name for b in armature.pose.bones]
    left, right = names.index("Hand_L"), names.index("Hand_R")
    a, mixed = heads(bpy, A), heads(bpy, RESULT)
    assert np.abs(mixed[:, left] - a[:, left]).max() <= tolerance(a)
    assert np.abs(mixed[:, right] - a[:, right]).max() > 100 * tolerance(a)


def test_clips_on_two_skeletons_blend(clips):
    """B from another skeleton (a CMU take) is retargeted onto A's through the stored mappings."""
    bpy = clips
    cmu = CORPUS / "bvh" / "fm_pfnn_hierarchy.bvh"
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(cmu)) == {"FINISHED"}
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=cmu.stem, mix=0.0) == {"FINISHED"}
    a = heads(bpy, A)
    assert np.abs(heads(bpy, RESULT) - a).max() <= tolerance(a)
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=cmu.stem, mix=0.5, root="HEADING") == {"FINISHED"}
    mixed = heads(bpy, RESULT)
    assert np.all(np.isfinite(mixed)) and np.abs(mixed - a).max() > 100 * tolerance(a)


def test_a_whose_bone_vectors_are_in_its_frames_takes_b_from_another_skeleton(clips):
    """A = Maya's HTR of a Mixamo dance (every offset zero, bones in the constant frame translations), B a
    Bandai walk: B is retargeted onto A's first frame, and mix 0 is still A."""
    bpy = clips
    samba = CORPUS / "htr" / "gpr450_xbot_samba_mixamo.com.htr"
    assert bpy.ops.import_anim.mocap_htr(filepath=str(samba)) == {"FINISHED"}
    name = bpy.context.object.name
    frames = range(1, 60, 7)
    assert bpy.ops.mocap.blend(clip_a=name, clip_b=A, mix=0.0) == {"FINISHED"}
    dance = heads(bpy, name, frames)
    assert np.abs(heads(bpy, f"{name}_blend", frames) - dance).max() <= tolerance(dance)
    assert bpy.ops.mocap.blend(clip_a=name, clip_b=A, mix=0.5) == {"FINISHED"}
    mixed = heads(bpy, f"{name}_blend", frames)
    assert np.all(np.isfinite(mixed)) and np.abs(mixed - dance).max() > 100 * tolerance(dance)


def test_a_keyed_mix_profile_is_honoured(clips):
    from mocap_addon.blender.bridge.blend_inputs import clip_to_world
    from mocap_addon.blender.bridge.read_rig import armature_pose
    from mocap_addon.core import world_positions
    from mocap_addon.core.blend.mixing import blend

    bpy = clips
    # Free feet: frames keyed 0 are A's and frames keyed 1 B's (held feet carry a contact across a change of mix).
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=0.5, feet="FREE", root="BLEND") == {"FINISHED"}
    result = bpy.data.objects[RESULT]
    settings = result.data.mocap_blend
    for frame, mix in ((1, 0.0), (60, 0.0), (61, 1.0), (120, 1.0), (195, 0.3)):
        settings.mix = mix
        result.data.keyframe_insert("mocap_blend.mix", frame=frame)
    assert bpy.ops.mocap.blend_update() == {"FINISHED"}
    mixed = heads(bpy, RESULT)
    a, b = heads(bpy, A), heads(bpy, B)
    assert np.abs(mixed[:60] - a[:60]).max() <= tolerance(a)
    assert np.abs(mixed[60:120] - b[60:120]).max() <= tolerance(a)
    # Between the keys: the blend at the curve's value on each frame.

    curve = _mix_curve(result)
    profile = np.array([curve.evaluate(f) for f in FRAMES])
    assert 0.3 < profile[150] < 1.0
    expected = world_positions(blend(armature_pose(bpy.data.objects[A]), armature_pose(bpy.data.objects[B]), profile,
                                     feet="free", root="blend"))
    world = clip_to_world(result)
    expected = expected @ world[:3, :3].T + world[:3, 3]
    assert np.abs(mixed - expected).max() <= tolerance(a)


def test_planted_feet_are_the_cores_and_slide_less_than_free(clips):
    """Feet Planted (the default) bakes the core's blend with held feet; their slide over A's contacts is
    a fraction of Free's."""
    from mocap_addon.blender.bridge.blend_inputs import clip_to_world
    from mocap_addon.blender.bridge.read_rig import armature_pose
    from mocap_addon.core import world_positions
    from mocap_addon.core.blend.mixing import blend
    from mocap_addon.core.body.contacts import find_contacts

    bpy = clips
    a_pose, b_pose = armature_pose(bpy.data.objects[A]), armature_pose(bpy.data.objects[B])
    world = clip_to_world(bpy.data.objects[A])
    feet = [[b.name for b in bpy.data.objects[A].pose.bones].index(n) for n in ("Foot_L", "Foot_R")]
    contacts = find_contacts(a_pose)
    slides = {}
    for mode in ("PLANTED", "FREE"):
        assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=0.5, align="DTW", feet=mode, root="BLEND") == {"FINISHED"}
        baked = heads(bpy, RESULT)
        expected = world_positions(blend(a_pose, b_pose, 0.5, align="dtw", feet=mode.lower(), root="blend"))
        assert np.abs(baked - (expected @ world[:3, :3].T + world[:3, 3])).max() <= tolerance(baked)
        ankles = np.stack([expected[:, feet], expected[:, feet]], axis=2)  # ankle as the ball too
        slides[mode] = contacts.slide(ankles)
    assert slides["PLANTED"] < 0.5 * slides["FREE"]


def test_envelope_curves_follow_the_bone_for_each_mix(clips):
    bpy = clips
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=0.5, root="BLEND") == {"FINISHED"}
    assert bpy.ops.mocap.envelope(bone="Hand_R", count=5) == {"FINISHED"}
    collection = bpy.data.collections[f"{RESULT}_envelope"]
    curves = sorted(collection.objects, key=lambda o: o.name)
    assert len(curves) == 5
    assert all(len(c.data.splines) == 1 and len(c.data.splines[0].points) == len(FRAMES) for c in curves)

    def points(obj):
        co = np.empty(4 * len(FRAMES), dtype=np.float32)
        obj.data.splines[0].points.foreach_get("co", co)
        return co.reshape(-1, 4)[:, :3]

    hand = [b.name for b in bpy.data.objects[A].pose.bones].index("Hand_R")
    a, b = heads(bpy, A)[:, hand], heads(bpy, B)[:, hand]
    assert np.abs(points(curves[0]) - a).max() <= tolerance(heads(bpy, A))
    assert np.abs(points(curves[-1]) - b).max() <= tolerance(heads(bpy, A))
    assert bpy.ops.mocap.envelope(bone="Hand_R", count=3) == {"FINISHED"}  # drawn again: replaced
    assert len(collection.objects) == 3


def test_solve_mix_brings_the_hand_onto_a_flying_ball(clips):
    """The source's catch: an Empty flies along a ball's path; solve at the catch frame, then play."""
    bpy = clips
    scene = bpy.context.scene
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=0.37) == {"FINISHED"}
    catch = 120
    hand = [b.name for b in bpy.data.objects[RESULT].pose.bones].index("Hand_R")
    reachable = heads(bpy, RESULT, [catch])[0, hand]
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=0.9) == {"FINISHED"}
    ball = bpy.data.objects.new("ball", None)
    scene.collection.objects.link(ball)
    for frame in (catch - 40, catch, catch + 40):  # a throw through the catch point
        ball.location = reachable + np.array([0.5 * (frame - catch), 0.0, -0.002 * (frame - catch) ** 2])
        ball.keyframe_insert("location", frame=frame)
    bpy.context.view_layer.objects.active = bpy.data.objects[RESULT]
    scene.frame_set(catch)
    assert bpy.ops.mocap.solve_mix(bone="Hand_R", target="ball") == {"FINISHED"}
    settings = bpy.data.objects[RESULT].data.mocap_blend
    assert abs(settings.mix - 0.37) < 1e-3
    caught = heads(bpy, RESULT, [catch])[0, hand]
    scene.frame_set(catch)
    assert np.linalg.norm(caught - np.array(ball.matrix_world.translation)) <= tolerance(heads(bpy, A))
    # Out of reach: the nearest mix is keyed and the distance reported, not an error.
    scene.cursor.location = (0.0, 0.0, 1e4)
    scene.frame_set(30)
    assert bpy.ops.mocap.solve_mix(bone="Hand_R", target="") == {"FINISHED"}
    keys = [k.co[0] for k in _mix_curve(bpy.data.objects[RESULT]).keyframe_points]
    assert keys == [30.0, float(catch)]


def test_the_catch_demo_scene(addon):
    """scripts/catch_demo.py on the bundled walk: at the catch frame the hand is on the ball."""
    from scripts.catch_demo import CATCH_FRAME, HAND, build_catch

    bpy = addon
    result, ball = build_catch(bpy)
    assert abs(result.data.mocap_blend.mix - 0.65) < 1e-3
    bpy.context.scene.frame_set(CATCH_FRAME)
    hand = result.matrix_world @ result.pose.bones[HAND].head
    assert (hand - ball.matrix_world.translation).length <= 1e-5 * max(result.dimensions)
    assert len(bpy.data.collections[f"{result.name}_envelope"].objects) == 11


def _mix_curve(obj):
    from mocap_addon.blender.bridge.read_rig import curves_by_path

    return curves_by_path(obj.data, obj.data.animation_data.action)[("mocap_blend.mix", 0)]


def test_failures_leave_the_data_as_it_was(clips):
    bpy = clips
    before = ids(bpy)
    with pytest.raises(RuntimeError, match="no armature called 'nobody'"):
        bpy.ops.mocap.blend(clip_a=A, clip_b="nobody")
    with pytest.raises(RuntimeError, match="past b's last frame"):
        bpy.ops.mocap.blend(clip_a=A, clip_b=B, align="DTW", offset=5000)
    assert ids(bpy) == before
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, mix=0.5) == {"FINISHED"}
    before = ids(bpy)
    bpy.context.scene.frame_set(400)
    with pytest.raises(RuntimeError, match="outside A's frames"):
        bpy.ops.mocap.solve_mix(bone="Hand_R")
    with pytest.raises(RuntimeError, match="no bone"):
        bpy.ops.mocap.envelope(bone="Tail")
    assert ids(bpy) == before
    assert bpy.data.objects[RESULT].data.animation_data is None


def test_panel_draws_inputs_and_the_results_tools(clips):
    from mocap_addon.blender.tools.blend import VIEW3D_PT_mocap_blend

    bpy = clips
    settings = bpy.context.scene.mocap_blend
    settings.clip_a, settings.clip_b = bpy.data.objects[A], bpy.data.objects[B]
    drawn: list[str] = []

    class Panel:
        layout = Layout(bpy, drawn)

    VIEW3D_PT_mocap_blend.draw(Panel(), bpy.context)
    assert drawn == ["clip_a", "clip_b", "mix", "offset", "align", "root", "mask", "feet", "use_frame_range",
                     "frame_start", "frame_end", "mocap.blend"]
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B) == {"FINISHED"}
    drawn.clear()
    VIEW3D_PT_mocap_blend.draw(Panel(), bpy.context)
    assert drawn[12:] == ["mix", "mocap.blend_update", "bone", "count", "mocap.envelope", "target", "mocap.solve_mix"]


def test_blend_defaults_to_the_selection_and_says_which_clip_has_no_action(clips):
    """Issue 21, item 7: the active armature is A, the other selected one B; errors speak of blending."""
    bpy = clips
    a, b = bpy.data.objects[A], bpy.data.objects[B]
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in (a, b))
    bpy.context.view_layer.objects.active = a
    assert bpy.ops.mocap.blend(mix=1.0, root="BLEND") == {"FINISHED"}
    result = bpy.data.objects[RESULT]
    made = result.data.mocap_blend
    assert (made.clip_a, made.clip_b) == (a, b) and bpy.context.object == result
    np.testing.assert_allclose(heads(bpy, RESULT, range(1, 40)), heads(bpy, B, range(1, 40)),
                               atol=tolerance(heads(bpy, B, range(1, 40))))
    before = ids(bpy)
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj == a)
    bpy.context.view_layer.objects.active = a
    with pytest.raises(RuntimeError, match=r"select armature B, then A \(active\)"):
        bpy.ops.mocap.blend()
    still = a.copy()
    still.animation_data_clear()
    bpy.context.collection.objects.link(still)
    with pytest.raises(RuntimeError, match=f"Blend failed: {still.name} has no action to blend$"):
        bpy.ops.mocap.blend(clip_a=A, clip_b=still.name)
    bpy.data.objects.remove(still)
    assert ids(bpy) == before
