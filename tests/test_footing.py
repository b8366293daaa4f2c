"""Planted feet: the leg IK and the holds on arrays, then retargets of real walks onto the corpus rigs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, load, world_positions
from mocap_addon.core.body.anatomy import largest_bend_step
from mocap_addon.core.body.contacts import find_contacts
from mocap_addon.core.body.footing import EASE, _hips_sway, _lifts, _pelvis_roll, pinned_ankles, two_bone_ik
from mocap_addon.core.kinematics import forward_kinematics
from mocap_addon.core.naming import map_skeleton
from mocap_addon.core.retarget.judging import judge
from mocap_addon.core.retarget.transfer import retarget, to_canonical
from tests.conftest import CORPUS

# Captures from other sources, and the rigs the issue names: CMU's BVH, the Mixamo HTR, Bandai's BVH, CMU's ASF.
WALKS = ["bvh/ganim_Xia_normal.bvh", "bvh/bandai_dataset-2_walk_elderly_004.bvh", "asf_amc/vicon_male.walk-speed 4.AMC",
         "htr/gpr450_xbot_walk_m_mixamo.com.htr", "bvh/bandai_dataset-1_walk_normal_001.bvh"]
RIGS = ["bvh/fm_cmu_01_01.bvh", "htr/gpr450_xbot_samba_mixamo.com.htr", "bvh/bandai_dataset-1_walk_normal_001.bvh",
        "asf_amc/fm_01_01.amc"]


def corpus(*names: str) -> list:
    return [pytest.param(CORPUS / n, id=n.split("/")[-1],
                         marks=[] if (CORPUS / n).is_file() else pytest.mark.skip(reason="no corpus")) for n in names]


unit_vectors = st.tuples(*[st.floats(-1, 1)] * 3).map(np.array).filter(lambda v: np.linalg.norm(v) > 0.1)


@settings(max_examples=80, deadline=None)
@given(thigh=unit_vectors, shin=unit_vectors, aim=unit_vectors,
       lengths=st.tuples(st.floats(0.3, 1.0), st.floats(0.3, 1.0)), reach=st.floats(0.05, 1.5))
def test_two_bone_ik_reaches_keeps_lengths_and_bends_about_the_hinge(thigh, shin, aim, lengths, reach):
    axis = np.cross(thigh, shin)
    assume(np.linalg.norm(axis) > 0.05 * np.linalg.norm(thigh) * np.linalg.norm(shin))  # a bent knee: its hinge
    hip = np.zeros((1, 3))
    knee = hip + lengths[0] * thigh / np.linalg.norm(thigh)
    ankle = knee + lengths[1] * shin / np.linalg.norm(shin)
    target = hip + reach * sum(lengths) * aim / np.linalg.norm(aim)
    thigh_turn, shin_turn, miss = two_bone_ik(hip, knee, ankle, target, axis[None])
    for turn in (thigh_turn, shin_turn):
        np.testing.assert_allclose(turn @ np.swapaxes(turn, -1, -2), np.eye(3)[None], atol=1e-9)
        assert np.linalg.det(turn[0]) == pytest.approx(1.0)
    new_knee = hip + (thigh_turn @ (knee - hip)[..., None])[..., 0]
    new_ankle = new_knee + (thigh_turn @ shin_turn @ (ankle - knee)[..., None])[..., 0]
    assert np.linalg.norm(new_knee - hip) == pytest.approx(lengths[0])
    assert np.linalg.norm(new_ankle - new_knee) == pytest.approx(lengths[1])
    unit = axis / np.linalg.norm(axis)
    np.testing.assert_allclose(shin_turn[0] @ unit, unit, atol=1e-9)  # the shin turns about the hinge only
    assert np.linalg.norm(new_ankle - target) == pytest.approx(miss[0], abs=1e-9)
    expected = max(0.0, reach * sum(lengths) - sum(lengths), abs(lengths[0] - lengths[1]) - reach * sum(lengths))
    assert miss[0] == pytest.approx(expected, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(width=st.floats(0.1, 0.3), step=st.tuples(st.floats(-0.6, 0.6), st.floats(-0.2, 0.2)),
       heights=st.tuples(st.floats(0.0, 0.25), st.floats(0.0, 0.25)), place=st.floats(-0.15, 0.15),
       height=st.floats(0.8, 0.95))
def test_the_hips_move_across_the_floor_until_both_stance_legs_span_what_they_should(width, step, heights, place,
                                                                                      height):
    """Feet at different heights and distances (one on its toes, a step): spans that hips moved ``place`` toward
    the right foot and down to ``height`` give both legs; the sway finds a place where one height gives both."""
    up = np.array([0.0, 1.0, 0.0])
    hips = np.array([[[width / 2, 1.0, 0.0], [-width / 2, 1.0, 0.0]]])
    ankles = np.array([[[width / 2 + step[1], heights[0], step[0] / 2],
                        [-width / 2 - step[1], heights[1], -step[0] / 2]]])
    across = (ankles[0, 1] - ankles[0, 0]) * [1.0, 0.0, 1.0]
    truth = place * across / np.linalg.norm(across) + (height - 1.0) * up
    spans = np.linalg.norm(hips + truth - ankles, axis=-1)
    sway = _hips_sway(hips, ankles, np.ones((1, 2), dtype=bool), spans, up, 0.2, 1 / 30)
    assert sway @ up == pytest.approx([0.0], abs=1e-12)  # across the floor only
    assert np.linalg.norm(sway) <= 0.2 + 1e-12
    both = _lifts(hips + sway[:, None], ankles, spans, up)[0]
    assert both[0] == pytest.approx(both[1], abs=1e-6)  # one height of the hips gives both legs their spans


def test_two_bone_ik_straightens_towards_a_target_out_of_reach():
    hip, knee, ankle = np.array([[0.0, 1.0, 0.0]]), np.array([[0.0, 0.5, 0.1]]), np.array([[0.0, 0.0, 0.0]])
    target = np.array([[0.0, -1.0, 0.5]])
    thigh_turn, shin_turn, miss = two_bone_ik(hip, knee, ankle, target, np.array([[1.0, 0.0, 0.0]]))
    new_knee = hip + (thigh_turn @ (knee - hip)[..., None])[..., 0]
    new_ankle = new_knee + (thigh_turn @ shin_turn @ (ankle - knee)[..., None])[..., 0]
    legs = np.linalg.norm(knee - hip) + np.linalg.norm(ankle - knee)
    np.testing.assert_allclose(np.linalg.norm(new_ankle - hip), legs, rtol=1e-12)  # straight
    direction = (target - hip) / np.linalg.norm(target - hip)
    np.testing.assert_allclose((new_ankle - hip) / legs, direction, atol=1e-9)
    assert miss[0] == pytest.approx(float(np.linalg.norm(target - hip)) - legs)


def test_holds_keep_a_planted_ankle_then_its_ball_and_fade():
    frames, frame_time = 60, 1 / 30
    ankles = np.zeros((frames, 3))
    ankles[:, 0] = np.linspace(0.0, 1.0, frames)  # the free ankle slides along X
    foot = np.tile([0.2, 0.0, 0.0], (frames, 1))
    foot[30:] = [[0.2 * np.cos(a), 0.2 * np.sin(a), 0.0] for a in np.linspace(0.0, -0.6, frames - 30)]  # heel up
    balls = ankles + foot
    touching = np.zeros((frames, 2), dtype=bool)
    touching[10:30, 0] = True  # ankle down
    touching[10:45, 1] = True  # ball down a while longer
    targets, weights = pinned_ankles(ankles, balls, touching, frame_time)
    np.testing.assert_allclose(targets[10:30], np.broadcast_to(ankles[10], (20, 3)))  # held where it landed
    held_ball = targets[30:45] + foot[30:45]
    np.testing.assert_allclose(held_ball, np.broadcast_to(ankles[10] + foot[29], (15, 3)), atol=1e-12)
    assert np.all(weights[10:45] == 1.0) and weights[0] == 0.0 and weights[-1] == 0.0
    fade_in, fade_out = weights[4:10], weights[45:51]
    assert np.all(np.diff(fade_in) >= 0) and np.all(np.diff(fade_out) <= 0)
    assert 0 < fade_in[-1] < 1 and 0 < fade_out[0] < 1
    step = np.linalg.norm(np.diff(targets, axis=0), axis=-1)  # nothing snaps: the offset let go over EASE
    offset = float(np.linalg.norm(targets[44] - ankles[44]))
    assert step.max() <= 2 * offset * frame_time / EASE + np.linalg.norm(ankles[1] - ankles[0])


def test_a_guided_hold_moves_as_the_guide_does():
    frames = 20
    ankles = np.zeros((frames, 3))
    ankles[:, 2] = np.linspace(0.0, 2.0, frames)
    guide = np.zeros((frames, 3))
    guide[:, 2] = np.linspace(0.0, 0.1, frames)
    touching = np.ones((frames, 2), dtype=bool)
    targets, _ = pinned_ankles(ankles, ankles, touching, 1 / 30, guide, guide)
    np.testing.assert_allclose(targets, guide, atol=1e-12)


def feet_points(clip: Clip) -> np.ndarray:
    index = {c: clip.skeleton.index(n) for n, c in map_skeleton(clip.skeleton).items() if c is not None}
    positions = world_positions(clip)
    return positions[:, [[index[f"foot_{s}"], index.get(f"toes_{s}", index[f"foot_{s}"])] for s in "lr"]]


@pytest.mark.parametrize("target_path", corpus(*RIGS))
def test_planted_feet_of_walks_stay_planted_on_the_targets_floor(target_path):
    """Slide per contact frame at most 1.1 x the source's own + 0.0005 leg lengths, planted ankles within
    0.03 leg lengths of the target's own planted height, no knee step beyond the source's largest + 10 deg."""
    target = load(target_path)
    own = find_contacts(target)
    for source_path in [CORPUS / w for w in WALKS if w not in str(target_path)]:
        if not source_path.is_file():
            continue
        source = load(source_path)
        contacts = find_contacts(source)
        result = retarget(source, target)
        assert result.metadata["feet"]["mode"] == "planted"
        over_source = replace(contacts, points=feet_points(result), up=own.up, leg=own.leg)  # target leg lengths
        assert over_source.slide() <= 1.1 * contacts.slide() + 0.0005, source_path.name
        heights = (over_source.points[..., 0, :] @ own.up - own.floor) / own.leg
        assert abs(np.median(heights[contacts.touching[..., 0]]) - own.planted_height()) <= 0.03, source_path.name
        assert largest_bend_step(result) <= largest_bend_step(source) + 10.0, source_path.name
        assert result.metadata["feet"]["worst_miss"] < 0.05


@pytest.mark.parametrize("source_path", corpus(*WALKS[:2]))
def test_canonical_feet_stand_on_the_canonical_floor_when_planted(source_path):
    source = load(source_path)
    free, planted = to_canonical(source), to_canonical(source, feet="planted")
    assert "feet" not in free.metadata and planted.metadata["feet"]["mode"] == "planted"
    contacts = find_contacts(source)
    ankles = feet_points(planted)[..., 0, :]
    rest_ankle = 0.039 * 1.75  # the reference body's ankle height, its lowest point at 0
    assert np.median(ankles[..., 1][contacts.touching[..., 0]]) == pytest.approx(rest_ankle, abs=0.03 * 0.86)


def test_feet_option_is_checked():
    path = CORPUS / WALKS[0]
    if not path.is_file():
        pytest.skip("no corpus")
    clip = load(path)
    with pytest.raises(ValueError, match="feet must be one of planted, free"):
        retarget(clip, clip, feet="glued")


def test_a_source_standing_along_another_axis_keeps_its_feet_free():
    """xbot_anim1's figure stands along -Z while its rest says Y: no floor to stand it on, and it says so."""
    path = CORPUS / "htr" / "gpr450_xbot_anim1.HTR"
    if not path.is_file():
        pytest.skip("no corpus")
    clip = load(path)
    result = to_canonical(clip, feet="planted")
    assert result.metadata["feet"] == {"mode": "free"}
    assert any("stands along another axis" in w and "-Z" in w for w in result.metadata["warnings"])
    np.testing.assert_array_equal(result.motion, to_canonical(clip).motion)


def test_the_pelvis_rolls_so_two_stance_legs_of_different_lengths_both_span_what_they_should():
    rng = np.random.default_rng(27)
    frames, up = 60, np.array([0.0, 1.0, 0.0])
    hips = np.zeros((frames, 2, 3))
    hips[:, :, 0], hips[:, :, 1] = [-0.1, 0.1], 1.0
    ankles = hips + np.stack([rng.uniform(-0.15, 0.15, (frames, 2)), np.full((frames, 2), -0.95),
                              rng.uniform(-0.3, 0.3, (frames, 2))], axis=-1)
    rise = rng.uniform(-0.02, 0.02, frames)  # how much higher the right hip joint should be than the left
    # the hips stand as high as the leg that wants them lower spans: the other wants its hip joint higher
    wanted = hips + np.stack([np.maximum(-rise, 0.0), np.maximum(rise, 0.0)], axis=1)[..., None] * up
    spans = np.linalg.norm(wanted - ankles, axis=-1)
    held = np.ones((frames, 2))
    roll, pivot = _pelvis_roll(hips, ankles, held, spans, spans + 1.0, up, 100.0)
    rolled = np.einsum("fij,fkj->fki", roll, hips - pivot[:, None]) + pivot[:, None]
    np.testing.assert_allclose((rolled[:, 1] - rolled[:, 0]) @ up, rise, atol=1e-12)
    lower = np.where(rise >= 0, 0, 1)  # the pivot: the hip joint that stays
    np.testing.assert_allclose(rolled[np.arange(frames), lower], hips[np.arange(frames), lower], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(rolled - ankles, axis=-1), spans, atol=1e-3)  # both span theirs
    np.testing.assert_allclose(np.linalg.norm(rolled[:, 1] - rolled[:, 0], axis=-1), 0.2, atol=1e-12)  # a turn
    one_foot = held.copy()
    one_foot[:, 0] = 0.5
    roll, _ = _pelvis_roll(hips, ankles, one_foot, spans, spans + 1.0, up, 100.0)
    np.testing.assert_allclose(roll, np.broadcast_to(np.eye(3), roll.shape), atol=1e-12)  # one stance leg: no roll
    short = spans + 1.0
    short[:, 1] = spans[:, 1] - 0.01  # the right leg cannot reach as high as it wants
    roll, pivot = _pelvis_roll(hips, ankles, held, spans, short, up, 100.0)
    rolled = np.einsum("fij,fkj->fki", roll, hips - pivot[:, None]) + pivot[:, None]
    before = np.linalg.norm(hips[:, 1] - ankles[:, 1], axis=-1)
    stretched = np.linalg.norm(rolled[:, 1] - ankles[:, 1], axis=-1)
    assert np.all(stretched <= np.maximum(short[:, 1], before) + 1e-3)  # no leg stretched past its reach
    assert np.any(stretched < np.linalg.norm(wanted[:, 1] - ankles[:, 1], axis=-1) - 1e-3)  # so some fall short


@pytest.mark.corpus
@pytest.mark.parametrize("take", corpus("bvh/ganim_Joe_traj-example.bvh"))
@pytest.mark.parametrize("rig", corpus("bvh/fm_cmu_01_01.bvh"))
def test_onto_legs_of_different_lengths_the_pelvis_rolls_and_the_trunk_keeps_its_turn(take, rig):
    source, target = load(take), load(rig)  # the source stands on straight legs; CMU's left leg is 2 % shorter
    planted, free = retarget(source, target), retarget(source, target, feet="free")
    trunk = [planted.skeleton.index(name) for name in ("LowerBack", "Spine1", "Head")]
    turns, free_turns = forward_kinematics(planted).rotations, forward_kinematics(free).rotations
    np.testing.assert_allclose(turns[:, trunk], free_turns[:, trunk], atol=1e-9)
    between = np.swapaxes(turns[:, 0], -1, -2) @ free_turns[:, 0]
    assert np.degrees(np.arccos(np.clip((np.trace(between, axis1=-2, axis2=-1) - 1) / 2, -1, 1))).max() > 1.0  # rolled
    judged = judge(source, target, planted)
    assert np.abs(judged.stance_knee_errors()).max() < 2.0  # 17 degrees with the pelvis level
