"""What a library batch keeps per worker process: the thread limit of its numpy work, and skeleton
mappings kept by content (neither may change a result)."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from mocap_addon.core import load, save
from mocap_addon.core.kinematics import forward_kinematics
from mocap_addon.core.model import Clip
from mocap_addon.core.naming import map_skeleton
from mocap_addon.core.naming.mapping import _run
from mocap_addon.core.threads import limit_threads, usable_threads
from mocap_addon.core.transforms import FRAMES_PER_BLOCK
from tests.conftest import SAMPLES

WALK = SAMPLES / "walk_turn.bvh"


def test_one_thread_gives_the_same_world_and_values_and_starts_no_thread(tmp_path):
    clip = load(WALK)
    long = Clip(clip.skeleton, np.tile(clip.motion, (3 * FRAMES_PER_BLOCK // clip.frame_count + 1, 1)), clip.frame_time)
    threaded = forward_kinematics(long)
    started = []
    original = threading.Thread.start
    try:
        limit_threads(1)
        assert usable_threads(4) == 1
        threading.Thread.start = lambda self: started.append(self) or original(self)  # type: ignore[method-assign]
        alone = forward_kinematics(long)
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]
        limit_threads(None)
    assert not started
    np.testing.assert_array_equal(alone.positions, threaded.positions)
    np.testing.assert_array_equal(alone.rotations, threaded.rotations)
    save(long, tmp_path / "long.bvh")  # a motion read in several blocks
    limit_threads(1)
    try:
        alone_read = load(tmp_path / "long.bvh")
    finally:
        limit_threads(None)
    np.testing.assert_array_equal(alone_read.motion, load(tmp_path / "long.bvh").motion)


def test_mappings_are_kept_by_content_never_stale_nor_shared():
    skeleton = load(WALK).skeleton
    first = map_skeleton(skeleton)
    assert first == {name: label for name, (label, _) in _run(skeleton, None).items()}
    first["Hips"] = "head"  # the caller's copy
    assert map_skeleton(skeleton)["Hips"] == "hips"
    renamed = dataclasses.replace(skeleton, names=["Root" if n == "Hips" else n for n in skeleton.names])
    assert "Root" in map_skeleton(renamed) and "Hips" not in map_skeleton(renamed)
    # the same names, an arm turned into a leg's place: detection sees the offsets, so must the key
    moved = dataclasses.replace(skeleton, offsets=skeleton.offsets * np.array([1.0, -1.0, 1.0]))
    assert map_skeleton(moved) == {name: label for name, (label, _) in _run(moved, None).items()}
