"""HTR operators in real Blender: poses equal the core's, round trip, scale curves, options."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import load, world_positions
from mocap_addon.core.body.stature import with_guessed_unit
from tests.blender_helpers import blender_axes, check_import_and_round_trip, pose_heads
from tests.conftest import CORPUS, corpus_params

pytestmark = pytest.mark.blender


@pytest.mark.parametrize("path", corpus_params("htr", "*.htr", "*.HTR", slow=("gpr450_xbot_samba_mixamo.com.htr",)))
def test_import_equals_core_at_every_frame_and_round_trips(addon, path, tmp_path):
    clip, _ = check_import_and_round_trip(addon, path, "htr", tmp_path)
    assert clip.unit_in_metres == 0.001  # CalibrationUnits mm, imported as metres


def test_bones_lie_along_the_length_axis_and_scale_curves(addon, tmp_path):
    bpy = addon
    text = """[Header]
FileType htr
DataType HTRS
NumSegments 2
NumFrames 3
DataFrameRate 30
EulerRotationOrder ZYX
CalibrationUnits cm
RotationUnits Degrees
GlobalAxisofGravity Y
BoneLengthAxis X
ScaleFactor 1.0
[SegmentNames&Hierarchy]
root GLOBAL
tip root
[BasePosition]
root 0 0 0 0 0 30 50
tip 50 0 0 0 0 0 20
[root]
1 0 0 0 0 0 0 1
2 0 0 0 0 0 10 1
3 0 0 0 0 0 20 1
[tip]
1 0 0 0 0 0 0 1
2 0 0 0 0 0 0 1.5
3 0 0 0 0 0 0 2
[EndOfFile]
"""
    path = tmp_path / "small.htr"
    path.write_text(text)
    bpy.ops.import_anim.mocap_htr(filepath=str(path))
    obj = bpy.context.object
    bones = obj.data.bones
    # BoneLengthAxis X, base rotation 30° about Z: the root's bone runs 0.5 m along its own X.
    direction = np.array(bones["root"].tail_local) - np.array(bones["root"].head_local)
    expected = blender_axes(np.array([np.cos(np.radians(30)), np.sin(np.radians(30)), 0.0])) * 0.5
    np.testing.assert_allclose(direction, expected, atol=1e-6)
    from mocap_addon.blender.bridge.compat import Channels

    paths = {fc.data_path for fc in Channels(obj.animation_data.action, obj, create=False).all()}
    assert 'pose.bones["tip"].scale' in paths and 'pose.bones["root"].scale' not in paths
    heads, _ = pose_heads(bpy, obj, [1, 2, 3])
    clip = load(path)
    np.testing.assert_allclose(heads, blender_axes(world_positions(clip)) * 0.01, atol=1e-6)
    bpy.context.scene.frame_set(3)
    tail = np.array(obj.matrix_world @ obj.pose.bones["tip"].tail)
    from mocap_addon.core.kinematics import end_site_positions

    np.testing.assert_allclose(tail, blender_axes(end_site_positions(clip)[1][2, 0]) * 0.01, atol=1e-6)
    target = tmp_path / "back.htr"
    bpy.ops.export_anim.mocap_htr(filepath=str(target))
    np.testing.assert_allclose(load(target).local_scales()[:, 1], [1, 1.5, 2], atol=1e-6)


def test_z_up_file_stands_up_in_blender(addon, tmp_path):
    bpy = addon
    text = """[Header]
FileType htr
DataFrameRate 30
EulerRotationOrder ZYX
CalibrationUnits m
GlobalAxisofGravity Z
BoneLengthAxis Z
[SegmentNames&Hierarchy]
root GLOBAL
head root
[BasePosition]
root 0 0 1 0 0 0 0.5
head 0 0 0.5 0 0 0 0.2
[root]
1 0 0 0 0 0 0 1
[head]
1 0 0 0 0 0 0 1
"""
    path = tmp_path / "zup.htr"
    path.write_text(text)
    bpy.ops.import_anim.mocap_htr(filepath=str(path))
    heads, _ = pose_heads(bpy, bpy.context.object, [1])
    np.testing.assert_allclose(heads[0], [[0, 0, 1], [0, 0, 1.5]], atol=1e-6)


@pytest.mark.skipif(not (CORPUS / "htr").is_dir(), reason="../shared/corpus is absent")
def test_takes_become_markers_or_actions_and_are_exported_again(addon, tmp_path):
    bpy = addon
    path = CORPUS / "htr" / "gpr450_xbot_anim1.HTR"
    assert bpy.ops.import_anim.mocap_htr(filepath=str(path), frame_start=10) == {"FINISHED"}
    markers = sorted((m.frame, m.name) for m in bpy.context.scene.timeline_markers)
    assert markers == [(10 + first, f"gpr450_xbot_anim1 take {n + 1}")
                       for n, first in enumerate([0, 1, 247, 313, 345, 366])]
    obj = bpy.context.object
    assert tuple(obj.animation_data.action.frame_range) == (10, 404)
    bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "all.htr"))
    exported = load(tmp_path / "all.htr")
    assert exported.frame_count == 395 and exported.metadata["takes"] == [0, 1, 247, 313, 345, 366]
    clip = with_guessed_unit(load(path))  # states mm, 4.6 m tall so: Unit Auto reads it 1.7 m tall
    assert clip.unit_in_metres == pytest.approx(0.0003697, rel=1e-3)
    in_metres = world_positions(exported) * exported.unit_in_metres  # written in mm, as the import read it
    assert np.abs(in_metres - world_positions(clip) * clip.unit_in_metres).max() < 1e-6
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_anim.mocap_htr(filepath=str(path), split_takes=True) == {"FINISHED"}
    obj = bpy.context.object
    actions = sorted(bpy.data.actions, key=lambda a: a.name)
    assert [a.name for a in actions] == [f"gpr450_xbot_anim1 take {n}" for n in range(1, 7)]
    assert [round(a.frame_range[1]) for a in actions] == [1, 246, 66, 32, 21, 29]  # one key in the first
    assert all(a.use_fake_user for a in actions) and obj.animation_data.action == actions[0]
    assert not bpy.context.scene.timeline_markers
    obj.animation_data.action = actions[2]
    if hasattr(actions[2], "slots"):
        obj.animation_data.action_slot = actions[2].slots[0]
    heads, _ = pose_heads(bpy, obj, range(1, 67))
    truth = blender_axes(world_positions(clip)[247:313]) * clip.unit_in_metres
    assert np.abs(heads - truth).max() < 1e-5
    bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "take3.htr"))
    take = load(tmp_path / "take3.htr")
    assert take.frame_count == 66 and "takes" not in take.metadata


def test_frame_translation_reading_is_chosen_by_evidence_and_kept(addon):
    """By default the importer reads xbot_anim1's frame translations by evidence (turned by the base
    rotation: its feet slide least so) and the armature keeps the choice and the note; forced, it obeys."""
    import json

    from mocap_addon.blender.bridge.import_record import PROPERTY

    path = CORPUS / "htr" / "gpr450_xbot_anim1.HTR"
    if not path.is_file():
        pytest.skip("../shared/corpus is absent")
    bpy = addon
    assert bpy.ops.import_anim.mocap_htr(filepath=str(path)) == {"FINISHED"}
    record = json.loads(bpy.context.object.data[PROPERTY])["metadata"]
    assert record["htr"]["translation"] == "rotated" and record["htr"]["translation_chosen_by"] == "evidence"
    assert any("turned by the base rotation" in note for note in record["notes"])
    assert bpy.ops.import_anim.mocap_htr(filepath=str(path), translation="PARENT") == {"FINISHED"}
    assert json.loads(bpy.context.object.data[PROPERTY])["metadata"]["htr"]["translation"] == "parent"
