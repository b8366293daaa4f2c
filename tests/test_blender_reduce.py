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
    from mocap_addon.blender.compat import Channels

    return list(Channels(obj.animation_data.action, obj, create=False).all())


def key_count(obj) -> int:
    return sum(len(fcurve.keyframe_points) for fcurve in curves(obj))


@pytest.mark.corpus
@pytest.mark.parametrize("name", CAPTURES)
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
