"""scripts/mocap_batch.py with the bpy wheel: import to .blend and back, exit codes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from mocap_addon.core import load, world_positions
from tests.conftest import REPO, SAMPLES

pytestmark = pytest.mark.blender
SAMPLE = SAMPLES / "walk_turn.bvh"


def batch(*args: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("bpy")
    return subprocess.run([sys.executable, str(REPO / "scripts" / "mocap_batch.py"), *args],
                          capture_output=True, text=True, check=False, cwd=REPO)


def test_import_to_blend_and_export_back(tmp_path):
    blend = tmp_path / "scene.blend"
    result = batch(str(SAMPLE), str(blend))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"OK   {SAMPLE}: walk_turn, 23 joints, frames 1-120" in result.stdout
    assert blend.is_file()
    folder = tmp_path / "exported"
    result = batch(str(blend), str(folder))
    assert result.returncode == 0, result.stdout + result.stderr
    exported = load(folder / "walk_turn.bvh")
    original = load(SAMPLE)
    assert exported.skeleton.channels == original.skeleton.channels
    np.testing.assert_allclose(world_positions(exported), world_positions(original), atol=5e-3)


def test_a_bad_file_fails_with_one_line_and_exit_code(tmp_path):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\n")
    result = batch(str(SAMPLE), str(bad), str(tmp_path / "out.blend"))
    assert result.returncode == 1
    assert "OK   " in result.stdout
    fail = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fail) == 1 and "bad.bvh:3" in fail[0]
