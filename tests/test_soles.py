"""Soles on the floor, knees that bend: planted retargets judged on captures varied from the corpus's."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import load
from mocap_addon.core.body.reference import reference_body
from mocap_addon.core.naming import map_skeleton
from mocap_addon.core.pose import Pose, as_pose
from mocap_addon.core.retarget.judging import judge
from mocap_addon.core.retarget.transfer import figure, retarget, to_canonical
from mocap_addon.core.rotations import matrix_to_quaternion, quaternion_multiply
from mocap_addon.core.vectors import unit
from tests.conftest import CORPUS, SAMPLES

RIGS = ["bvh/fm_cmu_01_01.bvh", "htr/gpr450_xbot_samba_mixamo.com.htr", "bvh/bandai_dataset-1_walk_normal_001.bvh",
        "asf_amc/fm_01_01.amc"]
WALKS = ["asf_amc/vicon_male.walk-speed 4.AMC", "bvh/ganim_Xia_normal.bvh", "bvh/bandai_dataset-2_walk_elderly_004.bvh"]


def corpus(name: str) -> object:
    path = CORPUS / name
    return pytest.param(path, id=path.name,
                        marks=[pytest.mark.corpus] + ([] if path.exists() else [pytest.mark.skip(reason="no corpus")]))


def test_the_canonical_foot_model_stands_flat_under_the_ankle():
    canonical = to_canonical(load(SAMPLES / "walk_turn.bvh"))
    left, _ = figure(canonical.skeleton, {n: n for n in canonical.skeleton.names}, "canonical", "rest").feet()
    body = reference_body()
    ankle, toes, tip = body.joints["foot_l"], body.joints["toes_l"], body.ends["toes_l"]
    # Heel, ball and tip at the tip's height (the lowest), the heel behind the ankle, the ball under the toes joint.
    assert left.heel[1] == pytest.approx(tip[1] - ankle[1], abs=1e-9)
    assert left.ball == pytest.approx(np.array([0.0, tip[1] - ankle[1], toes[2] - ankle[2]]), abs=1e-9)
    assert left.heel[2] == pytest.approx(-0.2 * (tip[2] - ankle[2]), abs=1e-9)
    assert left.tip == pytest.approx(tip - toes, abs=1e-9)


def varied(path, scale: float, turn_degrees: float, foot_pitch_degrees: float) -> Pose:
    """A capture no one tuned on: ``path``'s take scaled, turned about its up axis, its feet pitched."""
    pose = as_pose(load(path)).copy()
    source = figure(pose, None, "source")
    up, lateral = source.body.T @ np.array([0.0, 1.0, 0.0]), source.body.T @ np.array([1.0, 0.0, 0.0])
    turn = np.radians(turn_degrees)
    skew = np.array([[0, -up[2], up[1]], [up[2], 0, -up[0]], [-up[1], up[0], 0]])
    spin = np.eye(3) + np.sin(turn) * skew + (1 - np.cos(turn)) * skew @ skew
    root = pose.skeleton.chain(source.canonical["hips"])[0]
    pose.rotations[:, root] = quaternion_multiply(matrix_to_quaternion(spin), pose.rotations[:, root])
    pose.translations[:, root] = pose.translations[:, root] @ spin.T
    pose.translations *= scale
    pose.skeleton.offsets *= scale
    for side in "lr":
        foot = source.canonical[f"foot_{side}"]
        axis = unit(source.rest_rotations[foot].T @ lateral)
        half = np.radians(foot_pitch_degrees) / 2
        pose.rotations[:, foot] = quaternion_multiply(pose.rotations[:, foot], np.r_[np.cos(half), np.sin(half) * axis])
    return pose


@pytest.mark.parametrize("rig", [corpus(r) for r in RIGS])
@pytest.mark.parametrize("walk, scale, turn, pitch", [(WALKS[0], 0.7, 37.0, -30.0), (WALKS[1], 2.5, -110.0, 20.0),
                                                     (WALKS[2], 1.0, 0.0, 0.0)])
def test_planted_soles_touch_the_floor_and_stance_knees_bend_as_the_sources(rig, walk, scale, turn, pitch):
    if not (CORPUS / walk).exists():
        pytest.skip("no corpus")
    source, target = varied(CORPUS / walk, scale, turn, pitch), load(rig)
    result = retarget(source, target)
    judged = judge(source, target, result)
    assert judged.contact_frames > 100
    assert judged.on_floor(0.015) == 1.0
    assert judged.deepest() >= min(-0.02, judged.source_deepest() - 0.01)
    errors = np.abs(judged.stance_knee_errors())
    assert len(errors) >= 2 and errors.max() < 10.0
    straight, source_straight = judged.straight()
    assert straight <= source_straight + 0.05 * 2 * judged.frames
    assert result.metadata["feet"]["missed_frames"] == 0
    assert judged.spins == 0


@pytest.mark.parametrize("rig", [corpus(RIGS[0]), corpus(RIGS[1])])
def test_a_take_too_short_for_contacts_stands_on_the_floor_and_says_so(rig):
    walk = CORPUS / WALKS[1]
    if not walk.exists():
        pytest.skip("no corpus")
    source = as_pose(load(walk)).at([100, 101])
    target = load(rig)
    result = retarget(source, target)
    assert any("no foot contacts" in w for w in result.metadata["warnings"])
    judged = judge(source, target, result)
    assert judged.soles.min() == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("rig", [corpus(RIGS[3])])
def test_the_same_inputs_give_the_same_keys(rig):
    walk = CORPUS / WALKS[0]
    if not walk.exists():
        pytest.skip("no corpus")
    source, target = load(walk), load(rig)
    first, second = retarget(source, target), retarget(source, target)
    assert np.array_equal(first.motion, second.motion)


@pytest.mark.parametrize("rig", [corpus(RIGS[3])])
def test_a_moving_limb_the_target_mapping_leaves_out_is_named(rig):
    walk = CORPUS / WALKS[1]
    if not walk.exists():
        pytest.skip("no corpus")
    source, target = load(walk), load(rig)
    mapping = {n: (None if c in ("upper_arm_l", "lower_arm_l") else c)
               for n, c in map_skeleton(target.skeleton).items()}
    warnings = retarget(source, target, target_mapping=mapping, feet="free").metadata["warnings"]
    assert [w.split()[0] for w in warnings] == ["target", "upper_arm_l", "lower_arm_l"]
    assert warnings[0].startswith("target mapping: hand_l (") and "upper_arm_l and lower_arm_l" in warnings[0]
    assert retarget(source, target, feet="free").metadata["warnings"] == []


@pytest.mark.parametrize("rig", [corpus(RIGS[0])])
def test_a_take_of_one_frame_a_second_stays_finite(rig):
    """Joe's trajectory (600 frames at 1 fps, feet held at some frames only): easing over a fraction of a frame
    must not turn an unheld frame's open reach into NaN."""
    take = CORPUS / "bvh" / "ganim_Joe_traj-example.bvh"
    if not take.exists():
        pytest.skip("no corpus")
    result = as_pose(retarget(load(take), load(rig)))
    assert np.isfinite(result.rotations).all() and np.isfinite(result.translations).all()
