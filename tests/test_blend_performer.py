"""Blends of two people's walks that read as one performer (issue 28): with the default root and a time
warp, no spins, facing where it goes, no knee pops, and the warp pairs whole gait cycles playing most of b.
Corpus walks of five sources, and captures no one tuned on (turned, faster, slower, mirrored, trimmed)."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import Clip, load
from mocap_addon.core import rotations as r
from mocap_addon.core.blend.mixing import blend
from mocap_addon.core.body.contacts import find_contacts
from mocap_addon.core.model import ROTATION_CHANNELS, rotation_order
from mocap_addon.core.timing import resample
from scripts.blend_quality import FACING_BAR, SHARE_BAR, TURN_BAR, performer
from tests.conftest import CORPUS

XIA = "bvh/ganim_Xia_normal.bvh"
VICON = "asf_amc/vicon_male.walk-speed 4.AMC"
BANDAI = "bvh/bandai_dataset-1_walk_normal_001.bvh"
ELDERLY = "bvh/bandai_dataset-2_walk_elderly_004.bvh"
XBOT = "htr/gpr450_xbot_walk_m_mixamo.com.htr"

pytestmark = pytest.mark.corpus


def walk(name: str) -> Clip:
    if not (CORPUS / name).is_file():
        pytest.skip("../shared/corpus is absent")
    return load(CORPUS / name)


def rotation_columns(clip: Clip, joint: int) -> list[int]:
    start = int(clip.skeleton.channel_starts()[joint])
    return [start + n for n, c in enumerate(clip.skeleton.channels[joint]) if c in ROTATION_CHANNELS]


def turned(clip: Clip, degrees: float) -> Clip:
    """A BVH walk (Y up) turned about the up axis through the origin and moved away."""
    result = clip.copy()
    yaw = r.axis_matrices("Y", np.radians(degrees))
    order = rotation_order(clip.skeleton.channels[0])
    angles = r.euler_continuity(r.matrix_to_euler(yaw @ clip.joint_rotations(0), order))
    result.motion[:, rotation_columns(clip, 0)] = np.degrees(angles)
    result.motion[:, :3] = clip.joint_translations(0) @ yaw.T + np.array([300.0, 0.0, -200.0])
    return result


def mirrored(clip: Clip) -> Clip:
    """A Bandai walk (Y up, every joint with position channels, ``_L`` / ``_R`` names) mirrored across the
    upright plane along its travel, left and right swapped: the walk of a person whose gait is its mirror."""
    result = clip.copy()
    skeleton = result.skeleton
    hips = clip.joint_translations(clip.skeleton.index("Hips"))
    travel = np.abs(hips[-1] - hips[0])
    across = "X" if travel[2] > travel[0] else "Z"  # the horizontal axis across the travel
    others = {"X": ("Y", "Z"), "Z": ("X", "Y")}[across]
    skeleton.offsets[:, "XYZ".index(across)] *= -1.0
    for joint, layout in enumerate(skeleton.channels):
        start = int(skeleton.channel_starts()[joint])
        for n, channel in enumerate(layout):
            if channel in (f"t{across.lower()}", *(f"r{axis.lower()}" for axis in others)):
                result.motion[:, start + n] *= -1.0
    names = [n[:-2] + {"_L": "_R", "_R": "_L"}[n[-2:]] if n[-2:] in ("_L", "_R") else n for n in skeleton.names]
    assert sorted(names) == sorted(skeleton.names)
    skeleton.names[:] = names
    return result


def faster(clip: Clip, factor: float) -> Clip:
    """The walk played ``factor`` times as fast, sampled at its own rate."""
    quick = clip.copy()
    quick.frame_time = clip.frame_time / factor
    return resample(quick, clip.frame_time)


def trimmed(clip: Clip, first: float, last: float) -> Clip:
    result = clip.copy()
    result.motion = clip.motion[round(first / clip.frame_time):round(last / clip.frame_time)].copy()
    return result


def check(a: Clip, b: Clip) -> None:
    result = blend(a, b, 0.5, align="dtw")
    found = performer(a, b, result)
    assert found.hips_turn <= TURN_BAR
    assert found.facing_off <= FACING_BAR
    assert found.knee_step <= found.knee_bar
    assert found.b_share >= SHARE_BAR
    assert not (found.b_longer and found.loops)  # loops only where b is the shorter
    time = result.metadata["blend"]["time"]
    assert time["b_frames"] == b.frame_count and 0 < time["b_played"] <= b.frame_count
    # Whole gait cycles pair: a's planted feet and b's at the paired frames agree (steps with steps,
    # left with left) on most frames.
    paired = find_contacts(b).planted[np.round(result.metadata["warp"]).astype(np.int64)]
    assert np.mean(find_contacts(a).planted == paired) >= 0.8


@pytest.mark.parametrize(("a_name", "b_name"), [(XIA, VICON), (VICON, XIA), (VICON, BANDAI), (BANDAI, XIA),
                                                 (BANDAI, VICON), (ELDERLY, XIA), (ELDERLY, VICON),
                                                 (XBOT, BANDAI), (BANDAI, XBOT), (XIA, ELDERLY)])
def test_two_peoples_walks_blend_as_one_performer(a_name, b_name):
    check(walk(a_name), walk(b_name))


def test_opposite_walks_do_not_cancel_or_flip():
    """The issue's case: b walking the other way (a half turn about the up axis).  Root "blend" mixes the
    two headings and cancels the paths; the default does neither."""
    a, b = walk(BANDAI), turned(walk(ELDERLY), 180.0)
    check(a, b)
    spun = performer(a, b, blend(a, b, 0.5, align="dtw", root="blend"))
    assert spun.hips_turn > 90.0  # what the default avoids


@pytest.mark.parametrize("transform", ["turned 90", "turned 180", "faster 1.3", "slower 0.75", "mirrored",
                                       "trimmed"])
def test_captures_no_one_tuned_on(transform):
    a = walk(XIA)
    b = walk(BANDAI)
    kind, _, amount = transform.partition(" ")
    b = {"turned": lambda: turned(b, float(amount or 0)), "faster": lambda: faster(b, float(amount or 1)),
         "slower": lambda: faster(b, float(amount or 1)), "mirrored": lambda: mirrored(b),
         "trimmed": lambda: trimmed(b, 0.7, 2.6)}[kind]()
    check(a, b)
    check(b, a)
