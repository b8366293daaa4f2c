"""``python -m mocap_addon.core canonical|retarget`` and ``mocap_batch.py --canonical|--retarget-onto``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from mocap_addon.core import load, world_positions
from mocap_addon.core.retarget.transfer import retarget, to_canonical
from tests.conftest import REPO, corpus_files

CMU = [f for f in corpus_files("bvh", "fm_cmu_01_01.bvh")]
SAMBA = [f for f in corpus_files("htr", "gpr450_xbot_samba_mixamo.com.htr")]
needs_corpus = pytest.mark.skipif(not CMU or not SAMBA, reason="../shared/corpus is absent")


def same_order(clip, names: list[str]) -> np.ndarray:
    """World positions of ``clip`` with its joints in the order of ``names`` (BVH writes depth first)."""
    return world_positions(clip)[:, [clip.skeleton.index(n) for n in names]]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m mocap_addon.core ARGS``, or ``python SCRIPT ARGS`` when the first is a script."""
    command = [sys.executable, *args] if args[0].endswith(".py") else [sys.executable, "-m", "mocap_addon.core", *args]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)


@needs_corpus
def test_canonical_command_writes_the_canonical_clip(tmp_path):
    target = tmp_path / "canonical.bvh"
    result = run("canonical", str(CMU[0]), str(target), "--method", "lengths", "--precision", "9")
    assert result.returncode == 0, result.stderr
    assert "54 joints, 2752 frames" in result.stdout
    expected = to_canonical(load(CMU[0]), method="lengths")
    np.testing.assert_allclose(same_order(load(target), expected.skeleton.names), world_positions(expected),
                               atol=1e-7)


@needs_corpus
@pytest.mark.slow
def test_retarget_command_uses_the_skeleton_file(tmp_path):
    target = tmp_path / "onto.htr"
    result = run("retarget", str(CMU[0]), "--onto", str(SAMBA[0]), str(target), "--precision", "9")
    assert result.returncode == 0, result.stderr
    expected = retarget(load(CMU[0]), load(SAMBA[0]))
    back = load(target)
    assert back.skeleton.names == expected.skeleton.names
    np.testing.assert_allclose(world_positions(back), world_positions(expected), atol=1e-4)  # millimetres
    assert expected.metadata["feet"]["mode"] == "planted"  # the default
    free = tmp_path / "free.htr"
    result = run("retarget", str(CMU[0]), "--onto", str(SAMBA[0]), str(free), "--precision", "9", "--feet", "free")
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(world_positions(load(free)),
                               world_positions(retarget(load(CMU[0]), load(SAMBA[0]), feet="free")), atol=1e-4)
    canonical = tmp_path / "planted.htr"  # HTR keeps the joint order
    result = run("canonical", str(CMU[0]), str(canonical), "--precision", "9", "--feet", "planted")
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(world_positions(load(canonical)),
                               world_positions(to_canonical(load(CMU[0]), feet="planted")), atol=1e-6)


@needs_corpus
def test_commands_report_what_a_skeleton_lacks(tmp_path):
    tail = corpus_files("htr", "gpr450_maya_export_v1.htr")
    if not tail:
        pytest.skip("no corpus")
    result = run("retarget", str(CMU[0]), "--onto", str(tail[0]), str(tmp_path / "x.bvh"))
    assert result.returncode == 1
    assert result.stderr.startswith("error: target has no joint mapped to hips, upper_leg_l")
    result = run("canonical", str(tail[0]), str(tmp_path / "x.bvh"))
    assert result.returncode == 1 and "source has no joint mapped to hips" in result.stderr


@needs_corpus
@pytest.mark.blender
@pytest.mark.slow
def test_batch_converts_lists_and_folders(tmp_path):
    pytest.importorskip("bpy")  # the batch script reads its options from the operators
    script = str(REPO / "scripts" / "mocap_batch.py")
    folder = tmp_path / "takes"
    folder.mkdir()
    (folder / "walk.bvh").write_bytes(CMU[0].read_bytes())
    (folder / "notes.txt").write_text("not a take")
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\n")
    out = tmp_path / "canonical"
    result = run(script, str(folder), str(bad), str(out), "--canonical", "--format", "htr")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"OK   {folder / 'walk.bvh'} -> {out / 'walk.htr'}: 54 joints, 2752 frames")
    assert lines[1].startswith(f"FAIL {bad}: bad.bvh:3")
    expected = world_positions(to_canonical(load(CMU[0])))
    np.testing.assert_allclose(world_positions(load(out / "walk.htr")), expected, atol=1e-6)
    onto = tmp_path / "onto"
    result = run(script, str(CMU[0]), str(onto), "--retarget-onto", str(SAMBA[0]), "--feet", "free")
    assert result.returncode == 0, result.stdout + result.stderr
    assert load(onto / "fm_cmu_01_01.bvh").skeleton.names == load(SAMBA[0]).skeleton.names
    np.testing.assert_allclose(world_positions(load(onto / "fm_cmu_01_01.bvh")),
                               world_positions(retarget(load(CMU[0]), load(SAMBA[0]), feet="free")), atol=1e-4)
