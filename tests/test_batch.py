"""scripts/mocap_batch.py with the bpy wheel: import to .blend and back, odd inputs, options, exit codes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from mocap_addon.core import load, save, world_positions
from mocap_addon.core.__main__ import main
from tests.conftest import REPO, SAMPLES

pytestmark = pytest.mark.blender
SAMPLE = SAMPLES / "walk_turn.bvh"


def batch(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the script; a hang at exit (bpy 4.5) fails the test instead of stalling the suite."""
    pytest.importorskip("bpy")
    return subprocess.run([sys.executable, str(REPO / "scripts" / "mocap_batch.py"), *args],
                          capture_output=True, text=True, check=False, cwd=REPO, timeout=180)


def ours(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The script's own OK / FAIL / saved lines (Blender's report lines left out)."""
    return [line for line in result.stdout.splitlines() if line.startswith(("OK   ", "FAIL ", "saved "))]


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


def test_odd_inputs_each_get_one_line_and_the_blend_is_still_saved(blender, tmp_path):
    zero = tmp_path / "zero.bvh"
    zero.write_text("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n"
                    "End Site\n{\nOFFSET 0 1 0\n}\n}\nMOTION\nFrames: 0\nFrame Time: 0.1\n")
    notes = tmp_path / "notes.xyz"
    notes.write_text("not motion capture\n")
    save(load(SAMPLE), tmp_path / "01_01.amc")
    (tmp_path / "01_01.asf").rename(tmp_path / "01.asf")
    shutil.copy(tmp_path / "01.asf", tmp_path / "solo.asf")
    asf, amc, solo = (str(tmp_path / n) for n in ("01.asf", "01_01.amc", "solo.asf"))
    blend = tmp_path / "missing" / "folder" / "scene.blend"
    result = batch(str(SAMPLE), str(zero), str(notes), asf, amc, solo, str(blend), "--unit", "cm")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = ours(result)
    assert [re.sub(r", [0-9.]+ s$", "", line) for line in lines] == [
        f"OK   {SAMPLE}: walk_turn, 23 joints, frames 1-120",
        f"OK   {zero}: zero, 1 joints, skeleton only",
        f"FAIL {notes}: notes.xyz: unknown motion capture format '.xyz'",
        f"OK   {asf}: skeleton of 01_01.amc",
        f"OK   {amc}: 01_01, 29 joints, frames 1-120",
        f"OK   {solo}: solo, 29 joints, skeleton only",
        f"saved {blend}",
    ]
    assert "Traceback" not in result.stdout + result.stderr
    # --unit cm (any case) reached the importer: the spine starts 10.05 cm from the hips (OFFSET 0 10 -1).
    bpy = blender
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    bones = bpy.data.objects["walk_turn"].data.bones
    assert (bones["Spine"].head_local - bones["Hips"].head_local).length == pytest.approx(0.01 * 101 ** 0.5)
    assert sorted(bpy.data.objects.keys()) == ["01_01", "solo", "walk_turn", "zero"]
    result = batch(str(blend), str(tmp_path / "exported"), "--format", "HTR")
    assert result.returncode == 1  # the skeleton-only armatures have no action to export
    assert sorted(line.split(" -> ")[0] for line in ours(result)) == [
        "FAIL solo: HTR export failed: solo has no action to export",
        "FAIL zero: HTR export failed: zero has no action to export", "OK   01_01", "OK   walk_turn"]
    exported = world_positions(load(tmp_path / "exported" / "walk_turn.htr"))
    np.testing.assert_allclose(exported, world_positions(load(SAMPLE)), atol=5e-3)


def test_import_options_match_the_operators(blender, tmp_path):
    lines = SAMPLE.read_text().splitlines()
    motion = lines.index("MOTION")
    short = tmp_path / "short.bvh"
    short.write_text("\n".join(lines[:motion + 3 + 100]) + "\n")
    blend = tmp_path / "short.blend"
    options = ["--fps-mode", "scene_fps", "--frame-start", "10", "--rotation-mode", "euler", "--axis-up", "z",
               "--axis-forward", "y"]
    strict = batch(str(short), str(blend), *options, "--no-lenient")
    assert strict.returncode == 1
    assert ours(strict)[0].startswith(f"FAIL {short}: BVH import failed: short.bvh:")
    assert ours(strict)[0].endswith("Frames: says 120 but 100 rows follow")
    result = batch(str(short), str(blend), *options)  # Load Incomplete Files is the operator's default
    assert result.returncode == 0, result.stdout + result.stderr
    assert ours(result)[0].startswith(f"OK   {short}: short, 23 joints, frames 10-109")
    bpy = blender
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    obj = bpy.data.objects["short"]
    assert {pose_bone.rotation_mode for pose_bone in obj.pose.bones} != {"QUATERNION"}
    assert bpy.context.scene.render.fps == 30
    # Forward Y, up Z is Blender's own frame: the spine's OFFSET 0 10 -1 lands unturned.
    spine = obj.data.bones["Spine"].head_local - obj.data.bones["Hips"].head_local
    assert tuple(spine) == pytest.approx((0, 10, -1), abs=1e-5)


@pytest.mark.parametrize("arguments, message", [
    (["--format", "fbx"], "argument --format: 'fbx' is not one of bvh, htr, amc"),
    (["--unit", "furlong"], "argument --unit: 'furlong' is not one of AUTO, M, CM, MM, IN, FT"),
    (["--frame-start", "ten"], "argument --frame-start: invalid int value: 'ten'"),
])
def test_bad_arguments_are_one_line_and_exit_code_2(tmp_path, arguments, message):
    result = batch(str(SAMPLE), str(tmp_path / "out.blend"), *arguments)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"mocap_batch: error: {message}"
    assert "Traceback" not in result.stderr and not (tmp_path / "out.blend").exists()


def test_files_into_a_folder_are_converted_and_exporting_needs_a_readable_blend(tmp_path):
    out = tmp_path / "out"
    result = batch(str(SAMPLE), str(out), "--format", "htr")  # the core's library batch: no Blender
    assert result.returncode == 0, result.stdout + result.stderr
    assert ours(result)[0].startswith(f"OK   {SAMPLE} -> {out / 'walk_turn.htr'}: 23 joints, 120 frames, ")
    assert main(["convert", str(SAMPLE), str(tmp_path / "convert.htr")]) == 0
    assert (out / "walk_turn.htr").read_bytes() == (tmp_path / "convert.htr").read_bytes()
    assert ours(batch(str(SAMPLE), str(out), "--format", "htr")) == [
        f"OK   {SAMPLE} -> {out / 'walk_turn.htr'}: up to date"]
    missing = tmp_path / "absent.blend"
    result = batch(str(missing), str(tmp_path / "exported"))
    assert result.returncode == 1
    assert ours(result) == [f"FAIL {missing}: " + ours(result)[0].split(": ", 1)[1]]
    assert "Traceback" not in result.stdout + result.stderr
