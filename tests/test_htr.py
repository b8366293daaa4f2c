"""Motion Analysis HTR: corpus files, the two open conventions, round trips, malformed input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, Skeleton, load, save, world_positions
from mocap_addon.core.formats.htr import format_htr, parse_htr, read_htr
from mocap_addon.core.timing import resample, split_takes
from tests.conftest import CORPUS, bvh_corpus_params, corpus_params, expect_format_error, through_format

HTR = CORPUS / "htr"
needs_corpus = pytest.mark.skipif(not HTR.is_dir(), reason="../shared/corpus is absent")


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max()) / max(float(np.ptp(a.reshape(-1, 3), axis=0).max()), 1e-12)


@pytest.mark.parametrize("path", corpus_params("htr", "*.htr", "*.HTR"))
def test_corpus_file_round_trips(path, tmp_path):
    clip = load(path)
    assert clip.frame_count > 0 and clip.skeleton.joint_count in (7, 64, 67)
    assert clip.unit_in_metres == 0.001 and clip.up_axis == "Y"
    out = tmp_path / "copy.htr"
    save(clip, out)
    again = load(out)
    assert again.skeleton.names == clip.skeleton.names
    assert again.skeleton.parents == clip.skeleton.parents
    assert again.start_frame == clip.start_frame and again.frame_time == pytest.approx(clip.frame_time)
    assert relative_error(world_positions(clip), world_positions(again)) < 1e-6


@pytest.mark.parametrize("path", bvh_corpus_params())
def test_bvh_to_htr_to_bvh_keeps_world_positions(path, tmp_path):
    clip, middle, back = through_format(path, ".htr", tmp_path)
    truth = world_positions(clip)
    assert relative_error(truth, world_positions(middle)) < 1e-6
    assert relative_error(truth, world_positions(back)) < 1e-6
    # Base frames were derived from the rest pose: each segment's Y axis runs along its bone.
    skeleton = middle.skeleton
    for joint, parent in enumerate(skeleton.parents):
        if parent >= 0 and np.linalg.norm(skeleton.offsets[joint]) > 1e-6 and len(
                [c for c, p in enumerate(skeleton.parents) if p == parent]) == 1:
            offset = skeleton.offsets[joint]
            assert abs(offset[1]) == pytest.approx(np.linalg.norm(offset), rel=1e-6)


def floor_contact(clip: Clip) -> np.ndarray:
    """Per frame, the height (Y) of the lowest foot or toe joint."""
    positions = world_positions(clip)
    feet = [j for j, n in enumerate(clip.skeleton.names) if n.endswith(("Foot", "ToeBase"))]
    return positions[:, feet, 1].min(axis=1)


@needs_corpus
def test_euler_order_is_read_as_listed():
    # Samba (716 frames, big rotations everywhere): read "ZYX" as Rz·Ry·Rx and the lowest foot
    # stays on the floor (spread 8 mm); read the other way round it wanders by ~290 mm.
    listed = floor_contact(read_htr(HTR / "gpr450_xbot_samba_mixamo.com.htr", order_reading="listed"))
    reversed_ = floor_contact(read_htr(HTR / "gpr450_xbot_samba_mixamo.com.htr", order_reading="reversed"))
    assert listed.std() < 10 and abs(listed.mean()) < 10
    assert reversed_.std() > 100
    walk = floor_contact(read_htr(HTR / "gpr450_xbot_walk_m_mixamo.com.htr"))
    walk_reversed = floor_contact(read_htr(HTR / "gpr450_xbot_walk_m_mixamo.com.htr", order_reading="reversed"))
    assert walk.std() < 0.6 * walk_reversed.std()


@needs_corpus
def test_frame_translations_are_in_the_base_frame():
    # anim1 is the only corpus file with both a base rotation (Hips: 180, 0, 90) and frame
    # translations.  Its figure lies along -Z (feet to head), so the two readings differ only in the
    # direction of travel within the plane across it.  In the two takes that travel (4.5 m in 32
    # frames, 7.7 m in 21), turned by the base rotation the hips travel straight along the toes;
    # added in the parent frame, straight along the hip line: a sprint sideways.
    def travel_along(translation: str) -> list[tuple[float, float]]:
        clip = read_htr(HTR / "gpr450_xbot_anim1.HTR", translation=translation)
        positions = world_positions(clip)
        names = clip.skeleton.names

        def across(a: np.ndarray) -> np.ndarray:  # in the plane across the figure (X, Y), unit length
            flat = a.mean(axis=0) * [1, 1, 0]
            return flat / np.linalg.norm(flat)

        out = []
        for first, last in ((313, 344), (345, 365)):
            take = positions[first:last + 1]
            joint = {n.split(":")[1]: take[:, names.index(n)] for n in names}
            toes = across(joint["LeftToeBase"] + joint["RightToeBase"] - joint["LeftFoot"] - joint["RightFoot"])
            hips = across(joint["LeftUpLeg"] - joint["RightUpLeg"])
            travel = take[-1, 0] - take[0, 0]
            assert np.linalg.norm(travel) > 4000 and abs(travel[2]) < 1
            out.append((float(travel @ toes / np.linalg.norm(travel)), float(travel @ hips / np.linalg.norm(travel))))
        return out

    for along_toes, along_hips in travel_along("rotated"):
        assert along_toes > 0.99 and abs(along_hips) < 0.1
    for along_toes, along_hips in travel_along("parent"):
        assert abs(along_toes) < 0.1 and abs(along_hips) > 0.99


@needs_corpus
def test_bone_lengths_agree_with_child_offsets():
    clip = load(HTR / "gpr450_xbot_base.HTR")
    lengths = clip.metadata["htr"]["bone_lengths"]
    names = clip.skeleton.names
    arm, forearm = names.index("mixamorig:LeftArm"), names.index("mixamorig:LeftForeArm")
    assert lengths[arm] == pytest.approx(np.linalg.norm(clip.skeleton.offsets[forearm]), rel=1e-5)
    assert lengths[arm] == pytest.approx(clip.skeleton.offsets[forearm][1], rel=1e-5)  # along BoneLengthAxis Y


@needs_corpus
def test_repeated_block_sets_are_read_as_consecutive_takes():
    # anim1 holds six sets of its 67 segment blocks (1, 246, 66, 32, 21 and 29 rows, each numbered
    # from 0): together the 395 frames its header declares.  Only the last set was once read.
    path = HTR / "gpr450_xbot_anim1.HTR"
    anim = load(path)
    assert anim.frame_count == 395 and anim.start_frame == 0 and not anim.metadata["warnings"]
    assert anim.metadata["takes"] == [0, 1, 247, 313, 345, 366]
    lines = path.read_text().splitlines()
    starts = [n for n, line in enumerate(lines) if line.strip() == "[mixamorig:Spine]"]
    assert len(starts) == 6
    for first, start in zip(anim.metadata["takes"], starts):
        row = [float(v) for v in lines[start + 2].split()]  # after the comment line: frame 0 of the set
        assert row[0] == 0
        np.testing.assert_allclose(anim.motion[first, 7:10], row[1:4])  # Spine's Tx Ty Tz
        assert anim.motion[first, 13] == row[7]  # its scale factor
    # Written back as six sets again; cut into takes; resampled, the takes move with the frames.
    text = format_htr(anim)
    assert text.count("[mixamorig:Spine]\n0.") == 6
    again = parse_htr(text.encode())
    assert again.frame_count == 395 and again.metadata["takes"] == anim.metadata["takes"]
    np.testing.assert_allclose(again.motion, anim.motion, atol=1e-8)
    takes = split_takes(anim)
    assert [t.frame_count for t in takes] == [1, 246, 66, 32, 21, 29]
    assert all(t.start_frame == 0 and t.take_starts() == [0] for t in takes)
    np.testing.assert_array_equal(takes[2].motion, anim.motion[247:313])
    assert resample(anim, anim.frame_time / 2).metadata["takes"] == [0, 2, 494, 626, 690, 732]


@needs_corpus
def test_real_world_tolerance_is_reported():
    maya = load(HTR / "gpr450_maya_export_v1.htr")
    assert any("scale factors of 0 read as 1" in w for w in maya.metadata["warnings"])
    assert np.all(maya.local_scales() == 1.0)
    walk = load(HTR / "gpr450_xbot_walk_m_mixamo.com.htr")
    assert walk.start_frame == 1 and walk.fps == 24


GOOD = """# comment line
[Header]
FileType htr
DataType HTRS
NumSegments 2
NumFrames 2
DataFrameRate 30
EulerRotationOrder ZYX
CalibrationUnits cm
RotationUnits Degrees
GlobalAxisofGravity Y
BoneLengthAxis Y
ScaleFactor 2.0
[SegmentNames&Hierarchy]
root\tGLOBAL
arm\troot
[BasePosition]
root 0 0 0 0 0 0 10
arm 0 10 0 0 0 90 5
[root]
0 1 0 0 0 90 0 1
1 2 0 0 0 0 0 1
[arm]
0 0 0 0 0 0 0 1
1 0 0 0 0 0 0 2
[EndOfFile]
"""


TWO_SETS = GOOD.replace("[EndOfFile]\n", "[root]\n0 3 0 0 0 0 0 1\n[arm]\n0 0 0 0 0 0 0 1\n[EndOfFile]\n")


def test_block_sets_by_hand():
    clip = parse_htr(TWO_SETS.encode(), "sets.htr")
    assert clip.frame_count == 3 and clip.metadata["takes"] == [0, 2]
    np.testing.assert_allclose(clip.motion[:, 0], [2, 4, 6])  # ScaleFactor 2
    assert "NumFrames says 2 but 3 frames are present" in clip.metadata["warnings"]
    # A set whose numbering continues the one before is the same take.
    text = TWO_SETS.replace("[root]\n0 3", "[root]\n2 3").replace("[arm]\n0 0 0 0 0 0 0 1\n[End",
                                                                   "[arm]\n2 0 0 0 0 0 0 1\n[End")
    continued = parse_htr(text.encode())
    assert continued.frame_count == 3 and "takes" not in continued.metadata
    expect_format_error(parse_htr, TWO_SETS.replace("[arm]\n0 0 0 0 0 0 0 1\n[End", "[End"), "bad.htr", 23,
                        "[arm] has 1 frame block(s), [root] 2")
    expect_format_error(parse_htr, TWO_SETS.replace("[arm]\n0 0 0 0 0 0 0 1\n[End", "[arm]\n1 0 0 0 0 0 0 1\n[End"),
                        "bad.htr", 28, "[arm] has 1 frames, the first block 1 (frame 0 differs)")


def test_small_file_by_hand():
    clip = parse_htr(GOOD.encode(), "hand.htr")
    positions = world_positions(clip)
    # ScaleFactor 2 doubles every length; frame 0: root at (2, 0, 0) turned 90° about Y,
    # so the arm's base offset (0, 20, 0) stays vertical.
    np.testing.assert_allclose(positions[0], [[2, 0, 0], [2, 20, 0]], atol=1e-12)
    np.testing.assert_allclose(positions[1], [[4, 0, 0], [4, 20, 0]], atol=1e-12)
    assert clip.unit_in_metres == 0.01 and clip.fps == 30 and clip.start_frame == 0
    # The arm's bone (length 5 x 2) lies along its Y axis, which the base rotation (90° about Z)
    # turns to the root's -X: the root's 90° about Y makes that +Z in frame 0; in frame 1 the
    # root is unturned and the arm's SF of 2 doubles the bone.
    from mocap_addon.core.kinematics import end_site_positions

    np.testing.assert_allclose(end_site_positions(clip)[1][:, 0], [[2, 20, 10], [-16, 20, 0]], atol=1e-12)


def test_tabs_spaces_block_order_and_missing_end():
    text = GOOD.replace("[root]\n0 1 0 0 0 90 0 1\n1 2 0 0 0 0 0 1\n", "")
    text = text.replace("[EndOfFile]\n", "[root]\n0\t1 0  0 0 90 0 1\n1 2 0 0 0 0 0 1\n")
    text = text.replace("[header]", "[HEADER]").replace("FileType", "filetype")
    clip = parse_htr(text.encode(), "shuffled.htr")
    np.testing.assert_allclose(world_positions(clip), world_positions(parse_htr(GOOD.encode())), atol=1e-12)


def test_radians_and_options_are_checked():
    radians = GOOD.replace("Degrees", "Radians").replace("0 0 90 0 1\n1 2", f"0 0 {np.pi / 2} 0 1\n1 2")
    radians = radians.replace("0 0 0 90 5", f"0 0 0 {np.pi / 2} 5")
    np.testing.assert_allclose(world_positions(parse_htr(radians.encode())),
                               world_positions(parse_htr(GOOD.encode())), atol=1e-9)
    with pytest.raises(ValueError):
        parse_htr(GOOD.encode(), order_reading="backwards")


MALFORMED = [
    ("no header", "[SegmentNames&Hierarchy]\nroot GLOBAL\n", 1, "no [Header]"),
    ("json", '{"not": "htr"}\n', 1, "not an HTR file"),
    ("bad order", GOOD.replace("EulerRotationOrder ZYX", "EulerRotationOrder ZQX"), 8, "ZQX"),
    ("two-axis order", GOOD.replace("EulerRotationOrder ZYX", "EulerRotationOrder ZY"), 8, "three axes"),
    ("fps not a number", GOOD.replace("DataFrameRate 30", "DataFrameRate fast"), 7, "not a number"),
    ("fps zero", GOOD.replace("DataFrameRate 30", "DataFrameRate 0"), 7, "positive"),
    ("bad length axis", GOOD.replace("BoneLengthAxis Y", "BoneLengthAxis W"), 12, "BoneLengthAxis"),
    ("unknown file type", GOOD.replace("FileType htr", "FileType xyz"), 3, "FileType"),
    ("parent never defined", GOOD.replace("arm\troot", "arm\tpelvis"), 16, "'pelvis' of 'arm' is never defined"),
    ("hierarchy cycle", GOOD.replace("root\tGLOBAL", "root\tarm"), 15, "cycle"),
    ("hierarchy line with three fields", GOOD.replace("arm\troot", "arm\troot extra"), 16, "child parent"),
    ("segment listed twice", GOOD.replace("arm\troot\n", "arm\troot\narm\troot\n"), 17, "listed twice"),
    ("base line too short", GOOD.replace("arm 0 10 0 0 0 90 5", "arm 0 10 0 0 0 90"), 19, "BoneLength"),
    ("base for unknown segment", GOOD.replace("arm 0 10 0 0 0 90 5", "leg 0 10 0 0 0 90 5"), 19, "unknown segment"),
    ("base non-number", GOOD.replace("arm 0 10 0 0 0 90 5", "arm 0 ten 0 0 0 90 5"), 19, "'ten' is not a number"),
    ("missing base", GOOD.replace("arm 0 10 0 0 0 90 5\n", ""), 17, "no base position for 'arm'"),
    ("frame non-number", GOOD.replace("1 2 0 0 0 0 0 1", "1 2 0 x 0 0 0 1"), 22, "'x' is not a number"),
    ("frame too few values", GOOD.replace("1 2 0 0 0 0 0 1", "1 2 0 0 0 0 1"), 22, "8 values"),
    ("missing frame in a block", GOOD.replace("[arm]\n0 0 0 0 0 0 0 1\n", "[arm]\n"), 23, "[arm] has 1 frames"),
    ("frame numbers skip", GOOD.replace("1 0 0 0 0 0 0 2", "3 0 0 0 0 0 0 2"), 25,
     "frame 3 follows frame 0"),
    ("segment without block", GOOD.replace("[arm]\n0 0 0 0 0 0 0 1\n1 0 0 0 0 0 0 2\n", ""), 16,
     "no [arm] frame block"),
    ("nan value", GOOD.replace("1 2 0 0 0 0 0 1", "1 nan 0 0 0 0 0 1"), 22, "not a finite number"),
]


@pytest.mark.parametrize(("text", "line", "words"), [pytest.param(t, n, w, id=i) for i, t, n, w in MALFORMED])
def test_malformed_htr_raises_with_the_line(text, line, words):
    expect_format_error(parse_htr, text, "bad.htr", line, words)


def test_malformed_cases_are_distinct_files_and_the_file_most_are_cut_from_parses():
    texts = [text for _, text, *_ in MALFORMED]
    assert len(set(texts)) == len(texts) and len({name for name, *_ in MALFORMED}) == len(texts)
    assert GOOD not in texts and parse_htr(GOOD.encode()).frame_count > 0


@st.composite
def random_htr_clips(draw) -> Clip:
    joints = draw(st.integers(1, 6))
    parents = [-1] + [draw(st.integers(0, j - 1)) for j in range(1, joints)]
    order = draw(st.sampled_from(["ZYX", "XYZ", "YXZ", "ZXY", "XZY", "YZX"]))
    layout = ("tx", "ty", "tz", *(f"r{c.lower()}" for c in order), "s")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frames = draw(st.integers(1, 5))
    rest = [tuple(rng.uniform(-180, 180, 3)) for _ in range(joints)]
    from mocap_addon.core.rotations import euler_to_matrix

    motion = np.concatenate([rng.uniform(-50, 50, (frames, joints, 3)), rng.uniform(-170, 170, (frames, joints, 3)),
                             rng.uniform(0.5, 2.0, (frames, joints, 1))], axis=2).reshape(frames, -1)
    skeleton = Skeleton([f"seg{i}" for i in range(joints)], parents, rng.uniform(-20, 20, (joints, 3)),
                        [layout] * joints, rest_rotations=euler_to_matrix(np.radians(rest), order),
                        translation_in_rest_frame=np.full(joints, draw(st.booleans())))
    return Clip(skeleton, motion, 1 / draw(st.sampled_from([24, 30, 120])), start_frame=draw(st.integers(0, 1)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clip=random_htr_clips(), reading=st.sampled_from(["listed", "reversed"]))
def test_write_read_round_trip(clip, reading):
    translation = "rotated" if clip.skeleton.translation_in_rest_frame[0] else "parent"
    order = "".join(c[1].upper() for c in clip.skeleton.channels[0][3:6])
    listed = order if reading == "listed" else order[::-1]
    text = format_htr(clip, order_reading=reading, translation=translation, euler_order=listed, precision=10)
    again = parse_htr(text.encode(), order_reading=reading, translation=translation)
    assert again.skeleton.names == clip.skeleton.names and again.start_frame == clip.start_frame
    np.testing.assert_allclose(world_positions(again), world_positions(clip), atol=1e-6)
    np.testing.assert_allclose(again.local_scales(), clip.local_scales(), atol=1e-9)


@needs_corpus
def test_frame_translations_are_read_by_each_files_evidence():
    # anim1 (MACFileLib): read both ways, its planted feet slide less turned by the base rotation, above all in
    # the sprint (take 313-344) whose feet would otherwise run sideways under the figure.
    anim = load(HTR / "gpr450_xbot_anim1.HTR")
    info = anim.metadata["htr"]
    assert info["translation"] == "rotated" and info["translation_chosen_by"] == "evidence"
    assert anim.skeleton.translation_in_rest_frame.all()
    slides = info["translation_slide"]
    assert slides["rotated"] < 0.8 * slides["parent"]
    assert any("turned by the base rotation" in note for note in anim.metadata["notes"])
    np.testing.assert_array_equal(world_positions(anim),
                                  world_positions(read_htr(HTR / "gpr450_xbot_anim1.HTR", translation="rotated")))
    # Files without a base rotation on a moving segment read one way only: the format notes' reading.
    walk = load(HTR / "gpr450_xbot_walk_m_mixamo.com.htr")
    assert walk.metadata["htr"]["translation"] == "parent" and "translation_slide" not in walk.metadata["htr"]
    forced = read_htr(HTR / "gpr450_xbot_anim1.HTR", translation="parent")
    assert forced.metadata["htr"]["translation"] == "parent" and "notes" not in forced.metadata


WALK = CORPUS / "bvh" / "bandai_dataset-2_walk_elderly_004.bvh"


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), reading=st.sampled_from(["rotated", "parent"]))
def test_a_walk_written_either_way_is_read_back_the_way_it_was_written(seed, reading):
    """Base frames turned at random, frame translations written in one reading: evidence finds it."""
    if not WALK.is_file():
        pytest.skip("no corpus")
    from mocap_addon.core.kinematics import rebase

    clip = load(WALK)
    clip = Clip(clip.skeleton, clip.motion[:150], clip.frame_time)
    rng = np.random.default_rng(seed)
    frames = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in clip.skeleton.names])
    frames *= np.sign(np.linalg.det(frames))[:, None, None]
    layout = ("tx", "ty", "tz", "rz", "ry", "rx", "s")
    turned = rebase(clip, frames, [layout] * clip.skeleton.joint_count, translation_in_rest_frame=reading == "rotated")
    text = format_htr(turned, translation=reading, precision=10)
    assert f"# FrameTranslations {reading}\n" in text  # our own files say how to read them...
    assert parse_htr(text.encode()).metadata["htr"]["translation_chosen_by"] == "file"
    anonymous = text.replace(f"# FrameTranslations {reading}\n", "")  # ...other exporters' do not
    back = parse_htr(anonymous.encode())
    info = back.metadata["htr"]
    assert info["translation"] == reading and info["translation_chosen_by"] == "evidence"
    slides = info["translation_slide"]
    assert slides[reading] < 0.5 * max(slides.values())  # the wrong reading slides at least twice as much
    assert relative_error(world_positions(clip), world_positions(back)) < 1e-6
