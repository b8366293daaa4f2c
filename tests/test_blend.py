"""Two-clip blending (core.blend) and time warping (core.timewarp)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, conform, load, world_positions
from mocap_addon.core import rotations as r
from mocap_addon.core.blend.mixing import (
    blend,
    envelope,
    mask_presets,
    mask_weights,
    preset_weights,
    solve_mix,
)
from mocap_addon.core.blend.timewarp import time_warp, warp_onto
from mocap_addon.core.model import ROTATION_CHANNELS, rotation_order
from mocap_addon.core.naming import map_skeleton
from mocap_addon.core.pose import Pose, as_pose
from mocap_addon.core.retarget.transfer import retarget
from mocap_addon.core.timing import resample
from tests.conftest import CORPUS, SAMPLES

CMU = CORPUS / "bvh" / "fm_cmu_01_01.bvh"
BANDAI = CORPUS / "bvh" / "bandai_dataset-1_walk_normal_001.bvh"
needs_corpus = pytest.mark.skipif(not CMU.is_file(), reason="../shared/corpus is absent")


def extent(clip: Clip) -> float:
    return float(np.ptp(world_positions(clip).reshape(-1, 3), axis=0).max())


def pose_error(x: Clip, y: Clip) -> float:
    """Largest joint distance between two clips' poses, over the first clip's extent."""
    return float(np.abs(world_positions(x) - world_positions(y)).max()) / extent(x)


def part(clip: Clip, start: int, stop: int, step: int = 1) -> Clip:
    result = clip.copy()
    result.motion = clip.motion[start:stop:step].copy()
    result.frame_time = clip.frame_time * step
    return result


@pytest.fixture(scope="module")
def walk() -> Clip:
    return load(SAMPLES / "walk_turn.bvh")


@pytest.fixture(scope="module")
def halves(walk):
    """Two different 60-frame stretches of one skeleton's walk."""
    return part(walk, 0, 60), part(walk, 60, 120)


@pytest.fixture(scope="module")
def cmu() -> Clip:
    if not CMU.is_file():
        pytest.skip("../shared/corpus is absent")
    return part(load(CMU), 200, 1400, 2)  # 600 frames at 60 fps


def rotation_columns(clip: Clip, joint: int) -> list[int]:
    start = int(clip.skeleton.channel_starts()[joint])
    return [start + n for n, c in enumerate(clip.skeleton.channels[joint]) if c in ROTATION_CHANNELS]


def other_family(clip: Clip) -> Clip:
    """The same poses written with every three-axis joint's other Euler triple (a + 180, 180 - b, c + 180)."""
    result = clip.copy()
    for joint, layout in enumerate(clip.skeleton.channels):
        if len(rotation_order(layout)) == 3:
            first, middle, last = rotation_columns(clip, joint)
            result.motion[:, first] += 180.0
            result.motion[:, middle] = 180.0 - result.motion[:, middle]
            result.motion[:, last] += 180.0
    return result


def turned(clip: Clip, degrees: float, shift) -> Clip:
    """The clip turned about the up axis (Y) through the origin and moved by ``shift`` (a BVH root)."""
    result = clip.copy()
    yaw = r.axis_matrices("Y", np.radians(degrees))
    order = rotation_order(clip.skeleton.channels[0])
    angles = r.euler_continuity(r.matrix_to_euler(yaw @ clip.joint_rotations(0), order))
    result.motion[:, rotation_columns(clip, 0)] = np.degrees(angles)
    result.motion[:, :3] = clip.joint_translations(0) @ yaw.T + np.asarray(shift)
    return result


# End points, symmetry, equivalent encodings ---------------------------------------------------------------------

def test_end_points_are_the_clips(halves):
    a, b = halves
    assert np.array_equal(blend(a, b, 0).motion, a.motion)
    assert np.array_equal(blend(a, b, 1, root="blend").motion, b.motion)
    profile = np.where(np.arange(a.frame_count) % 3 == 0, 0.0, 1.0)
    mixed = world_positions(blend(a, b, profile, root="blend"))
    np.testing.assert_allclose(mixed[profile == 0], world_positions(a)[profile == 0], atol=1e-9 * extent(a))
    np.testing.assert_allclose(mixed[profile == 1], world_positions(b)[profile == 1], atol=1e-9 * extent(a))


@pytest.mark.parametrize("mix", [0.25, 0.5, 0.8])
def test_swapping_the_clips_mirrors_the_mix(halves, mix):
    a, b = halves
    forward, backward = blend(a, b, mix, root="blend"), blend(b, a, 1 - mix, root="blend")
    assert pose_error(forward, backward) < 1e-12
    assert pose_error(forward, a) > 1e-3 and pose_error(forward, b) > 1e-3


def test_the_other_euler_family_blends_to_the_clip_itself(halves):
    """The source's flip case: linear mixing of the two triples breaks limbs, slerp gives the clip."""
    a = halves[0]
    b = other_family(a)
    assert pose_error(b, a) < 1e-9
    naive = a.copy()
    naive.motion = 0.5 * (a.motion + b.motion)
    assert pose_error(naive, a) > 0.1
    assert pose_error(blend(a, b, 0.5), a) < 1e-6
    assert pose_error(blend(b, a, 0.3), a) < 1e-6


def test_turns_by_360_degrees_and_quaternion_sign_flips_change_nothing(halves):
    a, b = halves
    rng = np.random.default_rng(3)
    wrapped = b.copy()
    columns = [c for j in range(b.skeleton.joint_count) for c in rotation_columns(b, j)]
    wrapped.motion[:, columns] += 360.0 * rng.integers(-2, 3, (b.frame_count, len(columns)))
    order = rotation_order(b.skeleton.channels[1])
    quaternions = r.euler_to_quaternion(np.radians(b.motion[:, rotation_columns(b, 1)]), order)
    flipped = r.euler_to_quaternion(np.radians(wrapped.motion[:, rotation_columns(b, 1)]), order)
    assert np.any(np.sum(quaternions * flipped, axis=-1) < -0.999)  # the sign really flips on some frames
    for mix in (0.3, 0.5, np.linspace(0, 1, a.frame_count)):
        assert pose_error(blend(a, wrapped, mix), blend(a, b, mix)) < 1e-9
        assert pose_error(blend(a, other_family(wrapped), mix), blend(a, b, mix)) < 1e-9


def test_output_angles_are_continuous(halves):
    a, b = halves
    mixed = blend(a, other_family(b), np.linspace(0, 1, a.frame_count))
    columns = [c for j in range(a.skeleton.joint_count) for c in rotation_columns(a, j)]
    assert np.abs(np.diff(mixed.motion[:, columns], axis=0)).max() < 30.0


# Masks --------------------------------------------------------------------------------------------------------------

def test_masked_blend_leaves_other_joints_bit_identical(halves):
    a, b = halves
    names = ["LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand"]
    mixed = blend(a, b, 0.7, mask=dict.fromkeys(names, 1.0))
    starts = a.skeleton.channel_starts()
    for joint, name in enumerate(a.skeleton.names):
        columns = slice(starts[joint], starts[joint + 1])
        if name in names:
            assert not np.array_equal(mixed.motion[:, columns], a.motion[:, columns])
        else:
            assert np.array_equal(mixed.motion[:, columns], a.motion[:, columns]), name


def test_mask_weight_multiplies_the_mix(halves):
    a, b = halves
    half = blend(a, b, 1.0, mask={"LeftArm": 0.5})
    assert pose_error(half, blend(a, b, 0.5, mask={"LeftArm": 1.0})) < 1e-12


def test_mask_errors(walk):
    with pytest.raises(ValueError, match="lacks: Tentacle"):
        mask_weights(walk.skeleton, {"Tentacle": 1.0})
    with pytest.raises(ValueError, match="unknown mask preset"):
        mask_weights(walk.skeleton, "third_arm")


CMU_CANONICAL = {
    "Hips": "hips", "LowerBack": "spine_01", "Spine": "spine_02", "Spine1": "spine_04", "Neck": "neck_01",
    "Neck1": "neck_02", "Head": "head", "LeftShoulder": "clavicle_l", "LeftArm": "upper_arm_l",
    "LeftForeArm": "lower_arm_l", "LeftHand": "hand_l", "LThumb": "thumb_01_l", "LeftFingerBase": "index_01_l",
    "RightShoulder": "clavicle_r", "RightArm": "upper_arm_r", "RightForeArm": "lower_arm_r", "RightHand": "hand_r",
    "RThumb": "thumb_01_r", "RightFingerBase": "index_01_r", "LeftUpLeg": "upper_leg_l", "LeftLeg": "lower_leg_l",
    "LeftFoot": "foot_l", "LeftToeBase": "toes_l", "RightUpLeg": "upper_leg_r", "RightLeg": "lower_leg_r",
    "RightFoot": "foot_r", "RightToeBase": "toes_r"}


@needs_corpus
def test_presets_resolve_through_the_canonical_names():
    """On CMU's skeleton with its mapping typed here: folded joints follow their parents."""
    skeleton = load(CMU).skeleton
    mapping = {name: CMU_CANONICAL.get(name) for name in skeleton.names}
    presets = mask_presets()
    assert set(presets) == {"upper_body", "lower_body", "left_arm", "right_arm", "spine_head"}

    def members(key):
        weights = preset_weights(skeleton, mapping, presets[key]["joints"])
        assert set(np.unique(weights)) <= {0.0, 1.0}
        return {name for name, weight in zip(skeleton.names, weights) if weight}

    upper, lower = members("upper_body"), members("lower_body")
    assert upper.isdisjoint(lower) and upper | lower == set(skeleton.names)
    assert {"LHipJoint", "RHipJoint", "Hips", "LeftToeBase"} <= lower
    assert members("left_arm") == {"LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand", "LeftFingerBase",
                                   "LFingers", "LThumb"}
    assert members("spine_head") == {"LowerBack", "Spine", "Spine1", "Neck", "Neck1", "Head"}


def test_ground_node_above_the_hips_follows_the_hips():
    from mocap_addon.core import Skeleton

    skeleton = Skeleton(["ground", "pelvis", "chest", "thigh"], [-1, 0, 1, 1], np.zeros((4, 3)),
                        [("tx", "ty", "tz", "rz", "rx", "ry")] * 4)
    mapping = {"ground": None, "pelvis": "hips", "chest": "spine_04", "thigh": "upper_leg_l"}
    lower = mask_presets()["lower_body"]["joints"]
    assert preset_weights(skeleton, mapping, lower).tolist() == [1.0, 1.0, 0.0, 1.0]


HUMANOIDS = ["bvh/fm_cmu_01_01.bvh", "bvh/bandai_dataset-1_walk_normal_001.bvh", "bvh/ganim_Malcolm_Gangnam-Style.bvh",
             "htr/gpr450_xbot_samba_mixamo.com.htr", "asf_amc/fm_01.asf"]


@pytest.mark.parametrize("name", HUMANOIDS)
def test_named_presets_split_real_skeletons(name):
    """Through core.naming: upper and lower body split every joint; arms and spine are parts of the upper body."""
    if not (CORPUS / name).is_file():
        pytest.skip("../shared/corpus is absent")
    skeleton = load(CORPUS / name).skeleton
    mapping = map_skeleton(skeleton)

    def members(key):
        weights = mask_weights(skeleton, key)
        assert np.array_equal(weights, preset_weights(skeleton, mapping, mask_presets()[key]["joints"]))
        return {n for n, weight in zip(skeleton.names, weights) if weight}

    upper, lower, left, right, spine = (members(k) for k in ("upper_body", "lower_body", "left_arm", "right_arm",
                                                             "spine_head"))
    assert upper.isdisjoint(lower) and upper | lower == set(skeleton.names)
    assert left | right | spine <= upper and left.isdisjoint(right) and spine.isdisjoint(left | right)
    by_canonical = {c: n for n, c in mapping.items() if c}
    assert by_canonical["hand_l"] in left and by_canonical["hand_r"] in right and by_canonical["head"] in spine
    assert by_canonical["hips"] in lower and skeleton.names[0] in lower


# Time: offset, scale, frame rates, DTW -------------------------------------------------------------------------------

def test_offset_pairs_later_frames_of_b(walk):
    a = part(walk, 0, 50)
    mixed = blend(a, walk, 1, offset=30, root="blend")
    assert np.array_equal(mixed.motion, walk.motion[30:80])
    held = blend(a, part(walk, 0, 40), 1, offset=10, root="blend")  # b runs out after 30 frames: its last frame is held
    assert np.array_equal(held.motion[30:], np.repeat(walk.motion[39:40], 20, axis=0))
    assert np.array_equal(held.metadata["warp"], np.minimum(np.arange(50) + 10, 39))


def test_scale_stretches_b_over_a(walk):
    a, b = part(walk, 0, 60), part(walk, 0, 119)
    mixed = blend(a, b, 1, align="scale", root="blend")
    np.testing.assert_allclose(mixed.metadata["warp"], 2.0 * np.arange(60))
    assert np.array_equal(mixed.motion, walk.motion[0:119:2])
    with pytest.raises(ValueError, match="past b's last frame"):
        blend(a, b, 0.5, align="scale", offset=200)


def test_frame_rates_are_paired_in_time(walk):
    """b at half a's rate: its frames pair with a's in time, frames between are b resampled."""
    slow = part(walk, 0, 120, 2)
    mixed = blend(walk, slow, 1)
    np.testing.assert_allclose(mixed.metadata["warp"], np.minimum(np.arange(120) / 2, 59))
    resampled = resample(slow, walk.frame_time)
    assert resampled.frame_count == 119
    assert pose_error(part(mixed, 0, 119), resampled) < 1e-9


def warped_copy(clip: Clip, frames: int, depth: float) -> tuple[Clip, np.ndarray]:
    """``clip`` played along a smooth time warp (nearest frames), and the true b frame of every frame of ``clip``."""
    count = clip.frame_count
    u = np.arange(frames) / (frames - 1)
    source = (count - 1) * (u + depth * np.sin(2 * np.pi * u))
    copy = clip.copy()
    copy.motion = clip.motion[np.round(source).astype(np.int64)]
    return copy, np.interp(np.arange(count), source, np.arange(frames))


def test_dtw_recovers_a_smooth_time_warp_of_a_real_clip(cmu):
    warped, truth = warped_copy(cmu, 520, 0.06)
    mixed = blend(cmu, warped, 0.5, align="dtw")
    error = np.abs(mixed.metadata["warp"] - truth)
    assert np.median(error) < 1.0 and error.max() < 3.0
    # The 50/50 blend with the warped copy stays on the clip; without alignment it does not.
    assert pose_error(cmu, mixed) < 0.02
    assert pose_error(cmu, blend(cmu, warped, 0.5)) > 0.1


def test_dtw_pairs_clips_of_any_length(walk):
    """B six times as long: the part of it that best matches A; B a sixth of A: played, then looped or held."""
    short, long = part(walk, 40, 60), walk
    mixed = blend(short, long, 1.0, align="dtw", feet="free")
    assert mixed.frame_count == 20 and mixed.metadata["blend"]["time"]["match"] == "part of b"
    warp = mixed.metadata["warp"]
    assert np.all(np.diff(warp) >= 0.5 - 1e-9) and np.all(np.diff(warp) <= 2 + 1e-9)
    np.testing.assert_allclose(warp, np.arange(40, 60), atol=1.0)  # A is B's frames 40-59
    back = blend(long, short, 1.0, align="dtw", feet="free")
    assert back.frame_count == long.frame_count
    time = back.metadata["blend"]["time"]
    assert time["loops"] > 0 or time["held_from"] is not None
    assert np.all((back.metadata["warp"] >= 0) & (back.metadata["warp"] <= 19))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.integers(2, 40), st.integers(0, 2**31))
def test_time_warp_is_monotone_slope_limited_and_pairs_the_ends(count_a, count_b, seed):
    if count_b - 1 > 2 * (count_a - 1) or count_a - 1 > 2 * (count_b - 1):
        with pytest.raises(ValueError):
            time_warp(np.zeros((count_a, 2)), np.zeros((count_b, 2)))
        return
    rng = np.random.default_rng(seed)
    warp = time_warp(rng.normal(size=(count_a, 3)), rng.normal(size=(count_b, 3)))
    assert warp[0] == 0 and warp[-1] == count_b - 1
    steps = np.diff(warp)
    assert np.all(steps >= 0.5 - 1e-12) and np.all(steps <= 2.0 + 1e-12)


def test_long_sequences_are_warped_on_every_kth_frame(monkeypatch):
    """Above the cell budget the warp is found coarsely: still monotone, ends paired, near the truth."""
    from mocap_addon.core.blend import timewarp

    t = np.linspace(0, 1, 900)
    s = np.linspace(0, 1, 700)
    source = s + 0.08 * np.sin(np.pi * s)  # b's row s shows a at source(s)
    signal = lambda x: np.stack([np.sin(9 * x), np.cos(13 * x), x], axis=1)  # noqa: E731
    truth = np.interp(t, source, np.arange(700))
    exact = time_warp(signal(t), signal(source))
    monkeypatch.setattr(timewarp, "MAX_CELLS", 20_000)
    coarse = time_warp(signal(t), signal(source))
    assert coarse[0] == 0 and coarse[-1] == 699 and np.all(np.diff(coarse) >= 0)
    assert np.median(np.abs(exact - truth)) < 1.0 and np.median(np.abs(coarse - truth)) < 3.0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 70), st.booleans(), st.booleans(), st.integers(0, 2**31))
def test_open_ended_warps_stay_in_b_monotone_and_slope_limited(count_a, count_b, open_begin, open_end, seed):
    paired = not (open_begin or open_end)
    fits = count_b - 1 >= count_a // 2 and (not paired or count_a - 1 <= 2 * (count_b - 1) <= 4 * (count_a - 1))
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(count_a, 3)), rng.normal(size=(count_b, 3))
    if not fits:
        with pytest.raises(ValueError, match="cannot warp"):
            time_warp(a, b, open_begin=open_begin, open_end=open_end)
        return
    warp = time_warp(a, b, open_begin=open_begin, open_end=open_end)
    assert warp.shape == (count_a,) and warp.min() >= 0 and warp.max() <= count_b - 1
    assert open_begin or warp[0] == 0
    assert open_end or warp[-1] == count_b - 1
    steps = np.diff(warp)
    assert np.all(steps >= 0.5 - 1e-12) and np.all(steps <= 2.0 + 1e-12)


def test_the_part_of_b_that_matches_a_is_found():
    features = np.cumsum(np.random.default_rng(2).normal(size=(400, 4)), axis=0)
    np.testing.assert_array_equal(time_warp(features[150:260], features, open_begin=True, open_end=True),
                                  np.arange(150, 260))
    np.testing.assert_array_equal(warp_onto(features[150:260], features).frames, np.arange(150, 260))


def test_open_ended_warps_of_long_sequences_stay_in_a_bounded_band(monkeypatch):
    """Beyond the cell budget: a coarse warp, then the full one in a band of a few frames about it."""
    from mocap_addon.core.blend import timewarp

    t = np.linspace(0, 1, 900)
    signal = lambda x: np.stack([np.sin(9 * x), np.cos(13 * x), x], axis=1)  # noqa: E731
    s = np.linspace(-0.4, 1.3, 1500)  # b runs on both sides of a
    exact = time_warp(signal(t), signal(s), open_begin=True, open_end=True)
    bands = []
    accumulate = timewarp._accumulate
    monkeypatch.setattr(timewarp, "MAX_CELLS", 40_000)
    monkeypatch.setattr(timewarp, "_accumulate", lambda a, b, low, high: (
        bands.append(int(np.sum(np.maximum(high - low + 1, 0)))), accumulate(a, b, low, high))[1])
    coarse = time_warp(signal(t), signal(s), open_begin=True, open_end=True)
    assert max(bands) <= 40_000 and len(bands) >= 2
    truth = np.interp(t, s, np.arange(1500))
    assert np.abs(exact - truth).max() < 2.0 and np.abs(coarse - truth).max() < 3.0


def test_a_short_b_loops_when_it_cycles_and_is_held_when_it_ends_still():
    cycle = np.stack([np.sin(2 * np.pi * np.arange(95) / 30), np.cos(2 * np.pi * np.arange(95) / 30)], axis=1)
    long = np.stack([np.sin(2 * np.pi * np.arange(400) / 30 + 1.0), np.cos(2 * np.pi * np.arange(400) / 30 + 1.0)],
                    axis=1)
    warp = warp_onto(long, cycle, reach=2, shortest=10)
    assert warp.loop_frame is not None and warp.loops[-1] >= 3 and warp.held_from is None
    assert np.all((warp.frames >= 0) & (warp.frames <= 94))
    restart = np.flatnonzero(np.diff(warp.loops)) + 1  # each pass goes on from the frame after the loop frame
    assert np.all(warp.frames[restart] > warp.loop_frame) and np.all(warp.frames[restart] < warp.loop_frame + 3)
    stops = np.concatenate([cycle[:60], np.repeat(cycle[60:61], 35, axis=0)])  # comes to rest
    held = warp_onto(long, stops, reach=2, shortest=10)
    assert held.loop_frame is None and held.held_from is not None and held.frames[-1] == 94


def test_time_warp_of_a_sequence_with_itself_is_the_identity():
    features = np.cumsum(np.random.default_rng(1).normal(size=(300, 4)), axis=0)
    np.testing.assert_array_equal(time_warp(features, features), np.arange(300))


# Root modes -----------------------------------------------------------------------------------------------------------

def test_heading_mode_blends_a_turned_copy_into_the_clip(walk):
    copy = turned(walk, 70.0, [150.0, 0.0, -80.0])
    for mix in (0.3, 0.5, 1.0):
        assert pose_error(blend(walk, copy, mix, root="heading"), walk) < 1e-9
    assert pose_error(blend(walk, copy, 0.5, root="blend"), walk) > 0.1


def heading(clip: Clip, axis: int) -> np.ndarray:
    """Angle of the root's ``axis`` about the up axis (Y), per frame."""
    direction = clip.joint_rotations(0)[:, :, axis]
    return np.arctan2(direction[:, 0], direction[:, 2])


def test_root_from_one_clip_keeps_its_path_and_heading(halves):
    a, b = halves
    b = turned(b, 120.0, [30.0, 0.0, 10.0])
    flattest = int(np.argmin(np.abs(a.joint_rotations(0)[0, 1])))  # the root axis the heading is read from
    for root, source in (("a", a), ("b", b)):
        mixed = blend(a, b, 0.4, root=root)
        np.testing.assert_allclose(mixed.joint_translations(0), source.joint_translations(0), atol=1e-9)
        turn = heading(mixed, flattest) - heading(source, flattest)
        assert np.abs((turn + np.pi) % (2 * np.pi) - np.pi).max() < 1e-9
        assert pose_error(mixed, source) > 1e-3
    assert np.array_equal(blend(a, b, 1, root="b").motion, b.motion)
    assert np.array_equal(blend(a, b, 0, root="a").motion, a.motion)


# Envelope and solving the mix ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [{}, {"root": "heading"}, {"root": "a"}, {"mask": {"RightArm": 0.5,
                                                                                        "RightForeArm": 1.0}},
                                     {"offset": 7}, {"align": "scale"}])
def test_envelope_is_the_blends_joint_path(halves, options):
    a, b = halves
    b = part(turned(b, 40.0, [20.0, 0.0, 5.0]), 0, 55)
    mixes = [0.0, 0.35, 1.0, 1.2]
    paths = envelope(a, b, "RightHand", mixes, **options)
    assert paths.shape == (4, a.frame_count, 3)
    hand = a.skeleton.index("RightHand")
    for path, mix in zip(paths, mixes):
        expected = world_positions(blend(a, b, mix, **options))[:, hand]
        np.testing.assert_allclose(path, expected, atol=1e-9 * extent(a))


def test_envelope_takes_profiles(halves):
    a, b = halves
    profile = np.linspace(0, 1, a.frame_count)
    paths = envelope(a, b, a.skeleton.index("Head"), [profile, 1 - profile])
    head = a.skeleton.index("Head")
    np.testing.assert_allclose(paths[1], world_positions(blend(a, b, 1 - profile))[:, head], atol=1e-9)
    with pytest.raises(ValueError, match="profiles of 60"):
        envelope(a, b, "Head", np.zeros((2, 5)))


@pytest.mark.parametrize("planted", [0.0, 0.3712, 0.8125371, 1.0])
def test_solve_mix_recovers_a_planted_mix(halves, planted):
    a, b = halves
    hand, frame = a.skeleton.index("LeftHand"), 31
    target = world_positions(blend(a, b, planted))[frame, hand]
    mix, distance = solve_mix(a, b, "LeftHand", frame, target)
    assert abs(mix - planted) < 1e-4
    assert distance < 1e-6 * extent(a)


def test_solve_mix_out_of_reach_gives_the_nearest_mix_and_the_distance(halves):
    a, b = halves
    frame = 12
    paths = envelope(a, b, "LeftHand", np.linspace(0, 1, 2001))[:, frame]
    target = paths[700] + np.array([0.0, 300.0, 0.0])
    mix, distance = solve_mix(a, b, "LeftHand", frame, target)
    nearest = np.linalg.norm(paths - target, axis=-1)
    assert distance <= nearest.min() + 1e-9 and distance > 200.0
    assert abs(mix - np.argmin(nearest) / 2000) < 2e-3
    _, wide_distance = solve_mix(a, b, "LeftHand", frame, target, bounds=(-1.0, 2.0))
    assert wide_distance <= distance * (1 + 1e-12)  # the same optimum, reached from another grid


@pytest.mark.parametrize("options", [{}, {"root": "heading"}, {"root": "a"}, {"root": "b"}, {"offset": 7.5},
                                     {"align": "scale", "offset": 3}, {"mask": "right_arm"}, {"feet": "free"},
                                     {"align": "dtw"}])
@pytest.mark.parametrize("joint", ["LeftHand", "Head", "RightFoot"])
def test_solve_mix_reads_what_posing_the_chain_needs_and_finds_what_the_whole_clips_give(halves, options, joint,
                                                                                            monkeypatch):
    """solve_mix decodes the chain at one frame (and the body's root and moving joints everywhere) where
    nothing else is read; the answer is the one from the whole clips."""
    import mocap_addon.core.blend.mixing as blending

    a, b = halves
    shorter = Clip(b.skeleton, b.motion[5:50], b.frame_time)  # another length: the paired frames differ
    frame = 23
    target = world_positions(blend(a, shorter, 0.4, **options))[frame, a.skeleton.index(joint)] + 0.5
    fast = solve_mix(a, shorter, joint, frame, target, **options)
    calls = []
    whole = blending._read_joints
    monkeypatch.setattr(blending, "_read_joints", lambda *args: calls.append(whole(*args)))
    slow = solve_mix(a, shorter, joint, frame, target, **options)
    read = calls[0]
    assert (read is None) == (options.get("align") == "dtw" or (joint == "RightFoot" and "feet" not in options))
    assert fast[0] == pytest.approx(slow[0], abs=1e-12) and fast[1] == pytest.approx(slow[1], rel=1e-9, abs=1e-12)


def test_solve_mix_errors(halves):
    a, b = halves
    with pytest.raises(ValueError, match="outside a's 60 frames"):
        solve_mix(a, b, "LeftHand", 60, [0, 0, 0])
    with pytest.raises(ValueError, match="no joint"):
        solve_mix(a, b, "Tentacle", 0, [0, 0, 0])
    with pytest.raises(ValueError, match="bounds"):
        solve_mix(a, b, "LeftHand", 0, [0, 0, 0], bounds=(1.0, 0.0))


# Motions held as local poses (what the Blender operator reads) ----------------------------------------------------

def same_rotations(x: np.ndarray, y: np.ndarray) -> float:
    """Largest angle (radians) between two arrays of unit quaternions, whatever their signs."""
    return float(np.max(2 * np.arccos(np.clip(np.abs(np.sum(x * y, axis=-1)), 0.0, 1.0))))


@pytest.mark.parametrize("options", [{}, {"root": "heading"}, {"root": "b"}, {"mask": "upper_body"},
                                     {"offset": 7}, {"align": "scale"}, {"align": "dtw", "offset": 3}])
def test_poses_blend_as_their_clips(halves, options):
    """On clips or on their poses (or one of each), blend gives the same local pose of every joint."""
    a, b = halves
    b = part(turned(b, 40.0, [20.0, 0.0, 5.0]), 0, 55)
    profile = np.linspace(-0.2, 1.1, a.frame_count)
    expected = Pose.of(blend(a, b, profile, **options))
    for first, second in ((Pose.of(a), Pose.of(b)), (Pose.of(a), b)):
        found = blend(first, second, profile, **options)
        assert isinstance(found, Pose) and found.rotations.shape == (a.frame_count, a.skeleton.joint_count, 4)
        assert same_rotations(found.rotations, expected.rotations) < 1e-7
        np.testing.assert_allclose(found.translations, expected.translations, atol=1e-9 * extent(a))
    hand = a.skeleton.index("RightHand")
    np.testing.assert_allclose(envelope(Pose.of(a), Pose.of(b), hand, [0.3, 0.9], **options),
                               envelope(a, b, hand, [0.3, 0.9], **options), atol=1e-9 * extent(a))
    target = world_positions(blend(a, b, 0.37, **options))[20, hand]
    assert abs(solve_mix(Pose.of(a), Pose.of(b), hand, 20, target, **options)[0] - 0.37) < 1e-4


def test_a_blend_holds_only_what_the_channels_hold(halves):
    """Joints with two rotation channels or a lone translation channel: slerping two of their poses can
    turn about the missing axis; a blend of poses drops that, as encoding does."""
    a, b = halves
    layouts = {"LeftForeArm": ("rz", "rx"), "RightUpLeg": ("ry",), "Spine": ("ty", "rz", "rx", "ry")}
    reduced = [layouts.get(name, layout) for name, layout in zip(a.skeleton.names, a.skeleton.channels)]
    a, b = conform(a, reduced), conform(b, reduced)
    rng = np.random.default_rng(4)
    for name in layouts:
        b.motion[:, rotation_columns(b, b.skeleton.index(name))] += rng.uniform(-90, 90, (1, 3))[:, :len(
            rotation_columns(b, b.skeleton.index(name)))]
    b.skeleton.offsets = b.skeleton.offsets * 1.2  # another body under the same names
    expected = Pose.of(blend(a, b, 0.5))
    raw = Pose.of(a).toward(Pose.of(b), np.full((a.frame_count, a.skeleton.joint_count), 0.5))
    assert same_rotations(raw.rotations, expected.rotations) > 1e-3  # the slerp alone turns about lost axes
    forearm = a.skeleton.index("LeftForeArm")  # and moves joints that cannot move, halfway to b's offsets
    np.testing.assert_allclose(raw.translations[:, forearm] - expected.translations[:, forearm],
                               np.broadcast_to(0.1 * a.skeleton.offsets[forearm], (a.frame_count, 3)), atol=1e-9)
    found = blend(Pose.of(a), Pose.of(b), 0.5)
    assert same_rotations(found.rotations, expected.rotations) < 1e-7
    np.testing.assert_allclose(found.translations, expected.translations, atol=1e-9 * extent(a))
    np.testing.assert_array_equal(found.scale_values(), expected.scale_values())


def test_a_pose_a_lends_its_first_frame_to_a_retarget():
    """B on another skeleton is retargeted onto A's first frame (bone vectors held in the frames, as in
    Maya's HTR), whether A is a clip or a pose, and whether B is a clip or a pose."""
    samba_path = CORPUS / "htr" / "gpr450_xbot_samba_mixamo.com.htr"
    if not (samba_path.is_file() and CMU.is_file()):
        pytest.skip("../shared/corpus is absent")
    samba = part(load(samba_path), 0, 40)
    cmu = part(load(CMU), 0, 40)
    cmu.frame_time = samba.frame_time
    expected = Pose.of(blend(samba, cmu, 0.5))
    for first, second in ((Pose.of(samba), cmu), (Pose.of(samba), Pose.of(cmu)), (samba, Pose.of(cmu))):
        found = as_pose(blend(first, second, 0.5))
        assert same_rotations(found.rotations, expected.rotations) < 1e-6
        np.testing.assert_allclose(found.translations, expected.translations, atol=1e-6 * extent(samba))


# Options and errors ------------------------------------------------------------------------------------------------

def test_bad_options_are_refused(halves):
    a, b = halves
    with pytest.raises(ValueError, match="align"):
        blend(a, b, 0.5, align="guess")
    with pytest.raises(ValueError, match="root"):
        blend(a, b, 0.5, root="world")
    with pytest.raises(ValueError, match="one per frame"):
        blend(a, b, np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        blend(a, b, float("nan"))


@settings(max_examples=30, deadline=None)
@given(st.floats(-0.5, 1.5), st.integers(0, 2**31))
def test_symmetry_on_random_poses(walk, mix, seed):
    """Any two pose sequences on one skeleton: swapping the clips mirrors the mix."""
    rng = np.random.default_rng(seed)
    a, b = part(walk, 0, 8), part(walk, 8, 16)
    for clip in (a, b):
        clip.motion = clip.motion + rng.uniform(-180, 180, clip.motion.shape)
    assert pose_error(blend(a, b, mix, root="blend"), blend(b, a, 1 - mix, root="blend")) < 1e-9


# Clips on two skeletons --------------------------------------------------------------------------------------------

def test_clips_on_two_skeletons_blend():
    """A CMU take and a Bandai walk: B is retargeted onto A's skeleton first, then blended."""
    if not BANDAI.is_file():
        pytest.skip("../shared/corpus is absent")
    cmu = part(load(CMU), 0, 600, 4)  # 30 fps like the Bandai take
    bandai = load(BANDAI)
    half = blend(cmu, bandai, 0.5, root="heading")
    assert half.skeleton.names == cmu.skeleton.names and half.frame_count == cmu.frame_count
    assert np.all(np.isfinite(half.motion))
    assert np.array_equal(blend(cmu, bandai, 0.0).motion, cmu.motion)
    for feet in ("planted", "free"):  # at mix 1, b on a's body: its retarget, feet as the blend's
        onto = retarget(bandai, cmu, feet=feet)
        assert pose_error(part(onto, 0, cmu.frame_count), cmu) > 0.01
        at_b = blend(cmu, bandai, 1.0, feet=feet, root="blend")
        assert pose_error(at_b, part(onto, 0, cmu.frame_count)) < 1e-4  # rates differ
    backwards = blend(bandai, cmu, 0.5)
    assert backwards.skeleton.names == bandai.skeleton.names
