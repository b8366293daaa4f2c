"""HTR operators in real Blender: poses equal the core's, round trip, scale curves, options."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import load, world_positions
from tests.blender_helpers import blender_axes, check_import_and_round_trip, pose_heads
from tests.conftest import corpus_params

pytestmark = pytest.mark.blender


@pytest.mark.parametrize("path", corpus_params("htr", "*.htr", "*.HTR"))
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
    from mocap_addon.blender.compat import Channels

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
