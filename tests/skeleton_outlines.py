"""Skeletons written as indented outlines, with the mapping each joint should get.

One line per joint: name, offset ``x y z`` and the expected canonical joint
(``-`` for none), separated by two or more spaces; two spaces of indentation per
level.  Axes as in BVH files: Y up, the character facing +Z, its left on +X.
A line whose name holds ``{Side}`` / ``{side}`` / ``{S}`` / ``{s}`` stands for
two subtrees, left as written and right mirrored (x negated); ``{s}`` in the
expected name becomes ``l`` or ``r``.
"""

from __future__ import annotations

import re

import numpy as np

from mocap_addon.core import Skeleton

SIDES = {"l": {"{Side}": "Left", "{side}": "left", "{S}": "L", "{s}": "l"},
         "r": {"{Side}": "Right", "{side}": "right", "{S}": "R", "{s}": "r"}}


def outline(text: str) -> tuple[Skeleton, dict[str, str | None]]:
    """The skeleton an outline describes and the mapping it expects."""
    nodes: list[tuple[int, str, list[float], str]] = []
    for line in text.strip("\n").splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name, offset, expected = re.split(r"\s{2,}", line.strip())
        nodes.append((depth, name, [float(v) for v in offset.split()], expected))
    names: list[str] = []
    parents: list[int] = []
    offsets: list[list[float]] = []
    expected_map: dict[str, str | None] = {}

    def emit(index: int, parent: int, side: str | None) -> int:
        """Add node ``index`` (and its subtree) below ``parent``; return the next node index."""
        depth, name, offset, expected = nodes[index]
        sided = "{" in name
        for this_side in (["l", "r"] if sided and side is None else [side]):
            text_name, text_expected, x = name, expected, offset[0]
            if this_side is not None:
                for token, word in SIDES[this_side].items():
                    text_name, text_expected = text_name.replace(token, word), text_expected.replace(token, word)
                x = -x if this_side == "r" else x
            names.append(text_name)
            parents.append(parent)
            offsets.append([x, offset[1], offset[2]])
            expected_map[text_name] = None if text_expected == "-" else text_expected
            me = len(names) - 1
            child = index + 1
            while child < len(nodes) and nodes[child][0] > depth:
                child = emit(child, me, this_side)
        following = index + 1
        while following < len(nodes) and nodes[following][0] > depth:
            following += 1
        return following

    index = 0
    while index < len(nodes):
        index = emit(index, -1, None)
    skeleton = Skeleton(names, parents, np.array(offsets), [() for _ in names])
    return skeleton, expected_map


def fingers(pattern: str, depth: int, words: tuple[str, ...] = ("Thumb", "Index", "Middle", "Ring", "Pinky"),
            segments: tuple[str, ...] = ("1", "2", "3"), extra: tuple[str, ...] = (), metacarpal: str = "",
            thumb: bool = True) -> str:
    """Outline lines for the fingers below a hand: ``pattern`` has ``{F}`` (finger word) and ``{n}``
    (segment); ``extra`` segments expect nothing; ``metacarpal`` names a bone inside the palm before
    each finger but the thumb (expected to fold); ``thumb=False`` leaves the thumb out."""
    canonical = ("thumb", "index", "middle", "ring", "pinky")
    lines = []
    for number, (word, finger) in enumerate(zip(words, canonical)):
        if finger == "thumb" and not thumb:
            continue
        level = depth
        spread = 2.0 * (number - 2)
        if metacarpal and finger != "thumb":
            lines.append(f"{'  ' * level}{metacarpal.replace('{F}', word)}  2 0 {spread}  -")
            level += 1
        for index, segment in enumerate(segments + extra):
            expected = f"{finger}_{index + 1:02d}_{{s}}" if index < len(segments) else "-"
            offset = f"{8 if index == 0 else 3} 0 {spread if index == 0 else 0}"
            lines.append(f"{'  ' * (level + index)}{pattern.replace('{F}', word).replace('{n}', segment)}  "
                         f"{offset}  {expected}")
    return "\n".join(lines)


MIXAMO = f"""
mixamorig1:Hips  0 100 0  hips
  mixamorig1:Spine  0 10 0  spine_01
    mixamorig1:Spine1  0 10 0  spine_02
      mixamorig1:Spine2  0 10 0  spine_04
        mixamorig1:Neck  0 15 0  neck_01
          mixamorig1:Head  0 10 0  head
            mixamorig1:HeadTop_End  0 18 0  -
            mixamorig1:{{Side}}Eye  3 8 8  -
        mixamorig1:{{Side}}Shoulder  6 10 0  clavicle_{{s}}
          mixamorig1:{{Side}}Arm  12 0 0  upper_arm_{{s}}
            mixamorig1:{{Side}}ForeArm  28 0 0  lower_arm_{{s}}
              mixamorig1:{{Side}}Hand  25 0 0  hand_{{s}}
{fingers("mixamorig1:{Side}Hand{F}{n}", 8, extra=("4",))}
  mixamorig1:{{Side}}UpLeg  9 -5 0  upper_leg_{{s}}
    mixamorig1:{{Side}}Leg  0 -45 0  lower_leg_{{s}}
      mixamorig1:{{Side}}Foot  0 -42 0  foot_{{s}}
        mixamorig1:{{Side}}ToeBase  0 -8 12  toes_{{s}}
          mixamorig1:{{Side}}Toe_End  0 0 6  -
"""

CMU_BVH = """
Hips  0 100 0  hips
  {S}HipJoint  0 0 0  -
    {Side}UpLeg  9 -5 0  upper_leg_{s}
      {Side}Leg  0 -45 0  lower_leg_{s}
        {Side}Foot  0 -42 0  foot_{s}
          {Side}ToeBase  0 -8 12  toes_{s}
  LowerBack  0 5 0  spine_01
    Spine  0 10 0  spine_02
      Spine1  0 10 0  spine_04
        Neck  0 12 0  neck_01
          Neck1  0 5 0  neck_02
            Head  0 8 0  head
        {Side}Shoulder  4 10 0  clavicle_{s}
          {Side}Arm  12 0 0  upper_arm_{s}
            {Side}ForeArm  28 0 0  lower_arm_{s}
              {Side}Hand  25 0 0  hand_{s}
                {Side}FingerBase  4 0 0  -
                  {S}Fingers  4 0 0  index_01_{s}
                {S}Thumb  3 0 3  thumb_01_{s}
"""

CMU_ASF = """
root  0 100 0  hips
  {s}hipjoint  4 -4 0  -
    {s}femur  5 -2 0  upper_leg_{s}
      {s}tibia  0 -45 0  lower_leg_{s}
        {s}foot  0 -42 0  foot_{s}
          {s}toes  0 -8 12  toes_{s}
  lowerback  0 5 0  spine_01
    upperback  0 10 0  spine_02
      thorax  0 10 0  spine_04
        lowerneck  0 12 0  neck_01
          upperneck  0 5 0  neck_02
            head  0 8 0  head
        {s}clavicle  4 10 0  clavicle_{s}
          {s}humerus  12 0 0  upper_arm_{s}
            {s}radius  28 0 0  lower_arm_{s}
              {s}wrist  25 0 0  hand_{s}
                {s}hand  3 0 0  -
                  {s}fingers  5 0 0  index_01_{s}
                {s}thumb  3 0 3  thumb_01_{s}
"""

ACCLAIM_H = """
h_waist  0 100 0  hips
  h_torso_2  0 6 0  spine_01
    h_torso_3  0 6 0  -
      h_torso_4  0 6 0  spine_02
        h_torso_5  0 6 0  spine_03
          h_torso_6  0 6 0  -
            h_torso_7  0 6 0  spine_04
              h_neck_1  0 8 0  neck_01
                h_neck_2  0 5 0  neck_02
                  h_head  0 8 0  head
              h_{side}_shoulder  4 6 0  clavicle_{s}
                h_{side}_up_arm  12 0 0  upper_arm_{s}
                  h_{side}_low_arm  28 0 0  lower_arm_{s}
                    h_{side}_wrist  25 0 0  hand_{s}
                      h_{side}_hand  6 0 0  -
  h_{side}_up_leg  9 -5 0  upper_leg_{s}
    h_{side}_low_leg  0 -45 0  lower_leg_{s}
      h_{side}_foot  0 -42 0  foot_{s}
        h_{side}_toes  0 -8 12  toes_{s}
"""

BIOVISION = """
Hips  0 100 0  hips
  {Side}Hip  9 -5 0  upper_leg_{s}
    {Side}Knee  0 -45 0  lower_leg_{s}
      {Side}Ankle  0 -42 0  foot_{s}
        {Side}Toe  0 -8 12  toes_{s}
  Chest  0 10 0  spine_01
    Chest2  0 10 0  spine_02
      Chest3  0 10 0  spine_04
        Neck  0 12 0  neck_01
          Head  0 8 0  head
        {Side}Collar  4 8 0  clavicle_{s}
          {Side}Shoulder  12 0 0  upper_arm_{s}
            {Side}Elbow  28 0 0  lower_arm_{s}
              {Side}Wrist  25 0 0  hand_{s}
"""

BIPED = f"""
Bip01  0 0 0  -
  Bip01 Pelvis  0 100 0  hips
    Bip01 Spine  0 5 0  spine_01
      Bip01 {{S}} Thigh  9 -10 0  upper_leg_{{s}}
        Bip01 {{S}} Calf  0 -45 0  lower_leg_{{s}}
          Bip01 {{S}} Foot  0 -42 0  foot_{{s}}
            Bip01 {{S}} Toe0  0 -8 12  toes_{{s}}
              Bip01 {{S}} Toe0Nub  0 0 5  -
      Bip01 Spine1  0 12 0  spine_02
        Bip01 Spine2  0 12 0  spine_04
          Bip01 Neck  0 12 0  neck_01
            Bip01 Head  0 8 0  head
              Bip01 HeadNub  0 18 0  -
            Bip01 {{S}} Clavicle  3 0 0  clavicle_{{s}}
              Bip01 {{S}} UpperArm  12 0 0  upper_arm_{{s}}
                Bip01 {{S}} UpArmTwist  10 0 0  -
                Bip01 {{S}} Forearm  28 0 0  lower_arm_{{s}}
                  Bip01 {{S}} ForeTwist  15 0 0  -
                  Bip01 {{S}} Hand  25 0 0  hand_{{s}}
{fingers("Bip01 {S} Finger{F}{n}", 10, words=("0", "1", "2", "3", "4"), segments=("", "1", "2"), extra=("Nub",))}
  Bip01 Footsteps  0 0 0  -
"""

UE4 = f"""
root  0 0 0  -
  pelvis  0 100 0  hips
    spine_01  0 10 0  spine_01
      spine_02  0 10 0  spine_02
        spine_03  0 10 0  spine_04
          clavicle_{{s}}  4 10 0  clavicle_{{s}}
            upperarm_{{s}}  12 0 0  upper_arm_{{s}}
              lowerarm_{{s}}  28 0 0  lower_arm_{{s}}
                hand_{{s}}  25 0 0  hand_{{s}}
{fingers("{F}_{n}_{s}", 9, words=("thumb", "index", "middle", "ring", "pinky"), segments=("01", "02", "03"))}
                lowerarm_twist_01_{{s}}  20 0 0  -
              upperarm_twist_01_{{s}}  5 0 0  -
          neck_01  0 14 0  neck_01
            head  0 9 0  head
    thigh_{{s}}  9 -5 0  upper_leg_{{s}}
      calf_{{s}}  0 -45 0  lower_leg_{{s}}
        calf_twist_01_{{s}}  0 -20 0  -
        foot_{{s}}  0 -42 0  foot_{{s}}
          ball_{{s}}  0 -8 12  toes_{{s}}
      thigh_twist_01_{{s}}  0 -20 0  -
  ik_foot_root  0 0 0  -
    ik_foot_{{s}}  9 8 0  -
  ik_hand_root  0 0 0  -
    ik_hand_gun  -50 140 0  -
      ik_hand_{{s}}  0 0 0  -
"""

UE5 = f"""
root  0 0 0  -
  pelvis  0 100 0  hips
    spine_01  0 6 0  spine_01
      spine_02  0 6 0  spine_02
        spine_03  0 6 0  -
          spine_04  0 6 0  spine_03
            spine_05  0 6 0  spine_04
              clavicle_{{s}}  4 10 0  clavicle_{{s}}
                upperarm_{{s}}  12 0 0  upper_arm_{{s}}
                  lowerarm_{{s}}  28 0 0  lower_arm_{{s}}
                    hand_{{s}}  25 0 0  hand_{{s}}
{fingers("{F}_{n}_{s}", 11, words=("thumb", "index", "middle", "ring", "pinky"), segments=("01", "02", "03"),
         metacarpal="{F}_metacarpal_{s}")}
                      wrist_inner_{{s}}  0 -2 0  -
                    lowerarm_twist_01_{{s}}  20 0 0  -
                    lowerarm_twist_02_{{s}}  10 0 0  -
                    lowerarm_correctiveRoot_{{s}}  0 0 0  -
                  upperarm_twist_01_{{s}}  5 0 0  -
                  upperarm_correctiveRoot_{{s}}  0 0 0  -
                    upperarm_bck_{{s}}  0 0 -3  -
              neck_01  0 10 0  neck_01
                neck_02  0 5 0  neck_02
                  head  0 8 0  head
    thigh_{{s}}  9 -5 0  upper_leg_{{s}}
      calf_{{s}}  0 -45 0  lower_leg_{{s}}
        calf_knee_{{s}}  0 0 5  -
        calf_twist_01_{{s}}  0 -20 0  -
        foot_{{s}}  0 -42 0  foot_{{s}}
          ball_{{s}}  0 -8 12  toes_{{s}}
      thigh_twist_01_{{s}}  0 -20 0  -
      thigh_correctiveRoot_{{s}}  0 0 0  -
  ik_foot_root  0 0 0  -
    ik_foot_{{s}}  9 8 0  -
"""

UNITY = f"""
Hips  0 100 0  hips
  {{Side}}UpperLeg  9 -5 0  upper_leg_{{s}}
    {{Side}}LowerLeg  0 -45 0  lower_leg_{{s}}
      {{Side}}Foot  0 -42 0  foot_{{s}}
        {{Side}}Toes  0 -8 12  toes_{{s}}
  Spine  0 10 0  spine_01
    Chest  0 10 0  spine_02
      UpperChest  0 10 0  spine_04
        Neck  0 12 0  neck_01
          Head  0 8 0  head
            Jaw  0 -2 5  -
            {{Side}}Eye  3 6 8  -
        {{Side}}Shoulder  4 8 0  clavicle_{{s}}
          {{Side}}UpperArm  12 0 0  upper_arm_{{s}}
            {{Side}}LowerArm  28 0 0  lower_arm_{{s}}
              {{Side}}Hand  25 0 0  hand_{{s}}
{fingers("{Side}{F}{n}", 8, words=("Thumb", "Index", "Middle", "Ring", "Little"),
         segments=("Proximal", "Intermediate", "Distal"))}
"""

GODOT_VRM1 = f"""
Root  0 0 0  -
  Hips  0 100 0  hips
    {{Side}}UpperLeg  9 -5 0  upper_leg_{{s}}
      {{Side}}LowerLeg  0 -45 0  lower_leg_{{s}}
        {{Side}}Foot  0 -42 0  foot_{{s}}
          {{Side}}Toes  0 -8 12  toes_{{s}}
    Spine  0 10 0  spine_01
      Chest  0 10 0  spine_04
        Neck  0 12 0  neck_01
          Head  0 8 0  head
        {{Side}}Shoulder  4 8 0  clavicle_{{s}}
          {{Side}}UpperArm  12 0 0  upper_arm_{{s}}
            {{Side}}LowerArm  28 0 0  lower_arm_{{s}}
              {{Side}}Hand  25 0 0  hand_{{s}}
                {{Side}}ThumbMetacarpal  2 0 3  thumb_01_{{s}}
                  {{Side}}ThumbProximal  3 0 2  thumb_02_{{s}}
                    {{Side}}ThumbDistal  3 0 1  thumb_03_{{s}}
{fingers("{Side}{F}{n}", 8, words=("Thumb", "Index", "Middle", "Ring", "Little"),
         segments=("Proximal", "Intermediate", "Distal"), thumb=False)}
"""

RIGIFY = """
spine  0 100 0  hips
  spine.001  0 10 0  spine_01
    spine.002  0 10 0  spine_02
      spine.003  0 10 0  spine_04
        spine.004  0 12 0  neck_01
          spine.005  0 4 0  neck_02
            spine.006  0 5 0  head
              face  0 5 5  -
                eye.{S}  3 3 3  -
                jaw  0 -6 2  -
        shoulder.{S}  2 8 2  clavicle_{s}
          upper_arm.{S}  14 0 -2  upper_arm_{s}
            forearm.{S}  28 0 0  lower_arm_{s}
              hand.{S}  25 0 0  hand_{s}
                palm.01.{S}  2 0 2  -
                  thumb.01.{S}  3 -1 2  thumb_01_{s}
                    thumb.02.{S}  3 0 1  thumb_02_{s}
                      thumb.03.{S}  2 0 1  thumb_03_{s}
                  f_index.01.{S}  7 0 1  index_01_{s}
                    f_index.02.{S}  3 0 0  index_02_{s}
                      f_index.03.{S}  2 0 0  index_03_{s}
                palm.02.{S}  2 0 0  -
                  f_middle.01.{S}  7 0 0  middle_01_{s}
                    f_middle.02.{S}  3 0 0  middle_02_{s}
                      f_middle.03.{S}  2 0 0  middle_03_{s}
                palm.03.{S}  2 0 -1  -
                  f_ring.01.{S}  7 0 -1  ring_01_{s}
                    f_ring.02.{S}  3 0 0  ring_02_{s}
                      f_ring.03.{S}  2 0 0  ring_03_{s}
                palm.04.{S}  2 0 -2  -
                  f_pinky.01.{S}  6 0 -2  pinky_01_{s}
                    f_pinky.02.{S}  2 0 0  pinky_02_{s}
                      f_pinky.03.{S}  2 0 0  pinky_03_{s}
        breast.{S}  5 0 6  -
  pelvis.{S}  4 0 3  -
  thigh.{S}  9 -5 0  upper_leg_{s}
    shin.{S}  0 -45 0  lower_leg_{s}
      foot.{S}  0 -42 0  foot_{s}
        toe.{S}  0 -8 12  toes_{s}
        heel.02.{S}  0 -8 -3  -
"""

RIGIFY_DEF = """
root  0 0 0  -
  DEF-spine  0 100 0  hips
    DEF-spine.001  0 10 0  spine_01
      DEF-spine.002  0 10 0  spine_02
        DEF-spine.003  0 10 0  spine_04
          DEF-spine.004  0 12 0  neck_01
            DEF-spine.005  0 4 0  neck_02
              DEF-spine.006  0 5 0  head
          DEF-shoulder.{S}  2 8 2  clavicle_{s}
            DEF-upper_arm.{S}  14 0 -2  upper_arm_{s}
              DEF-upper_arm.{S}.001  14 0 0  -
                DEF-forearm.{S}  14 0 0  lower_arm_{s}
                  DEF-forearm.{S}.001  14 0 0  -
                    DEF-hand.{S}  11 0 0  hand_{s}
    DEF-thigh.{S}  9 -5 0  upper_leg_{s}
      DEF-thigh.{S}.001  0 -22 0  -
        DEF-shin.{S}  0 -23 0  lower_leg_{s}
          DEF-shin.{S}.001  0 -21 0  -
            DEF-foot.{S}  0 -21 0  foot_{s}
              DEF-toe.{S}  0 -8 12  toes_{s}
"""

DAZ_G8 = """
hip  0 100 0  hips
  pelvis  0 -2 0  -
    {s}ThighBend  9 -3 0  upper_leg_{s}
      {s}ThighTwist  0 -20 0  -
        {s}Shin  0 -25 0  lower_leg_{s}
          {s}Foot  0 -42 0  foot_{s}
            {s}Metatarsals  0 -4 4  -
              {s}Toe  0 -4 8  toes_{s}
                {s}BigToe  -1 0 3  -
                {s}SmallToe1  1 0 3  -
  abdomenLower  0 6 0  spine_01
    abdomenUpper  0 6 0  spine_02
      chestLower  0 8 0  spine_03
        chestUpper  0 10 0  spine_04
          neckLower  0 10 0  neck_01
            neckUpper  0 4 0  neck_02
              head  0 6 0  head
                {s}Eye  3 6 8  -
          {s}Pectoral  6 -5 8  -
          {s}Collar  3 8 0  clavicle_{s}
            {s}ShldrBend  12 0 0  upper_arm_{s}
              {s}ShldrTwist  12 0 0  -
                {s}ForearmBend  16 0 0  lower_arm_{s}
                  {s}ForearmTwist  12 0 0  -
                    {s}Hand  25 0 0  hand_{s}
                      {s}Thumb1  2 0 3  thumb_01_{s}
                        {s}Thumb2  3 0 1  thumb_02_{s}
                          {s}Thumb3  2 0 1  thumb_03_{s}
                      {s}Carpal1  2 0 1  -
                        {s}Index1  6 0 1  index_01_{s}
                          {s}Index2  3 0 0  index_02_{s}
                            {s}Index3  2 0 0  index_03_{s}
                        {s}Mid1  6 0 0  middle_01_{s}
                          {s}Mid2  3 0 0  middle_02_{s}
                            {s}Mid3  2 0 0  middle_03_{s}
                      {s}Carpal2  2 0 -1  -
                        {s}Ring1  6 0 -1  ring_01_{s}
                          {s}Ring2  3 0 0  ring_02_{s}
                            {s}Ring3  2 0 0  ring_03_{s}
                        {s}Pinky1  5 0 -2  pinky_01_{s}
                          {s}Pinky2  2 0 0  pinky_02_{s}
                            {s}Pinky3  2 0 0  pinky_03_{s}
"""

SMPLH = f"""
pelvis  0 100 0  hips
  {{side}}_hip  9 -5 0  upper_leg_{{s}}
    {{side}}_knee  0 -45 0  lower_leg_{{s}}
      {{side}}_ankle  0 -42 0  foot_{{s}}
        {{side}}_foot  0 -8 12  toes_{{s}}
  spine1  0 10 0  spine_01
    spine2  0 10 0  spine_02
      spine3  0 10 0  spine_04
        neck  0 12 0  neck_01
          head  0 8 0  head
        {{side}}_collar  4 8 0  clavicle_{{s}}
          {{side}}_shoulder  12 0 0  upper_arm_{{s}}
            {{side}}_elbow  28 0 0  lower_arm_{{s}}
              {{side}}_wrist  25 0 0  hand_{{s}}
{fingers("{side}_{F}{n}", 8, words=("thumb", "index", "middle", "ring", "pinky"))}
"""

SMPL = """
pelvis  0 100 0  hips
  {side}_hip  9 -5 0  upper_leg_{s}
    {side}_knee  0 -45 0  lower_leg_{s}
      {side}_ankle  0 -42 0  foot_{s}
        {side}_foot  0 -8 12  toes_{s}
  spine1  0 10 0  spine_01
    spine2  0 10 0  spine_02
      spine3  0 10 0  spine_04
        neck  0 12 0  neck_01
          head  0 8 0  head
        {side}_collar  4 8 0  clavicle_{s}
          {side}_shoulder  12 0 0  upper_arm_{s}
            {side}_elbow  28 0 0  lower_arm_{s}
              {side}_wrist  25 0 0  hand_{s}
                {side}_hand  8 0 0  -
"""

VICON_BLADE = f"""
Hips  0 100 0  hips
  {{Side}}UpLeg  9 -5 0  upper_leg_{{s}}
    {{Side}}UpLegRoll  0 -22 0  -
      {{Side}}Leg  0 -23 0  lower_leg_{{s}}
        {{Side}}LegRoll  0 -21 0  -
          {{Side}}Foot  0 -21 0  foot_{{s}}
            {{Side}}ToeBase  0 -8 12  toes_{{s}}
  Spine  0 8 0  spine_01
    Spine1  0 8 0  spine_02
      Spine2  0 8 0  spine_03
        Spine3  0 8 0  spine_04
          Neck  0 10 0  neck_01
            Neck1  0 5 0  neck_02
              Head  0 8 0  head
          {{Side}}Shoulder  4 8 0  clavicle_{{s}}
            {{Side}}Arm  12 0 0  upper_arm_{{s}}
              {{Side}}ArmRoll  14 0 0  -
                {{Side}}ForeArm  14 0 0  lower_arm_{{s}}
                  {{Side}}ForeArmRoll  12 0 0  -
                    {{Side}}Hand  13 0 0  hand_{{s}}
{fingers("{Side}Hand{F}{n}", 11)}
"""

BANDAI = """
joint_Root  0 0 0  -
  Hips  0 100 0  hips
    Spine  0 12 0  spine_01
      Chest  0 15 0  spine_04
        Neck  0 14 0  neck_01
          Head  0 9 0  head
        Shoulder_{S}  4 10 0  clavicle_{s}
          UpperArm_{S}  12 0 0  upper_arm_{s}
            LowerArm_{S}  28 0 0  lower_arm_{s}
              Hand_{S}  25 0 0  hand_{s}
    UpperLeg_{S}  9 -5 0  upper_leg_{s}
      LowerLeg_{S}  0 -45 0  lower_leg_{s}
        Foot_{S}  0 -42 0  foot_{s}
          Toes_{S}  0 -8 12  toes_{s}
"""

THESIS = """
Hips  0 100 0  hips
  Abdomen  0 10 0  spine_01
    Chest  0 15 0  spine_04
      Neck  0 14 0  neck_01
        Head  0 9 0  head
      {Side}Collar  4 10 0  clavicle_{s}
        {Side}UpArm  12 0 0  upper_arm_{s}
          {Side}LowArm  28 0 0  lower_arm_{s}
            {Side}Hand  25 0 0  hand_{s}
  {Side}UpLeg  9 -5 0  upper_leg_{s}
    {Side}LowLeg  0 -45 0  lower_leg_{s}
      {Side}Foot  0 -42 0  foot_{s}
"""

BIPED_GAME = f"""
Bip01  0 0 0  -
  Bip01 Pelvis  0 100 0  hips
    Balance  0 2 0  -
      Bip01 Spine  0 5 0  spine_01
        Bip01 Spine1  0 10 0  spine_02
          Bip01 Spine2  0 10 0  spine_03
            Bip01 Spine3  0 10 0  spine_04
              Bip01 Neck  0 10 0  neck_01
                Bip01 Head  0 8 0  head
                  face_ingame_{{s}}_eye  3 6 8  -
                Bip01 {{S}} Clavicle  3 0 0  clavicle_{{s}}
                  Bip01 {{S}} UpperArm  12 0 0  upper_arm_{{s}}
                    Bip01 {{S}} Forearm  28 0 0  lower_arm_{{s}}
                      Bip01 {{S}} Hand  25 0 0  hand_{{s}}
{fingers("Bip01 {S} Finger{F}{n}", 12, words=("0", "1", "2", "3", "4"), segments=("", "1", "2"))}
                        Bip01 {{S}} Prop  4 0 0  -
                    Bip01 {{S}} ForeTwist  10 0 0  -
                  Bip01 {{S}}UpArmTwist  0 0 0  -
                  Jiggle_{{S}}_Colar  0 2 0  -
    Bip01 {{S}} Thigh  9 -5 0  upper_leg_{{s}}
      Bip01 {{S}} Calf  0 -45 0  lower_leg_{{s}}
        Bip01 {{S}} Foot  0 -42 0  foot_{{s}}
          Bip01 {{S}} Toe0  0 -8 12  toes_{{s}}
  Bip01 {{S}} Hand Effector  0 0 0  -
  {{s}}_shoulder_joint  0 0 0  -
"""

MAKEHUMAN = f"""
root  0 100 0  hips
  spine05  0 5 0  spine_01
    spine04  0 6 0  spine_02
      spine03  0 6 0  -
        spine02  0 6 0  spine_03
          breast.{{S}}  6 -3 8  -
          spine01  0 6 0  spine_04
            neck01  0 10 0  neck_01
              neck02  0 2 0  -
                neck03  0 2 0  neck_02
                  head  0 4 0  head
                    jaw  0 -2 4  -
            clavicle.{{S}}  2 6 2  clavicle_{{s}}
              shoulder01.{{S}}  8 0 -1  -
                upperarm01.{{S}}  6 0 0  upper_arm_{{s}}
                  upperarm02.{{S}}  13 0 0  -
                    lowerarm01.{{S}}  14 0 0  lower_arm_{{s}}
                      lowerarm02.{{S}}  12 0 0  -
                        wrist.{{S}}  12 0 0  hand_{{s}}
{fingers("finger{F}-{n}.{S}", 13, words=("1", "2", "3", "4", "5"), metacarpal="metacarpal{F}.{S}")}
  pelvis.{{S}}  0 -5 0  -
    upperleg01.{{S}}  9 0 0  upper_leg_{{s}}
      upperleg02.{{S}}  0 -22 0  -
        lowerleg01.{{S}}  0 -23 0  lower_leg_{{s}}
          lowerleg02.{{S}}  0 -21 0  -
            foot.{{S}}  0 -21 0  foot_{{s}}
              toe1-1.{{S}}  -1 -8 12  toes_{{s}}
                toe1-2.{{S}}  0 0 3  -
              toe2-1.{{S}}  1 -8 12  -
"""

CONVENTIONS = {
    "mixamo": MIXAMO, "cmu_bvh": CMU_BVH, "cmu_asf": CMU_ASF, "acclaim_h": ACCLAIM_H, "biovision": BIOVISION,
    "biped": BIPED, "ue4_mannequin": UE4, "ue5_mannequin": UE5, "unity_humanoid": UNITY,
    "godot_humanoid": GODOT_VRM1, "rigify": RIGIFY, "rigify_def": RIGIFY_DEF, "daz_genesis": DAZ_G8,
    "smpl": SMPL, "smplh": SMPLH, "vicon_blade": VICON_BLADE, "bandai": BANDAI, "thesis": THESIS,
    "biped_game": BIPED_GAME, "makehuman": MAKEHUMAN,
}
