"""blender/motion.py: an armature's animation as a core clip and back, on imported and hand-made rigs."""

from __future__ import annotations

import numpy as np
import pytest

from tests.blender_helpers import armature_from_bones, extent, pose_heads
from tests.conftest import SAMPLES

pytestmark = pytest.mark.blender

SAMPLE = SAMPLES / "walk_turn.bvh"


def test_imported_armature_gives_back_the_file_and_rewrites_it(addon):
    from mocap_addon.blender.motion import armature_clip, write_clip
    from mocap_addon.core import load, world_positions

    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), rotation_mode="EULER", frame_start=11)
    obj = bpy.context.object
    clip, original = armature_clip(obj), load(SAMPLE)
    assert clip.skeleton.names == original.skeleton.names and clip.start_frame == 11
    truth = world_positions(original)
    assert np.abs(world_positions(clip) - truth).max() <= 1e-5 * extent(truth)  # float32 keys
    frames = range(11, 131, 7)
    before, _ = pose_heads(bpy, obj, frames)
    obj.pose.bones["Spine"].rotation_mode = "AXIS_ANGLE"
    obj.pose.bones["Head"].rotation_mode = "QUATERNION"
    action = write_clip(obj, clip, name="again")
    assert obj.animation_data.action == action and action.frame_range[:] == (11.0, 130.0)
    assert [obj.pose.bones[n].rotation_mode for n in ("Spine", "Head", "Hips")] == ["AXIS_ANGLE", "QUATERNION",
                                                                                     "YXZ"]
    after, _ = pose_heads(bpy, obj, frames)
    assert np.abs(after - before).max() <= 1e-5 * extent(before)
    shifted = write_clip(obj, clip, name="later", rotation_mode="QUATERNION", frame_start=101)
    assert shifted.frame_range[:] == (101.0, 220.0)


def test_other_action_and_hand_made_rig(addon):
    """A rig not made by the add-on (rolled bones), animated in Blender: clip and back keep its poses."""
    from mocap_addon.blender.motion import armature_clip, write_clip

    bpy = addon
    obj = armature_from_bones(bpy, "rig", [("b0", None, (0, 0, 1), (0, 0, 1.5), 0.3),
                                           ("b1", "b0", (0, 0, 1.5), (0.4, 0, 1.7), 1.2),
                                           ("b2", "b1", (0.4, 0, 1.7), (0.8, 0.1, 1.6), -2.0)])
    obj.animation_data_create()
    first = bpy.data.actions.new("first")
    obj.animation_data.action = first
    rng = np.random.default_rng(3)
    for frame in range(1, 11):
        for pose_bone in obj.pose.bones:
            pose_bone.rotation_mode = "XZY"
            pose_bone.rotation_euler = rng.uniform(-1.5, 1.5, 3)
            pose_bone.keyframe_insert("rotation_euler", frame=frame)
        obj.pose.bones["b0"].location = rng.uniform(-1, 1, 3)
        obj.pose.bones["b0"].keyframe_insert("location", frame=frame)
    before, _ = pose_heads(bpy, obj, range(1, 11))
    tails_before = _tails(bpy, obj, range(1, 11))
    obj.animation_data.action = None
    clip = armature_clip(obj, first)
    assert clip.frame_count == 10 and clip.start_frame == 1
    write_clip(obj, clip, name="second")
    assert obj.pose.bones["b1"].rotation_mode == "XZY"
    after, _ = pose_heads(bpy, obj, range(1, 11))
    assert np.abs(after - before).max() < 1e-5
    assert np.abs(_tails(bpy, obj, range(1, 11)) - tails_before).max() < 1e-5


def _tails(bpy, obj, frames) -> np.ndarray:
    out = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        out.append([tuple(pb.tail) for pb in obj.pose.bones])
    return np.array(out)


def test_write_clip_refuses_joints_the_armature_lacks(addon):
    from mocap_addon.blender.motion import armature_clip, write_clip

    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE))
    obj = bpy.context.object
    clip = armature_clip(obj)
    renamed = clip.copy()
    renamed.skeleton.names[3] = "NoSuchBone"
    with pytest.raises(ValueError, match="has no bone 'NoSuchBone'"):
        write_clip(obj, renamed, name="x")
    moved = clip.copy()
    moved.skeleton.parents[3] = 0
    with pytest.raises(ValueError, match="hangs from"):
        write_clip(obj, moved, name="x")


def test_poses_read_and_written_without_euler_angles(addon):
    """armature_pose gives what armature_clip decodes to, and write_pose keys it back: on an imported
    rig with bones in other rotation modes, and on a hand-made rig with rolled bones."""
    from mocap_addon.blender.motion import armature_clip, armature_pose, write_pose
    from mocap_addon.core.blend import Posed

    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), frame_start=5)
    imported = bpy.context.object
    imported.pose.bones["Spine"].rotation_mode = "AXIS_ANGLE"
    imported.pose.bones["Head"].rotation_mode = "XZY"
    rolled = armature_from_bones(bpy, "rig", [("b0", None, (0, 0, 1), (0, 0, 1.5), 0.3),
                                              ("b1", "b0", (0, 0, 1.5), (0.4, 0, 1.7), 1.2)])
    rolled.animation_data_create()
    rolled.animation_data.action = bpy.data.actions.new("keys")
    rng = np.random.default_rng(5)
    for frame in range(1, 9):
        for pose_bone in rolled.pose.bones:
            pose_bone.rotation_quaternion = rng.normal(size=4)
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame)
        rolled.pose.bones["b0"].location = rng.uniform(-1, 1, 3)
        rolled.pose.bones["b0"].keyframe_insert("location", frame=frame)
    for obj, frames in ((imported, range(5, 125, 9)), (rolled, range(1, 9))):
        posed, decoded = armature_pose(obj), Posed.of(armature_clip(obj)).pose
        turns = np.abs(np.sum(posed.pose.rotations * decoded.rotations, axis=-1))
        assert np.all(turns > 1 - 1e-10), obj.name  # float32 keys: to 2e-5 rad
        size = float(np.ptp(decoded.translations))
        np.testing.assert_allclose(posed.pose.translations, decoded.translations, atol=1e-5 * size)
        before, _ = pose_heads(bpy, obj, frames)
        tails = _tails(bpy, obj, frames)
        write_pose(obj, posed, name="again", frame_start=frames[0])
        after, _ = pose_heads(bpy, obj, frames)
        assert np.abs(after - before).max() <= 1e-5 * extent(before), obj.name
        assert np.abs(_tails(bpy, obj, frames) - tails).max() <= 1e-5 * extent(before), obj.name
        again = armature_pose(obj)
        assert np.all(np.abs(np.sum(again.pose.rotations * posed.pose.rotations, axis=-1)) > 1 - 1e-12)
    assert imported.pose.bones["Spine"].rotation_mode == "AXIS_ANGLE"
