"""scripts/mocap_batch.py with the bpy wheel: import to .blend and back, odd inputs, options, exit codes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from mocap_addon.core import load, save, world_positions
from mocap_addon.core.cli.main import main
from tests.conftest import REPO, SAMPLES

pytestmark = pytest.mark.blender
SAMPLE = SAMPLES / "walk_turn.bvh"


def batch(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the script; a hang at exit (bpy 4.5) fails the test instead of stalling the suite."""
    pytest.importorskip("bpy")
    return subprocess.run([sys.executable, str(REPO / "scripts" / "mocap_batch.py"), *args],
                          capture_output=True, text=True, check=False, cwd=REPO, timeout=180)


def ours(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The script's own OK / FAIL / SKIP / saved lines (Blender's report lines left out)."""
    return [line for line in result.stdout.splitlines() if line.startswith(("OK   ", "FAIL ", "SKIP ", "saved "))]


@pytest.mark.slow
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
    assert result.returncode == 0, result.stdout + result.stderr  # skeleton-only armatures are skipped, said so
    assert sorted(line.split(" -> ")[0] for line in ours(result)) == [
        "OK   01_01", "OK   walk_turn", "SKIP solo: no action (a skeleton only), nothing to export",
        "SKIP zero: no action (a skeleton only), nothing to export"]
    exported = world_positions(load(tmp_path / "exported" / "walk_turn.htr"))
    np.testing.assert_allclose(exported, world_positions(load(SAMPLE)), atol=5e-3)


@pytest.mark.slow
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
    # Forward Y, up Z is Blender's own frame: the spine's OFFSET 0 10 -1 lands unturned, in the centimetres
    # the Unit's default (Auto) reads for a figure 167 units tall.
    spine = obj.data.bones["Spine"].head_local - obj.data.bones["Hips"].head_local
    assert tuple(spine) == pytest.approx((0, 0.10, -0.01), abs=1e-7)


@pytest.mark.parametrize("arguments, message", [
    (["--format", "fbx"], "argument --format: 'fbx' is not one of bvh, htr, amc"),
    (["--unit", "furlong"], "argument --unit: 'furlong' is not one of AUTO, FILE, M, CM, MM, IN, FT, CUSTOM"),
    (["--frame-start", "ten"], "argument --frame-start: invalid int value: 'ten'"),
])
def test_bad_arguments_are_one_line_and_exit_code_2(tmp_path, arguments, message):
    result = batch(str(SAMPLE), str(tmp_path / "out.blend"), *arguments)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"mocap_batch: error: {message}"
    assert "Traceback" not in result.stderr and not (tmp_path / "out.blend").exists()


@pytest.mark.slow
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


# Issue 21, item 4.

def test_folders_import_into_a_blend(tmp_path):
    takes = tmp_path / "takes"
    takes.mkdir()
    shutil.copy(SAMPLE, takes / "walk.bvh")
    save(load(SAMPLE), takes / "walk_htr.htr")
    save(load(SAMPLE), takes / "01_01.amc")
    (takes / "01_01.asf").rename(takes / "01.asf")
    (takes / "notes.txt").write_text("not motion capture\n")
    (tmp_path / "empty").mkdir()
    blend = tmp_path / "scene.blend"
    result = batch(str(takes), str(tmp_path / "empty"), str(blend))
    assert result.returncode == 1, result.stdout + result.stderr
    assert [re.sub(r", [0-9.]+ s$", "", line) for line in ours(result)] == [
        f"FAIL {tmp_path / 'empty'}: no motion capture files in this folder",
        f"OK   {takes / '01_01.amc'}: 01_01, 29 joints, frames 1-120",
        f"OK   {takes / 'walk.bvh'}: walk, 23 joints, frames 1-120",
        f"OK   {takes / 'walk_htr.htr'}: walk_htr, 23 joints, frames 1-120",
        f"saved {blend}"]
    assert batch(str(takes), str(blend)).returncode == 0


@pytest.mark.slow
def test_retarget_onto_a_rig_in_a_blend_uses_its_bone_mapping(blender, tmp_path):
    import mocap_addon
    from tests.test_blender_retarget import build_rig

    bpy = blender
    mocap_addon.register()
    try:
        rig = build_rig(bpy, "character")
        from mocap_addon.blender.bridge.bone_mapping import armature_mapping

        armature_mapping(rig)
        rig.data.mocap_mapping["mixamorig:LeftArm"].canonical = ""  # by hand: the left arm follows nothing
        bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "rig.blend"))
    finally:
        mocap_addon.unregister()
    out = tmp_path / "out"
    result = batch(str(SAMPLES / "jog_wave.bvh"), str(out), "--retarget-onto", f"{tmp_path / 'rig.blend'}:character")
    assert result.returncode == 0, result.stdout + result.stderr
    assert ours(result)[0].startswith(f"OK   {SAMPLES / 'jog_wave.bvh'} -> {out / 'jog_wave.bvh'}: 22 joints, "
                                      "120 frames")
    clip = load(out / "jog_wave.bvh")
    assert clip.skeleton.names[0] == "mixamorig:Hips" and clip.skeleton.joint_count == 22
    # Against a retarget onto the same skeleton with its mapping detected from the names: the same but for
    # the left arm, which the hand edit left to its reference pose.
    from mocap_addon.core.retarget.transfer import retarget

    detected = world_positions(retarget(load(SAMPLES / "jog_wave.bvh"), clip.skeleton))
    ours_positions = world_positions(clip)
    arm = [clip.skeleton.index(f"mixamorig:Left{n}") for n in ("Arm", "ForeArm", "Hand")]
    rest = [j for j in range(22) if j not in arm]
    np.testing.assert_allclose(ours_positions[:, rest], detected[:, rest], atol=1e-5)
    assert np.linalg.norm(ours_positions[:, arm] - detected[:, arm], axis=-1).max() > 0.1  # metres
    for bad, message in ((f"{tmp_path / 'rig.blend'}:nobody", "rig.blend has no armature called 'nobody'"),
                         (f"{tmp_path / 'absent.blend'}:character", "absent.blend: no such file")):
        result = batch(str(SAMPLE), str(out), "--retarget-onto", bad)
        assert result.returncode == 1 and message in ours(result)[0], result.stdout


def test_a_python_without_bpy_gets_one_line(tmp_path):
    """-S: no site-packages, as a system Python without the wheel."""
    result = subprocess.run([sys.executable, "-S", str(REPO / "scripts" / "mocap_batch.py"), str(SAMPLE),
                             str(tmp_path / "out.blend")], capture_output=True, text=True, check=False, timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "has no bpy module: run it with" in result.stderr
    assert "Traceback" not in result.stderr
