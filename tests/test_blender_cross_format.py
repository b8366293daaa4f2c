"""Across formats in real Blender: units stated truthfully, every BVH we write opens in io_anim_bvh."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import Clip, load, save, world_positions
from tests.blender_helpers import blender_axes, extent, pose_heads
from tests.conftest import SAMPLES, corpus_files

pytestmark = pytest.mark.blender
SAMPLE = SAMPLES / "walk_turn.bvh"


def metres(clip: Clip, unit: float | None = None) -> float:
    """The figure's extent over its frames in metres (``unit`` for a file that states none)."""
    return float(np.ptp(world_positions(clip).reshape(-1, 3), axis=0).max()) * (clip.unit_in_metres or unit or 1.0)


def test_exports_state_the_unit_their_values_are_in(addon, tmp_path):
    bpy = addon
    truth = metres(load(SAMPLE), 0.01)
    # A BVH read as centimetres exports to HTR as centimetres (it once came back labelled mm, 10x small).
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), unit="CM") == {"FINISHED"}
    bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "auto.htr"))
    auto = load(tmp_path / "auto.htr")
    assert auto.unit_in_metres == 0.01 and metres(auto) == pytest.approx(truth, rel=1e-6)
    # An explicit export unit converts the values and says so (cm values were once labelled mm).
    for unit, in_metres in (("MM", 0.001), ("M", 1.0), ("IN", 0.0254)):
        bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / f"{unit}.htr"), unit=unit)
        written = load(tmp_path / f"{unit}.htr")
        assert written.unit_in_metres == in_metres and metres(written) == pytest.approx(truth, rel=1e-6)
    bpy.ops.export_anim.mocap_amc(filepath=str(tmp_path / "walk.amc"))
    acclaim = load(tmp_path / "walk.amc")
    assert acclaim.unit_in_metres == pytest.approx(0.01) and metres(acclaim) == pytest.approx(truth, rel=1e-6)
    # The HTR (mm) imported as it says and exported back: millimetres again.
    assert bpy.ops.import_anim.mocap_htr(filepath=str(tmp_path / "MM.htr")) == {"FINISHED"}
    bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "again.htr"))
    again = load(tmp_path / "again.htr")
    assert again.unit_in_metres == 0.001 and metres(again) == pytest.approx(truth, rel=1e-6)
    # Unit Auto (the default) reads the BVH's centimetres from the figure's size: exported as centimetres.
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE)) == {"FINISHED"}
    bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "guessed.htr"))
    guessed = load(tmp_path / "guessed.htr")
    assert guessed.unit_in_metres == 0.01 and metres(guessed) == pytest.approx(truth, rel=1e-6)
    # A BVH read From File (no unit) stays without one: one unit is a Blender unit, a metre.
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), unit="FILE") == {"FINISHED"}
    bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "plain.htr"))
    assert "CalibrationUnits" not in (tmp_path / "plain.htr").read_text()
    assert metres(load(tmp_path / "plain.htr")) == pytest.approx(truth / 0.01, rel=1e-6)
    # The export Scale divides what it writes, on top of the unit (its help text once said "multiply").
    bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "half.htr"), scale=2.0)
    assert metres(load(tmp_path / "half.htr")) == pytest.approx(truth / 0.01 / 2.0, rel=1e-6)


CORPUS_SOURCES = [f for f in (*corpus_files("bvh", "*.bvh"), *corpus_files("htr", "*.htr", "*.HTR"),
                              *corpus_files("asf_amc", "*.amc", "*.AMC")) if "JSON_not_bvh" not in f.name]


@pytest.mark.parametrize("route", ["", ".htr", ".amc"])
@pytest.mark.parametrize("path", [pytest.param(f, id=f.name) for f in CORPUS_SOURCES]
                         or [pytest.param(None, marks=pytest.mark.skip(reason="../shared/corpus is absent"))])
def test_every_bvh_we_write_opens_in_blenders_importer(blender, path, route, tmp_path):
    # ASF bones with one or two dofs (tibia: rx; foot: rx rz) were written as CHANNELS 1 and 2, and
    # dofless ones as CHANNELS 0: io_anim_bvh stops at KeyError: (0, None, None).
    import addon_utils

    clip = load(path)
    clip.motion = clip.motion[:4]
    if route:
        save(clip, tmp_path / f"middle{route}")
        clip = load(tmp_path / f"middle{route}")
    target = tmp_path / "written.bvh"
    save(clip, target)
    addon_utils.enable("io_anim_bvh", default_set=True)
    assert blender.ops.import_anim.bvh(filepath=str(target), rotate_mode="QUATERNION") == {"FINISHED"}
    written = load(target)
    assert all(sum(c[0] == "r" for c in layout) == 3 for layout in written.skeleton.channels)
    heads, names = pose_heads(blender, blender.context.object, range(1, written.frame_count + 1))
    assert names == written.skeleton.names
    truth = blender_axes(world_positions(clip))
    assert np.abs(heads - truth).max() <= 1e-4 * extent(truth)


def exporter_file(exporter, path) -> None:
    """Set a collection exporter's file (Blender 4.2 keeps it among the operator's properties)."""
    owner = exporter if hasattr(exporter, "filepath") else exporter.export_properties
    owner.filepath = str(path)


def move_to(obj, collection) -> None:
    for owner in obj.users_collection:
        owner.objects.unlink(obj)
    collection.objects.link(obj)


def test_collection_exporter_writes_the_collections_armatures(addon, tmp_path):
    # Collection > Exporters runs our export operator with the collection's name in `collection`;
    # it once wrote the active object, wherever it was, instead.
    bpy = addon
    rigs = bpy.data.collections.new("Rigs")
    bpy.context.scene.collection.children.link(rigs)
    inner = bpy.data.collections.new("Inner")
    rigs.children.link(inner)
    for name, owner, scale in (("walk", rigs, 1.0), ("small", inner, 0.5), ("outside", None, 2.0)):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), scale=scale) == {"FINISHED"}
        bpy.context.object.name = name
        if owner is not None:
            move_to(bpy.context.object, owner)
    assert bpy.context.view_layer.objects.active.name == "outside"
    with bpy.context.temp_override(collection=rigs):
        assert bpy.ops.collection.exporter_add(name="MOCAP_FH_bvh") == {"FINISHED"}
    exporter_file(rigs.exporters[0], tmp_path / "take.bvh")
    with bpy.context.temp_override(collection=rigs):
        assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["take_small.bvh", "take_walk.bvh"]
    original = world_positions(load(SAMPLE))
    np.testing.assert_allclose(world_positions(load(tmp_path / "take_walk.bvh")), original, atol=1e-4)
    np.testing.assert_allclose(world_positions(load(tmp_path / "take_small.bvh")), original, atol=1e-4)
    # One armature: the exporter's own file name.
    with bpy.context.temp_override(collection=inner):
        bpy.ops.collection.exporter_add(name="MOCAP_FH_htr")
    exporter_file(inner.exporters[0], tmp_path / "inner.htr")
    with bpy.context.temp_override(collection=inner):
        assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    assert (tmp_path / "inner.htr").is_file()
    empty = bpy.data.collections.new("Empty")
    bpy.context.scene.collection.children.link(empty)
    with bpy.context.temp_override(collection=empty), pytest.raises(RuntimeError, match="no armature"):
        bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "none.bvh"), collection="Empty")
    assert not (tmp_path / "none.bvh").exists()
