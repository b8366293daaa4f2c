"""The live mixer's core (core.blend.live: a blend posed one frame at a time) against the baked blend, and the
catch game's logic (core.blend.catch) without a window."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core import load
from mocap_addon.core.blend.catch import MIX_STEP, REACH, CatchGame, moved_mix
from mocap_addon.core.blend.live import LiveBlend
from mocap_addon.core.blend.mixing import blend, envelope
from mocap_addon.core.naming import map_skeleton
from mocap_addon.core.pose import as_pose
from tests.conftest import CORPUS, SAMPLES

WALK = as_pose(load(SAMPLES / "walk_turn.bvh"))
ELDERLY = CORPUS / "bvh" / "bandai_dataset-2_walk_elderly_004.bvh"
BANDAI = CORPUS / "bvh" / "bandai_dataset-1_walk_normal_001.bvh"
MIXES = (0.0, 0.13, 0.37, 0.5, 0.61, 0.88, 1.0)
TOLERANCE = 1e-4  # of the figure's height: what the issue asks of the live pose against the bake


def height(pose) -> float:
    return float(np.ptp(pose.world().positions.reshape(-1, 3), axis=0).max())


def worst_error(a, b, options, mixes=MIXES, frames=None) -> float:
    """Largest joint distance between the live pose and the baked blend over ``mixes`` and ``frames``, in
    heights."""
    live = LiveBlend.of(a, b, **options)
    frames = range(0, a.frame_count, 3) if frames is None else frames
    worst = 0.0
    for mix in mixes:
        baked = blend(a, b, mix, **options).world().positions
        for frame in frames:
            worst = max(worst, float(np.abs(live.pose(frame, mix).world().positions[0] - baked[frame]).max()))
    return worst / height(a)


@pytest.mark.parametrize("options", [
    {"feet": "free"}, {"root": "heading", "feet": "free"}, {"root": "a", "feet": "free", "align": "scale"},
    {}, {"root": "heading"}, {"root": "b", "mask": "upper_body"}])
def test_live_poses_equal_the_baked_blend_at_every_mix(options):
    b = as_pose(load(SAMPLES / "walk_turn.bvh"))
    shifted = b.at(np.r_[30:b.frame_count, 0:30])  # the walk half a cycle on: the feet differ
    error = worst_error(WALK, shifted, {"offset": 7, **options})
    assert error <= TOLERANCE
    if options.get("feet") == "free":  # nothing interpolated: the same arithmetic
        assert error <= 1e-9


@pytest.mark.corpus
@pytest.mark.parametrize("options", [{}, {"root": "heading", "align": "dtw"}, {"root": "a", "offset": 30}])
def test_live_poses_equal_the_baked_blend_of_two_captures(options):
    if not ELDERLY.is_file():
        pytest.skip("../shared/corpus is absent")
    a, b = as_pose(load(BANDAI)), as_pose(load(ELDERLY))
    assert worst_error(a, b, options, mixes=(0.07, 0.23, 0.49, 0.5, 0.51, 0.77, 0.97)) <= TOLERANCE


@pytest.mark.corpus
def test_the_held_feet_interpolate_within_tolerance_but_not_exactly():
    """Off the grid the legs are interpolated: close to the bake, yet not the bake's own arithmetic (the test
    would pass by accident if the grid were skipped)."""
    if not ELDERLY.is_file():
        pytest.skip("../shared/corpus is absent")
    a, b = as_pose(load(BANDAI)), as_pose(load(ELDERLY))
    live = LiveBlend.of(a, b)
    assert len(live.grid) > 20 and live.legs
    error = worst_error(a, b, {}, mixes=(0.0123, 0.9630))
    assert 1e-7 < error <= TOLERANCE


def test_poses_at_a_mix_profile_are_each_frames_pose():
    b = WALK.at(np.r_[30:WALK.frame_count, 0:30])
    for options in ({}, {"root": "heading"}):
        live = LiveBlend.of(WALK, b, **options)
        mixes = 0.5 + 0.5 * np.sin(np.arange(WALK.frame_count) / 9.0)
        everything = live.poses(mixes).world().positions
        for frame in range(0, WALK.frame_count, 11):
            one = live.pose(frame, mixes[frame]).world().positions[0]
            assert np.abs(everything[frame] - one).max() <= 1e-12 * height(WALK)


def test_a_frame_outside_a_is_refused():
    live = LiveBlend.of(WALK, WALK, feet="free")
    with pytest.raises(ValueError, match="outside"):
        live.pose(WALK.frame_count, 0.5)


# The catch game ---------------------------------------------------------------------------------------------------

def hand_paths(mixes):
    b = WALK.at(np.r_[30:WALK.frame_count, 0:30])
    hand = next(name for name, canonical in map_skeleton(WALK.skeleton).items() if canonical == "hand_r")
    return envelope(WALK, b, hand, mixes, feet="free")


def test_the_ball_arrives_on_a_point_of_the_envelope():
    mixes = np.linspace(0.0, 1.0, 11)
    paths = hand_paths(mixes)
    game = CatchGame(paths, mixes, WALK.frame_time, size=height(WALK), up=np.array([0.0, 1.0, 0.0]), seed=3)
    ball = game.throw(0)
    assert ball is not None and ball.arrival > ball.start
    column = list(mixes).index(ball.mix)
    assert np.allclose(ball.position(ball.arrival), paths[column, ball.arrival])
    assert np.linalg.norm(ball.position(ball.start) - ball.origin) < 1e-12
    middle = ball.position((ball.start + ball.arrival) / 2)
    straight = (ball.origin + ball.target) / 2
    assert (middle - straight) @ np.array([0.0, 1.0, 0.0]) == pytest.approx(ball.height)  # an arc, rising


@given(st.integers(0, 1000))
@settings(max_examples=25, deadline=None)
def test_caught_at_the_balls_mix_and_missed_far_from_it(seed):
    mixes = np.linspace(0.0, 1.0, 11)
    paths = hand_paths(mixes)
    game = CatchGame(paths, mixes, WALK.frame_time, size=height(WALK), up=np.array([0.0, 1.0, 0.0]), seed=seed)
    ball = game.throw(0)
    assert ball is not None
    column = list(mixes).index(ball.mix)
    for frame in range(ball.arrival):
        assert game.step(frame, paths[column, frame]) == ""
    assert game.step(ball.arrival, paths[column, ball.arrival]) == "caught"
    assert (game.caught, game.missed) == (1, 0)
    ball = game.ball  # thrown at once
    assert ball is not None
    far = ball.target + 2.0 * REACH * game.size * np.array([1.0, 0.0, 0.0])
    assert game.step(ball.arrival, far) == "missed"
    assert game.score == "1 caught, 1 missed"


def test_keys_move_the_mix_in_steps_within_0_and_1():
    assert moved_mix(0.5, 1) == pytest.approx(0.5 + MIX_STEP)
    assert moved_mix(0.5, -3) == pytest.approx(0.5 - 3 * MIX_STEP)
    assert moved_mix(0.98, 2) == 1.0 and moved_mix(0.01, -1) == 0.0
