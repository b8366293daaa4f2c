"""The naming's limb-chain checks: a hand on a shoulder blade is caught, the arm's real hand preferred."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mocap_addon.core import load
from mocap_addon.core.naming import limb_chain_warnings, map_skeleton, mapping_report
from mocap_addon.core.retarget import retarget
from tests.conftest import SAMPLES

# A four-armed figure (Y up, facing +Z, its left on +X): a short blade-like bone named hand_l hangs off the
# chest before the arms do, two pairs of arms below, legs.  ``{hand}`` / ``{hand2}`` name the left arms' ends.
FOUR_ARMS = """\
Hips 0 100 0
 Spine 0 10 0
  Chest 0 20 0
   hand_l 3 2 -4
   hand_r -3 2 -4
   Neck 0 12 0
    Head 0 8 0
   LeftShoulder 4 8 0
    LeftArm 12 0 0
     LeftForeArm 28 0 0
      {hand} 25 0 0
   RightShoulder -4 8 0
    RightArm -12 0 0
     RightForeArm -28 0 0
      RightHand -25 0 0
  LeftShoulder2 4 0 0
   LeftArm2 12 0 0
    LeftForeArm2 28 0 0
     {hand2} 25 0 0
  RightShoulder2 -4 0 0
   RightArm2 -12 0 0
    RightForeArm2 -28 0 0
     RightHand2 -25 0 0
 LeftUpLeg 9 -5 0
  LeftLeg 0 -45 0
   LeftFoot 0 -42 0
    LeftToe 0 -4 12
 RightUpLeg -9 -5 0
  RightLeg 0 -45 0
   RightFoot 0 -42 0
    RightToe 0 -4 12
"""


def four_armed_bvh(folder: Path, hand: str, hand2: str = "LeftHand2", frames: int = 40) -> Path:
    """The outline above as a BVH file (one space of indentation per level), its elbows bending."""
    rows = [line for line in FOUR_ARMS.replace("{hand}", hand).replace("{hand2}", hand2).splitlines() if line.strip()]
    depths = [len(line) - len(line.lstrip(" ")) for line in rows]
    text, names = ["HIERARCHY"], []
    for index, (row, depth) in enumerate(zip(rows, depths)):
        name, *offset = row.split()
        names.append(name)
        pad = "  " * depth
        channels = "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation" if index == 0 \
            else "3 Zrotation Xrotation Yrotation"
        text += [f"{pad}{'ROOT' if index == 0 else 'JOINT'} {name}", pad + "{", f"{pad}  OFFSET {' '.join(offset)}",
                 f"{pad}  CHANNELS {channels}"]
        following = depths[index + 1] if index + 1 < len(rows) else 0
        if following <= depth:
            text += [f"{pad}  End Site", pad + "  {", f"{pad}    OFFSET 0 0 3", pad + "  }"]
            text += ["  " * level + "}" for level in range(depth, following - 1, -1)]
    motion = np.zeros((frames, 6 + 3 * (len(rows) - 1)))
    motion[:, 1] = 100.0
    bend = 60.0 * np.sin(np.linspace(0.0, 2.0 * np.pi, frames))
    for elbow in ("LeftForeArm", "RightForeArm"):
        motion[:, 6 + 3 * (names.index(elbow) - 1) + 2] = bend  # Y: the elbow bends in the horizontal plane
    text += ["MOTION", f"Frames: {frames}", "Frame Time: 0.0333333"]
    text += [" ".join(f"{value:.4f}" for value in row) for row in motion]
    path = folder / f"four_arms_{hand}_{hand2}.bvh"
    path.write_text("\n".join(text) + "\n")
    return path


def test_a_hand_named_blade_loses_to_the_hand_that_ends_an_arm(tmp_path):
    """Three left joints named hand: the one with an upper arm and forearm above it is the hand."""
    clip = load(four_armed_bvh(tmp_path, "LeftHand"))
    mapping = map_skeleton(clip.skeleton)
    expected = {f"{side}{part}": f"{canonical}_{side[0].lower()}" for side in ("Left", "Right")
                for part, canonical in (("Shoulder", "clavicle"), ("Arm", "upper_arm"), ("ForeArm", "lower_arm"),
                                        ("Hand", "hand"))}
    assert {name: mapping[name] for name in expected} == expected
    assert mapping["hand_l"] is None and mapping["hand_r"] is None
    assert limb_chain_warnings(clip.skeleton, mapping) == []


def test_a_pair_of_arms_both_ending_in_hands_wins(tmp_path):
    """The upper left arm's end has a name no one knows: the lower pair, both ending in hands, is the arms."""
    clip = load(four_armed_bvh(tmp_path, "LeftClaw"))
    mapping = map_skeleton(clip.skeleton)
    assert {name: mapping[name] for name in ("LeftArm2", "LeftForeArm2", "LeftHand2", "RightArm2", "RightForeArm2",
                                             "RightHand2")} == {
        "LeftArm2": "upper_arm_l", "LeftForeArm2": "lower_arm_l", "LeftHand2": "hand_l",
        "RightArm2": "upper_arm_r", "RightForeArm2": "lower_arm_r", "RightHand2": "hand_r"}
    assert limb_chain_warnings(clip.skeleton, mapping) == []


def test_a_hand_on_a_shoulder_blade_is_named_in_the_warnings(tmp_path):
    """Neither left arm's end has a name anyone knows: hand_l stays on the blade, and the checks say so,
    in the mapping report and in a retarget's warnings."""
    clip = load(four_armed_bvh(tmp_path, "LeftClaw", "LeftClaw2"))
    mapping = map_skeleton(clip.skeleton)
    warnings = limb_chain_warnings(clip.skeleton, mapping)
    blade = [w for w in warnings if w.startswith("hand_l (hand_l) does not end the arm")]
    assert mapping["hand_l"] == "hand_l" and mapping["LeftArm"] != "upper_arm_l"
    assert len(blade) == 1 and "upper_arm_l and lower_arm_l" in blade[0]
    assert not any("_r" in w for w in warnings), warnings  # the right arm is whole
    assert "warning: hand_l (hand_l) does not end the arm" in mapping_report(clip.skeleton)
    result = retarget(load(SAMPLES / "walk_turn.bvh"), clip, feet="free")
    assert any(w.startswith("target mapping: hand_l (hand_l)") for w in result.metadata["warnings"])


@pytest.mark.parametrize("broken", ["order", "end"])
def test_a_limb_chain_out_of_the_trees_order_is_named(tmp_path, broken):
    """A mapping given by hand (a preset, a person): forearm above the upper arm, or the hand above the forearm."""
    clip = load(four_armed_bvh(tmp_path, "LeftHand"))
    mapping = map_skeleton(clip.skeleton)
    if broken == "order":
        mapping["LeftArm"], mapping["LeftForeArm"] = "lower_arm_l", "upper_arm_l"
        expected = "arm l: lower_arm_l (LeftArm) does not hang below upper_arm_l (LeftForeArm)"
    else:
        mapping["LeftHand"], mapping["LeftShoulder2"] = None, "hand_l"
        expected = "hand_l (LeftShoulder2) is not below lower_arm_l (LeftForeArm): the arm's end is not its hand"
    assert limb_chain_warnings(clip.skeleton, mapping) == [expected]
