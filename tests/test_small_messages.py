"""Issue 30, item 7: the small messages say what is true, and nothing more."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, SAMPLES

SAMPLE = SAMPLES / "walk_turn.bvh"


def core(*args: str, **options) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mocap_addon.core", *args], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options)


def test_a_reader_that_stops_early_is_no_error():
    """``core info FILE | head``: the reader closes the pipe first; no "Broken pipe", no traceback."""
    process = core("info", str(SAMPLE))
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the command writes a line
    errors = process.stderr.read()
    process.wait(timeout=60)
    assert errors == ""


def test_graph_info_prints_settings_as_given(tmp_path):
    graph = tmp_path / "g.npz"
    made = subprocess.run([sys.executable, "-m", "mocap_addon.core", "graph", "build", str(SAMPLE),
                           str(SAMPLES / "jog_wave.bvh"), "-o", str(graph)], cwd=REPO, capture_output=True,
                          text=True, check=False, timeout=300)
    assert made.returncode == 0, made.stderr
    info = subprocess.run([sys.executable, "-m", "mocap_addon.core", "graph", "info", str(graph)], cwd=REPO,
                          capture_output=True, text=True, check=True, timeout=60).stdout
    assert "threshold 0.9," in info and "sigma 3," in info


def test_batch_failures_name_the_take_by_its_path(tmp_path):
    """Two takes called alike in two folders: the failure line says which."""
    for folder in ("a", "b"):
        (tmp_path / "in" / folder).mkdir(parents=True)
        (tmp_path / "in" / folder / "take.bvh").write_text(SAMPLE.read_text() if folder == "a" else "HIERARCHY\n")
    result = subprocess.run([sys.executable, "-m", "mocap_addon.core", "batch", str(tmp_path / "in"), "-o",
                             str(tmp_path / "out"), "--to", "bvh", "--jobs", "1"], cwd=REPO, capture_output=True,
                            text=True, check=False, timeout=300)
    assert result.returncode == 1
    failed = [line for line in result.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and failed[0].startswith(f"failed: {tmp_path / 'in' / 'b' / 'take.bvh'}: "), failed


def batch_script(*args: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("bpy")
    return subprocess.run([sys.executable, str(REPO / "scripts" / "mocap_batch.py"), *args], capture_output=True,
                          text=True, check=False, cwd=REPO, timeout=180)


@pytest.mark.blender
@pytest.mark.slow
def test_the_batch_script_says_a_folder_is_missing_and_a_mesh_is_no_armature(tmp_path):
    result = batch_script(str(tmp_path / "no folder"), str(tmp_path / "out.blend"))
    assert result.returncode == 1 and f"FAIL {tmp_path / 'no folder'}: no such file or folder" in result.stdout
    script = ("import bpy; bpy.ops.wm.read_homefile(use_empty=True); bpy.ops.mesh.primitive_cube_add(); "
              f"bpy.ops.wm.save_as_mainfile(filepath={str(tmp_path / 'rig.blend')!r})")
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, timeout=120)
    result = batch_script(str(SAMPLE), str(tmp_path / "out"), "--retarget-onto", f"{tmp_path / 'rig.blend'}:Cube")
    assert result.returncode == 1 and "'Cube' is a mesh, not an armature" in result.stdout, result.stdout


@pytest.mark.blender
def test_reduce_keys_at_tolerance_0_does_not_warn(addon):
    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE))
    from mocap_addon.blender.tools.reduce import MOCAP_OT_reduce_keys

    reports = []

    class Operator:
        tolerance = 0.0

        def report(self, kind, text):
            reports.append((set(kind), text))

    assert MOCAP_OT_reduce_keys.execute(Operator(), bpy.context) == {"FINISHED"}
    assert [kind for kind, _ in reports] == [{"INFO"}], reports
