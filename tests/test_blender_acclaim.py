"""ASF/AMC operators in real Blender: poses equal the core's, limits, skeleton-only import, round trip."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mocap_addon.core import load, world_positions
from tests.blender_helpers import blender_axes, check_import_and_round_trip
from tests.conftest import CORPUS, corpus_params

pytestmark = pytest.mark.blender
ACCLAIM = CORPUS / "asf_amc"


@pytest.mark.parametrize("path", corpus_params("asf_amc", "*.amc", "*.AMC", slow=("fm_01_01.amc",)))
def test_import_equals_core_at_every_frame_and_round_trips(addon, path, tmp_path):
    clip, exported = check_import_and_round_trip(addon, path, "amc", tmp_path)
    assert exported.skeleton.channels == clip.skeleton.channels
    height = float(np.ptp(world_positions(clip)[0][:, 1])) * clip.unit_in_metres
    assert 1.4 < height < 2.0  # a person, in metres


@pytest.mark.skipif(not ACCLAIM.is_dir(), reason="../shared/corpus is absent")
def test_limits_become_constraints(addon):
    bpy = addon
    bpy.ops.import_anim.mocap_amc(filepath=str(ACCLAIM / "fm_01_01.amc"))
    obj = bpy.context.object
    femur = obj.pose.bones["lfemur"].constraints
    assert [c.type for c in femur] == ["LIMIT_ROTATION"]
    limit = femur[0]
    assert limit.owner_space == "LOCAL" and not limit.enabled  # the pose stays the file's
    # ASF lfemur: dof rx ry rz, limits (-160 20) (-70 70) (-60 70). The bone runs along its axis
    # frame's -Y, so local Y and Z point the other way and their bounds swap sign.
    assert (math.degrees(limit.min_x), math.degrees(limit.max_x)) == pytest.approx((-160, 20))
    assert (math.degrees(limit.min_y), math.degrees(limit.max_y)) == pytest.approx((-70, 70))
    assert (math.degrees(limit.min_z), math.degrees(limit.max_z)) == pytest.approx((-70, 60))
    assert limit.use_limit_x and limit.use_limit_y and limit.use_limit_z
    assert not obj.pose.bones["root"].constraints and not obj.pose.bones["lhipjoint"].constraints
    bpy.ops.import_anim.mocap_amc(filepath=str(ACCLAIM / "fm_01_01.amc"), enforce_limits=True)
    assert bpy.context.object.pose.bones["lfemur"].constraints[0].enabled
    bpy.ops.import_anim.mocap_amc(filepath=str(ACCLAIM / "fm_01_01.amc"), use_limits=False)
    assert not bpy.context.object.pose.bones["lfemur"].constraints


@pytest.mark.skipif(not ACCLAIM.is_dir(), reason="../shared/corpus is absent")
def test_asf_alone_imports_the_rest_skeleton(addon, tmp_path):
    bpy = addon
    assert bpy.ops.import_anim.mocap_amc(filepath=str(ACCLAIM / "fm_01.asf")) == {"FINISHED"}
    obj = bpy.context.object
    assert len(obj.data.bones) == 31 and obj.animation_data is None
    skeleton = load(ACCLAIM / "fm_01.asf")
    heads = np.array([b.head_local for b in obj.data.bones])
    from mocap_addon.core import rest_positions

    np.testing.assert_allclose(heads, blender_axes(rest_positions(skeleton.skeleton)) * skeleton.unit_in_metres,
                               atol=1e-6)
    # Chosen explicitly: an .amc whose .asf has another name.
    (tmp_path / "take.amc").write_bytes((ACCLAIM / "fm_01_01.amc").read_bytes())
    assert bpy.ops.import_anim.mocap_amc(filepath=str(tmp_path / "take.amc"),
                                         skeleton_path=str(ACCLAIM / "fm_01.asf")) == {"FINISHED"}
    with pytest.raises(RuntimeError, match="no skeleton"):
        bpy.ops.import_anim.mocap_amc(filepath=str(tmp_path / "take.amc"))
