"""Unit Auto in Blender (issue 30, item 6): File > Import reads a figure at a person's size, and what the
add-on exports imports back at its size: BVH -> HTR / ASF+AMC -> BVH with the default options each time."""

from __future__ import annotations

import numpy as np
import pytest

from tests.blender_helpers import pose_heads
from tests.conftest import CORPUS, SAMPLES

pytestmark = pytest.mark.blender

FRAMES = (1, 30, 60, 90)


def standing_height(bpy, obj) -> float:
    """Median over a few frames of the armature's bone heads' extent along Blender's up (Z), in metres."""
    heads, _ = pose_heads(bpy, obj, FRAMES)
    return float(np.median(np.ptp(heads[..., 2], axis=1)))


def imported(bpy, operator, path, **options):
    assert operator(filepath=str(path), **options) == {"FINISHED"}
    return bpy.context.object


def test_a_bvh_in_centimetres_imports_at_its_height(addon):
    bpy = addon
    auto = imported(bpy, bpy.ops.import_anim.mocap_bvh, SAMPLES / "walk_turn.bvh")
    assert 1.3 < standing_height(bpy, auto) < 1.5  # 1.41 m over these frames (its stature from the legs: 1.67)
    bones = auto.data.bones  # the spine's OFFSET 0 10 -1, in centimetres
    assert (bones["Spine"].head_local - bones["Hips"].head_local).length == pytest.approx(0.01 * 101 ** 0.5, rel=1e-6)
    as_file = imported(bpy, bpy.ops.import_anim.mocap_bvh, SAMPLES / "walk_turn.bvh", unit="FILE")
    assert standing_height(bpy, as_file) == pytest.approx(100 * standing_height(bpy, auto), rel=1e-5)


@pytest.mark.parametrize("through", ["htr", "amc"])
def test_htr_and_asf_exports_come_back_at_their_size_through_bvh(addon, tmp_path, through):
    """Import (Auto), export HTR or ASF/AMC, import that, export BVH, import that: every step stands as tall
    as the first import, with the default options (it was 100 times taller: BVH written in cm, read as m)."""
    bpy = addon
    first = imported(bpy, bpy.ops.import_anim.mocap_bvh, SAMPLES / "walk_turn.bvh")
    height = standing_height(bpy, first)
    middle = tmp_path / f"walk.{through}"
    if through == "htr":
        assert bpy.ops.export_anim.mocap_htr(filepath=str(middle)) == {"FINISHED"}
        again = imported(bpy, bpy.ops.import_anim.mocap_htr, middle)
    else:
        assert bpy.ops.export_anim.mocap_amc(filepath=str(middle)) == {"FINISHED"}
        again = imported(bpy, bpy.ops.import_anim.mocap_amc, middle)
    assert standing_height(bpy, again) == pytest.approx(height, rel=1e-4)
    assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "back.bvh")) == {"FINISHED"}
    back = imported(bpy, bpy.ops.import_anim.mocap_bvh, tmp_path / "back.bvh")
    assert standing_height(bpy, back) == pytest.approx(height, rel=1e-4)
    assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "twice.bvh")) == {"FINISHED"}
    twice = imported(bpy, bpy.ops.import_anim.mocap_bvh, tmp_path / "twice.bvh")
    assert standing_height(bpy, twice) == pytest.approx(height, rel=1e-4)


@pytest.mark.parametrize("extension", ["htr", "amc"])
def test_a_file_stating_its_unit_comes_back_at_its_size_through_bvh(addon, tmp_path, extension):
    """The issue's case: an HTR (CalibrationUnits cm) or ASF/AMC (':units length 2.54': 1 unit = 1 cm) imported,
    exported to BVH and imported again, all with the defaults: as tall each time (once 100 times taller)."""
    from mocap_addon.core import load, save

    bpy = addon
    clip = load(SAMPLES / "walk_turn.bvh")
    clip.unit_in_metres = 0.01
    save(clip, tmp_path / f"walk.{extension}")
    first = imported(bpy, getattr(bpy.ops.import_anim, f"mocap_{extension}"), tmp_path / f"walk.{extension}")
    height = standing_height(bpy, first)
    assert 1.3 < height < 1.5
    assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "walk.bvh")) == {"FINISHED"}
    back = imported(bpy, bpy.ops.import_anim.mocap_bvh, tmp_path / "walk.bvh")
    assert standing_height(bpy, back) == pytest.approx(height, rel=1e-4)


CORPUS_TAKES = [("asf_amc/fm_01_01.amc", "amc"), ("htr/gpr450_xbot_walk_m_mixamo.com.htr", "htr"),
                ("htr/gpr450_xbot_base.HTR", "htr"), ("bvh/ganim_Malcolm_Gangnam-Style.bvh", "bvh"),
                ("bvh/fm_cmu_01_01.bvh", "bvh"), ("bvh/bandai_dataset-1_walk_normal_001.bvh", "bvh")]


@pytest.mark.corpus
@pytest.mark.parametrize("path, extension", CORPUS_TAKES, ids=[p for p, _ in CORPUS_TAKES])
def test_corpus_takes_import_human_sized_and_their_bvh_comes_back_alike(addon, tmp_path, path, extension):
    """CMU's BVH was 25 m tall and the X-Bot HTR (stated mm) 4.6 m: every one 1.2-2.2 m, its BVH export too."""
    if not (CORPUS / path).is_file():
        pytest.skip("../shared/corpus is absent")
    bpy = addon
    rig = imported(bpy, getattr(bpy.ops.import_anim, f"mocap_{extension}"), CORPUS / path)
    heads, _ = pose_heads(bpy, rig, FRAMES)
    extents = np.ptp(heads, axis=1)
    tall = float(np.median(np.where(extents[:, 2] >= 0.25 * extents.max(axis=1), extents[:, 2],
                                    extents.max(axis=1))))  # the X-Bot base lies down: its length
    assert 1.2 <= tall <= 2.2, tall
    assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "out.bvh")) == {"FINISHED"}
    back = imported(bpy, bpy.ops.import_anim.mocap_bvh, tmp_path / "out.bvh")
    np.testing.assert_allclose(pose_heads(bpy, back, FRAMES)[0], heads, atol=1e-4 * tall)
