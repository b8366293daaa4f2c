"""``python -m mocap_addon.core``: info, convert, blend and reduce."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from mocap_addon.core import load, world_positions
from tests.conftest import CORPUS, REPO, SAMPLES

SAMPLE = SAMPLES / "walk_turn.bvh"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mocap_addon.core", *args], cwd=REPO,
                          capture_output=True, text=True, check=False)


def test_info_describes_the_sample():
    result = run("info", str(SAMPLE))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "joints:    23 (1 root(s), 6 end site(s))" in out
    assert "frames:    120" in out and "fps:       30" in out and "duration:  4.000 s" in out
    assert "  Hips  [tx ty tz rz rx ry] order ZXY" in out
    assert "\n          LeftArm  [ry rx rz] order YXZ\n" in out


def test_convert_writes_an_equivalent_file(tmp_path):
    target = tmp_path / "copy.bvh"
    result = run("convert", str(SAMPLE), str(target), "--precision", "8")
    assert result.returncode == 0, result.stderr
    assert "23 joints, 120 frames" in result.stdout
    np.testing.assert_allclose(world_positions(load(target)), world_positions(load(SAMPLE)), atol=1e-6)


def test_bad_file_gives_one_line_and_exit_code(tmp_path):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\nOFFSET 0 0\n}\n")
    result = run("info", str(bad))
    assert result.returncode == 1
    assert result.stderr.strip() == "error: bad.bvh:4: OFFSET needs 3 numbers, found 2"
    missing = run("info", str(tmp_path / "nope.bvh"))
    assert missing.returncode == 1 and "nope.bvh" in missing.stderr
    unknown = run("convert", str(SAMPLE), str(tmp_path / "x.fbx"))
    assert unknown.returncode == 1 and "cannot write .fbx" in unknown.stderr


def test_reduce_reports_keys_and_worst_error():
    result = run("reduce", str(SAMPLE), "--tolerance", "0.01")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{SAMPLE}: 23 joints, 120 frames, figure height 161 file units"
    assert lines[1].startswith("keys:      11400 -> ")
    assert lines[2] == "bound:     1.61 (0.01 of the height)"
    worst = float(lines[3].split()[1])
    assert 0 < worst <= 1.61


def test_convert_labels_units_truthfully(tmp_path):
    # BVH states no unit: read as the file states (--unit file) the output says so; the default (auto) guesses
    # centimetres from the figure's size and says so; --unit names it for formats that can state one.
    result = run("convert", str(SAMPLE), str(tmp_path / "walk.htr"), "--unit", "file")
    assert "unit: no unit known: HTR written without CalibrationUnits" in result.stdout
    assert "CalibrationUnits" not in (tmp_path / "walk.htr").read_text()
    result = run("convert", str(SAMPLE), str(tmp_path / "walk.htr"))
    assert "note: unit guessed from the figure's size: read in centimetres: 1.67 m tall" in result.stdout
    assert "CalibrationUnits cm" in (tmp_path / "walk.htr").read_text()
    result = run("convert", str(SAMPLE), str(tmp_path / "walk.htr"), "--unit", "cm")
    assert result.returncode == 0, result.stderr
    assert "CalibrationUnits cm" in (tmp_path / "walk.htr").read_text()
    assert load(tmp_path / "walk.htr").unit_in_metres == 0.01
    result = run("convert", str(tmp_path / "walk.htr"), str(tmp_path / "back.bvh"))
    assert "unit: BVH states no unit: lengths written in the clip's unit, cm" in result.stdout
    amc = CORPUS / "asf_amc" / "fm_01_01.amc"
    if amc.is_file():
        # CMU units (1/0.45 inch) have no HTR name: the values are converted to mm.
        result = run("convert", str(amc), str(tmp_path / "cmu.htr"))
        assert "HTR lengths converted to mm from the clip's unit (0.0564444 m)" in result.stdout
        source, written = load(amc), load(tmp_path / "cmu.htr")
        height = np.ptp(world_positions(source)[0, :, 1]) * source.unit_in_metres
        assert np.ptp(world_positions(written)[0, :, 1]) * written.unit_in_metres == pytest.approx(height, rel=1e-6)


def test_blend_writes_a_masked_blend_of_two_skeletons(tmp_path):
    """The jog's waving right arm (another skeleton, Mixamo names) on the walk; every other joint is the walk's."""
    target = tmp_path / "waving_walk.bvh"
    result = run("blend", str(SAMPLE), str(SAMPLES / "jog_wave.bvh"), str(target), "--mix", "1",
                 "--mask", "right_arm", "--precision", "8")
    assert result.returncode == 0, result.stderr
    assert "23 joints, 120 frames" in result.stdout
    walk, waving = load(SAMPLE), load(target)
    names = walk.skeleton.names
    arm = [names.index(n) for n in ("RightShoulder", "RightArm", "RightForeArm", "RightHand")]
    kept = [j for j in range(len(names)) if j not in arm[1:]]
    before, after = world_positions(walk), world_positions(waving)
    np.testing.assert_allclose(after[:, kept], before[:, kept], atol=1e-6)
    head, hand = names.index("Head"), names.index("RightHand")
    assert np.all(after[:, hand, 1] > after[:, head, 1]) and np.all(before[:, hand, 1] < before[:, head, 1])


def test_blend_at_mix_zero_is_the_first_clip(tmp_path):
    target = tmp_path / "same.bvh"
    result = run("blend", str(SAMPLE), str(SAMPLES / "jog_wave.bvh"), str(target), "--mix", "0")
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(world_positions(load(target)), world_positions(load(SAMPLE)), atol=1e-4)


def test_blend_takes_the_feet_and_the_heading_root(tmp_path):
    from mocap_addon.core.blend.mixing import blend

    target = tmp_path / "mixed.bvh"
    result = run("blend", str(SAMPLE), str(SAMPLES / "jog_wave.bvh"), str(target), "--mix", "0.5", "--feet", "free",
                 "--root", "heading", "--precision", "8")
    assert result.returncode == 0, result.stderr
    expected = blend(load(SAMPLE), load(SAMPLES / "jog_wave.bvh"), 0.5, feet="free", root="heading")
    np.testing.assert_allclose(world_positions(load(target)), world_positions(expected), atol=1e-5)
    assert run("blend", str(SAMPLE), str(SAMPLE), str(target), "--feet", "stuck").returncode != 0


def _in_process(command: str):
    """What the command computes before writing, here."""
    from mocap_addon.core.blend.mixing import blend
    from mocap_addon.core.retarget.transfer import retarget, to_canonical

    jog, walk = load(SAMPLES / "jog_wave.bvh"), load(SAMPLE)
    return {"retarget": lambda: retarget(jog, walk), "blend": lambda: blend(walk, jog, 0.5),
            "canonical": lambda: to_canonical(jog)}[command]()


@pytest.mark.parametrize("command", [
    ["retarget", str(SAMPLES / "jog_wave.bvh"), "--onto", str(SAMPLE)],
    ["blend", str(SAMPLE), str(SAMPLES / "jog_wave.bvh")],
    ["canonical", str(SAMPLES / "jog_wave.bvh")]], ids=["retarget", "blend", "canonical"])
def test_reduce_writes_what_the_reduced_keys_play_back(tmp_path, command):
    """Issue 21, item 8: --reduce on retarget, blend and canonical: the file holds every frame of what the
    reduced keys play back, within the tolerance of the full result, and the report gives the keys."""
    from mocap_addon.core.reduce import played_back, reduce_keys

    reduced = tmp_path / "reduced.bvh"
    result = run(*command, str(reduced), "--precision", "9", "--reduce", "0.002")
    assert result.returncode == 0, result.stderr
    whole, written = _in_process(command[0]), load(reduced)
    reduction = reduce_keys(whole, 0.002)
    assert f"; keys {reduction.keys_before} -> {reduction.keys_after} (" in result.stdout
    assert reduction.keys_after < 0.6 * reduction.keys_before
    assert written.frame_count == whole.frame_count
    order = [written.skeleton.index(name) for name in whole.skeleton.names]  # BVH writes depth first
    positions = world_positions(written)[:, order]
    np.testing.assert_allclose(positions, world_positions(played_back(whole, reduction.frames)), atol=1e-6)
    error = np.linalg.norm(positions - world_positions(whole), axis=-1).max()
    assert 0.3 * reduction.tolerance < error <= reduction.worst_error + 1e-6  # heads (the bound covers tails too)
    assert "written motion is the reduced keys" in " ".join(run(command[0], "--help").stdout.split())
