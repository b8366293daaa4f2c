"""Joints with fewer rotation channels than their source's: continuous bones, no spins."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, Skeleton, forward_kinematics, load
from mocap_addon.core.model import encode_joint
from mocap_addon.core.retarget.continuity import continued
from mocap_addon.core.retarget.judging import judge
from mocap_addon.core.retarget.transfer import retarget
from mocap_addon.core.rotations import quaternion_to_matrix
from tests.conftest import CORPUS, SAMPLES

SPIN, CALM = 60.0, 20.0  # degrees per frame: a bone spins turning more than this where its source's turns less
LAYOUTS = [("rx",), ("ry",), ("rz",), ("rz", "rx"), ("rx", "rz"), ("ry", "rx"), ("rz", "ry"), ("rx", "ry")]
ASF_RIG = CORPUS / "asf_amc" / "fm_01_01.amc"
JOINTS = ["LeftFoot", "RightForeArm", "LeftArm", "RightShoulder", "LeftLeg", "RightHand"]


def _turns(clip: Clip, joints: list[int]) -> np.ndarray:
    """Degrees each joint's world rotation turns from frame to frame ``(F - 1, len(joints))``."""
    world = forward_kinematics(clip).rotations[:, joints]
    between = np.einsum("fjab,fjab->fj", world[:-1], world[1:])
    return np.degrees(np.arccos(np.clip((between - 1.0) / 2.0, -1.0, 1.0)))


def _wandering(joint: str, seed: int, frames: int = 300, reach: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> Clip:
    """The sample's first pose held while ``joint`` turns smoothly at random (sums of slow sines as a
    rotation vector, up to about 150 degrees from its rest times ``reach`` about each axis; a few degrees
    per frame)."""
    sample = load(SAMPLES / "walk_turn.bvh")
    skeleton = sample.skeleton
    motion = np.repeat(sample.motion[:1], frames, axis=0)
    rng = np.random.default_rng(seed)
    time = np.arange(frames)[:, None] / 30.0
    vector = sum(rng.uniform(0.3, 0.9, 3) * np.sin(2 * np.pi * rng.uniform(0.05, 0.4, 3) * time
                                                    + rng.uniform(0, 2 * np.pi, 3)) for _ in range(3)) * reach
    angle = np.linalg.norm(vector, axis=-1, keepdims=True)
    half = np.concatenate([np.cos(angle / 2), np.sin(angle / 2) * vector / np.maximum(angle, 1e-12)], axis=-1)
    index = skeleton.index(joint)
    start, layout = int(skeleton.channel_starts()[index]), skeleton.channels[index]
    motion[:, start:start + len(layout)] = encode_joint(layout, quaternion_to_matrix(half))
    return Clip(skeleton, motion, 1 / 30.0)


def _restricted(skeleton: Skeleton, joint: str, layout: tuple[str, ...]) -> Skeleton:
    channels = list(skeleton.channels)
    channels[skeleton.index(joint)] = layout
    return Skeleton(skeleton.names, skeleton.parents, skeleton.offsets, channels, skeleton.end_sites)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), joint=st.sampled_from(JOINTS), layout=st.sampled_from(LAYOUTS))
def test_a_joint_of_fewer_channels_never_spins_where_its_source_turns_calmly(seed, joint, layout):
    """A three-channel joint turning smoothly any way, onto one or two channels (the bone's direction
    through every channel singularity): no bone near it turns over 60 degrees in a frame where the
    source's turns under 20."""
    source = _wandering(joint, seed)
    target = _restricted(source.skeleton, joint, layout)
    result = retarget(source, target, feet="free")
    index = source.skeleton.index(joint)
    near = [source.skeleton.parents[index], index] + [j for j, p in enumerate(source.skeleton.parents) if p == index]
    spins = (_turns(result, near) > SPIN) & (_turns(source, near) < CALM)
    assert not spins.any(), (np.argwhere(spins)[:5], _turns(result, near).max(axis=0))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), limit=st.floats(0.1, 1.0))
def test_continued_angles_step_within_the_limit_and_keep_every_calm_frame(seed, limit):
    """Angles with jumps (a solution flipping by up to a turn) step at most ``limit`` after continuation;
    frames far from any jump keep their angle exactly."""
    rng = np.random.default_rng(seed)
    frames = 200
    angles = np.cumsum(rng.uniform(-0.5, 0.5, frames) * limit)
    jumps = rng.choice(frames - 1, 3, replace=False) + 1
    for jump in jumps:
        angles[jump:] += rng.uniform(-np.pi, np.pi)
    steps = np.full(frames - 1, limit)
    out = continued(angles, steps)
    wrapped = (np.diff(out) + np.pi) % (2 * np.pi) - np.pi
    assert np.abs(wrapped).max() <= limit + 1e-9
    far = np.ones(frames, dtype=bool)
    for jump in jumps:
        far[max(0, jump - 2 * int(np.pi / limit) - 2):jump + 2 * int(np.pi / limit) + 2] = False
    difference = (out - angles + np.pi) % (2 * np.pi) - np.pi
    assert np.abs(difference[far]).max(initial=0.0) < 1e-9


@pytest.mark.corpus
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_a_hand_turning_any_way_keeps_its_orientation_on_a_roll_and_two_channel_wrist(seed):
    """CMU's ASF hand: a one-channel elbow, a one-channel roll (``lwrist ry``, mapped as the hand) and an
    unmapped two-channel ``lhand``.  A source hand turning smoothly at random (twisting up to about 60
    degrees about its bone, bending up to 25 sideways and 70 up and down) keeps its whole orientation:
    ``lhand`` takes what the roll cannot hold, and the roll the twist."""
    if not ASF_RIG.exists():
        pytest.skip("no corpus")
    source = _wandering("LeftHand", seed, reach=(0.4, 0.17, 0.47))  # the sample's hand lies along +X
    rig = load(ASF_RIG)
    result = retarget(source, rig, feet="free")
    judged = judge(source, rig, result)
    assert judged.spins == 0
    assert np.median(judged.arm_turns["hand_l"]) < 1.0
    assert np.percentile(judged.arm_turns["hand_l"], 90) < 5.0


@pytest.mark.corpus
def test_arm_errors_are_zero_for_a_take_onto_its_own_skeleton():
    """The judge's arm twist and turn against the source: nothing where the target holds every rotation."""
    path = CORPUS / "bvh" / "fm_cmu_01_01.bvh"
    if not path.exists():
        pytest.skip("no corpus")
    clip = load(path)
    clip = Clip(clip.skeleton, clip.motion[::20], clip.frame_time * 20)
    judged = judge(clip, clip, retarget(clip, clip, feet="free"))
    assert set(judged.arm_turns) == {f"{bone}_{side}" for bone in ("upper_arm", "lower_arm", "hand") for side in "lr"}
    for errors in (*judged.arm_turns.values(), *judged.twists.values()):
        assert np.abs(errors).max() < 1e-4
