"""The bridge's read_rig and write_rig: an armature's animation as a core pose and back, on imported and
hand-made rigs."""

from __future__ import annotations

import numpy as np
import pytest

from tests.blender_helpers import armature_from_bones, extent, pose_heads
from tests.conftest import SAMPLES

pytestmark = pytest.mark.blender

SAMPLE = SAMPLES / "walk_turn.bvh"


def test_imported_armature_gives_back_the_file_and_rewrites_it(addon):
    from mocap_addon.blender.bridge.read_rig import armature_pose
    from mocap_addon.blender.bridge.write_rig import write_pose
    from mocap_addon.core import load, world_positions

    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), rotation_mode="EULER", frame_start=11)
    obj = bpy.context.object
    pose, original = armature_pose(obj), load(SAMPLE)
    assert pose.skeleton.names == original.skeleton.names and pose.start_frame == 11
    truth = world_positions(original)
    assert np.abs(world_positions(pose) - truth).max() <= 1e-5 * extent(truth)  # float32 keys
    frames = range(11, 131, 7)
    before, _ = pose_heads(bpy, obj, frames)
    obj.pose.bones["Spine"].rotation_mode = "AXIS_ANGLE"
    obj.pose.bones["Head"].rotation_mode = "QUATERNION"
    action = write_pose(obj, pose, name="again")
    assert obj.animation_data.action == action and action.frame_range[:] == (11.0, 130.0)
    assert [obj.pose.bones[n].rotation_mode for n in ("Spine", "Head", "Hips")] == ["AXIS_ANGLE", "QUATERNION",
                                                                                     "YXZ"]
    after, _ = pose_heads(bpy, obj, frames)
    assert np.abs(after - before).max() <= 1e-5 * extent(before)
    shifted = write_pose(obj, pose, name="later", rotation_mode="QUATERNION", frame_start=101)
    assert shifted.frame_range[:] == (101.0, 220.0)


def test_other_action_and_hand_made_rig(addon):
    """A rig not made by the add-on (rolled bones), animated in Blender: pose and back keep its poses."""
    from mocap_addon.blender.bridge.read_rig import armature_pose
    from mocap_addon.blender.bridge.write_rig import write_pose

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
    pose = armature_pose(obj, first)
    assert pose.frame_count == 10 and pose.start_frame == 1
    write_pose(obj, pose, name="second")
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


def test_write_pose_refuses_joints_the_armature_lacks(addon):
    from mocap_addon.blender.bridge.read_rig import armature_pose
    from mocap_addon.blender.bridge.write_rig import write_pose

    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE))
    obj = bpy.context.object
    pose = armature_pose(obj)
    renamed = pose.copy()
    renamed.skeleton.names[3] = "NoSuchBone"
    with pytest.raises(ValueError, match="has no bone 'NoSuchBone'"):
        write_pose(obj, renamed, name="x")
    moved = pose.copy()
    moved.skeleton.parents[3] = 0
    with pytest.raises(ValueError, match="hangs from"):
        write_pose(obj, moved, name="x")


def test_poses_read_and_written_without_euler_angles(addon, monkeypatch):
    """armature_pose gives the poses Blender shows (its bone heads, through the clip space) and write_pose
    keys them back, without an Euler angle: on an imported rig with bones in other rotation modes, and on
    a hand-made rig with rolled bones and quaternion keys."""
    import mocap_addon.core.rotations as rotations
    from mocap_addon.blender.bridge.read_rig import armature_pose, clip_space
    from mocap_addon.blender.bridge.write_rig import write_pose
    from mocap_addon.core import world_positions

    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), frame_start=5)
    imported = bpy.context.object
    imported.pose.bones["Spine"].rotation_mode = "AXIS_ANGLE"
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

    def no_euler(*_args, **_kwargs):
        raise AssertionError("an Euler angle was computed")

    for name in ("matrix_to_euler", "euler_to_matrix", "euler_to_quaternion", "quaternion_to_euler"):
        monkeypatch.setattr(rotations, name, no_euler)
    for obj, frames in ((imported, range(5, 125, 9)), (rolled, range(1, 9))):
        pose = armature_pose(obj)
        conversion, scale = clip_space(obj)
        world = np.array(obj.matrix_world)
        found = (world_positions(pose)[np.array(frames) - frames[0]] @ conversion.T * scale) @ world[:3, :3].T
        before, _ = pose_heads(bpy, obj, frames)
        assert np.abs(found + world[:3, 3] - before).max() <= 1e-5 * extent(before), obj.name
        tails = _tails(bpy, obj, frames)
        write_pose(obj, pose, name="again", frame_start=frames[0])
        after, _ = pose_heads(bpy, obj, frames)
        assert np.abs(after - before).max() <= 1e-5 * extent(before), obj.name
        assert np.abs(_tails(bpy, obj, frames) - tails).max() <= 1e-5 * extent(before), obj.name
        again = armature_pose(obj)
        assert np.all(np.abs(np.sum(again.rotations * pose.rotations, axis=-1)) > 1 - 1e-12)
    assert imported.pose.bones["Spine"].rotation_mode == "AXIS_ANGLE"
