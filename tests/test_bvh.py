"""BVH reader and writer: features, malformed input, round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, MocapFormatError, Skeleton, load, save, world_positions
from mocap_addon.core.formats.bvh import bvh_layout, format_bvh, parse_bvh
from mocap_addon.core.rotations import euler_to_matrix
from tests.conftest import BVH_CORPUS, CORPUS, bvh_corpus_params, expect_format_error

TWO_JOINTS = """HIERARCHY
ROOT Hips
{
\tOFFSET 1 2 3
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 10 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 5 0
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.04
0 0 0 0 0 0 0 0 0
5 6 7 0 0 90 90 0 0
"""


def parse(text: str, **options) -> Clip:
    return parse_bvh(text.encode(), "test.bvh", **options)


def test_reads_names_parents_frames_and_end_sites():
    clip = parse(TWO_JOINTS)
    assert clip.skeleton.names == ["Hips", "Spine"]
    assert clip.skeleton.parents == [-1, 0]
    assert clip.frame_count == 2 and clip.frame_time == 0.04
    assert clip.skeleton.channels == [("tx", "ty", "tz", "rz", "rx", "ry"), ("rz", "rx", "ry")]
    np.testing.assert_array_equal(clip.skeleton.end_sites[1], [[0, 5, 0]])
    assert clip.skeleton.end_sites[0].shape == (0, 3)


def test_world_positions_by_hand():
    positions = world_positions(parse(TWO_JOINTS))
    # Frame 1: zero channels; the root's position channels replace its OFFSET.
    np.testing.assert_allclose(positions[0], [[0, 0, 0], [0, 10, 0]], atol=1e-12)
    # Frame 2: root at (5,6,7) turned 90° about Y; the spine offset (0,10,0) is unchanged by that turn.
    np.testing.assert_allclose(positions[1], [[5, 6, 7], [5, 16, 7]], atol=1e-12)


def test_position_mode_add_adds_channels_to_offset():
    positions = world_positions(parse(TWO_JOINTS, position_mode="add"))
    np.testing.assert_allclose(positions[1, 0], [6, 8, 10])
    with pytest.raises(ValueError):
        parse(TWO_JOINTS, position_mode="sideways")


def test_rotation_is_product_in_channel_order():
    text = TWO_JOINTS.replace("0 0 0 0 0 0 0 0 0\n5 6 7 0 0 90 90 0 0", "0 0 0 0 0 0 0 0 0\n0 0 0 30 40 50 0 0 0")
    clip = parse(text)
    expected = euler_to_matrix(np.radians([30, 40, 50]), "ZXY") @ np.array([0, 10, 0])
    np.testing.assert_allclose(world_positions(clip)[1, 1], expected, atol=1e-12)


def test_tolerates_real_world_text():
    text = "\ufeff" + TWO_JOINTS.replace("\n", "\r\n").replace("Frame Time: 0.04", "Frame Time: .04")
    text = text.replace("JOINT Spine", "JOINT mixamorig:Spine Upper").replace("\t", "  \t ")
    text = text.replace("MOTION", "\r\nMOTION").replace("5 6 7 0", "5e0\t6 7.0 1e-05")
    clip = parse_bvh(text.encode("utf-8"), "crlf.bvh")
    assert clip.skeleton.names == ["Hips", "mixamorig:Spine Upper"]
    assert clip.frame_time == 0.04
    assert clip.motion[1, 3] == pytest.approx(1e-05)


def test_channel_subsets_positions_on_any_joint_and_several_roots():
    text = """HIERARCHY
ROOT A
{
OFFSET 0 0 0
CHANNELS 1 Yrotation
JOINT B
{
OFFSET 1 0 0
CHANNELS 5 Zposition Xrotation Yposition Zrotation Xposition
End Site
{
OFFSET 1 0 0
}
}
}
ROOT C
{
OFFSET 0 0 5
CHANNELS 2 Xrotation Zrotation
End Site
{
OFFSET 0 1 0
}
}
MOTION
Frames: 1
Frame Time: 1
90 3 0 2 0 1 0 0
"""
    clip = parse(text)
    assert clip.skeleton.parents == [-1, 0, -1]
    assert clip.skeleton.channels[1] == ("tz", "rx", "ty", "rz", "tx")
    positions = world_positions(clip)
    # A turns 90° about Y, so B's local translation (1, 2, 3) maps to (3, 2, -1).
    np.testing.assert_allclose(positions[0, 1], [3, 2, -1], atol=1e-12)
    np.testing.assert_allclose(positions[0, 2], [0, 0, 5])


def test_long_lines_and_deep_hierarchy():
    depth = 3000
    lines = ["HIERARCHY"]
    for i in range(depth):
        lines += [("ROOT" if i == 0 else "JOINT") + f" j{i}", "{", "OFFSET 0 1 0", "CHANNELS 1 Zrotation"]
    lines += ["End Site", "{", "OFFSET 0 1 0", "}"] + ["}"] * depth
    lines += ["MOTION", "Frames: 1", "Frame Time: 0.1", " ".join(["0"] * depth)]
    clip = parse("\n".join(lines))
    assert clip.skeleton.joint_count == depth
    assert world_positions(clip)[0, -1, 1] == pytest.approx(depth)
    again = parse_bvh(format_bvh(clip).encode())
    assert again.skeleton.parents == clip.skeleton.parents


def motion_block(channels: int, frames: int) -> str:
    return f"MOTION\nFrames: {frames}\nFrame Time: 0.1\n" + "".join(
        " ".join(["0"] * channels) + "\n" for _ in range(frames))


ONE_JOINT = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n}\n"
GOOD = ONE_JOINT + motion_block(3, 3)

# (name, text, expected line, expected words in the message)
MALFORMED = [
    ("empty file", "", 1, "not a BVH"),
    ("json", '{"root":[{"name":"Hips"}]}\n', 1, "HIERARCHY"),
    ("binary", "\x00\x01\x02garbage\n", 1, "not a BVH"),
    ("no motion", ONE_JOINT, 6, "MOTION"),
    ("frames too many", GOOD.replace("Frames: 3", "Frames: 4"), 8, "Frames: says 4 but 3"),
    ("frames too few", GOOD.replace("Frames: 3", "Frames: 2"), 8, "Frames: says 2 but 3"),
    ("row too short", GOOD.replace("0 0 0\n0 0 0\n0 0 0\n", "0 0 0\n0 0\n0 0 0\n"), 11,
     "expected 3 values in frame 2, found 2"),
    ("row too long", GOOD.replace("0 0 0\n0 0 0\n0 0 0\n", "0 0 0\n0 0 0\n0 0 0 0\n"), 12,
     "expected 3 values in frame 3, found 4"),
    ("non-number", GOOD.replace("0 0 0\n0 0 0\n0 0 0\n", "0 0 0\n0 x1 0\n0 0 0\n"), 11, "'x1' is not a number"),
    ("nan", GOOD.replace("0 0 0\n0 0 0\n0 0 0\n", "0 0 0\n0 0 0\nnan 0 0\n"), 12, "not a finite number"),
    ("inf", GOOD.replace("0 0 0\n0 0 0\n0 0 0\n", "0 0 0\n-inf 0 0\n0 0 0\n"), 11, "not a finite number"),
    ("comma decimal", GOOD.replace("0 0 0\n0 0 0\n0 0 0\n", "0 0 0\n0 0,5 0\n0 0 0\n"), 11, "not a number"),
    ("missing frame time", GOOD.replace("Frame Time: 0.1\n", ""), 9, "Frame Time"),
    ("missing frames", GOOD.replace("Frames: 3\n", ""), 8, "Frames"),
    ("frames not a count", GOOD.replace("Frames: 3", "Frames: three"), 8, "frame count"),
    ("negative frame time", GOOD.replace("Frame Time: 0.1", "Frame Time: -0.1"), 9, "positive"),
    ("frame time not a number", GOOD.replace("Frame Time: 0.1", "Frame Time: fast"), 9, "not a number"),
    ("unclosed brace", GOOD.replace("}\nMOTION", "MOTION"), 6, "not closed"),
    ("extra closing brace", GOOD.replace("}\nMOTION", "}\n}\nMOTION"), 7, "closes nothing"),
    ("channel count mismatch", GOOD.replace("CHANNELS 3", "CHANNELS 4"), 5, "CHANNELS says 4 but names 3"),
    ("unknown channel", GOOD.replace("Yrotation", "Yspin"), 5, "unknown channel 'Yspin'"),
    ("duplicate channel", GOOD.replace("Yrotation", "Xrotation"), 5, "appears twice"),
    ("channels without count", GOOD.replace("CHANNELS 3 ", "CHANNELS "), 5, "count"),
    ("offset two numbers", GOOD.replace("OFFSET 0 0 0", "OFFSET 0 0"), 4, "OFFSET needs 3 numbers"),
    ("offset not a number", GOOD.replace("OFFSET 0 0 0", "OFFSET 0 zero 0"), 4, "not a number"),
    ("no offset", GOOD.replace("OFFSET 0 0 0\n", ""), 2, "has no OFFSET"),
    ("joint outside root", "HIERARCHY\nJOINT a\n{\nOFFSET 0 0 0\n}\n" + motion_block(0, 0), 2, "outside a ROOT"),
    ("root without name", GOOD.replace("ROOT a", "ROOT"), 2, "without a name"),
    ("brace missing after joint", GOOD.replace("{\nOFFSET 0 0 0", "OFFSET 0 0 0", 1), 3, "expected '{'"),
    ("end site with channels", ONE_JOINT.replace("}\n", "End Site\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n}\n}\n",
                                                1) + motion_block(3, 1), 9, "no CHANNELS"),
    ("stray keyword", GOOD.replace("OFFSET 0 0 0", "OFFSET 0 0 0\nSCALE 2"), 5, "unexpected 'SCALE 2'"),
    ("no root", "HIERARCHY\nMOTION\nFrames: 0\nFrame Time: 0.1\n", 2, "no ROOT"),
    ("end site outside joint", "HIERARCHY\nEnd Site\n{\nOFFSET 0 0 0\n}\n", 2, "outside a joint"),
]


@pytest.mark.parametrize(("text", "line", "words"), [pytest.param(t, n, w, id=i) for i, t, n, w in MALFORMED])
def test_malformed_files_raise_with_the_line(text, line, words):
    expect_format_error(parse_bvh, text, "test.bvh", line, words)


def test_malformed_cases_are_distinct_files_and_the_file_most_are_cut_from_parses():
    texts = [text for _, text, *_ in MALFORMED]
    assert len(set(texts)) == len(texts) and len({name for name, *_ in MALFORMED}) == len(texts)
    assert GOOD not in texts and parse(GOOD).frame_count == 3


def test_error_names_the_column_of_a_bad_token():
    with pytest.raises(MocapFormatError) as caught:
        parse(GOOD.replace("0 0 0\n0 0 0\n0 0 0\n", "0 0 0\n0 0 0\n0 0 zz\n"))
    assert (caught.value.line, caught.value.column) == (12, 5)


def test_lenient_mode_accepts_a_frame_count_mismatch():
    clip = parse(GOOD.replace("Frames: 3", "Frames: 5"), strict=False)
    assert clip.frame_count == 3
    assert clip.metadata["warnings"] == ["Frames: says 5 but 3 rows follow"]


@pytest.mark.parametrize("ending, line, values, rows", [
    ("5 6", 20, 2, 1), ("5 6 7 0 0 9", 20, 6, 1), ("5 6 7 0 0 9\n\n  \n", 20, 6, 1),
    ("5 6 7 0 0 90 90 0 0\n1", 21, 1, 2)])
def test_lenient_mode_drops_a_last_row_cut_short(ending, line, values, rows):
    """Issue 21, item 6: a file cut in the middle of a row loads its whole rows and says so."""
    text = TWO_JOINTS.replace("Frames: 2", "Frames: 3").replace("5 6 7 0 0 90 90 0 0\n", ending)
    with pytest.raises(MocapFormatError, match=f"test.bvh:{line}: expected 9 values in frame {rows + 1}, found"):
        parse(text)
    clip = parse(text, strict=False)
    assert clip.frame_count == rows
    np.testing.assert_array_equal(clip.motion, parse(TWO_JOINTS).motion[:rows])
    assert clip.metadata["warnings"] == [f"line {line}: frame {rows + 1} is cut short ({values} of 9 values): dropped",
                                         f"Frames: says 3 but {rows} rows follow"]


def test_lenient_mode_still_refuses_a_bad_row_before_the_last():
    text = TWO_JOINTS.replace("0 0 0 0 0 0 0 0 0\n", "0 0 0 0\n")
    with pytest.raises(MocapFormatError, match=r"test\.bvh:19: expected 9 values in frame 1, found 4"):
        parse(text, strict=False)
    with pytest.raises(MocapFormatError, match=r"test\.bvh:20: expected 9 values in frame 2, found 10"):
        parse(TWO_JOINTS.replace("90 0 0\n", "90 0 0 1\n"), strict=False)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
def test_json_named_bvh_in_the_corpus_is_refused():
    with pytest.raises(MocapFormatError, match=r"perfume_resource_a_JSON_not_bvh.bvh:1: not a BVH file"):
        load(CORPUS / "bvh" / "perfume_resource_a_JSON_not_bvh.bvh")


def test_writer_uses_tabs_and_exact_header(tmp_path):
    clip = parse(TWO_JOINTS)
    path = tmp_path / "out.bvh"
    save(clip, path)
    text = path.read_text()
    assert "\n\tJOINT Spine\n\t{\n\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n" in text
    assert "\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 5 0\n\t\t}\n" in text
    assert "\nFrames: 2\nFrame Time: 0.04\n" in text
    assert text.endswith("5.000000 6.000000 7.000000 0.000000 0.000000 90.000000 90.000000 0.000000 0.000000\n")
    assert not list(tmp_path.glob(".tmp-*"))


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    extent = max(float(np.ptp(a.reshape(-1, 3), axis=0).max()), 1e-12)
    return float(np.abs(a - b).max()) / extent


@pytest.mark.corpus
@pytest.mark.parametrize("path", bvh_corpus_params())
def test_corpus_round_trip(path, tmp_path):
    clip = load(path)
    out = tmp_path / "copy.bvh"
    save(clip, out)
    again = load(out)
    assert again.skeleton.names == clip.skeleton.names
    assert again.skeleton.channels == clip.skeleton.channels
    assert again.frame_time == clip.frame_time and again.frame_count == clip.frame_count
    np.testing.assert_allclose(again.motion, clip.motion, rtol=0, atol=0.5e-6 + 1e-12)
    for ours, theirs in zip(again.skeleton.end_sites, clip.skeleton.end_sites):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8)
    assert relative_error(world_positions(clip), world_positions(again)) < 1e-6


def test_corpus_is_present_or_skipped():
    assert BVH_CORPUS or not CORPUS.is_dir()


@st.composite
def random_clips(draw) -> Clip:
    joints = draw(st.integers(1, 8))
    parents = [-1] + [draw(st.integers(-1, j - 1)) for j in range(1, joints)]
    tokens = ["tx", "ty", "tz", "rx", "ry", "rz"]
    layouts = [tuple(draw(st.permutations(tokens))[: draw(st.integers(0, 6))]) for _ in range(joints)]
    frames = draw(st.integers(0, 5))
    offsets = draw(st.lists(st.tuples(*[st.integers(-50, 50)] * 3), min_size=joints, max_size=joints))
    sites = [np.array([[0.0, 1.0, 0.0]]) if draw(st.booleans()) else np.zeros((0, 3)) for _ in range(joints)]
    width = sum(len(layout) for layout in layouts)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    motion = np.round(rng.uniform(-400, 400, (frames, width)), 3)
    replaces = [any(c[0] == "t" for c in layout) for layout in layouts]
    skeleton = Skeleton([f"joint {i}:x" for i in range(joints)], parents, np.array(offsets, float) / 4, layouts,
                        sites, position_replaces_offset=np.array(replaces))
    return Clip(skeleton, motion, draw(st.sampled_from([1 / 30, 1 / 120, 0.0083333, 0.5])))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clip=random_clips())
def test_write_read_round_trip(clip):
    again = parse_bvh(format_bvh(clip).encode())
    # BVH lists joints depth first; map the clip's joints to the file's order.
    order = [clip.skeleton.index(name) for name in again.skeleton.names]
    assert sorted(order) == list(range(clip.skeleton.joint_count))
    assert [clip.skeleton.parents[j] for j in order] == [-1 if p < 0 else order[p] for p in again.skeleton.parents]
    assert again.frame_time == clip.frame_time
    assert again.frame_count == clip.frame_count
    for new, old in enumerate(order):
        # Every channel is kept with its values; joints with fewer than three rotations gain
        # the missing ones, at zero, so any BVH reader can read them.
        layout, written = clip.skeleton.channels[old], again.skeleton.channels[new]
        assert sum(c[0] == "r" for c in written) == 3 and set(layout) <= set(written)
        assert [c for c in written if c[0] == "t"] == [c for c in layout if c[0] == "t"]
        for channel in written:
            values = clip.channel_values(old, channel)
            expected = np.zeros(clip.frame_count) if values is None else values
            np.testing.assert_allclose(again.channel_values(new, channel), expected, atol=1e-9)
    np.testing.assert_allclose(world_positions(again), world_positions(clip)[:, order], atol=1e-6)


def test_clip_with_rest_rotations_is_baked_for_bvh():
    rest = euler_to_matrix(np.radians([[0, 0, 0], [30, 60, -20]]), "ZXY")
    skeleton = Skeleton(["a", "b"], [-1, 0], np.array([[0, 0, 0], [0, 5, 1]], float),
                        [("tx", "ty", "tz", "rx", "ry", "rz"), ("rz", "ry", "rx", "tx")],
                        [np.zeros((0, 3)), np.array([[1.0, 2.0, 3.0]])], rest_rotations=rest,
                        translation_in_rest_frame=np.array([False, True]))
    rng = np.random.default_rng(3)
    clip = Clip(skeleton, rng.uniform(-200, 200, (20, 10)), 0.1)
    again = parse_bvh(format_bvh(clip, precision=9).encode())
    assert again.skeleton.channels[1] == ("rz", "ry", "rx", "tx", "ty", "tz")
    assert relative_error(world_positions(clip), world_positions(again)) < 1e-7
    from mocap_addon.core.kinematics import end_site_positions

    np.testing.assert_allclose(end_site_positions(again)[1], end_site_positions(clip)[1], atol=1e-6)


def test_scale_channels_cannot_be_written_to_bvh():
    skeleton = Skeleton(["a"], [-1], np.zeros((1, 3)), [("rx", "s")])
    clip = Clip(skeleton, np.array([[10.0, 2.0]]), 0.1)
    with pytest.raises(ValueError, match="scales"):
        format_bvh(clip)
    unit = Clip(skeleton, np.array([[10.0, 1.0]]), 0.1)
    text = format_bvh(unit)
    assert "CHANNELS 3 Zrotation Xrotation Yrotation\n" in text and text.endswith("\n0.000000 10.000000 0.000000\n")


def test_partial_and_dofless_joints_get_three_rotation_channels():
    # As ASF bones come: dof rx ry rz (ZYX), a knee with rx only (angles past 180° kept as they are),
    # a foot with rx rz, a dofless hip joint, and a joint whose axes the common order lists otherwise.
    layouts = [("tx", "ty", "tz", "rz", "ry", "rx"), ("rx",), ("rz", "rx"), (), ("rx", "rz"), ("rz", "ry", "rx")]
    skeleton = Skeleton([f"j{n}" for n in range(6)], [-1, 0, 1, 0, 3, 4], np.ones((6, 3)), layouts)
    rng = np.random.default_rng(2)
    motion = rng.uniform(-170, 170, (5, 14))
    motion[:, 6] = [190, 200, 210, 220, 230]  # the knee
    clip = Clip(skeleton, motion, 0.1)
    assert bvh_layout(clip) == [layouts[0], ("rz", "ry", "rx"), ("rz", "ry", "rx"), ("rz", "ry", "rx"),
                                ("rx", "rz", "ry"), layouts[5]]
    again = parse_bvh(format_bvh(clip).encode())
    np.testing.assert_allclose(again.channel_values(1, "rx"), [190, 200, 210, 220, 230])
    for joint, channel in ((1, "ry"), (1, "rz"), (2, "ry"), (3, "rx"), (3, "ry"), (3, "rz"), (4, "ry")):
        assert not again.channel_values(joint, channel).any()
    np.testing.assert_allclose(world_positions(again), world_positions(clip), atol=1e-6)
