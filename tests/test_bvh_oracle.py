"""Our forward kinematics against Blender's own BVH importer (io_anim_bvh), frame by frame."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import load, world_positions
from tests.conftest import bvh_corpus_params

# Blender's default rotate_mode='NATIVE' re-expresses each key as a float32 Euler
# in bone space; where that lands near gimbal lock it loses ~4e-4 rad (measured:
# 0.0087 units on Hand_R of the Bandai dance clip).  Quaternion keys have no such
# decomposition, so they show Blender's geometry at float32 noise (1.2e-4 there).
ROTATE_MODE = "QUATERNION"


def blender_heads(bpy, path) -> np.ndarray:
    """World-space pose-bone heads (frames, joints, 3) from io_anim_bvh's import."""
    import addon_utils

    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(path), frame_start=1, rotate_mode=ROTATE_MODE)
    obj = bpy.context.object
    scene = bpy.context.scene
    action = obj.animation_data.action
    first, last = (round(v) for v in action.frame_range)
    world = np.array(obj.matrix_world)
    heads = []
    for frame in range(first, last + 1):
        scene.frame_set(frame)
        local = np.array([pb.head for pb in obj.pose.bones])
        heads.append(local @ world[:3, :3].T + world[:3, 3])
    return np.array(heads), [pb.name for pb in obj.pose.bones]


@pytest.mark.blender
@pytest.mark.parametrize("path", bvh_corpus_params())
def test_world_positions_match_blender_importer(blender, path):
    from bpy_extras.io_utils import axis_conversion

    clip = load(path)
    ours = world_positions(clip)
    theirs, names = blender_heads(blender, path)
    assert names == clip.skeleton.names
    conversion = np.array(axis_conversion(from_forward="-Z", from_up="Y"))
    ours_blender = ours @ conversion.T
    frames = min(len(theirs), clip.frame_count)
    assert frames == clip.frame_count or clip.frame_count == 1
    extent = float(np.ptp(ours.reshape(-1, 3), axis=0).max())
    error = np.abs(ours_blender[:frames] - theirs[:frames]).max()
    assert error <= 1e-3 + 1e-5 * extent, f"max error {error} (extent {extent})"
