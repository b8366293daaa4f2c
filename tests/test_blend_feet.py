"""Blends of real captures that keep their feet (issue 20): b on a's body, planted feet, paths, any length ratio."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mocap_addon.core import Clip, load, world_positions
from mocap_addon.core import rotations as r
from mocap_addon.core.blend.mixing import blend, envelope, onto, same_body, solve_mix
from mocap_addon.core.body.contacts import Contacts, find_contacts
from mocap_addon.core.naming import map_skeleton
from mocap_addon.core.pose import Pose, as_pose
from mocap_addon.core.retarget.transfer import retarget
from tests.conftest import CORPUS

XIA = "bvh/ganim_Xia_normal.bvh"
VICON = "asf_amc/vicon_male.walk-speed 4.AMC"
BANDAI = "bvh/bandai_dataset-1_walk_normal_001.bvh"
ELDERLY = "bvh/bandai_dataset-2_walk_elderly_004.bvh"
XBOT = "htr/gpr450_xbot_walk_m_mixamo.com.htr"
CMU_SUBJECT = "asf_amc/fm_01_01.amc"


def walk(name: str, first: float = 0.0, last: float | None = None) -> Clip:
    """A corpus clip, or its stretch from ``first`` to ``last`` seconds; skips without the corpus."""
    if not (CORPUS / name).is_file():
        pytest.skip("../shared/corpus is absent")
    clip = load(CORPUS / name)
    stop = None if last is None else round(last / clip.frame_time)
    clip.motion = clip.motion[round(first / clip.frame_time):stop].copy()
    return clip


def feet(motion: Clip | Pose) -> np.ndarray:
    """World positions ``(F, 2, 2, 3)`` of the ankles and balls of the feet (left, right)."""
    index = {c: motion.skeleton.index(n) for n, c in map_skeleton(motion.skeleton).items() if c is not None}
    return world_positions(motion)[:, [[index[f"foot_{s}"], index.get(f"toes_{s}", index[f"foot_{s}"])]
                                       for s in "lr"]]


def ankle_height(contacts: Contacts, points: np.ndarray) -> float:
    """Median height (leg lengths) above ``contacts``' floor of ``points``' ankles while its ankles touch."""
    heights = (points[..., 0, :] @ contacts.up - contacts.floor) / contacts.leg
    return float(np.median(heights[contacts.touching[..., 0]]))


def extent(motion: Clip | Pose) -> float:
    return float(np.ptp(world_positions(motion).reshape(-1, 3), axis=0).max())


# The check of issue 20: four pairs from different captures and formats, two of them ~3 times longer or shorter.
PAIRS = [(XIA, VICON, None), (VICON, BANDAI, None), (XBOT, XIA, None), (BANDAI, XIA, 2.2)]


@pytest.mark.parametrize("mix", [0.5, 1.0])
@pytest.mark.parametrize(("a_name", "b_name", "b_seconds"), PAIRS, ids=["xia+vicon", "vicon+bandai",
                                                                         "xbot+xia (b 2.8x)", "bandai+xia (a 3x)"])
def test_blends_of_walks_keep_their_feet_planted(a_name, b_name, b_seconds, mix):
    """``blend(a, b, mix, align="dtw")``: a's frames; its feet, where a's are planted, within 0.03 leg lengths
    of a's planted height, sliding at most 1.25 x the more sliding input's + 0.0005 leg lengths a frame."""
    a, b = walk(a_name), walk(b_name, last=b_seconds)
    own = find_contacts(a)
    result = blend(a, b, mix, align="dtw")
    assert result.frame_count == a.frame_count and result.metadata["feet"]["mode"] == "planted"
    points = feet(result)
    assert abs(ankle_height(own, points) - own.planted_height()) <= 0.03
    assert own.slide(points) <= 1.25 * max(own.slide(), find_contacts(b).slide()) + 0.0005
    free = blend(a, b, mix, align="dtw", feet="free")
    if mix == 0.5:
        assert own.slide(points) < own.slide(feet(free))  # holding the feet is what keeps them


def test_lengths_of_the_check_differ_by_about_three():
    for a_name, b_name, b_seconds in PAIRS[2:]:
        a, b = walk(a_name), walk(b_name, last=b_seconds)
        ratio = (b.frame_count * b.frame_time) / (a.frame_count * a.frame_time)
        assert 2.5 < max(ratio, 1 / ratio) < 3.5


# B on A's body --------------------------------------------------------------------------------------------------

def test_b_of_another_body_under_the_same_names_is_retargeted():
    """Vicon's and CMU's ASF subjects share every joint name; their legs differ: b is put on a's body, so
    at mix 1 the blend is ``retarget(b, a)`` (feet as the blend's)."""
    a, b = walk(VICON, 0, 1.5), walk(CMU_SUBJECT, 2, 3.5)
    assert a.skeleton.same_joints(b.skeleton) and not same_body(a, b)
    for feet_mode in ("planted", "free"):
        expected = as_pose(retarget(b, a, feet=feet_mode))
        found = as_pose(blend(a, b, 1.0, feet=feet_mode, root="blend"))
        np.testing.assert_allclose(world_positions(found), world_positions(expected), atol=1e-9 * extent(a))
    hips = a.skeleton.index("root")
    standing = world_positions(blend(a, b, 1.0))[:, hips, 1] / find_contacts(a).leg
    assert abs(np.median(standing) - np.median(world_positions(a)[:, hips, 1] / find_contacts(a).leg)) < 0.05


def test_two_takes_of_one_body_blend_as_they_are_and_mix_0_and_1_are_exact():
    """Two Bandai walks (one skeleton, bone lengths in the channels): b is used as it is, and with planted
    feet mix 0 is a's channels and mix 1 b's, bit for bit."""
    a, b = walk(BANDAI), walk(ELDERLY)
    assert same_body(a, b)
    assert np.array_equal(blend(a, b, 0.0).motion, a.motion)
    assert np.array_equal(blend(a, b, 1.0, root="blend").motion, b.motion[:a.frame_count])


@pytest.mark.parametrize("align", ["none", "dtw"])
def test_mix_0_is_a_and_mix_1_is_b_on_as_body_exactly(align):
    a, b = walk(XIA), walk(VICON)
    assert np.array_equal(blend(a, b, 0.0, align=align).motion, a.motion)
    result = blend(a, b, 1.0, align=align, root="blend")
    assert result.metadata["feet"]["moved_frames"] == [0, 0]  # no hold had anything to do
    on_a = as_pose(retarget(b, a)).sample(result.metadata["warp"])
    np.testing.assert_allclose(world_positions(result), world_positions(on_a), atol=1e-9 * extent(a))


def test_planted_feet_turn_only_the_legs():
    a, b = walk(XIA), onto(walk(XIA), walk(VICON))  # b already on a's body: both blends take it as it is
    planted, free = blend(a, b, 0.5, align="dtw"), blend(a, b, 0.5, align="dtw", feet="free")
    mapping = map_skeleton(a.skeleton)
    legs = {n for n, c in mapping.items() if c and c.startswith(("upper_leg", "lower_leg", "foot"))}
    starts = a.skeleton.channel_starts()
    for joint, name in enumerate(a.skeleton.names):
        columns = slice(starts[joint], starts[joint + 1])
        same = np.array_equal(planted.motion[:, columns], free.motion[:, columns])
        assert same != (name in legs), name


# Steps ----------------------------------------------------------------------------------------------------------

def onsets(planted: np.ndarray) -> list[int]:
    events = [(int(f), side) for side in (0, 1) for f in np.flatnonzero(planted[1:, side] & ~planted[:-1, side]) + 1]
    return [side for _, side in sorted(events)]


def test_three_steps_with_four_plant_at_the_blends_own_steps_without_crossing_legs():
    """Xia's three steps and the elderly Bandai walker's four, in the same 2.2 s: the half blend steps as
    a does, left and right in turn, each foot planted while a's same foot is, the left foot left of the right."""
    a, b = walk(XIA, 0.6, 2.8), walk(ELDERLY, 0.4, 2.6)
    assert len(onsets(find_contacts(a).planted)) == 3 and len(onsets(find_contacts(b).planted)) == 4
    result = blend(a, b, 0.5, align="dtw")
    own, mixed = find_contacts(a), find_contacts(result)
    sides = onsets(mixed.planted)
    assert len(sides) >= 3 and all(x != y for x, y in itertools.pairwise(sides)), sides
    for side in (0, 1):
        planted = mixed.planted[:, side]
        assert np.mean(own.planted[planted, side]) > 0.8  # a's same foot is down
    index = {c: a.skeleton.index(n) for n, c in map_skeleton(a.skeleton).items() if c is not None}
    world = world_positions(result)
    left = world[:, index["upper_leg_l"]] - world[:, index["upper_leg_r"]]  # the hips' left
    across = np.einsum("fi,fi->f", world[:, index["foot_l"]] - world[:, index["foot_r"]], left)
    assert np.all(across[mixed.planted.any(axis=1)] > 0)


# Paths ----------------------------------------------------------------------------------------------------------

def curving(clip: Clip, degrees: float) -> Pose:
    """``clip`` turning steadily about the up axis (Y) by ``degrees`` in all, its path bent as it turns."""
    pose = as_pose(clip).copy()
    frames = pose.frame_count
    angles = np.radians(degrees) * np.arange(frames) / (frames - 1)
    turns = r.axis_matrices("Y", angles)
    root = 1 if pose.skeleton.names[0] == "joint_Root" else 0
    path = pose.translations[:, root]
    steps = np.einsum("fab,fb->fa", turns[:-1], np.diff(path, axis=0) * [1.0, 0.0, 1.0])
    pose.translations[:, root] = np.concatenate([path[:1], path[:1] + np.cumsum(steps, axis=0)])
    pose.translations[:, root, 1] = path[:, 1]
    pose.rotations[:, root] = r.quaternion_multiply(r.matrix_to_quaternion(turns), pose.rotations[:, root])
    return pose


def heading_of(motion: Clip | Pose) -> np.ndarray:
    """The hips' heading about Y (radians, continuous), from their forward (+Z) axis."""
    world = as_pose(motion).world()
    hips = motion.skeleton.index("Hips")
    forward = r.quaternion_to_matrix(world.quaternions[:, hips])[:, :, 2]
    return np.unwrap(np.arctan2(forward[:, 0], forward[:, 2]))


def test_a_half_mix_of_straight_and_curving_curves_half_as_much():
    """Turning rates and speeds mix: half of a 120-degree curve turns 60 degrees at full speed (mixing world
    positions instead, the two paths pull apart and the blend slows to half)."""
    straight = as_pose(walk(BANDAI))
    bent = curving(walk(BANDAI), 120.0)
    own_turn = heading_of(straight)[-1] - heading_of(straight)[0]
    hips = straight.skeleton.index("Hips")
    second = round(1 / straight.frame_time)

    def final_speed(motion: Clip | Pose) -> float:
        path = world_positions(motion)[:, hips] * [1, 0, 1]
        return float(np.linalg.norm(path[-1] - path[-1 - second]))

    for mix in (0.0, 0.5, 1.0):
        result = blend(straight, bent, mix, root="heading", feet="free")
        turned = heading_of(result)[-1] - heading_of(result)[0]
        assert abs(turned - (own_turn + np.radians(120.0) * mix)) < np.radians(1), np.degrees(turned)
        assert final_speed(result) == pytest.approx(final_speed(straight), rel=0.1)
    assert final_speed(blend(straight, bent, 0.5, root="blend", feet="free")) < 0.6 * final_speed(straight)


def test_heading_paths_start_where_a_starts_facing_as_a_does():
    """Mix 0 is a's path; mix 1 b's path turned and moved to start where a's starts."""
    a, b = as_pose(walk(BANDAI, 0, 3)), curving(walk(BANDAI, 3, 6), 90.0)
    hips = a.skeleton.index("Hips")
    np.testing.assert_allclose(world_positions(blend(a, b, 0.0, root="heading"))[:, hips],
                               world_positions(a)[:, hips], atol=1e-9 * extent(a))
    moved = world_positions(blend(a, b, 1.0, root="heading"))[:, hips]
    own = world_positions(b)[:, hips]
    turn = heading_of(a)[0] - heading_of(b)[0]
    rotation = r.axis_matrices("Y", np.array([turn]))[0]
    expected = (own - own[0]) @ rotation.T + world_positions(a)[0, hips] * [1, 0, 1] + own[0] * [0, 1, 0]
    np.testing.assert_allclose(moved, expected, atol=1e-6 * extent(a))


# Envelope and solve_mix on held feet -----------------------------------------------------------------------------

def test_the_envelope_of_a_foot_is_the_blends_foot_and_solve_mix_finds_it():
    a, b = walk(XIA, 0, 1.2), walk(VICON, 0, 1.6)
    foot = a.skeleton.names[a.skeleton.index("LeftFoot")]
    mixes = [0.0, 0.35, 1.0]
    paths = envelope(a, b, foot, mixes, align="dtw")
    for path, mix in zip(paths, mixes):
        expected = world_positions(blend(a, b, mix, align="dtw"))[:, a.skeleton.index(foot)]
        np.testing.assert_allclose(path, expected, atol=1e-9 * extent(a))
    target = paths[1, 70]
    mix, distance = solve_mix(a, b, foot, 70, target, align="dtw")
    assert abs(mix - 0.35) < 1e-3 and distance < 1e-6 * extent(a)
