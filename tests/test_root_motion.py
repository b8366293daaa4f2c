"""Issue 30, item 9: root motion for game engines, in the core (``retarget(root=...)``)."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import Skeleton, load, world_positions
from mocap_addon.core.pose import as_pose
from mocap_addon.core.retarget.transfer import retarget
from tests.conftest import SAMPLES


def with_root_bone(skeleton: Skeleton) -> Skeleton:
    """``skeleton`` under a new root joint on the ground (its hips keep their channels' layout)."""
    rotation = tuple(c for c in skeleton.channels[0] if c.startswith("r"))
    return Skeleton(["root", *skeleton.names], [-1, *(p + 1 for p in skeleton.parents)],
                    np.vstack([np.zeros(3), skeleton.offsets]), [("tx", "ty", "tz", *rotation), *skeleton.channels],
                    [np.zeros((0, 3)), *skeleton.end_sites])


@pytest.fixture(scope="module")
def walk():
    return load(SAMPLES / "walk_turn.bvh")


def ground(points: np.ndarray) -> np.ndarray:
    return points[..., [0, 2]]  # the BVH's Y is up


def test_in_place_leaves_at_most_1_percent_of_the_travel(walk):
    onto = load(SAMPLES / "jog_wave.bvh")
    scaled, in_place = (world_positions(retarget(walk, onto, root=mode))[:, 0] for mode in ("scale", "in_place"))
    travel = np.linalg.norm(ground(world_positions(walk)[:, 0] - world_positions(walk)[:1, 0]), axis=1).max()
    left = np.linalg.norm(ground(in_place - in_place[:1]), axis=1).max()
    assert travel > 100 and left <= 0.01 * travel
    np.testing.assert_allclose(in_place[:, 1], scaled[:, 1], atol=1e-9)  # up and down kept


def test_to_root_bone_carries_the_travel_and_the_hips_keep_their_place(walk):
    target = with_root_bone(walk.skeleton)
    moved = as_pose(retarget(walk, target, root="to_root_bone", feet="free"))
    assert moved.skeleton.channels[1][:3] == ("tx", "ty", "tz")
    places = world_positions(moved)
    np.testing.assert_allclose(ground(places[:, 0]), ground(places[:, 1]), atol=1e-9)  # root under the hips
    np.testing.assert_allclose(places[:, 0, 1], 0.0, atol=1e-9)  # on the ground
    plain = world_positions(retarget(walk, target, root="scale", feet="free"))
    np.testing.assert_allclose(places[:, 1:], plain[:, 1:], atol=1e-6)
    with pytest.raises(ValueError, match="no bone above it to carry the root motion"):
        retarget(walk, walk.skeleton, root="to_root_bone")
