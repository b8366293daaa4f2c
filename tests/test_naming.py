"""Bone-name mapping onto the canonical skeleton: every convention, the clashes, the corpus, invariances."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mocap_addon.core import Skeleton, load
from mocap_addon.core.kinematics import rest_positions
from mocap_addon.core.naming import (
    CANONICAL_JOINTS,
    CANONICAL_PARENTS,
    REQUIRED_JOINTS,
    Preset,
    builtin_presets,
    canonical_ancestors,
    canonical_side,
    explain_mapping,
    load_preset,
    map_skeleton,
    missing_joints,
    preset_from_dict,
    save_preset,
)
from mocap_addon.core.naming.names import read_name
from tests.conftest import CORPUS, REPO, SAMPLES, corpus_files
from tests.skeleton_outlines import CONVENTIONS, outline

LIMBS = tuple(f"{part}_{side}" for side in "lr" for part in
              ("clavicle", "upper_arm", "lower_arm", "hand", "upper_leg", "lower_leg", "foot", "toes"))
NOT_HUMANOID = {"ganim_Crab-dance-long.bvh", "fm_sinusoidal.bvh", "bvhanim_test_simple.bvh",
                "gpr450_maya_export_v1.htr", "gpr450_maya_export_v2.htr"}


def assert_invariants(skeleton: Skeleton, mapping: dict[str, str | None]) -> None:
    """Every joint is a key; no canonical joint twice; canonical ancestors map to the joint's ancestors."""
    assert list(mapping) == list(skeleton.names)
    used = [c for c in mapping.values() if c is not None]
    assert len(used) == len(set(used)), "a canonical joint is used twice"
    assert set(used) <= set(CANONICAL_JOINTS)
    owner = {c: name for name, c in mapping.items() if c is not None}
    for joint, (name, canonical) in enumerate(mapping.items()):
        if canonical is None:
            continue
        above = set()
        parent = skeleton.parents[joint]
        while parent >= 0:
            above.add(skeleton.names[parent])
            parent = skeleton.parents[parent]
        for ancestor in canonical_ancestors(canonical):
            if ancestor in owner:
                assert owner[ancestor] in above, f"{name} ({canonical}) is not below {owner[ancestor]} ({ancestor})"


# --------------------------------------------------------------------------- the canonical skeleton


def test_canonical_joints_are_the_issues_54_in_order():
    fingers = [f"{f}_{n:02d}" for f in ("thumb", "index", "middle", "ring", "pinky") for n in (1, 2, 3)]
    side = ["clavicle", "upper_arm", "lower_arm", "hand", "upper_leg", "lower_leg", "foot", "toes", *fingers]
    expected = ["hips", "spine_01", "spine_02", "spine_03", "spine_04", "neck_01", "neck_02", "head"]
    expected += [f"{p}_l" for p in side] + [f"{p}_r" for p in side]
    assert tuple(expected) == CANONICAL_JOINTS and len(CANONICAL_JOINTS) == 54


def test_canonical_parents_come_first_and_follow_the_issue():
    for index, joint in enumerate(CANONICAL_JOINTS):
        parent = CANONICAL_PARENTS[joint]
        assert parent is None if joint == "hips" else CANONICAL_JOINTS.index(parent) < index
    assert [CANONICAL_PARENTS[j] for j in ("spine_01", "spine_04", "neck_01", "head")] == \
        ["hips", "spine_03", "spine_04", "neck_02"]
    assert CANONICAL_PARENTS["clavicle_l"] == CANONICAL_PARENTS["clavicle_r"] == "spine_04"
    assert CANONICAL_PARENTS["upper_leg_r"] == "hips" and CANONICAL_PARENTS["toes_r"] == "foot_r"
    assert CANONICAL_PARENTS["thumb_01_l"] == CANONICAL_PARENTS["pinky_01_l"] == "hand_l"
    assert CANONICAL_PARENTS["index_03_r"] == "index_02_r" and CANONICAL_PARENTS["hand_r"] == "lower_arm_r"
    assert canonical_side("ring_02_l") == "l" and canonical_side("neck_02") is None
    assert canonical_side("upper_leg_r") == "r"
    with pytest.raises(ValueError):
        canonical_side("LeftArm")
    assert set(REQUIRED_JOINTS) <= set(CANONICAL_JOINTS) and len(REQUIRED_JOINTS) == 15


# --------------------------------------------------------------------------- reading names


@pytest.mark.parametrize(("name", "core", "side", "roles"), [
    ("mixamorig:LeftForeArm", "forearm", "l", ("lower_arm",)),
    ("DEF-forearm.R.001", "forearm", "r", ("lower_arm",)),
    ("lowerarm_l", "lowerarm", "l", ("lower_arm",)),
    ("Bip01 R Forearm", "forearm", "r", ("lower_arm",)),
    ("LThumb", "thumb", "l", ("thumb",)),
    ("lhumerus", "humerus", "l", ("upper_arm",)),
    ("rtibia", "tibia", "r", ("lower_leg",)),
    ("lowerback", "lowerback", None, ("spine",)),
    ("LOWERBACK", "lowerback", None, ("spine",)),
    ("lShldrBend", "shldrbend", "l", ("upper_arm",)),
    ("h_right_low_arm", "lowarm", "r", ("lower_arm",)),
    ("J_Bip_L_UpperArm", "upperarm", "l", ("upper_arm",)),
    ("mShoulderLeft", "shoulder", "l", ("clavicle", "upper_arm")),
    ("upper_arm.L", "upperarm", "l", ("upper_arm",)),
    ("Hand_R", "hand", "r", ("hand",)),
    ("left_foot", "foot", "l", ("foot", "toes")),
    ("Leg", "leg", None, ("upper_leg", "lower_leg")),
    ("root", "root", None, ()),
])
def test_names_give_part_and_side(name, core, side, roles):
    reading = read_name(name)
    assert (reading.core, reading.side, reading.roles, reading.fold) == (core, side, roles, None)


@pytest.mark.parametrize(("name", "reason"), [
    ("LHipJoint", "pelvis offset"), ("rButtock", "pelvis offset"), ("upperarm_twist_01_l", "twist bone"),
    ("LeftArmRoll", "roll bone"), ("HeadTop_End", "end bone"), ("Bip01 L Finger0Nub", "end bone"),
    ("LeftFingerBase", "metacarpal"), ("lCarpal2", "metacarpal"), ("palm.03.R", "metacarpal"),
    ("lMetatarsals", "metatarsal"), ("ik_foot_l", "IK helper"), ("weapon_r", "prop"),
    ("mixamorig:LeftEye", "face or hair bone"), ("heel.02.L", "secondary bone"),
    ("upperarm_correctiveRoot_l", "helper bone"),
])
def test_names_that_fold(name, reason):
    assert read_name(name).fold == reason


def test_shoulder_bend_is_not_an_end_bone_and_metacarpals_are_marked():
    assert read_name("rShldrBend").fold is None and read_name("LeftToeBaseEnd").fold == "end bone"
    assert read_name("index_metacarpal_l").metacarpal and read_name("LeftThumbMetacarpal").roles == ("thumb",)
    assert not read_name("f_index.01.L").metacarpal


# --------------------------------------------------------------------------- every convention


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
def test_convention_maps_every_joint(convention):
    skeleton, expected = outline(CONVENTIONS[convention])
    mapping = map_skeleton(skeleton)
    wrong = {name: (mapping[name], want) for name, want in expected.items() if mapping[name] != want}
    assert not wrong, f"got, expected: {wrong}"
    assert_invariants(skeleton, mapping)
    assert not missing_joints(mapping, REQUIRED_JOINTS)


@pytest.mark.parametrize("name", sorted(builtin_presets()))
def test_builtin_preset_agrees_with_detection_on_its_convention(name):
    skeleton, expected = outline(CONVENTIONS[name])
    preset = builtin_presets()[name]
    listed = [joint for joint in skeleton.names if preset.lookup(joint)[0]]
    assert len(listed) >= min(20, len(skeleton.names) // 2), "the preset should name most joints"
    for source in (preset, name):
        assert map_skeleton(skeleton, preset=source) == expected
    explained = explain_mapping(skeleton, preset=preset)
    assert all(explained[joint] == f"preset {preset.name}" or explained[joint] == f"folded: preset {preset.name}"
               for joint in listed)


def test_preset_wins_over_detection_and_keeps_the_mapping_injective():
    skeleton, _ = outline(CONVENTIONS["bandai"])
    preset = Preset("swap", {"Shoulder_L": "upper_arm_l", "Spine": None})
    mapping = map_skeleton(skeleton, preset=preset)
    assert mapping["Shoulder_L"] == "upper_arm_l" and mapping["Spine"] is None
    assert mapping["UpperArm_L"] is None  # the preset gave its canonical joint to its parent
    assert_invariants(skeleton, mapping)
    why = explain_mapping(skeleton, preset=preset)
    assert why["Shoulder_L"] == "preset swap" and why["Spine"] == "folded: preset swap"


def test_preset_matching_ignores_namespace_prefix_and_case():
    preset = preset_from_dict({"name": "t", "strip_prefixes": ["ORG-"], "joints": {"Spine.003": "spine_04"}})
    assert preset.lookup("rig:ORG-spine.003") == (True, "spine_04")
    assert preset.lookup("DEF-spine.003") == (False, None)


# --------------------------------------------------------------------------- the clashes


def test_left_shoulder_is_the_clavicle_before_an_arm_and_the_upper_arm_before_an_elbow():
    mixamo = map_skeleton(outline(CONVENTIONS["mixamo"])[0])
    assert mixamo["mixamorig1:LeftShoulder"] == "clavicle_l" and mixamo["mixamorig1:LeftArm"] == "upper_arm_l"
    biovision = map_skeleton(outline(CONVENTIONS["biovision"])[0])
    assert biovision["LeftShoulder"] == "upper_arm_l" and biovision["LeftCollar"] == "clavicle_l"
    no_collar, expected = outline("""
Hips  0 100 0  hips
  Chest  0 20 0  spine_04
    Head  0 25 0  head
    {Side}Shoulder  15 5 0  upper_arm_{s}
      {Side}Elbow  28 0 0  lower_arm_{s}
        {Side}Wrist  25 0 0  hand_{s}
  {Side}Hip  9 -5 0  upper_leg_{s}
    {Side}Knee  0 -45 0  lower_leg_{s}
      {Side}Ankle  0 -42 0  foot_{s}
""")
    assert map_skeleton(no_collar) == expected


def test_left_leg_is_the_shin_below_an_upper_leg_and_the_thigh_above_a_shin():
    mixamo = map_skeleton(outline(CONVENTIONS["mixamo"])[0])
    assert mixamo["mixamorig1:LeftLeg"] == "lower_leg_l"
    skeleton, expected = outline("""
Hips  0 100 0  hips
  Torso  0 25 0  spine_04
    Head  0 25 0  head
  {Side}Leg  9 -5 0  upper_leg_{s}
    {Side}Shin  0 -45 0  lower_leg_{s}
      {Side}Foot  0 -42 0  foot_{s}
""")
    assert map_skeleton(skeleton) == expected


def test_hip_names_an_upper_leg_a_pelvis_offset_or_the_hips():
    assert map_skeleton(outline(CONVENTIONS["biovision"])[0])["LeftHip"] == "upper_leg_l"
    assert map_skeleton(outline(CONVENTIONS["cmu_bvh"])[0])["LHipJoint"] is None
    daz = map_skeleton(outline(CONVENTIONS["daz_genesis"])[0])
    assert daz["hip"] == "hips" and daz["pelvis"] is None


def test_chest_is_the_top_of_a_short_spine_and_the_bottom_of_a_long_one():
    assert map_skeleton(outline(CONVENTIONS["bandai"])[0])["Chest"] == "spine_04"
    biovision = map_skeleton(outline(CONVENTIONS["biovision"])[0])
    assert [biovision[n] for n in ("Chest", "Chest2", "Chest3")] == ["spine_01", "spine_02", "spine_04"]


def test_leading_l_is_a_side_only_before_a_known_word():
    asf = map_skeleton(outline(CONVENTIONS["cmu_asf"])[0])
    assert asf["lowerback"] == "spine_01" and asf["lhumerus"] == "upper_arm_l" and asf["rfemur"] == "upper_leg_r"
    assert read_name("Lowerback").side is None and read_name("LThumb").side == "l"


def test_duplicate_suffix_is_dropped_but_rigify_segments_fold():
    skeleton, expected = outline(CONVENTIONS["bandai"])
    renamed = skeleton.copy()
    renamed.names = [f"{n}.001" for n in skeleton.names]
    assert list(map_skeleton(renamed).values()) == list(expected.values())
    rigify = map_skeleton(outline(CONVENTIONS["rigify_def"])[0])
    assert rigify["DEF-upper_arm.L"] == "upper_arm_l" and rigify["DEF-upper_arm.L.001"] is None
    assert rigify["DEF-spine.001"] == "spine_01" and rigify["DEF-spine"] == "hips"


# --------------------------------------------------------------------------- spine and neck lengths


@pytest.mark.parametrize(("count", "slots"), [
    (1, ["spine_04"]), (2, ["spine_01", "spine_04"]), (3, ["spine_01", "spine_02", "spine_04"]),
    (4, ["spine_01", "spine_02", "spine_03", "spine_04"]),
    (5, ["spine_01", "spine_02", None, "spine_03", "spine_04"]),
    (7, ["spine_01", None, "spine_02", None, "spine_03", None, "spine_04"]),
])
def test_spine_chains_of_any_length(count, slots):
    names = ["pelvis"] + [f"spine_{n}" for n in range(count)] + ["neck", "head"]
    names += [f"{p}_{s}" for s in "lr" for p in ("clavicle", "upperarm", "lowerarm", "hand", "thigh", "calf", "foot")]
    parents = [-1] + list(range(count)) + [count, count + 1]
    offsets = [[0, 100, 0]] + [[0, 8, 0]] * count + [[0, 10, 0], [0, 8, 0]]
    for side in (1, -1):
        base = len(parents)
        parents += [count, base, base + 1, base + 2, 0, base + 4, base + 5]
        offsets += [[4 * side, 6, 0], [12 * side, 0, 0], [28 * side, 0, 0], [25 * side, 0, 0],
                    [9 * side, -5, 0], [0, -45, 0], [0, -42, 0]]
    skeleton = Skeleton(names, parents, np.array(offsets, dtype=float), [() for _ in names])
    mapping = map_skeleton(skeleton)
    assert [mapping[f"spine_{n}"] for n in range(count)] == slots
    assert mapping["neck"] == "neck_01" and mapping["head"] == "head"
    assert_invariants(skeleton, mapping)


# --------------------------------------------------------------------------- sides from the rest pose


def side_free(mirror: bool, suffixed: str) -> tuple[Skeleton, dict[str, str | None]]:
    """The Biovision skeleton with no side in its names (one chain of each pair named ``.001``, as a
    duplicated chain in Blender), mirrored or not; and the mapping expected."""
    skeleton, expected = outline(CONVENTIONS["biovision"])
    renamed, want = [], {}
    for name in skeleton.names:
        side = next((w for w in ("Left", "Right") if name.startswith(w)), None)
        new = name if side is None else name[len(side):] + (".001" if side == suffixed else "")
        canonical = expected[name]
        if canonical and mirror and canonical_side(canonical):
            canonical = canonical[:-1] + ("r" if canonical[-1] == "l" else "l")
        renamed.append(new)
        want[new] = canonical
    result = skeleton.copy()
    result.names = renamed
    if mirror:
        result.offsets = result.offsets * np.array([-1.0, 1.0, 1.0])
    return result, want


@pytest.mark.parametrize("mirror", [False, True])
@pytest.mark.parametrize("suffixed", ["Left", "Right"])
def test_sides_without_side_names_come_from_the_rest_pose(mirror, suffixed):
    skeleton, expected = side_free(mirror, suffixed)
    assert not any(read_name(n).side for n in skeleton.names)
    assert map_skeleton(skeleton) == expected
    assert explain_mapping(skeleton)["Elbow"].endswith("side from the rest pose")


def test_no_side_is_guessed_without_evidence():
    skeleton, _ = side_free(False, "Right")
    flat = skeleton.copy()
    flat.offsets = flat.offsets * np.array([1.0, 1.0, 0.0])  # toes level with the ankles: no forward direction
    mapping = map_skeleton(flat)
    assert not [c for c in mapping.values() if c and canonical_side(c)]
    assert mapping["Hips"] == "hips" and mapping["Head"] == "head" and mapping["Chest3"] == "spine_04"
    assert "no side evidence" in explain_mapping(flat)["Elbow"]


def test_unnamed_skeleton_is_mapped_by_topology_and_rest_pose():
    clip_skeleton, expected = outline(CONVENTIONS["cmu_bvh"])
    unnamed = clip_skeleton.copy()
    unnamed.names = [f"joint{n}" for n in range(len(unnamed.names))]
    mapping = map_skeleton(unnamed)
    assert_invariants(unnamed, mapping)
    got = {clip_skeleton.names[j]: mapping[n] for j, n in enumerate(unnamed.names)}
    for name, canonical in expected.items():
        if canonical in ("hips", "head", *LIMBS):
            assert got[name] == canonical, name


# --------------------------------------------------------------------------- not humanoid


FOUR_ARMS = """
Hips  0 100 0  hips
  Spine  0 10 0  spine_01
    Chest  0 20 0  spine_04
      Neck  0 12 0  neck_01
        Head  0 8 0  head
      {Side}Shoulder  4 8 0  clavicle_{s}
        {Side}Arm  12 0 0  upper_arm_{s}
          {Side}ForeArm  28 0 0  lower_arm_{s}
            {Side}Hand  25 0 0  hand_{s}
    {Side}Shoulder2  4 0 0  -
      {Side}Arm2  12 0 0  -
        {Side}ForeArm2  28 0 0  -
          {Side}Hand2  25 0 0  -
  {Side}UpLeg  9 -5 0  upper_leg_{s}
    {Side}Leg  0 -45 0  lower_leg_{s}
      {Side}Foot  0 -42 0  foot_{s}
"""

QUADRUPED = """
pelvis  0 80 -40  hips
  tail_01  0 0 -10  -
    tail_02  0 0 -10  -
  spine_01  0 0 20  spine_01
    spine_02  0 0 20  spine_02
      chest  0 0 20  spine_04
        neck  0 10 10  neck_01
          head  0 10 10  head
        front_leg_upper_{s}  8 -10 0  upper_arm_{s}
          front_leg_lower_{s}  0 -30 0  lower_arm_{s}
            front_paw_{s}  0 -30 0  hand_{s}
  back_thigh_{s}  8 -10 0  upper_leg_{s}
    back_shin_{s}  0 -30 0  lower_leg_{s}
      back_foot_{s}  0 -30 0  foot_{s}
        back_toes_{s}  0 -5 5  toes_{s}
"""


def test_four_armed_creature_maps_one_pair_of_arms():
    skeleton, expected = outline(FOUR_ARMS)
    mapping = map_skeleton(skeleton)
    assert mapping == expected
    assert_invariants(skeleton, mapping)


def test_quadruped_maps_what_fits():
    """Hind legs are legs, front legs take the arms' places, the tail folds."""
    skeleton, expected = outline(QUADRUPED)
    mapping = map_skeleton(skeleton)
    assert mapping == expected
    assert_invariants(skeleton, mapping)


@pytest.mark.parametrize("shape", ["empty", "one", "chain", "star", "long_chain", "wide", "crab"])
def test_shapes_that_are_not_bodies_never_raise(shape):
    if shape == "empty":
        names, parents = [], []
    elif shape == "one":
        names, parents = ["Hips"], [-1]
    elif shape in ("chain", "long_chain"):
        count = 5 if shape == "chain" else 3000
        names, parents = [f"bone{n}" for n in range(count)], list(range(-1, count - 1))
    elif shape == "star":
        names, parents = ["hub"] + [f"ray{n}" for n in range(40)], [-1] + [0] * 40
    elif shape == "wide":
        names = ["Hips"] + [f"{side}Leg{n}_{part}" for side in ("Left", "Right") for n in range(4)
                            for part in ("a", "b", "c")]
        parents = [-1] + [0 if k % 3 == 0 else k for k in range(24)]
    else:
        names = ["body"] + [f"leg_{side}_{n}_{k}" for side in "LR" for n in range(4) for k in range(3)]
        parents = [-1] + [0 if k % 3 == 0 else k for k in range(24)]
    rng = np.random.default_rng(7)
    skeleton = Skeleton(names, parents, rng.normal(size=(len(names), 3)), [() for _ in names])
    mapping = map_skeleton(skeleton)
    assert_invariants(skeleton, mapping)
    assert set(explain_mapping(skeleton)) == set(names)


# --------------------------------------------------------------------------- invariance


SEPARATORS = re.compile(r"[ _\-.]")


@st.composite
def respelled(draw):
    """A convention's skeleton with a namespace or prefix, case and separator changes and `.001` suffixes."""
    convention = draw(st.sampled_from(sorted(CONVENTIONS)))
    skeleton, expected = outline(CONVENTIONS[convention])
    prefix = draw(st.sampled_from(["", "rig:", "Character1:", "a:b:", "ORG-", "DEF-", "MCH-"]))
    names = []
    for name in skeleton.names:
        namespace, _, local = name.rpartition(":")
        case = draw(st.sampled_from([str.lower, str.upper, str.swapcase, lambda s: s]))
        local = SEPARATORS.sub(lambda _: draw(st.sampled_from([" ", "_", "-", "."])), local)
        if draw(st.booleans()):
            local += ".001"
        names.append((namespace + ":" if namespace else "") + prefix + case(local))
    assume(len(set(names)) == len(names))
    renamed = skeleton.copy()
    renamed.names = names
    return skeleton, renamed, expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(respelled())
def test_spelling_does_not_change_the_mapping(case):
    original, renamed, expected = case
    mapping = map_skeleton(renamed)
    assert list(mapping.values()) == [expected[n] for n in original.names]


# --------------------------------------------------------------------------- real files


def corpus_skeletons() -> list:
    files = [f for f in corpus_files("bvh", "*.bvh") + corpus_files("htr", "*.htr", "*.HTR")
             + corpus_files("asf_amc", "*.asf", "*.ASF") if "JSON_not_bvh" not in f.name]
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason="../shared/corpus is absent"))]
    return [pytest.param(f, id=f.name) for f in files]


@pytest.mark.parametrize("path", corpus_skeletons())
def test_corpus_file_maps_its_body(path):
    skeleton = load(path).skeleton
    mapping = map_skeleton(skeleton)
    assert_invariants(skeleton, mapping)
    if path.name in NOT_HUMANOID:
        return
    found = set(mapping.values())
    wanted = {"hips", "spine_04", "head", *LIMBS}
    if path.name == "bvhio_example.bvh":  # its legs end at the feet: no toe joints at all
        assert not any("toe" in n.lower() for n in skeleton.names)
        wanted -= {"toes_l", "toes_r"}
    assert wanted <= found, sorted(wanted - found)
    owner = {c: n for n, c in mapping.items() if c}
    for part in ("hand", "foot", "upper_arm"):  # left is left: the side the names say
        assert read_name(owner[f"{part}_l"]).side == "l" and read_name(owner[f"{part}_r"]).side == "r"


def test_cmu_take_maps_alike_as_asf_and_as_bvh():
    """The same CMU take as ASF and as BVH (the same joints in the same order, differently named) maps
    joint for joint alike; legs and spine, which the conversion kept in place, sit at the same rest places."""
    asf, bvh = CORPUS / "asf_amc" / "fm_01.asf", CORPUS / "bvh" / "fm_cmu_01_01.bvh"
    if not asf.is_file() or not bvh.is_file():
        pytest.skip("../shared/corpus is absent")
    skeletons = [load(path).skeleton for path in (asf, bvh)]
    mappings = [map_skeleton(skeleton) for skeleton in skeletons]
    assert list(mappings[0].values()) == list(mappings[1].values())
    assert sum(c is not None for c in mappings[0].values()) == 27
    kept_in_place = ("hips", "spine", "upper_leg", "lower_leg", "foot", "toes")
    lower = [n for n, c in enumerate(mappings[0].values()) if c and c.startswith(kept_in_place)]
    places = [rest_positions(skeleton)[lower] for skeleton in skeletons]
    assert len(lower) == 12 and np.allclose(places[0], places[1], atol=1e-4)


# --------------------------------------------------------------------------- presets as files


def test_builtin_presets_are_valid_data_naming_canonical_joints():
    presets = builtin_presets()
    assert {"mixamo", "rigify", "ue4_mannequin", "ue5_mannequin", "daz_genesis", "smpl", "cmu_asf", "biped"} <= set(
        presets)
    for preset in presets.values():
        assert preset.name and preset.description
        assert {c for c in preset.joints.values() if c} <= set(CANONICAL_JOINTS)


def test_preset_round_trip(tmp_path):
    preset = Preset("mine", {"Pelvis": "hips", "Tail": None}, ("rig_",), ("_jnt",), "my rig")
    save_preset(preset, tmp_path / "mine.json")
    assert load_preset(tmp_path / "mine.json") == preset
    assert preset.lookup("ns:RIG_pelvis_JNT") == (True, "hips")


@pytest.mark.parametrize(("content", "words"), [
    (b"{not json", "not a JSON preset"),
    (b"[1, 2]", "a preset is a JSON object"),
    (b'{"joints": {"Hips": "pelvis"}}', "'pelvis' is not a canonical joint"),
    (b'{"joints": {"Hips": 3}}', "is not a canonical joint"),
    (b'{"joints": ["Hips"]}', "'joints' must map"),
    (b'{"joints": {}, "strip_prefixes": "ORG-"}', "must be a list of strings"),
    (b'{"joints": {"": "hips"}}', "non-empty strings"),
    (b"\xff\xfe", "not a JSON preset"),
])
def test_bad_preset_files_are_refused_with_the_reason(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(words)) as caught:
        load_preset(path)
    assert str(path) in str(caught.value)


def test_preset_content_is_only_data(tmp_path):
    """Paths and code in a preset are plain strings: nothing is opened or run."""
    marker = tmp_path / "touched"
    data = {"name": "__import__('os').remove('x')", "joints": {str(marker): "hips", "../../etc/passwd": None},
            "include": str(tmp_path / "other.json")}
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    preset = load_preset(path)
    assert preset.lookup(str(marker)) == (True, "hips") and not marker.exists()


def test_huge_preset_is_refused(tmp_path):
    path = tmp_path / "huge.json"
    path.write_text('{"joints": {' + ",".join(f'"j{n}": null' for n in range(120000)) + "}}")
    with pytest.raises(ValueError, match="larger than"):
        load_preset(path)


# --------------------------------------------------------------------------- command line


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mocap_addon.core", "map", *args], cwd=REPO,
                          capture_output=True, text=True, check=False)


def test_cli_map_prints_each_joint_its_rule_and_what_is_missing():
    result = run_cli(str(SAMPLES / "walk_turn.bvh"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(re.match(r"Hips +-> hips +\(where the legs and the spine meet\)$", line) for line in lines)
    assert any(re.match(r"LeftForeArm +-> lower_arm_l +\(name in the left arm; side from name\)$", line)
               for line in lines)
    assert lines[-3].startswith("unmapped (") and lines[-2].startswith("missing canonical joints (")
    assert lines[-1] == "missing required joints: none"


def test_cli_map_takes_a_builtin_preset_or_a_file(tmp_path):
    preset = tmp_path / "p.json"
    preset.write_text(json.dumps({"name": "tiny", "joints": {"Hips": None}}))
    result = run_cli(str(SAMPLES / "walk_turn.bvh"), "--preset", str(preset))
    assert result.returncode == 0 and any(line.startswith("Hips ") and "(folded: preset tiny)" in line
                                          for line in result.stdout.splitlines())
    assert run_cli(str(SAMPLES / "walk_turn.bvh"), "--preset", "mixamo").returncode == 0
    bad = run_cli(str(SAMPLES / "walk_turn.bvh"), "--preset", "nonexistent")
    assert bad.returncode == 1 and "no preset 'nonexistent'" in bad.stderr
