"""Until ``core.naming`` lands on main: the pinned canonical names and hand-written corpus mappings.

``install()`` puts a stand-in module in place only when the real one is missing.
``hand_mapping(skeleton)`` maps the corpus conventions by name tables typed here.
"""

from __future__ import annotations

import itertools
import re
import sys
import types

SIDES = ("l", "r")
FINGERS = ("thumb", "index", "middle", "ring", "pinky")


def _canonical() -> tuple[tuple[str, ...], dict[str, str | None]]:
    parents: dict[str, str | None] = {"hips": None}
    chain = ["hips", "spine_01", "spine_02", "spine_03", "spine_04", "neck_01", "neck_02", "head"]
    for parent, child in itertools.pairwise(chain):
        parents[child] = parent
    for side in SIDES:
        arm = ["spine_04", f"clavicle_{side}", f"upper_arm_{side}", f"lower_arm_{side}", f"hand_{side}"]
        for parent, child in itertools.pairwise(arm):
            parents[child] = parent
        for finger in FINGERS:
            links = [f"hand_{side}"] + [f"{finger}_0{k}_{side}" for k in (1, 2, 3)]
            for parent, child in itertools.pairwise(links):
                parents[child] = parent
    for side in SIDES:
        leg = ["hips", f"upper_leg_{side}", f"lower_leg_{side}", f"foot_{side}", f"toes_{side}"]
        for parent, child in itertools.pairwise(leg):
            parents[child] = parent
    return tuple(parents), parents


def install() -> None:
    try:
        import mocap_addon.core.naming
    except ImportError:
        joints, parents = _canonical()
        module = types.ModuleType("mocap_addon.core.naming")
        module.CANONICAL_JOINTS = joints  # type: ignore[attr-defined]
        module.CANONICAL_PARENTS = parents  # type: ignore[attr-defined]

        def map_skeleton(skeleton, *, preset=None):
            return hand_mapping(skeleton)

        module.map_skeleton = map_skeleton  # type: ignore[attr-defined]
        sys.modules["mocap_addon.core.naming"] = module
        import mocap_addon.core

        mocap_addon.core.naming = module  # type: ignore[attr-defined]


# Side-free names (lower case, no separators) -> canonical stem.
_TABLE = {
    "hips": "hips", "root": "hips", "spine": "spine_01", "lowerback": "spine_01", "spine1": "spine_02",
    "upperback": "spine_02", "spine2": "spine_04", "thorax": "spine_04", "chest": "spine_04",
    "neck": "neck_01", "lowerneck": "neck_01", "neck1": "neck_02", "upperneck": "neck_02", "head": "head",
    "shoulder": "clavicle", "clavicle": "clavicle", "collar": "clavicle", "arm": "upper_arm",
    "humerus": "upper_arm", "upperarm": "upper_arm", "uparm": "upper_arm", "forearm": "lower_arm",
    "radius": "lower_arm", "lowerarm": "lower_arm", "lowarm": "lower_arm", "hand": "hand", "wrist": "hand",
    "upleg": "upper_leg", "femur": "upper_leg", "upperleg": "upper_leg", "leg": "lower_leg",
    "tibia": "lower_leg", "lowerleg": "lower_leg", "lowleg": "lower_leg", "foot": "foot", "toebase": "toes",
    "toes": "toes", "fingers": "middle_01", "thumb": "thumb_01",
}
_GENO_SPINE = {"spine": "spine_01", "spine1": "spine_02", "spine2": "spine_03", "spine3": "spine_04"}


def _side_and_stem(name: str) -> tuple[str | None, str]:
    bare = name.split(":")[-1]
    for pattern, side in ((r"^Left(.+)$", "l"), (r"^Right(.+)$", "r"), (r"^(.+)_L$", "l"), (r"^(.+)_R$", "r"),
                          (r"^l([a-z].*)$", "l"), (r"^r([a-z].*)$", "r"), (r"^L([A-Z].*)$", "l"),
                          (r"^R([A-Z].*)$", "r")):
        found = re.match(pattern, bare)
        single_letter = pattern.startswith(("^l", "^r", "^L(", "^R("))
        if found and (not single_letter or found.group(1).lower() in _TABLE):
            return side, found.group(1).lower()
    return None, bare.lower()


def hand_mapping(skeleton) -> dict[str, str | None]:
    """Joint -> canonical joint for the humanoid corpus files (hand-typed tables)."""
    names = skeleton.names
    geno = "Spine3" in names
    mapping: dict[str, str | None] = {}
    for name in names:
        side, stem = _side_and_stem(name)
        finger = re.match(r"^hand(thumb|index|middle|ring|pinky)([123])$", stem)
        if side and finger:
            mapping[name] = f"{finger.group(1)}_0{finger.group(2)}_{side}"
        elif stem == "handindex1" and side:
            mapping[name] = f"index_01_{side}"
        elif side is None and geno and stem in _GENO_SPINE:
            mapping[name] = _GENO_SPINE[stem]
        elif side is None and stem in _TABLE and not _TABLE[stem].startswith(("clavicle", "upper", "lower")):
            mapping[name] = _TABLE[stem]
        elif side is not None and stem in _TABLE:
            mapping[name] = f"{_TABLE[stem]}_{side}"
        else:
            mapping[name] = None
    if "joint_Root" in names:  # Bandai: the root above the hips
        mapping["joint_Root"] = None
    if "Spine" in names and "Chest" in names:  # Bandai / Biovision: Spine, Chest
        mapping["Spine"] = "spine_01"
    if "LowerBack" in names:  # CMU BVH: LowerBack, Spine, Spine1
        mapping.update(LowerBack="spine_01", Spine="spine_02", Spine1="spine_04")
    used: set[str] = set()
    for name in names:  # first come keeps a canonical joint
        if mapping[name] in used:
            mapping[name] = None
        elif mapping[name] is not None:
            used.add(mapping[name])  # type: ignore[arg-type]
    return mapping
