"""Canonical conversion and retargeting: limb directions, lengths, root travel, identity, round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, Skeleton, forward_kinematics, load, save, world_positions
from mocap_addon.core.body.reference import AXIS_ROTATIONS, reference_body
from mocap_addon.core.kinematics import local_transforms, rebase
from mocap_addon.core.naming import CANONICAL_JOINTS, CANONICAL_PARENTS, map_skeleton
from mocap_addon.core.retarget.transfer import MissingJointsError, figure, retarget, to_canonical
from tests.conftest import SAMPLES, corpus_files
from tests.kinematics_oracle import clip_world_matrices

NOT_HUMANOID = ("Crab", "simple", "sinusoidal", "maya_export", "JSON_not_bvh")
HUMANOID = [f for f in corpus_files("bvh", "*.bvh") + corpus_files("htr", "*.htr", "*.HTR")
            + corpus_files("asf_amc", "*.amc", "*.AMC") if not any(word in f.name for word in NOT_HUMANOID)]
# Files whose bone vectors live in the frames' translations (offsets all zero): the skeleton alone has no body.
GEOMETRY_IN_CHANNELS = ("gpr450_xbot_walk_m_mixamo.com.htr", "gpr450_xbot_base_Take_001.htr",
                        "gpr450_xbot_samba_mixamo.com.htr")
SEGMENTS = [(f"{a}_{side}", f"{b}_{side}") for side in "lr"
            for a, b in (("upper_arm", "lower_arm"), ("lower_arm", "hand"), ("upper_leg", "lower_leg"),
                         ("lower_leg", "foot"))]
CMU_BVH = "fm_cmu_01_01.bvh"


def corpus(*names: str) -> list:
    found = {f.name: f for f in HUMANOID}
    return [pytest.param(found.get(n), id=n, marks=[] if n in found else pytest.mark.skip(reason="no corpus"))
            for n in names]


def humanoid_params() -> list:
    if not HUMANOID:
        return [pytest.param(None, marks=pytest.mark.skip(reason="../shared/corpus is absent"))]
    return [pytest.param(f, id=f.name) for f in HUMANOID]


def joint_of(clip: Clip) -> dict[str, int]:
    """Canonical joint -> joint index of ``clip`` (detected mapping)."""
    return {c: clip.skeleton.index(n) for n, c in map_skeleton(clip.skeleton).items() if c is not None}


def segment_directions(clip: Clip, index: dict[str, int] | None = None) -> np.ndarray:
    """Unit directions ``(F, 8, 3)`` of the limb segments (upper arm -> lower arm -> hand, legs alike)."""
    index = joint_of(clip) if index is None else index
    positions = world_positions(clip)
    lines = np.stack([positions[:, index[b]] - positions[:, index[a]] for a, b in SEGMENTS], axis=1)
    return lines / np.linalg.norm(lines, axis=-1, keepdims=True)


def canonical_index(clip: Clip) -> dict[str, int]:
    return {n: clip.skeleton.index(n) for n in CANONICAL_JOINTS}


def worst_cosine(before: np.ndarray, after: np.ndarray) -> tuple[float, np.ndarray]:
    """Smallest cosine between ``after`` and ``before`` turned by the one best constant rotation."""
    a, b = before.reshape(-1, 3), after.reshape(-1, 3)
    u, _, vt = np.linalg.svd(b.T @ a)
    turn = u @ np.diag([1.0, 1.0, np.linalg.det(u @ vt)]) @ vt
    return float(np.min(np.sum((a @ turn.T) * b, axis=1))), turn


def assert_directions_kept(before: np.ndarray, after: np.ndarray) -> None:
    cosine, turn = worst_cosine(before, after)
    assert cosine >= 0.9999, cosine
    assert np.abs(turn - AXIS_ROTATIONS[np.argmin(np.abs(AXIS_ROTATIONS - turn).max(axis=(1, 2)))]).max() < 1e-6


@pytest.mark.parametrize("method", ["rotations", "lengths"])
@pytest.mark.parametrize("path", humanoid_params())
def test_canonical_keeps_every_limb_direction(path, method):
    clip = load(path)
    canonical = to_canonical(clip, method=method)
    assert canonical.skeleton.names[:len(CANONICAL_JOINTS)] == list(CANONICAL_JOINTS)
    assert (canonical.frame_count, canonical.frame_time, canonical.start_frame) == (
        clip.frame_count, clip.frame_time, clip.start_frame)
    assert canonical.unit_in_metres == 1.0 and canonical.up_axis == "Y"
    assert_directions_kept(segment_directions(clip), segment_directions(canonical, canonical_index(canonical)))


@pytest.mark.parametrize("path", humanoid_params())
def test_canonical_rest_is_the_reference_t_pose_in_metres(path):
    canonical = to_canonical(load(path))
    skeleton = canonical.skeleton
    assert np.allclose(skeleton.rest_rotations, np.eye(3))
    positions = forward_kinematics(Clip(skeleton, np.zeros((1, int(skeleton.channel_starts()[-1]))), 1.0)).positions[0]
    positions -= positions[skeleton.index("hips")]
    body = reference_body()
    expected = np.array([body.joints[n] - body.joints["hips"] for n in CANONICAL_JOINTS])
    np.testing.assert_allclose(positions, expected, atol=1e-12)
    for side, sign in (("l", 1.0), ("r", -1.0)):  # arms out along the side's X, legs straight down
        for a, b in (("upper_arm", "lower_arm"), ("lower_arm", "hand")):
            line = positions[skeleton.index(f"{b}_{side}")] - positions[skeleton.index(f"{a}_{side}")]
            np.testing.assert_allclose(line / np.linalg.norm(line), [sign, 0.0, 0.0], atol=1e-12)
        line = positions[skeleton.index(f"foot_{side}")] - positions[skeleton.index(f"upper_leg_{side}")]
        np.testing.assert_allclose(line / np.linalg.norm(line), [0.0, -1.0, 0.0], atol=1e-12)
    head_top = positions[skeleton.index("head")] + skeleton.end_sites[skeleton.index("head")][0]
    toes_end = positions[skeleton.index("toes_l")] + skeleton.end_sites[skeleton.index("toes_l")][0]
    assert head_top[1] - toes_end[1] == pytest.approx(0.995 * 1.75)  # metres: top of head to the toe tip


@pytest.mark.parametrize("path", corpus("vicon_male.walk-speed 4.AMC", "gpr450_xbot_samba_mixamo.com.htr"))
def test_source_lengths_in_metres(path):
    clip = load(path)
    canonical = to_canonical(clip, lengths="source")
    index, positions = joint_of(clip), world_positions(clip)[0] * clip.unit_in_metres
    out = world_positions(canonical)[0]
    for a, b in SEGMENTS:
        expected = np.linalg.norm(positions[index[b]] - positions[index[a]])
        got = np.linalg.norm(out[canonical.skeleton.index(b)] - out[canonical.skeleton.index(a)])
        assert got == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("path", corpus("bvhpy_test_freebvh.bvh", "fm_cmu_01_01.bvh", "fm_01_01.amc"))
def test_lengths_method_keeps_rest_directions_and_joint_rotations(path):
    """Method 2: the canonical rest has the source's bone directions; rotations are the source's (BVH)."""
    clip = load(path)
    canonical = to_canonical(clip, method="lengths")
    source = figure(clip, None, "source")
    index = joint_of(clip)
    rest = forward_kinematics(Clip(canonical.skeleton, np.zeros((1, int(canonical.skeleton.channel_starts()[-1]))),
                                   1.0)).positions[0]
    for a, b in SEGMENTS:
        wanted = source.body @ (source.rest_positions[index[b]] - source.rest_positions[index[a]])
        got = rest[canonical.skeleton.index(b)] - rest[canonical.skeleton.index(a)]
        assert got @ wanted / np.linalg.norm(got) / np.linalg.norm(wanted) == pytest.approx(1.0, abs=1e-12)
    if path.suffix == ".bvh":  # identity rest rotations and Y-up: joint rotations pass through unchanged
        mapping, parents = map_skeleton(clip.skeleton), clip.skeleton.parents
        source_local, canonical_local = local_transforms(clip)[0], local_transforms(canonical)[0]
        compared = 0
        for name, joint in index.items():
            parent = parents[joint]
            if name != "hips" and parent >= 0 and mapping[clip.skeleton.names[parent]] == CANONICAL_PARENTS[name]:
                np.testing.assert_allclose(canonical_local[:, canonical.skeleton.index(name)],
                                           source_local[:, joint], atol=1e-12)
                compared += 1
        assert compared >= 15


@pytest.mark.parametrize("extension", [".bvh", ".htr", ".amc"])
@pytest.mark.parametrize("method", ["rotations", "lengths"])
def test_canonical_clip_saves_and_loads_exactly(tmp_path, extension, method):
    [path] = [f for f in HUMANOID if f.name == CMU_BVH] or [pytest.skip("no corpus")]
    canonical = to_canonical(load(path), method=method)
    target = tmp_path / f"canonical{extension}"
    save(canonical, target, precision=10)
    back = load(target)
    names = back.skeleton.names
    index = [names.index("root" if n == "hips" and extension == ".amc" else n) for n in canonical.skeleton.names]
    before, after = forward_kinematics(canonical), forward_kinematics(back)
    unit = back.unit_in_metres or 1.0
    assert back.frame_count == canonical.frame_count and back.start_frame == canonical.start_frame
    np.testing.assert_allclose(after.positions[:, index] * unit, before.positions, atol=1e-8)
    if extension == ".bvh":  # the same joints, joint frames and channels (in depth-first order), values as written
        np.testing.assert_allclose(after.rotations[:, index], before.rotations, atol=1e-8)
        assert sorted(names) == sorted(canonical.skeleton.names)
        read, written = back.skeleton.channel_starts(), canonical.skeleton.channel_starts()
        for name in names:
            one, two = back.skeleton.index(name), canonical.skeleton.index(name)
            assert back.skeleton.channels[one] == canonical.skeleton.channels[two]
            np.testing.assert_allclose(back.motion[:, read[one]:read[one + 1]],
                                       canonical.motion[:, written[two]:written[two + 1]], atol=1e-9)


@pytest.mark.parametrize("method", ["rotations", "lengths"])
def test_cmu_take_gives_the_same_canonical_poses_as_asf_and_as_bvh(method):
    found = {f.name: f for f in HUMANOID}
    if "fm_01_01.amc" not in found or CMU_BVH not in found:
        pytest.skip("no corpus")
    amc = to_canonical(load(found["fm_01_01.amc"]), method=method)
    bvh = to_canonical(load(found[CMU_BVH]), method=method)
    names = amc.skeleton.names
    from_amc, from_bvh = world_positions(amc), world_positions(bvh)[1:]  # BVH frame k+1 is AMC frame k
    # Root, lower body and spine: the two files agree joint for joint (CMU's conversion drops the thorax).
    for name in ("hips", "spine_01", "spine_02", "spine_04", "upper_leg_l", "lower_leg_l", "foot_l", "toes_l",
                 "upper_leg_r", "lower_leg_r", "foot_r", "toes_r"):
        joint = names.index(name)
        assert np.abs(from_amc[:, joint] - from_bvh[:, joint]).max() < 2e-5, name  # metres
    # Every mapped limb bone points the same way in both.
    for a, b in SEGMENTS + [("upper_arm_l", "lower_arm_l"), ("neck_01", "neck_02"), ("neck_02", "head")]:
        one = from_amc[:, names.index(b)] - from_amc[:, names.index(a)]
        two = from_bvh[:, names.index(b)] - from_bvh[:, names.index(a)]
        cosine = np.sum(one * two, axis=1) / np.linalg.norm(one, axis=1) / np.linalg.norm(two, axis=1)
        assert cosine.min() > np.cos(np.radians(0.01)), (a, b)


def assert_same_poses(clip: Clip, other: Clip, tolerance: float = 1e-9) -> None:
    before, after = forward_kinematics(clip), forward_kinematics(other)
    extent = float(np.ptp(before.positions.reshape(-1, 3), axis=0).max())
    assert np.abs(after.positions - before.positions).max() <= tolerance * extent
    assert np.abs(after.rotations - before.rotations).max() <= tolerance


@pytest.mark.parametrize("path", humanoid_params())
def test_retarget_onto_itself_is_the_identity(path):
    clip = load(path)
    result = retarget(clip, clip, feet="free")
    assert result.skeleton.names == clip.skeleton.names and result.skeleton.channels == clip.skeleton.channels
    if path.name == "gpr450_xbot_anim1.HTR":  # bone translations wobble by 1e-3 mm; the target keeps frame 0's
        assert_same_poses(clip, result, tolerance=2e-6)
    else:
        assert_same_poses(clip, result)
    if path.name in GEOMETRY_IN_CHANNELS:
        with pytest.raises(ValueError, match="first frame gives the bone vectors"):
            retarget(clip, clip.skeleton, feet="free")
    elif path.name.startswith(("bandai", "gpr450_xbot_anim1")):
        # Their channel translations differ from their offsets by up to 5e-6 units: the skeleton alone is a
        # slightly different body, so directions and rotations agree to that level only.
        assert_same_poses(clip, retarget(clip, clip.skeleton, feet="free"), tolerance=1e-5)
    else:
        assert_same_poses(clip, retarget(clip, clip.skeleton, feet="free"))


TARGETS = ["vicon_male.walk-speed 4.AMC", "gpr450_xbot_anim1.HTR", "gpr450_xbot_samba_mixamo.com.htr",
           "bandai_dataset-1_walk_normal_001.bvh", "bvhio_example.bvh", "ganim_Malcolm_Gangnam-Style.bvh"]


@pytest.mark.parametrize("root", ["scale", "keep"])
@pytest.mark.parametrize("target_path", corpus(*TARGETS))
def test_retarget_onto_other_skeletons(target_path, root):
    """Limb directions kept, the target's own bone lengths, hips travel scaled by the leg-length ratio.

    Targets: an ASF skeleton with one-channel knees and elbows, an HTR with base
    rotations, an HTR whose bone vectors are in the frames (offsets all zero).
    """
    [source_path] = [f for f in HUMANOID if f.name == CMU_BVH] or [pytest.skip("no corpus")]
    source, target = load(source_path), load(target_path)
    result = retarget(source, target, root=root, feet="free")
    assert result.skeleton.names == target.skeleton.names and result.skeleton.channels == target.skeleton.channels
    assert_directions_kept(segment_directions(source), segment_directions(result, joint_of(target)))
    index, before, after = joint_of(target), world_positions(target)[0], world_positions(result)
    for a, b in SEGMENTS + [("hips", "upper_leg_l"), ("spine_04", "clavicle_r")]:
        length = np.linalg.norm(before[index[b]] - before[index[a]])
        lengths = np.linalg.norm(after[:, index[b]] - after[:, index[a]], axis=1)
        assert np.abs(lengths - length).max() <= 1e-9 * length, (a, b)
    ratio = figure(target, None, "target").leg / figure(source, None, "source").leg if root == "scale" else 1.0
    source_hips = world_positions(source)[:, joint_of(source)["hips"]]
    travel, expected = after[:, index["hips"]] - after[0, index["hips"]], ratio * (source_hips - source_hips[0])
    np.testing.assert_allclose(np.linalg.norm(travel, axis=1), np.linalg.norm(expected, axis=1),
                               atol=1e-9 * np.abs(expected).max())


@pytest.mark.parametrize("target_path", corpus("gpr450_xbot_samba_mixamo.com.htr"))
def test_target_lengths_held_in_channels_are_written_there(target_path):
    [source_path] = [f for f in HUMANOID if f.name == CMU_BVH] or [pytest.skip("no corpus")]
    target = load(target_path)
    assert np.all(target.skeleton.offsets == 0)
    result = retarget(load(source_path), target, feet="free")
    hips = joint_of(target)["hips"]
    starts = target.skeleton.channel_starts()
    for joint, layout in enumerate(target.skeleton.channels):
        columns = [int(starts[joint]) + k for k, c in enumerate(layout) if c in ("tx", "ty", "tz")]
        if joint != hips and columns:
            assert np.array_equal(result.motion[:, columns], np.broadcast_to(target.motion[0, columns],
                                                                              (result.frame_count, len(columns))))


@pytest.mark.parametrize("path", corpus("fm_01_01.amc"))
def test_one_axis_hinge_turns_its_parent_to_reach(path):
    """A BVH-style source bending its elbows and knees any way drives ASF one-channel hinges exactly."""
    source = load(path)
    turned = retarget(source, _three_axis(source.skeleton), feet="free")  # all joints three rotation channels
    rng = np.random.default_rng(7)
    wobble = turned.copy()
    starts = wobble.skeleton.channel_starts()
    for name in ("lradius", "rradius", "ltibia", "rtibia"):  # bend each hinge about another axis too
        joint = wobble.skeleton.index(name)
        wobble.motion[:, int(starts[joint]):int(starts[joint]) + 3] += rng.uniform(-25, 25, 3)
    result = retarget(wobble, source, feet="free")
    assert result.skeleton.channels[source.skeleton.index("lradius")] == ("rx",)
    index = joint_of(source)
    assert worst_cosine(segment_directions(wobble, index), segment_directions(result, index))[0] > 1 - 1e-8


def _three_axis(skeleton: Skeleton) -> Skeleton:
    three = skeleton.copy()
    three.channels = [layout if len(layout) >= 6 or layout == () else ("rx", "ry", "rz") for layout in
                      skeleton.channels]
    return three


def test_an_explicit_reference_pose_replaces_the_automatic_one():
    clip = _short(CMU_BVH)
    automatic = figure(clip, None, "source").reference
    assert_same_poses(to_canonical(clip), to_canonical(clip, reference=automatic), 1e-12)
    rest = figure(clip, None, "source", "rest").reference
    from_rest = world_positions(to_canonical(clip, reference=rest))
    assert np.abs(from_rest - world_positions(to_canonical(clip))).max() > 0.01  # CMU's rest is not a T-pose
    with pytest.raises(ValueError, match=r"reference pose must be \(31, 3, 3\)"):
        retarget(clip, clip, source_reference=np.eye(3))
    with pytest.raises(ValueError, match="only applies to method 'rotations'"):
        to_canonical(clip, method="lengths", reference=automatic)


def test_a_reference_pose_read_from_blender_is_projected_where_it_matters(monkeypatch):
    """Reference poses made from Blender's float32 bone matrices are rotations to 1e-7 only.  A joint with
    fewer channels drops the angle that would absorb that, so at gimbal lock (CMU's T-pose arm held as rz rx,
    at rx = 90 degrees) a matrix not projected to a rotation would turn rz by ~40 degrees.  What is written
    are unit quaternions: every such joint's angles must rebuild the rotation it holds."""
    import mocap_addon.core.pose as module
    from mocap_addon.core import rotations

    clip = _short(CMU_BVH)
    skew = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    rounded = figure(clip, None, "source").reference.astype(np.float32).astype(np.float64) @ (np.eye(3) + 1e-7 * skew)
    mapped = {c: n for n, c in map_skeleton(clip.skeleton).items() if c is not None}
    layouts = {"lower_arm_l": ("rx",), "lower_leg_r": ("rx",), "upper_arm_r": ("rz", "rx"), "foot_l": ("rz", "rx"),
               "hand_r": (), "lower_arm_r": ("ry", "rz")}
    channels = list(clip.skeleton.channels)
    for canonical, layout in layouts.items():
        channels[clip.skeleton.index(mapped[canonical])] = layout
    target = Skeleton(clip.skeleton.names, clip.skeleton.parents, clip.skeleton.offsets, channels,
                      clip.skeleton.end_sites)
    encoded, original = [], module.encode_joint

    def recording(layout, frame_rotations, *args, **kwargs):
        values = original(layout, frame_rotations, *args, **kwargs)
        if np.shape(frame_rotations)[-1] == 4:  # what is written (not the candidates a hinge weighs as matrices)
            written = rotations.quaternion_to_matrix(np.reshape(frame_rotations, (-1, 4)))
            encoded.append((layout, written, np.reshape(values, (-1, len(layout)))))
        return values

    monkeypatch.setattr(module, "encode_joint", recording)
    retarget(clip, target, source_reference=rounded, feet="free")
    worst = 0.0
    for layout, frame_rotations, values in encoded:
        order = "".join(c[1].upper() for c in layout if c.startswith("r"))
        if 0 < len(order) < 3:
            angles = np.radians(values[:, [n for n, c in enumerate(layout) if c.startswith("r")]])
            worst = max(worst, float(np.abs(rotations.euler_to_matrix(angles, order) - frame_rotations).max()))
    assert 0 < worst < 1e-5


def test_missing_essentials_are_named():
    [path] = [f for f in HUMANOID if f.name == CMU_BVH] or [pytest.skip("no corpus")]
    clip = load(path)
    mapping = dict(map_skeleton(clip.skeleton))
    for name, canonical in list(mapping.items()):
        if canonical in ("foot_l", "hips"):
            mapping[name] = None
    with pytest.raises(MissingJointsError, match="hips, foot_l") as caught:
        to_canonical(clip, mapping=mapping)
    assert caught.value.missing == ["hips", "foot_l"] and isinstance(caught.value, ValueError)
    with pytest.raises(MissingJointsError, match="target has no joint mapped to hips, upper_leg_l"):
        retarget(clip, clip.skeleton, target_mapping={})


def test_bad_mappings_are_refused():
    [path] = [f for f in HUMANOID if f.name == CMU_BVH] or [pytest.skip("no corpus")]
    clip = load(path)
    mapping = dict(map_skeleton(clip.skeleton))
    with pytest.raises(ValueError, match="unknown canonical joint 'tail'"):
        to_canonical(clip, mapping={**mapping, "LThumb": "tail"})
    with pytest.raises(ValueError, match="gives hand_l to both"):
        to_canonical(clip, mapping={**mapping, "LThumb": "hand_l"})
    with pytest.raises(ValueError, match="'Nope', which is not one of its joints"):
        to_canonical(clip, mapping={**mapping, "Nope": "head"})
    swapped = {**mapping, "LeftArm": "lower_arm_l", "LeftForeArm": "upper_arm_l"}
    with pytest.raises(ValueError, match="is not below"):
        to_canonical(clip, mapping=swapped)
    with pytest.raises(ValueError, match="method must be one of"):
        to_canonical(clip, method="angles")
    with pytest.raises(ValueError, match="root must be one of"):
        retarget(clip, clip, root="float")


# ---- properties -------------------------------------------------------------------------------------------

def _short(path_name: str, frames: int = 40) -> Clip:
    [path] = [f for f in HUMANOID if f.name == path_name] or [pytest.skip("no corpus")]
    clip = load(path)
    return Clip(clip.skeleton, clip.motion[::max(1, clip.frame_count // frames)], clip.frame_time)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
@pytest.mark.slow
def test_joint_frames_do_not_change_the_canonical_clip(seed):
    """Turning every joint's rest frame (HTR base rotations, Blender rolls) leaves the canonical clip alone."""
    clip = _short(CMU_BVH)
    rng = np.random.default_rng(seed)
    frames = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in clip.skeleton.names])
    frames *= np.sign(np.linalg.det(frames))[:, None, None]
    turned = rebase(clip, frames, [("tx", "ty", "tz", "rz", "rx", "ry") if p < 0 else ("rz", "rx", "ry")
                                   for p in clip.skeleton.parents])
    for method in ("rotations", "lengths"):
        assert_same_poses(to_canonical(clip, method=method), to_canonical(turned, method=method), 1e-9)
    onto_turned = retarget(clip, turned, feet="free")  # the same body, other joint frames, the same captures
    np.testing.assert_allclose(world_positions(onto_turned), world_positions(clip), atol=1e-9)
    assert_same_poses(clip, retarget(onto_turned, clip, feet="free"), 1e-9)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_forward_kinematics_agrees_with_the_model_equation(seed):
    """Forward kinematics (quaternions, a depth of the hierarchy at a time) equals the model's 4x4 products,
    with rest rotations, translations in the rest frame and scales."""
    sample = load(SAMPLES / "walk_turn.bvh")
    clip = Clip(sample.skeleton, sample.motion[::40], sample.frame_time)
    rng = np.random.default_rng(seed)
    frames = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in clip.skeleton.names])
    frames *= np.sign(np.linalg.det(frames))[:, None, None]
    turned = rebase(clip, frames, [("tx", "ty", "tz", "rz", "rx", "ry", "s") if p < 0 else ("rx", "ry", "rz", "s")
                                   for p in clip.skeleton.parents], translation_in_rest_frame=True)
    scale_columns = [start + len(layout) - 1 for start, layout in zip(turned.skeleton.channel_starts(),
                                                                      turned.skeleton.channels)]
    turned.motion[:, scale_columns] = rng.uniform(0.5, 1.5, (turned.frame_count, len(scale_columns)))
    world, expected = forward_kinematics(turned), clip_world_matrices(turned)
    np.testing.assert_allclose(world.rotations * world.scales[..., None, None], expected[..., :3, :3], atol=1e-12)
    np.testing.assert_allclose(world.positions, expected[..., :3, 3], atol=1e-9)
    assert not np.allclose(world.scales, 1.0)
    joints = [3, len(clip.skeleton.names) - 1]
    part = forward_kinematics(turned, only=joints)
    kept = sorted({a for j in joints for a in clip.skeleton.chain(j)})
    for field in ("quaternions", "positions", "scales"):  # those joints and their ancestors, the rest NaN
        np.testing.assert_array_equal(getattr(part, field)[:, kept], getattr(world, field)[:, kept])
        assert np.isnan(np.delete(getattr(part, field), kept, axis=1)).all()


def test_forward_kinematics_of_a_chain_deeper_than_the_recursion_limit():
    count = 5000  # Python's default recursion limit is 1000
    skeleton = Skeleton([f"j{n}" for n in range(count)], list(range(-1, count - 1)),
                        np.tile([0.0, 1.0, 0.0], (count, 1)), [("rz",)] * count)
    clip = Clip(skeleton, np.full((2, count), 0.01), 1 / 30)
    world = forward_kinematics(clip)
    turns = np.radians(0.01 * np.arange(1, count + 1))
    np.testing.assert_allclose(world.rotations[0, -1, :2, :2], [[np.cos(turns[-1]), -np.sin(turns[-1])],
                                                                [np.sin(turns[-1]), np.cos(turns[-1])]], atol=1e-9)
    # Each joint's offset (0, 1, 0) is turned by its parent's accumulated angle (the root's is not turned).
    ends = [0.0, 1.0] + np.cumsum(np.stack([-np.sin(turns[:-1]), np.cos(turns[:-1])], axis=1), axis=0)
    np.testing.assert_allclose(world.positions[0, 1:, :2], ends, atol=1e-9)


UPRIGHT_TURNS = [m for m in AXIS_ROTATIONS if m[1, 1] == 1 or m[2, 1] == 1]  # Y up stays Y up, or becomes Z up


@settings(max_examples=8, deadline=None)
@given(axes=st.integers(0, len(UPRIGHT_TURNS) - 1))
@pytest.mark.slow
def test_files_in_other_world_axes_come_out_the_same(axes):
    """A whole file turned into other axes (Y up facing elsewhere, Z up) gives the same canonical
    poses up to one turn about the vertical."""
    clip = _short(CMU_BVH)
    turn = UPRIGHT_TURNS[axes]
    moved = clip.copy()
    root = moved.skeleton.index("Hips")
    starts = moved.skeleton.channel_starts()
    moved.skeleton.rest_rotations[root] = turn
    moved.skeleton.offsets[root] = turn @ moved.skeleton.offsets[root]
    moved.motion[:, starts[root]:starts[root] + 3] = clip.motion[:, starts[root]:starts[root] + 3] @ turn.T
    moved = Clip(moved.skeleton, moved.motion, clip.frame_time)
    one, two = forward_kinematics(to_canonical(clip)), forward_kinematics(to_canonical(moved))
    hips = 0
    # Local rotations of every joint but the hips agree exactly; the hips' differ by one turn about Y.
    local_one = np.swapaxes(one.rotations[:, [0]], -1, -2) @ one.rotations
    local_two = np.swapaxes(two.rotations[:, [0]], -1, -2) @ two.rotations
    np.testing.assert_allclose(local_two, local_one, atol=1e-9)
    about_y = two.rotations[:, hips] @ np.swapaxes(one.rotations[:, hips], -1, -2)
    np.testing.assert_allclose(about_y, np.broadcast_to(about_y[0], about_y.shape), atol=1e-9)
    np.testing.assert_allclose(about_y[0] @ [0.0, 1.0, 0.0], [0.0, 1.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(two.positions[:, hips, 1], one.positions[:, hips, 1], atol=1e-9)
