"""Exports across formats in real Blender: units stated truthfully."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import Clip, load, world_positions
from tests.conftest import SAMPLES

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
    # A BVH read with no unit stays without one: one unit is a Blender unit, a metre.
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE)) == {"FINISHED"}
    bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "plain.htr"))
    assert "CalibrationUnits" not in (tmp_path / "plain.htr").read_text()
    assert metres(load(tmp_path / "plain.htr")) == pytest.approx(truth / 0.01, rel=1e-6)
