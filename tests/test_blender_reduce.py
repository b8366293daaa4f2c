"""Key reduction in Blender: reduced imports against full ones, evaluated by Blender at every frame."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from mocap_addon.core import load
from mocap_addon.core.reduce import bone_points, default_tails, figure_height
from tests.conftest import CORPUS, REPO, SAMPLES

pytestmark = pytest.mark.blender
TOLERANCE = 0.002
CAPTURES = ["bvh/fm_cmu_01_01.bvh", "bvh/ganim_Xia_normal.bvh", "bvh/bandai_dataset-1_dance-short_normal_001.bvh",
            "htr/gpr450_xbot_samba_mixamo.com.htr", "asf_amc/fm_01_01.amc"]
SLOWEST = ("asf_amc/fm_01_01.amc",)  # among the suite's slowest (marked slow)


def capture(name: str):
    path = CORPUS / name
    if not path.exists():
        pytest.skip("../shared/corpus is absent")
    return path


def import_twice(bpy, path, **options):
    """The same file imported in full and reduced: (full, reduced) armature objects."""
    importer = getattr(bpy.ops.import_anim, f"mocap_{path.suffix.lower().lstrip('.')}")
    assert importer(filepath=str(path), **options) == {"FINISHED"}
    full = bpy.context.object
    assert importer(filepath=str(path), reduce_keys=True, reduce_tolerance=TOLERANCE, **options) == {"FINISHED"}
    return full, bpy.context.object


def bone_ends(obj) -> np.ndarray:
    """World heads and tails of every pose bone as Blender has evaluated them, ``(2B, 3)``."""
    count = len(obj.pose.bones)
    heads, tails = np.empty(3 * count, np.float32), np.empty(3 * count, np.float32)
    obj.pose.bones.foreach_get("head", heads)
    obj.pose.bones.foreach_get("tail", tails)
    local = np.concatenate([heads, tails]).reshape(-1, 3).astype(np.float64)
    world = np.array(obj.matrix_world)
    return local @ world[:3, :3].T + world[:3, 3]


def worst_distance(bpy, first, second) -> float:
    """Largest distance between the two armatures' bone heads and tails over the first one's frames."""
    start, end = (round(v) for v in first.animation_data.action.frame_range)
    worst = 0.0
    for frame in range(start, end + 1):
        bpy.context.scene.frame_set(frame)
        worst = max(worst, float(np.linalg.norm(bone_ends(first) - bone_ends(second), axis=1).max()))
    return worst


def curves(obj) -> list:
    from mocap_addon.blender.bridge.compat import Channels

    return list(Channels(obj.animation_data.action, obj, create=False).all())


def key_count(obj) -> int:
    return sum(len(fcurve.keyframe_points) for fcurve in curves(obj))


@pytest.mark.corpus
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOWEST else name
                                  for name in CAPTURES])
def test_every_bone_within_tolerance_at_every_frame(addon, name):
    full, reduced = import_twice(addon, capture(name))
    record = reduced.animation_data.action["mocap_reduction"]
    bound = TOLERANCE * record["height"]
    measured = worst_distance(addon, full, reduced)
    assert measured <= bound
    # Blender plays the keys back exactly as the reduction modelled them.
    assert measured == pytest.approx(record["worst_error"], rel=1e-3, abs=1e-6 * record["height"])
    assert record["before"] == key_count(full) and record["after"] == key_count(reduced) < 0.5 * record["before"]
    for fcurve in curves(reduced):
        interpolation = np.empty(len(fcurve.keyframe_points), dtype=np.uint8)
        fcurve.keyframe_points.foreach_get("interpolation", interpolation)
        assert np.all(interpolation == 1)  # LINEAR


@pytest.mark.corpus
def test_euler_keys_within_tolerance(addon):
    full, reduced = import_twice(addon, capture("bvh/ganim_Xia_normal.bvh"), rotation_mode="EULER")
    record = reduced.animation_data.action["mocap_reduction"]
    assert worst_distance(addon, full, reduced) <= TOLERANCE * record["height"]
    assert all(bone.rotation_mode != "QUATERNION" for bone in reduced.pose.bones)
    assert record["after"] < 0.3 * record["before"]


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["bvh/ganim_Xia_normal.bvh", "htr/gpr450_xbot_samba_mixamo.com.htr"])
def test_reduced_action_exports_the_same_poses(addon, name, tmp_path):
    path = capture(name)
    import_twice(addon, path)  # the reduced armature is the active one, which export writes
    target = tmp_path / f"reduced{path.suffix}"
    exporter = getattr(addon.ops.export_anim, f"mocap_{path.suffix.lower().lstrip('.')}")
    assert exporter(filepath=str(target)) == {"FINISHED"}
    clip, exported = load(path), load(target)
    assert exported.frame_count == clip.frame_count and exported.skeleton.names == clip.skeleton.names
    tails = default_tails(clip)
    moved = np.linalg.norm(bone_points(exported, default_tails(exported)) - bone_points(clip, tails), axis=-1).max()
    height = figure_height(clip, tails)  # file units, as exported
    assert moved <= TOLERANCE * height + 1e-6 * height  # plus the decimals written


def test_tolerance_zero_keeps_every_key(addon):
    importer = addon.ops.import_anim.mocap_bvh
    importer(filepath=str(SAMPLES / "walk_turn.bvh"))
    full = addon.context.object
    importer(filepath=str(SAMPLES / "walk_turn.bvh"), reduce_keys=True, reduce_tolerance=0.0)
    reduced = addon.context.object
    assert key_count(reduced) == key_count(full) == 120 * (23 * 4 + 3)
    assert worst_distance(addon, full, reduced) == 0.0


def test_batch_reduces_and_says_so(tmp_path):
    pytest.importorskip("bpy")
    blend = tmp_path / "scene.blend"
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "mocap_batch.py"), str(SAMPLES / "walk_turn.bvh"),
                             str(blend), "--reduce-keys", "--reduce-tolerance", "0.01"],
                            capture_output=True, text=True, check=False, cwd=REPO, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("OK   "))
    assert ", keys 11400 -> " in line and "worst error" in line


# Issue 21, item 8: Reduce Keys on the action an armature already has (imports, retargets, blends).

def reduce_active(bpy, capfd, tolerance=TOLERANCE) -> str:
    """Run mocap.reduce_keys on the active armature; its report line."""
    capfd.readouterr()
    assert bpy.ops.mocap.reduce_keys(tolerance=tolerance) == {"FINISHED"}
    return next(line for line in capfd.readouterr().out.splitlines() if "Reduced" in line)


def check_reduced(bpy, full, reduced, action_name: str, before: int) -> dict:
    action = reduced.animation_data.action
    assert action.name == action_name and action_name not in {a.name for a in bpy.data.actions if a != action}
    record = action["mocap_reduction"]
    assert record["before"] == before and record["after"] == key_count(reduced) < 0.6 * before
    measured = worst_distance(bpy, full, reduced)
    assert 0.3 * TOLERANCE * record["height"] < measured <= TOLERANCE * record["height"]
    assert measured == pytest.approx(record["worst_error"], rel=1e-3, abs=1e-6 * record["height"])
    return record


@pytest.mark.parametrize("rotation_mode", ["QUATERNION", "EULER"])
def test_reduce_keys_operator_on_an_import(addon, capfd, rotation_mode):
    bpy = addon
    for _ in range(2):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLES / "jog_wave.bvh"),
                                             rotation_mode=rotation_mode) == {"FINISHED"}
    full, reduced = (bpy.data.objects[name] for name in ("jog_wave", "jog_wave.001"))
    action_name, before = reduced.animation_data.action.name, key_count(reduced)
    line = reduce_active(bpy, capfd)
    record = check_reduced(bpy, full, reduced, action_name, before)
    assert line.startswith(f"Info: Reduced jog_wave.001: keys {before} -> {record['after']} (")
    assert "worst error" in line and reduced.animation_data.action["mocap_frame_time"] == pytest.approx(1 / 30)
    assert {bone.rotation_mode for bone in reduced.pose.bones} == {bone.rotation_mode for bone in full.pose.bones}


def test_reduce_keys_operator_on_a_retarget_with_an_euler_bone(addon, capfd):
    """A rig made in Blender, retargeted: quaternion bones reduced, a bone in an Euler mode keeps its keys."""
    from tests.test_blender_retarget import build_rig, import_sample, select

    bpy = addon
    source = import_sample(bpy)
    rigs = [build_rig(bpy, name) for name in ("full", "rig")]
    for rig in rigs:
        rig.pose.bones["mixamorig:LeftForeArm"].rotation_mode = "XZY"
        select(bpy, source, rig)
        assert bpy.ops.mocap.retarget() == {"FINISHED"}
    full, reduced = rigs
    action_name, before = reduced.animation_data.action.name, key_count(reduced)
    reduce_active(bpy, capfd)
    check_reduced(bpy, full, reduced, action_name, before)
    def euler(obj) -> list:
        return [fc for fc in curves(obj) if '"mixamorig:LeftForeArm"].rotation_euler' in fc.data_path]

    # Not modelled with the quaternions: every frame kept (curve_keys drops only keys that change nothing).
    assert len(euler(reduced)) == 3 and sum(len(fc.keyframe_points) for fc in euler(reduced)) > 120
    for kept, whole in zip(euler(reduced), euler(full)):
        np.testing.assert_allclose([kept.evaluate(f) for f in range(1, 121)],
                                   [whole.evaluate(f) for f in range(1, 121)], atol=1e-6)


def test_reduce_keys_refuses_what_it_cannot_rewrite(addon):
    from tests.blender_helpers import ids

    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLES / "walk_turn.bvh"))
    obj = bpy.context.object
    obj.keyframe_insert("location", frame=1)  # the object's own motion, in the same action
    before, keys = ids(bpy), key_count(obj)
    with pytest.raises(RuntimeError, match=r"walk_turn also animates location: Reduce Keys rewrites bone"):
        bpy.ops.mocap.reduce_keys()
    assert ids(bpy) == before and key_count(obj) == keys
    obj.animation_data.action = None
    assert not bpy.ops.mocap.reduce_keys.poll()


def test_reduce_keys_panel(addon):
    from mocap_addon.blender.tools.reduce import VIEW3D_PT_mocap_reduce
    from tests.test_blender_mapping import Recorder

    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLES / "walk_turn.bvh"))
    calls: list = []
    VIEW3D_PT_mocap_reduce.draw(type("Drawn", (), {"layout": Recorder(calls)})(), bpy.context)
    assert ("label", (), {"text": f"walk_turn: {120 * (23 * 4 + 3)} keys"}) in calls
    assert ("prop", (bpy.context.scene, "mocap_reduce_tolerance"), {}) in calls
    assert ("operator", ("mocap.reduce_keys",), {"icon": "IPO_LINEAR"}) in calls
