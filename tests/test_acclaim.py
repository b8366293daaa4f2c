"""Acclaim ASF/AMC: the CMU cross-format oracle, corpus round trips, units, malformed input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, MocapFormatError, Skeleton, load, save, world_positions
from mocap_addon.core.formats.acclaim import find_skeleton, parse_amc, parse_asf, read_amc, read_asf
from mocap_addon.core.kinematics import end_site_positions, rest_pose
from tests.conftest import CORPUS, bvh_corpus_params, corpus_params, expect_format_error, through_format

ACCLAIM = CORPUS / "asf_amc"
needs_corpus = pytest.mark.skipif(not ACCLAIM.is_dir(), reason="../shared/corpus is absent")


def extent(points: np.ndarray) -> float:
    return float(np.ptp(points.reshape(-1, 3), axis=0).max())


@needs_corpus
def test_cmu_01_01_matches_its_bvh_conversion_at_every_frame():
    amc = load(ACCLAIM / "fm_01_01.amc")
    bvh = load(CORPUS / "bvh" / "fm_cmu_01_01.bvh")
    assert bvh.frame_count == amc.frame_count + 1  # the BVH starts with a T-pose frame
    ours, theirs = world_positions(amc), world_positions(bvh)[1:]
    size = extent(ours)
    pairs = {"root": "Hips", "lhipjoint": "LHipJoint", "lfemur": "LeftUpLeg", "ltibia": "LeftLeg",
             "lfoot": "LeftFoot", "ltoes": "LeftToeBase", "rhipjoint": "RHipJoint", "rfemur": "RightUpLeg",
             "rtibia": "RightLeg", "rfoot": "RightFoot", "rtoes": "RightToeBase", "lowerback": "LowerBack",
             "upperback": "Spine", "thorax": "Spine1"}
    a = [amc.skeleton.index(n) for n in pairs]
    b = [bvh.skeleton.index(n) for n in pairs.values()]
    # One uniform unit factor between the readings: 1, since CMU lengths are kept as written.
    assert np.abs(ours[:, a] - theirs[:, b]).max() < 1e-5 * size
    # The conversion drops the thorax, so arms, neck and head are compared as bone vectors.
    vectors = {"upperneck": "Neck1", "head": "Head", "lhumerus": "LeftArm", "lradius": "LeftForeArm",
               "lwrist": "LeftHand", "rhumerus": "RightArm", "rradius": "RightForeArm", "rwrist": "RightHand"}
    for ours_name, their_name in vectors.items():
        j, k = amc.skeleton.index(ours_name), bvh.skeleton.index(their_name)
        ours_vector = ours[:, j] - ours[:, amc.skeleton.parents[j]]
        their_vector = theirs[:, k] - theirs[:, bvh.skeleton.parents[k]]
        assert np.abs(ours_vector - their_vector).max() < 1e-5 * size, ours_name


@needs_corpus
def test_cmu_units_give_a_human_height():
    skeleton_only = read_asf(ACCLAIM / "fm_01.asf")
    assert skeleton_only.frame_count == 0
    rotations, heads = rest_pose(skeleton_only.skeleton)
    sites = [heads[j] + (rotations[j] @ e.T).T for j, e in enumerate(skeleton_only.skeleton.end_sites)]
    points = np.vstack([heads, *[s for s in sites if len(s)]])
    height = float(np.ptp(points[:, 1])) * skeleton_only.unit_in_metres
    assert height == pytest.approx(1.564, abs=0.001)  # CMU subject 01, toes to the end of the head bone
    spec = read_asf(ACCLAIM / "fm_01.asf", length_reading="spec")
    assert spec.unit_in_metres is None and spec.metadata["length_reading"] == "spec"
    np.testing.assert_allclose(rest_pose(spec.skeleton)[1], 0.45 * heads, atol=1e-9)


@pytest.mark.parametrize("path", corpus_params("asf_amc", "*.amc", "*.AMC"))
def test_corpus_pairs_load_and_round_trip(path, tmp_path):
    clip = load(path)
    assert clip.frame_count > 500 and clip.skeleton.joint_count == 31 and clip.start_frame == 1
    save(clip, tmp_path / "copy.amc")
    assert (tmp_path / "copy.asf").is_file()
    again = load(tmp_path / "copy.amc")
    assert again.skeleton.names == clip.skeleton.names
    assert again.skeleton.channels == clip.skeleton.channels
    truth = world_positions(clip)
    assert np.abs(world_positions(again) - truth).max() < 1e-6 * extent(truth)


def test_find_skeleton_stem_rules(tmp_path):
    for asf_name, amc_name in (("walk.asf", "walk.amc"), ("07.asf", "07_03.amc"), ("male.ASF", "male.run 4.AMC")):
        (tmp_path / asf_name).write_text(":version 1.10\n")
        assert find_skeleton(tmp_path / amc_name) == str(tmp_path / asf_name)
    with pytest.raises(MocapFormatError, match="no skeleton"):
        find_skeleton(tmp_path / "other.amc")


@pytest.mark.parametrize("path", bvh_corpus_params())
def test_bvh_to_acclaim_to_bvh_keeps_world_positions(path, tmp_path):
    clip, middle, back = through_format(path, ".amc", tmp_path)
    names = ["root" if p < 0 else n.replace(" ", "_") for n, p in zip(clip.skeleton.names, clip.skeleton.parents)]
    truth = world_positions(clip)
    for result in (middle, back):
        index = [result.skeleton.index(n) for n in names]
        assert np.abs(world_positions(result)[:, index] - truth).max() < 1e-6 * extent(truth)


ASF = """# test skeleton
:version 1.10
:name test
:units
  mass 1.0
  length 1.0
  angle deg
:documentation
  hand written
:root
   order TX TY TZ RX RY RZ
   axis XYZ
   position 0 0 0
   orientation 0 0 0
:bonedata
  begin
     id 1
     name upper
     direction 0 1 0
     length 2
     axis 0 0 90 XYZ
    dof rx rz
    limits (-90 90)
           (-inf inf)
  end
  begin
     id 2
     name lower
     direction 1 0 0
     length 3
     axis 0 0 0 XYZ
    dof ry
  end
:hierarchy
  begin
    root upper
    upper lower
  end
"""
AMC = """:FULLY-SPECIFIED
:DEGREES
1
root 1 2 3 0 0 0
upper 0 90
lower 0
2
lower 90
root 1 2 3 0 0 0
upper 0 0
"""


def test_small_pair_by_hand(tmp_path):
    asf = parse_asf(ASF.encode(), "t.asf")
    values, first, degrees, notes = parse_amc(AMC.encode(), asf, "t.amc")
    assert first == 1 and degrees and notes == []
    # ASF bone order (upper: rx rz, lower: ry), whatever order the frame lists them in.
    np.testing.assert_array_equal(values[:, 6:], [[0, 90, 0], [0, 0, 90]])
    (tmp_path / "t.asf").write_text(ASF)
    (tmp_path / "t.amc").write_text(AMC)
    clip = read_amc(tmp_path / "t.amc")
    positions = world_positions(clip)
    # Frame 1: upper's axis frame is 90° about Z (its x is world y); dof rz 90 turns about that frame's z,
    # i.e. about world z: the bone (0, 2, 0) swings to (-2, 0, 0).
    np.testing.assert_allclose(positions[0], [[1, 2, 3], [1, 2, 3], [-1, 2, 3]], atol=1e-12)
    # Frame 2 (bone lines in another order): upper straight up; lower's ry 90 leaves its start alone.
    np.testing.assert_allclose(positions[1], [[1, 2, 3], [1, 2, 3], [1, 4, 3]], atol=1e-12)
    np.testing.assert_allclose(end_site_positions(clip)[2][1, 0], [1, 4, 0], atol=1e-12)
    assert clip.metadata["asf"]["limits"]["upper"] == [[-90, 90], [float("-inf"), float("inf")]]


def test_lenient_mode_holds_the_previous_value(tmp_path):
    (tmp_path / "t.asf").write_text(ASF)
    (tmp_path / "t.amc").write_text(AMC.replace("lower 90\n", ""))
    with pytest.raises(MocapFormatError, match=r"t.amc:7: frame 2 has no line for bone 'lower'"):
        read_amc(tmp_path / "t.amc")
    clip = read_amc(tmp_path / "t.amc", lenient=True)
    assert clip.metadata["warnings"] == ["bone 'lower' missing in 1 frame(s): previous values held"]
    assert clip.channel_values(2, "ry").tolist() == [0.0, 0.0]


ASF_MALFORMED = [
    ("not asf", "HIERARCHY\nROOT a\n", 1, "not an ASF file"),
    ("bad angle unit", ASF.replace("angle deg", "angle grad"), 7, "deg or rad"),
    ("units without value", ASF.replace("length 1.0", "length"), 6, "name and a value"),
    ("negative length unit", ASF.replace("length 1.0", "length -1"), 6, "positive"),
    ("bad root order", ASF.replace("order TX TY TZ RX RY RZ", "order TX TQ"), 11, "bad root order"),
    ("bad root axis", ASF.replace("   axis XYZ", "   axis XXY"), 12, "root axis"),
    ("root position short", ASF.replace("position 0 0 0", "position 0 0"), 13, "3 numbers"),
    ("direction non-number", ASF.replace("direction 0 1 0", "direction 0 up 0"), 19, "'up' is not a number"),
    ("negative length", ASF.replace("length 2", "length -2"), 20, "length must be"),
    ("bad axis order", ASF.replace("axis 0 0 90 XYZ", "axis 0 0 90 XYW"), 21, "axis order"),
    ("unknown dof", ASF.replace("dof rx rz", "dof rx rw"), 22, "unknown dof 'rw'"),
    ("repeated dof", ASF.replace("dof rx rz", "dof rx rx"), 22, "appears twice"),
    ("limit count", ASF.replace("           (-inf inf)\n", ""), 16, "1 limits for 2 dofs"),
    ("no end", ASF.replace("    dof ry\n  end\n", "    dof ry\n"), 26, "has no 'end'"),
    ("end without begin", ASF.replace(":hierarchy", "  end\n:hierarchy"), 34, "without 'begin'"),
    ("nameless bone", ASF.replace("     name lower\n", ""), 26, "without a name"),
    ("bone twice", ASF.replace("name lower", "name upper"), 26, "defined twice"),
    ("hierarchy unknown bone", ASF.replace("upper lower", "upper lowr"), 37, "unknown bone 'lowr'"),
    ("two parents", ASF.replace("    upper lower\n", "    upper lower\n    root lower\n"), 38, "two parents"),
    ("not in hierarchy", ASF.replace("    upper lower\n", ""), 26, "not in the hierarchy"),
    ("cycle", ASF.replace("    root upper\n", "    lower upper\n"), 16, "cycle"),
]

AMC_MALFORMED = [
    ("wrong value count", AMC.replace("upper 0 90", "upper 0 90 1"), 5, "needs 2 values"),
    ("unknown bone", AMC.replace("lower 0\n", "lowr 0\n"), 6, "not in the skeleton"),
    ("missing bone", AMC.replace("lower 0\n", ""), 3, "frame 1 has no line for bone 'lower'"),
    ("non-number", AMC.replace("upper 0 90", "upper 0 x9"), 5, "'x9' is not a number"),
    ("nan", AMC.replace("upper 0 90", "upper 0 nan"), 5, "not a finite number"),
    ("bone twice", AMC.replace("lower 0\n", "lower 0\nlower 0\n"), 7, "appears twice"),
    ("frame numbers jump", AMC.replace("\n2\n", "\n4\n"), 7, "frame 4 follows frame 1"),
    ("text before frames", AMC.replace(":DEGREES", "hello"), 2, "expected a frame number"),
]


@pytest.mark.parametrize(("text", "line", "words"), [pytest.param(t, n, w, id=i) for i, t, n, w in ASF_MALFORMED])
def test_malformed_asf(text, line, words):
    expect_format_error(parse_asf, text, "bad.asf", line, words)


@pytest.mark.parametrize(("text", "line", "words"), [pytest.param(t, n, w, id=i) for i, t, n, w in AMC_MALFORMED])
def test_malformed_amc(text, line, words):
    asf = parse_asf(ASF.encode(), "t.asf")
    expect_format_error(lambda data, path: parse_amc(data, asf, path), text, "bad.amc", line, words)


def test_malformed_cases_are_distinct_files_and_the_files_they_are_cut_from_parse():
    for cases, good in ((ASF_MALFORMED, ASF), (AMC_MALFORMED, AMC)):
        texts = [text for _, text, *_ in cases]
        assert len(set(texts)) == len(texts) and len({name for name, *_ in cases}) == len(texts)
        assert good not in texts
    asf = parse_asf(ASF.encode(), "t.asf")
    assert len(parse_amc(AMC.encode(), asf, "t.amc")[0]) > 0


@st.composite
def random_acclaim_clips(draw) -> Clip:
    """BVH-like clips whose joints carry random dof subsets and orders (rotations and translations)."""
    joints = draw(st.integers(2, 6))
    parents = [-1] + [draw(st.integers(0, j - 1)) for j in range(1, joints)]
    layouts = []
    for joint in range(joints):
        rotation = draw(st.permutations(["rx", "ry", "rz"]))[: draw(st.integers(0 if joint else 3, 3))]
        moving = ["tx", "ty", "tz"] if joint == 0 or draw(st.booleans()) else []
        layouts.append(tuple(moving + list(rotation)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frames = draw(st.integers(1, 4))
    width = sum(len(c) for c in layouts)
    skeleton = Skeleton([f"j{i}" for i in range(joints)], parents, rng.uniform(-10, 10, (joints, 3)), layouts,
                        [rng.uniform(-3, 3, (1, 3)) if draw(st.booleans()) else np.zeros((0, 3))
                         for _ in range(joints)], position_replaces_offset=np.arange(joints) == 0)
    return Clip(skeleton, rng.uniform(-170, 170, (frames, width)), 1 / 120)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(clip=random_acclaim_clips())
def test_write_read_round_trip(clip, tmp_path):
    save(clip, tmp_path / "h.amc", precision=9)
    again = load(tmp_path / "h.amc")
    names = ["root" if p < 0 else n for n, p in zip(clip.skeleton.names, clip.skeleton.parents)]
    index = [again.skeleton.index(n) for n in names]
    truth = world_positions(clip)
    np.testing.assert_allclose(world_positions(again)[:, index], truth, atol=1e-6 * max(extent(truth), 1))
