"""The pose type every tool works on: clips to poses and back, forward kinematics, sampling, and the tools
working on poses without an Euler angle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, Pose, Skeleton, load, rotations, world_positions
from mocap_addon.core.pose import first_angles
from tests.conftest import SAMPLES
from tests.kinematics_oracle import clip_world_matrices

SAMPLE = SAMPLES / "walk_turn.bvh"
OTHER = SAMPLES / "jog_wave.bvh"


def angle_between(x: np.ndarray, y: np.ndarray) -> float:
    """Largest angle (radians) between two arrays of unit quaternions, whatever their signs (well
    conditioned near zero, unlike an arccos of the dot product)."""
    y = y * np.where(np.sum(x * y, axis=-1, keepdims=True) < 0, -1.0, 1.0)
    return float(np.max(2 * np.arctan2(np.linalg.norm(x - y, axis=-1), np.linalg.norm(x + y, axis=-1))))


@st.composite
def random_clips(draw) -> Clip:
    """Trees of 1-6 joints with random rests, offsets, layouts (any order, partial, length and scale
    channels, translations in the rest frame or not, replacing the offset or not) and angles past 180."""
    count = draw(st.integers(1, 6))
    parents = [-1] + [draw(st.integers(0, j - 1)) for j in range(1, count)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frames = draw(st.integers(1, 30))
    layouts = []
    for _ in range(count):
        moves = tuple(draw(st.sampled_from([(), ("tx", "ty", "tz"), ("ty",), ("l",)])))
        turns = tuple(draw(st.permutations(["rx", "ry", "rz"]))[: draw(st.integers(0, 3))])
        layouts.append(moves + turns + (("s",) if draw(st.integers(0, 4)) == 0 else ()))
    rests = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(count)])
    rests *= np.sign(np.linalg.det(rests))[:, None, None]
    skeleton = Skeleton([f"j{n}" for n in range(count)], parents, rng.uniform(-5, 5, (count, 3)), layouts,
                        rest_rotations=rests, position_replaces_offset=rng.random(count) < 0.5,
                        translation_in_rest_frame=rng.random(count) < 0.5,
                        length_directions=rng.normal(size=(count, 3)))
    columns = []
    for layout in layouts:
        for channel in layout:
            if channel == "s":
                columns.append(rng.uniform(0.5, 2.0, frames))
            elif channel[0] == "r":
                columns.append(np.cumsum(rng.normal(0, 40, frames)) + rng.uniform(-400, 400))
            else:
                columns.append(rng.uniform(-3, 3, frames))
    motion = np.array(columns).T if columns else np.zeros((frames, 0))
    return Clip(skeleton, motion, 1 / 30)


@settings(max_examples=80, deadline=None)
@given(clip=random_clips())
def test_a_clip_as_a_pose_and_back_keeps_every_transform(clip):
    """Clip -> Pose is the model's equation (the oracle's 4x4 products); Pose -> Clip -> Pose gives the
    same local transforms; rotations are unit quaternions kept in one hemisphere along time."""
    pose = Pose.of(clip)
    assert pose.rotations.shape == (clip.frame_count, clip.skeleton.joint_count, 4)
    np.testing.assert_allclose(np.linalg.norm(pose.rotations, axis=-1), 1.0, atol=1e-12)
    if pose.frame_count > 1:
        assert np.all(np.sum(pose.rotations[1:] * pose.rotations[:-1], axis=-1) >= 0)
    worlds = clip_world_matrices(clip)
    found = pose.world()
    np.testing.assert_allclose(found.positions, worlds[..., :3, 3], atol=1e-9)
    np.testing.assert_allclose(found.rotations * found.scales[..., None, None], worlds[..., :3, :3], atol=1e-9)
    again = Pose.of(pose.to_clip(reference=first_angles(clip)))
    assert angle_between(again.rotations, pose.rotations) < 1e-9
    np.testing.assert_allclose(again.translations, pose.translations, atol=1e-9)
    np.testing.assert_allclose(again.scale_values(), pose.scale_values(), atol=1e-12)


def test_channel_values_survive_where_they_are_continuous():
    """The sample's hips turn past 180 degrees, which the file writes wrapped: written from its pose, the
    angles differ by whole turns there only, and they then survive another round trip exactly."""
    clip = load(SAMPLE)
    back = Pose.of(clip).to_clip(reference=first_angles(clip))
    turns = (back.motion - clip.motion) / 360
    np.testing.assert_allclose(turns, np.round(turns), atol=1e-9)
    assert np.abs(np.diff(back.motion, axis=0)).max() < 90 < np.abs(np.diff(clip.motion, axis=0)).max()
    again = Pose.of(back).to_clip(reference=first_angles(back))
    np.testing.assert_allclose(again.motion, back.motion, atol=1e-9)
    assert again.skeleton.channels == clip.skeleton.channels and again.frame_time == clip.frame_time


def test_sampling_and_mixing():
    pose = Pose.of(load(SAMPLE))
    np.testing.assert_array_equal(pose.sample(np.arange(5.0)).rotations, pose.rotations[:5])
    half = pose.sample([2.5])
    expected = rotations.slerp(pose.rotations[2], pose.rotations[3], np.full(pose.joint_count, 0.5))
    assert angle_between(half.rotations[0], expected) < 1e-12
    np.testing.assert_allclose(half.translations[0], (pose.translations[2] + pose.translations[3]) / 2)
    first, last = pose.at(np.zeros(10, dtype=int)), pose.at(np.arange(10))
    assert angle_between(first.toward(last, np.ones((10, pose.joint_count))).rotations, last.rotations) < 1e-7


def test_held_drops_what_channels_cannot_hold():
    """A hinge (one rotation channel) holds only its own axis; a joint without move channels stays at its
    offset; no scale without a scale channel."""
    skeleton = Skeleton(["a", "b"], [-1, 0], np.array([[0.0, 0, 0], [0, 1, 0]]), [("tx", "ty", "tz", "rx", "ry", "rz"),
                                                                                  ("rx",)])
    pose = Pose.of(Clip(skeleton, np.zeros((3, 7)), 1 / 30))
    pose.rotations[:, 1] = rotations.euler_to_quaternion(np.radians([[30.0, 10.0, 0.0]] * 3), "XYZ")
    pose.translations[:, 1] += 0.5
    pose.scales = np.full((3, 2), 2.0)
    held = pose.held()
    np.testing.assert_allclose(held.translations[:, 1], [[0, 1, 0]] * 3)
    np.testing.assert_allclose(held.scales, 1.0)
    np.testing.assert_allclose(np.abs(held.rotations[:, 1]), [[np.cos(np.radians(15)), np.sin(np.radians(15)), 0, 0]]
                               * 3, atol=1e-12)


def test_bad_shapes_are_refused():
    skeleton = load(SAMPLE).skeleton
    with pytest.raises(ValueError, match="rotations"):
        Pose(skeleton, np.zeros((2, 3, 4)), np.zeros((2, 3, 3)), None, 1 / 30)
    with pytest.raises(ValueError, match="frame time"):
        Pose(skeleton, np.zeros((2, skeleton.joint_count, 4)), np.zeros((2, skeleton.joint_count, 3)), None, 0.0)


def test_tools_on_poses_compute_no_euler_angle(monkeypatch):
    """Retarget, canonical conversion, blending (with time warping), envelopes, solving a mix, key
    reduction and resampling take poses and give poses without computing an Euler angle (joints with
    three rotation channels throughout: fewer channels hold angles about their own axes by nature)."""
    import mocap_addon.core.retarget.transfer as retarget_module
    from mocap_addon.core.blend.mixing import blend, envelope, solve_mix
    from mocap_addon.core.reduce import reduce_keys
    from mocap_addon.core.retarget.transfer import retarget, to_canonical
    from mocap_addon.core.timing import resample

    walk, jog = load(SAMPLE), load(OTHER)
    walk, jog = Clip(walk.skeleton, walk.motion[:60], walk.frame_time), Clip(jog.skeleton, jog.motion[:50],
                                                                            jog.frame_time)
    a, b = Pose.of(walk), Pose.of(jog)

    def no_euler(*_args, **_kwargs):
        raise AssertionError("an Euler angle was computed")

    for name in ("matrix_to_euler", "euler_to_matrix", "euler_to_quaternion", "quaternion_to_euler",
                 "euler_continuity", "partial_euler"):
        monkeypatch.setattr(rotations, name, no_euler)
    monkeypatch.setattr(retarget_module, "euler_to_matrix", no_euler)
    results = [retarget(b, walk.skeleton), retarget(b, a), to_canonical(a), to_canonical(b, method="lengths"),
               blend(a, b, 0.5), blend(a, b, 0.3, align="dtw", root="heading", mask="right_arm"),
               resample(a, a.frame_time / 2)]
    assert all(isinstance(result, Pose) for result in results)
    assert envelope(a, b, "LeftHand", [0.0, 0.5, 1.0]).shape == (3, 60, 3)
    target = world_positions(results[4])[10, walk.skeleton.index("LeftHand")]
    assert solve_mix(a, b, "LeftHand", 10, target)[1] < 1e-6
    assert reduce_keys(a, 0.002).keys_after < reduce_keys(a, 0.0).keys_after
