"""Hostile input (issue 11, item 8): each reproducer of the fuzzing report, as a test.

Malformed numbers and counts become ``MocapFormatError`` with a line; nothing
non-finite is accepted; what the writers write, the readers read (or the
writers refuse with ``MocapWriteError``); time and memory stay linear in the
input.  ``test_fuzz.py`` keeps a seeded mutation campaign in the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from mocap_addon.core import Clip, MocapFormatError, MocapWriteError, Skeleton, load, save, world_positions
from mocap_addon.core.formats.acclaim import parse_amc, parse_asf, read_asf
from mocap_addon.core.formats.bvh import format_bvh, parse_bvh
from mocap_addon.core.formats.htr import format_htr, parse_htr
from mocap_addon.core.formats.textio import format_rows
from tests.conftest import REPO, expect_format_error
from tests.test_acclaim import AMC, ASF
from tests.test_bvh import TWO_JOINTS
from tests.test_htr import GOOD as HTR

MANY_NINES = "9" * 5000  # past Python's 4,300-digit limit for int()


def amc_parser(data: bytes, path: str):
    return parse_amc(data, parse_asf(ASF.encode(), "t.asf"), path)


# (name, parser, text, line, words in the message)
REFUSED = [
    ("BVH Frames as a Unicode digit", parse_bvh, TWO_JOINTS.replace("Frames: 2", "Frames: ²"), 17, "frame count"),
    ("BVH CHANNELS count as a Unicode digit", parse_bvh, TWO_JOINTS.replace("CHANNELS 3", "CHANNELS ³"), 9, "count"),
    ("BVH Frames of 5,000 digits", parse_bvh, TWO_JOINTS.replace("Frames: 2", f"Frames: {MANY_NINES}"), 17,
     "too large"),
    ("BVH OFFSET 1e400", parse_bvh, TWO_JOINTS.replace("OFFSET 0 10 0", "OFFSET 0 1e400 0"), 8, "too large"),
    ("BVH OFFSET of 400 digits", parse_bvh, TWO_JOINTS.replace("OFFSET 0 10 0", f"OFFSET 0 {'9' * 400} 0"), 8,
     "too large"),
    ("BVH denormal Frame Time", parse_bvh, TWO_JOINTS.replace("0.04", "4.9e-324"), 18,
     "frame rate would pass the limit"),
    ("BVH motion value 1e400", parse_bvh, TWO_JOINTS.replace("5 6 7", "5e400 6 7"), 20, "'5e400' is too large"),
    ("HTR DataFrameRate 1e400", parse_htr, HTR.replace("DataFrameRate 30", "DataFrameRate 1e400"), 7, "too large"),
    ("HTR denormal DataFrameRate", parse_htr, HTR.replace("DataFrameRate 30", "DataFrameRate 4.9e-324"), 7,
     "frame time would pass the limit"),
    ("HTR ScaleFactor 1e400", parse_htr, HTR.replace("ScaleFactor 2.0", "ScaleFactor 1e400"), 13, "too large"),
    ("HTR ScaleFactor overflowing the lengths", parse_htr,
     HTR.replace("ScaleFactor 2.0", "ScaleFactor 1e5").replace("arm 0 10 0", "arm 0 1e5 0"), 13, "overflow"),
    ("HTR frame value 2e400", parse_htr, HTR.replace("1 2 0 0 0 0 0 1", "1 2e400 0 0 0 0 0 1"), 22, "too large"),
    ("HTR frame number beyond 10^9", parse_htr, HTR.replace("0 1 0 0 0 90 0 1\n1 2", "1e9 1 0 0 0 90 0 1\n1e9 2"),
     21, "beyond"),
    ("HTR missing section names the last line", parse_htr, HTR.replace("[BasePosition]", "[Elsewhere]"), 26,
     "no [BasePosition] section"),
    ("ASF direction inf", parse_asf, ASF.replace("direction 0 1 0", "direction 0 inf 0"), 19, "not a finite"),
    ("ASF axis inf", parse_asf, ASF.replace("axis 0 0 90 XYZ", "axis 0 inf 90 XYZ"), 21, "not a finite"),
    ("ASF root position inf", parse_asf, ASF.replace("position 0 0 0", "position inf 0 0"), 13, "not a finite"),
    ("ASF root orientation 1e400", parse_asf, ASF.replace("orientation 0 0 0", "orientation 0 1e400 0"), 14,
     "too large"),
    ("ASF length unit inf", parse_asf, ASF.replace("length 1.0", "length inf"), 6, "not a finite"),
    ("ASF length unit too small for a unit in metres", parse_asf, ASF.replace("length 1.0", "length 1e-320"), 6,
     "too small"),
    ("ASF mass unit 1e400", parse_asf, ASF.replace("mass 1.0", "mass 1e400"), 5, "too large"),
    ("ASF bone length 1e400", parse_asf, ASF.replace("length 2", "length 1e400"), 20, "too large"),
    ("AMC first frame number a Unicode digit", amc_parser, AMC.replace("\n1\n", "\n¹\n"), 3,
     "expected a frame number"),
    ("AMC later frame number a Unicode digit", amc_parser, AMC.replace("\n2\n", "\n¹\n"), 7, "not in the skeleton"),
    ("AMC frame number of 5,000 digits", amc_parser, AMC.replace("\n1\n", f"\n{MANY_NINES}\n"), 3, "too large"),
    ("AMC 1e400 on the line-by-line path", amc_parser, AMC.replace("lower 90\nroot", "lower 1e400\nroot"), 8,
     "too large"),
    ("AMC 1e400 on the bulk path", amc_parser,
     AMC.replace("lower 90\nroot 1 2 3 0 0 0\nupper 0 0", "root 1 2 3 0 0 0\nupper 0 0\nlower 1e400"), 10,
     "too large"),
    ("AMC empty", amc_parser, "", 1, "no AMC header"),
    # Finite but huge: forward kinematics would overflow (issue 26); the limit is 1e9.
    ("BVH OFFSET 1e308", parse_bvh, TWO_JOINTS.replace("OFFSET 0 10 0", "OFFSET 0 1e308 0"), 8, "limit is 1e+09"),
    ("BVH OFFSET just past the limit", parse_bvh, TWO_JOINTS.replace("OFFSET 0 10 0", "OFFSET 0 -1000000000.5 0"), 8,
     "limit is 1e+09"),
    ("BVH motion value 1e308 (plain digits)", parse_bvh, TWO_JOINTS.replace("5 6 7", f"5 6 {'9' * 15}"), 20,
     "limit is 1e+09"),
    ("BVH motion value 1e308 (exponent)", parse_bvh, TWO_JOINTS.replace("5 6 7", "5 6 1e308"), 20, "limit is 1e+09"),
    ("BVH Frame Time 1e-12", parse_bvh, TWO_JOINTS.replace("0.04", "1e-12"), 18, "frame rate would pass the limit"),
    ("HTR frame value 1e308", parse_htr, HTR.replace("1 2 0 0 0 0 0 1", "1 2e307 0 0 0 0 0 1"), 22, "limit is 1e+09"),
    ("HTR base position 1e308", parse_htr, HTR.replace("arm 0 10 0", "arm 0 1e308 0"), 19, "limit is 1e+09"),
    ("HTR radians turned to degrees past the limit", parse_htr,
     HTR.replace("Units Degrees", "Units Radians").replace("1 2 0 0 0 0 0 1", "1 2 0 0 9e8 0 0 1"), 13,
     "overflow"),
    ("ASF length unit tiny", parse_asf, ASF.replace("length 1.0", "length 1e-300"), 6, "too small"),
    ("ASF direction 1e308", parse_asf, ASF.replace("direction 0 1 0", "direction 0 1e308 0"), 19, "limit is 1e+09"),
    ("AMC 1e308 on the bulk path", amc_parser,
     AMC.replace("lower 90\nroot 1 2 3 0 0 0\nupper 0 0", "root 1 2 3 0 0 0\nupper 0 0\nlower 1e308"), 10,
     "limit is 1e+09"),
    ("AMC 1e308 on the line-by-line path", amc_parser, AMC.replace("lower 90\nroot", "lower 1e308\nroot"), 8,
     "limit is 1e+09"),
    ("AMC whitespace only", amc_parser, "  \n\n \t\n", 1, "no AMC header"),
]


@pytest.mark.parametrize(("parse", "text", "line", "words"),
                         [pytest.param(p, t, n, w, id=i) for i, p, t, n, w in REFUSED])
def test_hostile_values_are_format_errors_with_a_line(parse, text, line, words):
    expect_format_error(parse, text, "hostile", line, words)


def test_bad_values_are_located_by_column():
    error = expect_format_error(parse_bvh, TWO_JOINTS.replace("5 6 7 0", "5 6 7e400 0"), "c.bvh", 20, "too large")
    assert error.column == 5
    error = expect_format_error(amc_parser, AMC.replace("upper 0 90", "upper 1 ⁹0"), "c.amc", 5, "not a number")
    assert error.column == 9  # the value's column, not where its text first appears in the line


def test_declared_counts_beyond_any_float_are_only_warnings():
    clip = parse_htr(HTR.replace("NumFrames 2", "NumFrames 1e400").replace("NumSegments 2", "NumSegments 1e400")
                     .encode(), "counts.htr")
    assert clip.frame_count == 2
    assert clip.metadata["warnings"] == ["NumFrames says 1e400 but 2 frames are present",
                                         "NumSegments says 1e400 but 2 segments are listed"]


def test_asf_limits_alone_may_be_infinite():
    asf = parse_asf(ASF.encode(), "t.asf")
    assert asf.bones[1].limits == [(-90.0, 90.0), (-np.inf, np.inf)]


def test_spec_length_unit_overflowing_the_lengths_is_refused(tmp_path):
    (tmp_path / "big.asf").write_text(ASF.replace("length 1.0", "length 1e5").replace("length 2", "length 1e5"))
    read_asf(tmp_path / "big.asf")  # CMU reading: lengths kept as written
    with pytest.raises(MocapFormatError, match=r"big.asf:6: lengths overflow"):
        read_asf(tmp_path / "big.asf", length_reading="spec")


@pytest.mark.parametrize("extension", [".bvh", ".htr", ".amc"])
def test_carriage_return_line_ends_lose_nothing(extension, tmp_path):
    text = {".bvh": TWO_JOINTS, ".htr": HTR, ".amc": AMC}[extension]
    (tmp_path / "t.asf").write_text(ASF)
    (tmp_path / f"t{extension}").write_bytes(text.encode())
    (tmp_path / f"mac{extension}").write_bytes(text.replace("\n", "\r").encode())
    (tmp_path / "mac.asf").write_bytes(ASF.replace("\n", "\r").encode())
    unix, mac = load(tmp_path / f"t{extension}"), load(tmp_path / f"mac{extension}")
    assert mac.frame_count == unix.frame_count == 2  # AMC used to load 0 frames
    np.testing.assert_array_equal(mac.motion, unix.motion)


def test_an_amc_with_a_header_and_no_frames_is_an_empty_clip():
    values, _, degrees, notes = amc_parser(b":FULLY-SPECIFIED\n:DEGREES\n", "header.amc")
    assert values.shape == (0, 9) and degrees and notes == []


# --- messages ------------------------------------------------------------------------------------------------

HUGE = "x" * 1_000_000


@pytest.mark.parametrize(("parse", "text"), [
    (parse_bvh, TWO_JOINTS.replace("Yrotation\n\tJOINT", f"Y{HUGE}\n\tJOINT")),
    (parse_bvh, TWO_JOINTS.replace("JOINT Spine\n\t{", f"JOINT {HUGE}\n")),
    (parse_bvh, TWO_JOINTS.replace("5 6 7", f"5 6 {HUGE}")),
    (parse_htr, HTR.replace("arm\troot", f"arm\t{HUGE}")),
    (parse_htr, HTR.replace("1 2 0 0 0 0 0 1", f"1 2 0 0 0 0 0 {HUGE}")),
    (parse_asf, ASF.replace("dof ry", f"dof {HUGE}")),
    (amc_parser, AMC.replace("lower 0\n", f"{HUGE} 0\n")),
])
def test_messages_quote_a_huge_token_briefly(parse, text):
    with pytest.raises(MocapFormatError) as caught:
        parse(text.encode(), "long")
    assert caught.value.line is not None and len(str(caught.value)) < 200, str(caught.value)[:300]


# --- writers: what we write, we read back; or we refuse before writing ---------------------------------------


def clip_with(values: dict[str, float] | None = None, **skeleton_options) -> Clip:
    """A two-joint clip (root with positions, child with rotations), two frames."""
    skeleton = Skeleton(["Hips", "Spine"], [-1, 0], [[0, 0, 0], [0, 10, 0]],
                        [("tx", "ty", "tz", "rz", "rx", "ry"), ("rz", "rx", "ry")], [[], [[0, 5, 0]]],
                        **skeleton_options)
    motion = np.array([[1.0, 2, 3, 10, 20, 30, 40, 50, 60], [4.0, 5, 6, 15, 25, 35, 45, 55, 65]])
    for key, value in (values or {}).items():
        frame, column = map(int, key.split(","))
        motion[frame, column] = value
    return Clip(skeleton, motion, 1 / 30)


def test_rows_are_written_exactly_however_large():
    values = [1.8e303, -1e-9, 0.5, 1e15, 123456789.123456789]
    text = format_rows(np.array([values]), 8)
    # np.round first gave inf past ~1e302 and moved 1e15 by an ulp (0.125): 1e15 degrees became another angle
    assert [float(v) for v in text.split()] == [1.8e303, 0.0, 0.5, 1e15, round(123456789.123456789, 8)]
    assert "-" not in text


@pytest.mark.parametrize("extension", [".bvh", ".htr", ".amc"])
def test_large_values_within_the_limit_round_trip(extension, tmp_path):
    clip = clip_with({"1,0": 9.9e8, "0,2": -5e8})
    save(clip, tmp_path / f"big{extension}")
    again = load(tmp_path / f"big{extension}")
    root = again.skeleton.names.index("root" if extension == ".amc" else "Hips")
    np.testing.assert_allclose(world_positions(again)[:, root], world_positions(clip)[:, 0], rtol=1e-9)


@pytest.mark.parametrize("extension", [".bvh", ".htr", ".amc"])
@pytest.mark.parametrize(("what", "clip"), [
    ("channel", lambda: clip_with({"1,7": np.nan})),
    ("channel", lambda: clip_with({"0,0": np.inf})),
    ("channel", lambda: clip_with({"1,0": 1.8e303})),
    ("offset", lambda: Clip(Skeleton(["a"], [-1], [[np.inf, 0, 0]], [("rx",)]), np.zeros((1, 1)), 1 / 30)),
])
def test_non_finite_values_are_refused_before_writing(extension, what, clip, tmp_path):
    with pytest.raises(MocapWriteError, match=f"{what}.* is not a finite number within 1e\\+09"):
        save(clip(), tmp_path / f"nan{extension}")
    assert list(tmp_path.iterdir()) == []


def test_frame_times_that_overflow_the_rate_are_refused():
    skeleton = Skeleton(["a"], [-1], [[0, 0, 0]], [()])
    for frame_time in (4.9e-324, 5e-309, np.inf, 0.0, np.nan):
        with pytest.raises(ValueError, match="frame time"):
            Clip(skeleton, np.zeros((1, 0)), frame_time)
    with pytest.raises(MocapWriteError, match="too short"):
        format_htr(Clip(skeleton, np.zeros((1, 0)), 5.5626846463e-309))  # its rate to 10 digits overflows
    with pytest.raises(MocapWriteError, match="too long"):  # the readers refuse it
        format_htr(Clip(skeleton, np.zeros((1, 0)), 1e300))
    slow = Clip(skeleton, np.zeros((1, 0)), 1e8)
    assert parse_htr(format_htr(slow).encode()).frame_time == pytest.approx(1e8)


def test_htr_keeps_tiny_scales_and_refuses_no_frames():
    layout = ("tx", "ty", "tz", "rz", "ry", "rx", "s")
    clip = Clip(Skeleton(["a", "b"], [-1, 0], [[0, 0, 0], [0, 1, 0]], [layout] * 2),
                [[0, 0, 0, 0, 0, 0, 1e-12, 0, 0, 0, 0, 0, 0, 1]], 1 / 30)
    assert parse_htr(format_htr(clip).encode()).local_scales()[0, 0] == 1e-12  # written as 0, it read back as 1
    with pytest.raises(MocapWriteError, match="no frames"):
        format_htr(Clip(clip.skeleton, np.zeros((0, 14)), 1 / 30))


def test_names_the_formats_cannot_hold_are_made_safe(tmp_path):
    names = ["Hips", "Left Arm", "Left_Arm", "GLOBAL", "End", "root", ":name", "x]#%sy"]
    parents = [-1, 0, 0, 0, 0, 4, 4, 1]
    count = len(names)
    skeleton = Skeleton(names, parents, np.tile([[0.0, 1.0, 0.0]], (count, 1)),
                        [("tx", "ty", "tz", "rz", "rx", "ry")] + [("rz", "rx", "ry")] * (count - 1),
                        [[]] * (count - 1) + [[[0, 1, 0]]])
    clip = Clip(skeleton, np.random.default_rng(1).uniform(-90, 90, (3, 3 + 3 * count)), 1 / 30)
    truth = world_positions(clip)
    for extension in (".bvh", ".htr", ".amc"):
        save(clip, tmp_path / f"names{extension}")
        again = load(tmp_path / f"names{extension}")
        assert len(set(again.skeleton.names)) == again.skeleton.joint_count
        if extension == ".bvh":  # names kept, joints listed depth first
            np.testing.assert_allclose(world_positions(again)[:, [again.skeleton.index(n) for n in names]], truth,
                                       atol=1e-6)
        elif extension == ".htr":  # joints kept in order
            np.testing.assert_allclose(world_positions(again), truth, atol=1e-6)
    assert load(tmp_path / "names.htr").skeleton.names == ["Hips", "Left_Arm", "Left_Arm_2", "GLOBAL_", "End",
                                                             "root", ":name", "x_%sy"]
    amc = load(tmp_path / "names.amc").skeleton.names
    assert {"root", "Left_Arm", "Left_Arm_2", "GLOBAL", "End", "root_2", "_name", "x]_%sy"} <= set(amc)


def test_asf_refuses_several_roots(tmp_path):
    text = TWO_JOINTS.replace("MOTION", "ROOT Other\n{\n\tOFFSET 0 0 0\n\tCHANNELS 0\n}\nMOTION")
    with pytest.raises(MocapWriteError, match="one root, the clip has 2: 'Hips', 'Other'"):
        save(parse_bvh(text.encode()), tmp_path / "two.amc")


# --- linear time and memory ----------------------------------------------------------------------------------


def chain_bvh(joints: int, wide: bool = False) -> bytes:
    """A BVH of ``joints`` joints, each the child of the one before (or, ``wide``, all children of the root)."""
    lines = ["HIERARCHY", "ROOT j0", "{", "OFFSET 0 0 0",
             "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"]
    for joint in range(1, joints):
        lines += [f"JOINT j{joint}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
        if wide:
            lines.append("}")
    lines += ["End Site", "{", "OFFSET 0 1 0", "}"] + ["}"] * (1 if wide else joints)
    row = " ".join(["0.5"] * (3 + 3 * joints))
    return ("\n".join(lines + ["MOTION", "Frames: 2", "Frame Time: 0.04", row, row]) + "\n").encode()


def test_channel_starts_are_cached_and_follow_every_edit():
    skeleton = Skeleton(["a", "b"], [-1, 0], np.zeros((2, 3)), [("rx",), ("rx", "ry")])
    starts = skeleton.channel_starts()
    assert skeleton.channel_starts() is starts and not starts.flags.writeable
    skeleton.channels[1] = ("rz",)
    assert skeleton.channel_starts().tolist() == [0, 1, 2]
    skeleton.channels.append(("ry",))
    assert skeleton.channel_starts().tolist() == [0, 1, 2, 3]
    skeleton.channels = [(), ("tx", "ty")]
    assert skeleton.channel_starts().tolist() == [0, 0, 2]
    assert skeleton.copy().channel_starts().tolist() == [0, 0, 2]


def test_bvh_output_grows_linearly_with_depth():
    text = format_bvh(parse_bvh(chain_bvh(10_000)))
    assert len(text) < 4 * len(chain_bvh(10_000))  # one tab per level wrote 251 MB for 879 KB in


def run_limited(code: str, cpu_seconds: int = 120, memory: int = 1 << 30) -> dict:
    """Run ``code`` in a child with CPU-time and address-space limits; its last line of output, as JSON."""
    prelude = ("import resource\n"
               f"resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
               f"resource.setrlimit(resource.RLIMIT_CPU, ({cpu_seconds}, {cpu_seconds}))\n")
    result = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], cwd=REPO, capture_output=True,
                            text=True, check=False, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


# CPU seconds per step for 10,000 joints: the goal is 2 s; this allows a slow, shared machine.
STEP_BUDGET = 10.0


@pytest.mark.slow
def test_ten_thousand_joints_load_pose_and_write_in_linear_time():
    steps = run_limited("""
        import json, os, tempfile, time
        from mocap_addon.core import load, save, world_positions
        from tests.test_hostile import chain_bvh
        steps, folder = {}, tempfile.mkdtemp()
        def step(name, work):
            start = time.process_time()
            result = work()
            steps[name] = time.process_time() - start
            return result
        with open(os.path.join(folder, "x.bvh"), "wb") as handle:
            handle.write(chain_bvh(10_000))
        for extension in (".bvh", ".htr", ".amc"):
            source = os.path.join(folder, "x.bvh")
            if extension != ".bvh":
                source = os.path.join(folder, "x" + extension)
                step("convert to " + extension, lambda: save(load(os.path.join(folder, "x.bvh")), source))
            clip = step("load " + extension, lambda: load(source))
            assert clip.skeleton.joint_count >= 10_000
            step("pose " + extension, lambda: world_positions(clip))
            step("write " + extension, lambda: save(clip, os.path.join(folder, "again" + extension)))
        print(json.dumps(steps))
    """)
    slow = {name: round(seconds, 1) for name, seconds in steps.items() if seconds > STEP_BUDGET}
    assert not slow, f"over {STEP_BUDGET} s of CPU: {slow} (all: {steps})"


def fifty_megabyte_lines() -> Iterator[tuple[str, Callable, Callable[[], bytes], int]]:
    """(name, parser, maker of the file, line of the error): a 50 MB line of 12 million values where each
    format reads lines or rows.  Files are made on demand, one at a time."""
    def line() -> str:
        return " ".join(["1.5"] * 12_000_000)

    yield "BVH motion row", parse_bvh, lambda: TWO_JOINTS.replace("5 6 7 0 0 90 90 0 0", line()).encode(), 20
    yield "BVH OFFSET", parse_bvh, lambda: TWO_JOINTS.replace("OFFSET 0 10 0", "OFFSET " + line()).encode(), 8
    yield "BVH CHANNELS", parse_bvh, lambda: TWO_JOINTS.replace("CHANNELS 3", "CHANNELS 3 " + line()).encode(), 9
    yield "HTR frame row", parse_htr, lambda: HTR.replace("1 2 0 0 0 0 0 1", line()).encode(), 22
    yield "HTR header", parse_htr, lambda: HTR.replace("FileType htr", "FileType " + line()).encode(), 3
    yield "ASF direction", parse_asf, lambda: ASF.replace("direction 0 1 0", "direction " + line()).encode(), 19
    yield "ASF hierarchy", parse_asf, lambda: ASF.replace("upper lower", "upper " + line()).encode(), 37
    yield "AMC bone line", amc_parser, lambda: AMC.replace("upper 0 90", "upper " + line()).encode(), 5


@pytest.mark.slow
def test_a_fifty_megabyte_line_is_refused_quickly_in_little_memory():
    outcomes = run_limited("""
        import json, time
        from mocap_addon.core import MocapFormatError
        from tests.test_hostile import fifty_megabyte_lines
        outcomes = {}
        for name, parse, make, line in fifty_megabyte_lines():
            data = make()
            start = time.process_time()
            try:
                parse(data, "long")
                outcomes[name] = [line, None, "loaded", 0.0]
            except MocapFormatError as error:
                outcomes[name] = [line, error.line, str(error), time.process_time() - start]
        print(json.dumps(outcomes))
    """, cpu_seconds=120, memory=1 << 30)
    assert len(outcomes) == 8
    for name, (line, found, message, seconds) in outcomes.items():
        assert found == line and len(message) < 200 and seconds < STEP_BUDGET, (name, found, message, seconds)


@pytest.mark.parametrize("extension", [".htr", ".amc"])
def test_encoding_in_blocks_of_frames_writes_the_same_bytes(extension, tmp_path, monkeypatch):
    """Issue 26: long takes are rebased and encoded a block of frames at a time (memory); each block's
    angles continue from the last, so the file is the one encoding every frame at once gives, spins included."""
    from mocap_addon.core import kinematics
    from mocap_addon.core.formats.acclaim import write as acclaim_write
    from tests.conftest import SAMPLES

    clip = load(SAMPLES / "walk_turn.bvh")
    spin = clip.skeleton.channel_starts()[0] + list(clip.skeleton.channels[0]).index("ry")
    clip.motion[:, spin] += np.linspace(0.0, 2000.0, clip.frame_count)  # five and a half turns
    (tmp_path / "whole").mkdir()
    (tmp_path / "blocks").mkdir()
    save(clip, tmp_path / "whole" / f"take{extension}")
    monkeypatch.setattr(kinematics, "FRAME_BLOCK", 7)
    monkeypatch.setattr(acclaim_write, "FRAME_BLOCK", 7)
    save(clip, tmp_path / "blocks" / f"take{extension}")
    blocks, whole = (tmp_path / kind / f"take{extension}" for kind in ("blocks", "whole"))
    assert blocks.read_bytes() == whole.read_bytes()


# --- issue 26: the command line on hostile input and arguments -----------------------------------------------


@pytest.mark.parametrize("argv", [
    ["reduce", "{sample}", "--tolerance", "nan"], ["reduce", "{sample}", "--tolerance", "-1"],
    ["convert", "{sample}", "{out}.htr", "--precision", "1000000"],
    ["convert", "{sample}", "{out}.htr", "--precision", "-1"],
    ["blend", "{sample}", "{sample}", "{out}.bvh", "--mix", "inf"],
    ["blend", "{sample}", "{sample}", "{out}.bvh", "--mix", "1e300"],
    ["graph", "synth", "g.npz", "{sample}", "-o", "{out}.bvh", "--frames", "1000000000000"],
    ["graph", "build", "{sample}", "-o", "{out}.npz", "--sigma", "0"],
    ["batch", "{sample}", "-o", "{out}", "--to", "bvh", "--jobs", "0"],
])
def test_numeric_arguments_out_of_range_are_one_line_and_exit_2(argv, tmp_path, capsys):
    from mocap_addon.core.cli.main import main
    from tests.conftest import SAMPLES

    filled = [a.format(sample=SAMPLES / "walk_turn.bvh", out=tmp_path / "out") for a in argv]
    with pytest.raises(SystemExit) as caught:
        main(filled)
    error = capsys.readouterr().err
    assert caught.value.code == 2 and error.count("\n") == 1 and "error: argument" in error, error
    assert list(tmp_path.iterdir()) == []


HUGE_OFFSET_BVH = TWO_JOINTS.replace("OFFSET 0 10 0", "OFFSET 0 1e308 0")


@pytest.mark.parametrize("command", [["reduce"], ["map"], ["info"], ["canonical", "OUT.bvh"], ["preview", "OUT.png"]])
def test_tools_on_a_huge_offset_end_at_once_with_its_line(command, tmp_path, capsys):
    from mocap_addon.core.cli.main import main

    (tmp_path / "huge.bvh").write_text(HUGE_OFFSET_BVH)
    argv = [command[0], str(tmp_path / "huge.bvh"), *[str(tmp_path / a) for a in command[1:]]]
    assert main(argv) == 1
    assert capsys.readouterr().err == "error: huge.bvh:8: OFFSET: '1e308' is too large (the limit is 1e+09)\n"


def test_key_reduction_ends_on_motion_that_is_not_finite():
    from mocap_addon.core.reduce import reduce_keys

    clip = parse_bvh(TWO_JOINTS.encode(), "t.bvh")
    with pytest.raises(ValueError, match="tolerance must be a finite number"):
        reduce_keys(clip, float("nan"))
    clip.motion[1, 0] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        reduce_keys(clip, 0.01)
