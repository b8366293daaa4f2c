"""Bone-name mapping: any skeleton's joints onto one canonical 54-joint humanoid skeleton.

Names and topology together: names (read by :mod:`.joint_names`) find the
hands, feet and head and say which body part a joint may be; the tree settles
the rest.  The hips are where the legs and the spine meet, the top of the spine
(``spine_04``) where the arms and the neck branch, and each limb chain from its
fork to its hand or foot is labelled in order (clavicle, upper arm, lower arm;
upper leg, lower leg), so ``LeftShoulder`` is the clavicle when ``LeftArm``
follows it and the upper arm when ``LeftElbow`` does.  Where names give no side,
the rest pose does (left = up x forward); a side nothing supports is not guessed.

A preset (JSON data: explicit source -> canonical entries) is applied before
detection and wins over it.  The mapping is injective, and a mapped joint's
canonical ancestors map to its own ancestors.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import numpy as np

from .bones import unit
from .joint_names import DATA, FINGERS, NameReading, finger_roles, read_name
from .kinematics import rest_positions
from .model import Skeleton

SIDES = ("l", "r")
ARM = ("clavicle", "upper_arm", "lower_arm", "hand")
LEG = ("upper_leg", "lower_leg", "foot", "toes")
SPINE = ("spine_01", "spine_02", "spine_03", "spine_04")
NECK = ("neck_01", "neck_02")


def _side_joints(side: str) -> tuple[str, ...]:
    fingers = tuple(f"{finger}_{n:02d}" for finger in FINGERS for n in (1, 2, 3))
    return tuple(f"{part}_{side}" for part in ARM + LEG + fingers)


CANONICAL_JOINTS: tuple[str, ...] = ("hips", *SPINE, *NECK, "head", *_side_joints("l"), *_side_joints("r"))


def _canonical_parent(joint: str) -> str | None:
    if joint == "hips":
        return None
    trunk = ("hips", *SPINE, *NECK, "head")
    if joint in trunk:
        return trunk[trunk.index(joint) - 1]
    part, side = joint[:-2], joint[-1]
    if part == "clavicle":
        return "spine_04"
    if part == "upper_leg":
        return "hips"
    for chain in (ARM, LEG):
        if part in chain:
            return f"{chain[chain.index(part) - 1]}_{side}"
    finger, number = part.rsplit("_", 1)
    return f"hand_{side}" if number == "01" else f"{finger}_{int(number) - 1:02d}_{side}"


CANONICAL_PARENTS: dict[str, str | None] = {joint: _canonical_parent(joint) for joint in CANONICAL_JOINTS}

REQUIRED_JOINTS: tuple[str, ...] = ("hips", "spine_04", "head") + tuple(
    f"{part}_{side}" for side in SIDES for part in ("upper_arm", "lower_arm", "hand", "upper_leg", "lower_leg", "foot"))
"""The joints a humanoid retarget cannot do without."""


def canonical_side(joint: str) -> str | None:
    """``"l"`` or ``"r"`` for a canonical joint of one side, ``None`` for the trunk."""
    if joint not in CANONICAL_PARENTS:
        raise ValueError(f"{joint!r} is not a canonical joint")
    return joint[-1] if joint[-2:] in ("_l", "_r") else None


def canonical_ancestors(joint: str) -> list[str]:
    """The canonical joints above ``joint``, nearest first."""
    out = []
    parent = CANONICAL_PARENTS[joint]
    while parent is not None:
        out.append(parent)
        parent = CANONICAL_PARENTS[parent]
    return out


# --------------------------------------------------------------------------- presets

MAX_PRESET_BYTES = 1 << 20
PRESETS = DATA / "presets"


@dataclass(frozen=True)
class Preset:
    """A naming convention as data: explicit source joint -> canonical entries (``None`` folds).

    Source names are matched without their namespace (``ns:``), without the
    listed literal prefixes and suffixes, and case-blind.  Several source names
    may give the same canonical joint (spellings of one convention's versions);
    in one skeleton the first of them takes it.
    """

    name: str
    joints: Mapping[str, str | None]
    strip_prefixes: tuple[str, ...] = ()
    strip_suffixes: tuple[str, ...] = ()
    description: str = ""
    _table: dict[str, str | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_table", {self.key(k): v for k, v in self.joints.items()})

    def key(self, name: str) -> str:
        """How a source name is compared: no namespace, no listed prefix or suffix, case-blind."""
        text = name.replace("|", ":").rsplit(":", 1)[-1].casefold()
        for prefix in self.strip_prefixes:
            if prefix and text.startswith(prefix.casefold()):
                text = text[len(prefix):]
                break
        for suffix in self.strip_suffixes:
            if suffix and text.endswith(suffix.casefold()):
                text = text[: -len(suffix)]
                break
        return text

    def lookup(self, name: str) -> tuple[bool, str | None]:
        """(whether the preset names this joint, its canonical joint or ``None``)."""
        key = self.key(name)
        return (key in self._table, self._table.get(key))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "strip_prefixes": list(self.strip_prefixes),
                "strip_suffixes": list(self.strip_suffixes), "joints": dict(self.joints)}


def preset_from_dict(data: Any, source: str = "preset") -> Preset:
    """Check a preset's content (plain data only) and build it; ``ValueError`` names what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: a preset is a JSON object")
    joints = data.get("joints")
    if not isinstance(joints, dict):
        raise ValueError(f"{source}: 'joints' must map source joint names to canonical names")
    for joint, canonical in joints.items():
        if not isinstance(joint, str) or not joint:
            raise ValueError(f"{source}: joint names must be non-empty strings")
        if canonical is not None and canonical not in CANONICAL_PARENTS:
            raise ValueError(f"{source}: {joint!r} -> {canonical!r} is not a canonical joint")
    lists = {}
    for key in ("strip_prefixes", "strip_suffixes"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{source}: {key!r} must be a list of strings")
        lists[key] = tuple(value)
    name, description = data.get("name", source), data.get("description", "")
    if not isinstance(name, str) or not isinstance(description, str):
        raise ValueError(f"{source}: 'name' and 'description' must be strings")
    return Preset(name, dict(joints), lists["strip_prefixes"], lists["strip_suffixes"], description)


def load_preset(path: str | os.PathLike[str]) -> Preset:
    """Read a preset JSON file.  Its content is only data: nothing in it is run or opened."""
    with open(path, "rb") as handle:
        raw = handle.read(MAX_PRESET_BYTES + 1)
    if len(raw) > MAX_PRESET_BYTES:
        raise ValueError(f"{path}: larger than {MAX_PRESET_BYTES} bytes, not a preset")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a JSON preset ({error})") from None
    return preset_from_dict(data, os.fspath(path))


def save_preset(preset: Preset, path: str | os.PathLike[str]) -> None:
    """Write a preset as JSON (temp file, then rename)."""
    temporary = f"{os.fspath(path)}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(preset.to_dict(), handle, indent=2)
        handle.write("\n")
    os.replace(temporary, path)


@cache
def builtin_presets() -> dict[str, Preset]:
    """The conventions shipped with the add-on, by file stem (``mixamo``, ``rigify``, ...)."""
    return {path.stem: load_preset(path) for path in sorted(PRESETS.glob("*.json"))}


def find_preset(name_or_path: str | os.PathLike[str]) -> Preset:
    """A built-in preset by name, else a preset JSON file."""
    builtin = builtin_presets().get(os.fspath(name_or_path).casefold())
    if builtin is not None:
        return builtin
    if not os.path.isfile(name_or_path):
        raise ValueError(f"no preset {os.fspath(name_or_path)!r}: built-in ones are {', '.join(builtin_presets())}")
    return load_preset(name_or_path)


# --------------------------------------------------------------------------- public mapping API

PresetLike = Preset | str | os.PathLike[str] | None


def map_skeleton(skeleton: Skeleton, *, preset: PresetLike = None) -> dict[str, str | None]:
    """Every joint name -> its canonical joint, or ``None`` where it folds into a neighbour."""
    return {name: label for name, (label, _) in _Mapper(skeleton, _as_preset(preset)).run().items()}


def explain_mapping(skeleton: Skeleton, *, preset: PresetLike = None) -> dict[str, str]:
    """Every joint name -> the rule that gave it its canonical joint (or left it unmapped)."""
    return {name: rule for name, (_, rule) in _Mapper(skeleton, _as_preset(preset)).run().items()}


def mapping_report(skeleton: Skeleton, *, preset: PresetLike = None) -> str:
    """Text for people: ``source -> canonical  (rule)`` per joint, then unmapped joints and missing ones."""
    result = _Mapper(skeleton, _as_preset(preset)).run()
    width = max((len(name) for name in result), default=0)
    lines = [f"{name:<{width}} -> {label or '-':<13} ({rule})" for name, (label, rule) in result.items()]
    mapping = {name: label for name, (label, _) in result.items()}
    unmapped = [name for name, label in mapping.items() if label is None]
    missing = missing_joints(mapping)
    required = [joint for joint in missing if joint in REQUIRED_JOINTS]
    lines.append(f"unmapped ({len(unmapped)}): {', '.join(unmapped) or 'none'}")
    lines.append(f"missing canonical joints ({len(missing)} of {len(CANONICAL_JOINTS)}): "
                 f"{', '.join(missing) or 'none'}")
    lines.append(f"missing required joints: {', '.join(required) or 'none'}")
    return "\n".join(lines)


def missing_joints(mapping: Mapping[str, str | None], wanted: Iterable[str] = CANONICAL_JOINTS) -> list[str]:
    """The wanted canonical joints no joint maps to, in canonical order."""
    found = set(mapping.values())
    return [joint for joint in wanted if joint not in found]


def _as_preset(preset: PresetLike) -> Preset | None:
    return preset if preset is None or isinstance(preset, Preset) else find_preset(preset)


# --------------------------------------------------------------------------- detection

_ADJACENT = 0.5  # chain position: consecutive joints taking consecutive parts
_REPEAT = 0.6  # a repeated name (``upper_arm.001``): the first segment is the joint


@dataclass
class _Limb:
    kind: str  # "arm" or "leg"
    fork: int  # the joint the limb hangs from
    anchor: int  # hand or foot
    chain: list[int]  # joints from below the fork to the anchor, anchor included
    side: str | None = None
    side_rule: str = ""


class _Mapper:
    """One mapping run: readings, tree, anchors, then labels and the rule for each joint."""

    def __init__(self, skeleton: Skeleton, preset: Preset | None):
        self.names = list(skeleton.names)
        self.parents = list(skeleton.parents)
        self.children = skeleton.child_lists()
        self.preset = preset
        self.readings = [self._reading(name) for name in self.names]
        try:
            self.positions = rest_positions(skeleton)
        except (ValueError, FloatingPointError):
            self.positions = np.zeros((len(self.names), 3))
        self.positions = np.nan_to_num(self.positions, nan=0.0, posinf=0.0, neginf=0.0)
        self.end_sites = skeleton.end_sites
        self.depth = [0] * len(self.names)
        for joint, parent in enumerate(self.parents):
            self.depth[joint] = 0 if parent < 0 else self.depth[parent] + 1
        self.size = [1] * len(self.names)
        for joint in range(len(self.names) - 1, -1, -1):
            if self.parents[joint] >= 0:
                self.size[self.parents[joint]] += self.size[joint]
        self.labels: dict[int, str] = {}
        self.rules: dict[int, str] = {}

    # ----- names

    def _reading(self, name: str) -> NameReading:
        reading = read_name(name)
        if self.preset is None:
            return reading
        listed, canonical = self.preset.lookup(name)
        if not listed:
            return reading
        if canonical is None:
            return replace(reading, roles=(), fold=f"preset {self.preset.name}")
        side = canonical_side(canonical)
        part = canonical[:-2] if side else canonical
        family = part.split("_")[0] if part.startswith((*FINGERS, "spine_", "neck_")) else part
        return replace(reading, roles=(family,), side=side or reading.side, fold=None, metacarpal=False)

    def roles(self, joint: int) -> tuple[str, ...]:
        return self.readings[joint].roles

    def folded(self, joint: int) -> bool:
        return self.readings[joint].fold is not None

    def central(self, joint: int, role: str) -> bool:
        """The joint's name is the trunk part ``role`` with no side."""
        reading = self.readings[joint]
        return reading.side is None and reading.fold is None and role in reading.roles

    # ----- tree

    def ancestors(self, joint: int) -> list[int]:
        out = []
        while joint >= 0:
            out.append(joint)
            joint = self.parents[joint]
        return out

    def is_ancestor(self, upper: int, lower: int) -> bool:
        """``upper`` is ``lower`` or above it."""
        return upper in self.ancestors(lower)

    def common_ancestor(self, joints: Iterable[int]) -> int | None:
        joints = list(joints)
        common: list[int] | None = None
        for joint in joints:
            line = self.ancestors(joint)[::-1]
            if common is None:
                common = line
            else:
                length = 0
                while length < min(len(common), len(line)) and common[length] == line[length]:
                    length += 1
                common = common[:length]
        return common[-1] if common else None

    def path(self, upper: int, lower: int) -> list[int]:
        """Joints below ``upper`` down to ``lower`` (``lower`` included)."""
        line = self.ancestors(lower)
        return line[: line.index(upper)][::-1]

    def label(self, joint: int, canonical: str, rule: str) -> None:
        holder = next((j for j, c in self.labels.items() if c == canonical and j != joint), None)
        if holder is not None:
            self.rules[joint] = f"unmapped: {canonical} is already {self.names[holder]}"
            return
        self.labels[joint] = canonical
        self.rules[joint] = rule

    def fold(self, joint: int, rule: str) -> None:
        """Record why a joint folds, unless something (its name, a label) already says."""
        if not self.folded(joint):
            self.rules.setdefault(joint, f"folded: {rule}")

    # ----- run

    def run(self) -> dict[str, tuple[str | None, str]]:
        if self.names:
            self._detect()
        if self.preset is not None:
            self._apply_preset()
        self._keep_consistent()
        out = {}
        for joint, name in enumerate(self.names):
            reading = self.readings[joint]
            rule = self.rules.get(joint)
            if rule is None:
                rule = f"folded: {reading.fold} (name)" if reading.fold else "unmapped: not on the body's chains"
            out[name] = (self.labels.get(joint), rule)
        return out

    def _detect(self) -> None:
        head = self._head_by_name(self._top_named("hand") + self._top_named("foot"))
        hands = self._anchors("hand", head)
        feet = self._anchors("foot", head)
        arm_fork = self.common_ancestor(hands + ([head] if head is not None else [])) if len(hands) == 2 else None
        leg_fork = None
        if len(feet) == 2:
            upper = arm_fork if arm_fork is not None else head
            leg_fork = self.common_ancestor(feet + ([upper] if upper is not None else []))
        if leg_fork is None or arm_fork is None:
            leg_fork, arm_fork, feet, hands, head = self._by_topology(leg_fork, arm_fork, feet, hands, head)
        if leg_fork is not None and arm_fork is not None and not self.is_ancestor(leg_fork, arm_fork):
            arm_fork, hands = None, []  # arms above the legs' fork: not a body we know
        limbs = [self._limb("arm", arm_fork, h) for h in hands] if arm_fork is not None else []
        limbs += [self._limb("leg", leg_fork, f) for f in feet] if leg_fork is not None else []
        hips, hips_rule = self._hips(leg_fork)
        chest = self._chest(hips, arm_fork)
        if head is None and arm_fork is not None:
            head = self._head_by_topology(arm_fork, hands)
        if hips is not None:
            self.label(hips, "hips", hips_rule)
        self._trunk(hips, chest, arm_fork, head)
        self._settle_sides(limbs, hips, chest, head)
        for limb in limbs:
            if limb.side is None:
                for joint in limb.chain:
                    self.rules.setdefault(joint, f"unmapped: {limb.kind} with no side evidence (name or rest pose)")
                continue
            self._label_limb(limb)

    # ----- anchors

    def _top_named(self, role: str) -> list[int]:
        """Joints named ``role`` with no joint named so above them."""
        named = {j for j in range(len(self.names)) if role in self.roles(j) and not self.folded(j)}
        return sorted(j for j in named if not any(a in named for a in self.ancestors(j)[1:]))

    def _anchors(self, role: str, head: int | None) -> list[int]:
        """The two hands (or feet): the top joint named so in each branch; with more than two, per side
        the one with the biggest subtree (fingers), then the one branching off nearest the head."""
        top = self._top_named(role)
        if len(top) <= 2:
            return top if len(top) == 2 else []

        def near_head(joint: int) -> int:
            fork = self.common_ancestor([joint, head]) if head is not None else None
            return self.depth[fork] if fork is not None else 0

        by_side: dict[str | None, list[int]] = {}
        for joint in top:
            by_side.setdefault(self.readings[joint].side, []).append(joint)
        picked = [max(by_side[side], key=lambda j: (self.size[j], near_head(j), -j)) for side in SIDES
                  if by_side.get(side)]
        return picked if len(picked) == 2 else []

    def _head_by_name(self, limbs: list[int]) -> int | None:
        heads = [j for j in range(len(self.names)) if self.central(j, "head")
                 and not any(self.is_ancestor(limb, j) for limb in limbs)]
        return min(heads, key=lambda j: (self.depth[j], j)) if heads else None

    def _by_topology(self, leg_fork: int | None, arm_fork: int | None, feet: list[int], hands: list[int],
                     head: int | None) -> tuple[int | None, int | None, list[int], list[int], int | None]:
        """Forks and limb ends from the tree's shape where names did not give them.

        From the root, follow the biggest subtree: the first joint with two more
        branches at least three joints deep is the hips (legs), the next joint
        with two more branches at least two deep is the top of the spine.
        """
        roots = [j for j, p in enumerate(self.parents) if p < 0]
        joint: int | None = max(roots, key=lambda j: self.size[j])
        forks: list[tuple[int, list[int], int]] = []
        while joint is not None and len(forks) < 2:
            kids = [c for c in self.children[joint] if not self.folded(c)]
            if not kids:
                break
            main = max(kids, key=lambda c: self.size[c])
            deep = 3 if not forks else 2
            branches = [c for c in kids if c != main and self._chain_depth(c) >= deep]
            if len(branches) >= 2:
                forks.append((joint, branches, main))
            joint = main
        if leg_fork is None and forks and (arm_fork is None or (forks[0][0] != arm_fork
                                                                and self.is_ancestor(forks[0][0], arm_fork))):
            fork, branches, _ = forks[0]
            ends = [self._chain_end(b, "leg") for b in branches]
            if len(branches) == 2 and not any(self.is_ancestor(b, h) for b in branches for h in hands) \
                    and all(self._may_be(end, "foot") for end in ends):
                leg_fork, feet = fork, ends
        if arm_fork is None and len(forks) == 2 and (leg_fork is None or self.is_ancestor(leg_fork, forks[1][0])):
            fork, branches, main = forks[1]
            branches = branches + [main]
            ends = [self._chain_end(b, "arm") for b in self._arm_branches(fork, branches, leg_fork, head)]
            if ends and all(self._may_be(end, "hand") for end in ends):
                arm_fork, hands = fork, ends
        return leg_fork, arm_fork, feet, hands, head

    def _may_be(self, joint: int, role: str) -> bool:
        """Nothing in the joint's name says it is something other than ``role``."""
        return not self.roles(joint) or role in self.roles(joint)

    def _chain_depth(self, joint: int) -> int:
        """Joints on the longest way down from ``joint`` (itself included)."""
        best = 0
        stack = [(joint, 1)]
        while stack:
            node, depth = stack.pop()
            best = max(best, depth)
            stack += [(c, depth + 1) for c in self.children[node]]
        return best

    def _arm_branches(self, fork: int, branches: list[int], hips: int | None, head: int | None) -> list[int]:
        """The two branches of the spine's top that are arms: not the one leading to the head,
        else the two furthest from the line through the hips and the fork."""
        candidates = [b for b in branches if head is None or not self.is_ancestor(b, head)]
        if len(candidates) == 2:
            return candidates
        if len(candidates) != 3 or hips is None:
            return []
        up = self.positions[fork] - self.positions[hips]
        norm = float(np.linalg.norm(up))
        if norm == 0:
            return []
        up /= norm

        def off_axis(branch: int) -> float:
            offset = self.positions[branch] - self.positions[fork]
            return float(np.linalg.norm(offset - (offset @ up) * up))

        ranked = sorted(candidates, key=off_axis)
        return ranked[1:] if off_axis(ranked[1]) > 1e-9 else []

    def _chain_end(self, joint: int, kind: str) -> int:
        """The hand or foot of an unnamed limb: the hand where the chain forks into fingers (else its
        last joint); the foot where the chain turns most (at least 30 degrees), two joints or more down."""
        chain = [joint]
        while True:
            kids = [c for c in self.children[chain[-1]] if not self.folded(c)]
            if len(kids) != 1:
                break
            chain.append(kids[0])
        if kind == "arm":
            return chain[-1]
        best, turn = chain[-1], np.cos(np.radians(30.0))
        for index in range(2, len(chain) - 1):
            incoming = unit(self.positions[chain[index]] - self.positions[chain[index - 1]])
            outgoing = unit(self.positions[chain[index + 1]] - self.positions[chain[index]])
            if float(incoming @ outgoing) < turn:
                best, turn = chain[index], float(incoming @ outgoing)
        return best

    def _head_by_topology(self, fork: int, hands: list[int]) -> int | None:
        """The top of the branch of the spine's top that holds no hand: where it forks or ends."""
        branches = [c for c in self.children[fork] if not self.folded(c)
                    and not any(self.is_ancestor(c, h) for h in hands)]
        named = [c for c in branches if self.central(c, "neck")]
        if len(branches) != 1 and not named:
            return None
        joint = (named or branches)[0]
        while True:
            kids = [c for c in self.children[joint] if not self.folded(c)]
            if len(kids) != 1:
                return joint
            joint = kids[0]

    # ----- trunk

    def _hips(self, leg_fork: int | None) -> tuple[int | None, str]:
        """The legs' fork, or its parent where a spine-named fork hangs from a hips-named joint (3ds Max Biped);
        with no legs found, the top joint named hips or pelvis.  Also the rule that decided."""
        if leg_fork is None:
            named = [j for j in range(len(self.names)) if self.central(j, "hips")]
            return (min(named, key=lambda j: (self.depth[j], j)) if named else None), "named hips (no legs found)"
        parent = self.parents[leg_fork]
        if parent >= 0 and self.central(leg_fork, "spine") and "hips" not in self.roles(leg_fork) \
                and self.central(parent, "hips"):
            return parent, "named hips, just above the spine joint the legs hang from"
        return leg_fork, "where the legs and the spine meet"

    def _chest(self, hips: int | None, arm_fork: int | None) -> int | None:
        """The arms' fork, or its parent where the clavicles hang from a neck-named joint (Biped)."""
        if arm_fork is None:
            return None
        if self.central(arm_fork, "neck") and "spine" not in self.roles(arm_fork):
            parent = self.parents[arm_fork]
            return parent if parent >= 0 and parent != hips and (hips is None or self.is_ancestor(hips, parent)) \
                else None
        return arm_fork if arm_fork != hips else None

    def _trunk(self, hips: int | None, chest: int | None, arm_fork: int | None, head: int | None) -> None:
        if hips is not None:
            for joint in self.ancestors(hips)[1:]:
                self.fold(joint, "above the hips (root or reference joint)")
        top = chest
        if top is None and hips is not None and head is not None and arm_fork is None and self.is_ancestor(hips, head):
            between = self.path(hips, head)[:-1]
            necks = [j for j in between if self.central(j, "neck")]
            spine_part = between[: between.index(necks[0])] if necks else between
            top = spine_part[-1] if spine_part else None
        if hips is not None and top is not None and self.is_ancestor(hips, top):
            spine = [j for j in self.path(hips, top) if not self.folded(j)]
            for joint in [j for j in spine if self.central(j, "hips") and "spine" not in self.roles(j)]:
                spine.remove(joint)
                self.fold(joint, "a second hips joint below the hips")
            if any("spine" in self.roles(j) for j in spine):
                for joint in [j for j in spine if not self.roles(j) and j != top]:
                    spine.remove(joint)
                    self.fold(joint, "a joint between the spine joints not named like them")
            for joint, slot in zip(spine, _spread(len(spine), SPINE, SPINE[-1])):
                if slot is None:
                    self.fold(joint, f"extra spine joint ({len(spine)} between the hips and the arms)")
                else:
                    self.label(joint, slot, f"joint {spine.index(joint) + 1} of {len(spine)} from the hips "
                                            "to the joint carrying the arms and neck")
        if head is None:
            return
        self.label(head, "head", "named head" if self.central(head, "head") else "top of the neck chain")
        base = top if top is not None else hips
        if base is not None and self.is_ancestor(base, head):
            neck = [j for j in self.path(base, head)[:-1] if not self.folded(j)]
            for joint, slot in zip(neck, _spread(len(neck), NECK, NECK[0])):
                if slot is None:
                    self.fold(joint, f"extra neck joint ({len(neck)} between the spine and the head)")
                else:
                    self.label(joint, slot, f"joint {neck.index(joint) + 1} of {len(neck)} between the spine "
                                            "and the head")

    # ----- limbs

    def _limb(self, kind: str, fork: int, anchor: int) -> _Limb:
        return _Limb(kind, fork, anchor, self.path(fork, anchor))

    def _settle_sides(self, limbs: list[_Limb], hips: int | None, chest: int | None, head: int | None) -> None:
        """Sides from names where the two limbs of a pair disagree; else from the rest pose."""
        for limb in limbs:
            votes = [self.readings[j].side for j in limb.chain if self.readings[j].side]
            if votes and votes.count(votes[0]) * 2 > len(votes):
                limb.side, limb.side_rule = votes[0], "side from name"
        for kind in ("arm", "leg"):
            pair = [limb for limb in limbs if limb.kind == kind]
            if len(pair) != 2:
                continue
            named = [limb for limb in pair if limb.side]
            if len(named) == 1:
                other = pair[1] if named[0] is pair[0] else pair[0]
                other.side = "r" if named[0].side == "l" else "l"
                other.side_rule = "side opposite its named pair"
            elif len(named) == 2 and pair[0].side == pair[1].side:
                for limb in pair:
                    limb.side = None
        left = self._left_direction(limbs, hips, chest, head)
        for kind in ("arm", "leg"):
            pair = [limb for limb in limbs if limb.kind == kind]
            if not pair or all(limb.side for limb in pair) or left is None:
                continue
            lateral = [float(self._centre(limb) @ left) for limb in pair]
            if len(pair) == 2:
                spread = abs(lateral[0] - lateral[1])
                if spread > 1e-6 * self._extent():
                    for limb, value in zip(pair, lateral):
                        limb.side = "l" if value == max(lateral) else "r"
                        limb.side_rule = "side from the rest pose"
            elif pair[0].side is None:
                offset = lateral[0] - float(self.positions[pair[0].fork] @ left)
                if abs(offset) > 1e-6 * self._extent():
                    pair[0].side, pair[0].side_rule = ("l" if offset > 0 else "r"), "side from the rest pose"

    def _extent(self) -> float:
        return max(float(np.ptp(self.positions, axis=0).max()) if len(self.positions) else 0.0, 1e-12)

    def _centre(self, limb: _Limb) -> np.ndarray:
        return np.asarray(self.positions[limb.chain].mean(axis=0))

    def _left_direction(self, limbs: list[_Limb], hips: int | None, chest: int | None,
                        head: int | None) -> np.ndarray | None:
        """Which way is the body's left: from a pair of limbs whose names give sides, else up x forward
        (up from the hips to the head, forward from the ankles to the toes)."""
        for kind in ("leg", "arm"):
            pair = {limb.side: limb for limb in limbs if limb.kind == kind and limb.side}
            if len(pair) == 2:
                direction = self._centre(pair["l"]) - self._centre(pair["r"])
                if np.linalg.norm(direction) > 1e-9 * self._extent():
                    return np.asarray(direction)
        top = head if head is not None else chest
        if hips is None or top is None:
            return None
        up = self.positions[top] - self.positions[hips]
        forward = np.zeros(3)
        for limb in limbs:
            if limb.kind == "leg":
                forward += self._toe_point(limb.anchor) - self.positions[limb.anchor]
        forward -= (forward @ up) / max(float(up @ up), 1e-300) * up
        left = np.cross(up, forward)
        return left if np.linalg.norm(left) > 1e-9 * self._extent() ** 2 else None

    def _toe_point(self, foot: int) -> np.ndarray:
        toes = self._toes(foot)
        if toes is not None:
            return np.asarray(self.positions[toes])
        sites = self.end_sites[foot]
        return np.asarray(self.positions[foot] + (sites[0] if len(sites) else 0.0))

    def _toes(self, foot: int) -> int | None:
        """The toes below a foot: the nearest joint named toes, else the foot's only unnamed child."""
        queue = list(self.children[foot])
        while queue:
            joint = queue.pop(0)
            if "toes" in self.roles(joint) and not self.folded(joint):
                return joint
            queue += self.children[joint]
        kids = [c for c in self.children[foot] if not self.folded(c)]
        return kids[0] if len(kids) == 1 and not self.roles(kids[0]) else None

    def _label_limb(self, limb: _Limb) -> None:
        side, parts = limb.side, (ARM if limb.kind == "arm" else LEG)
        assert side is not None
        where = f"{'left' if side == 'l' else 'right'} {limb.kind}; {limb.side_rule}"
        end = parts[3] if limb.kind == "arm" else parts[2]
        self.label(limb.anchor, f"{end}_{side}", f"end of the {where}")
        chain = [j for j in limb.chain[:-1] if not self.folded(j)]
        for joint, part in zip(chain, self._label_chain(chain, parts[:3] if limb.kind == "arm" else parts[:2])):
            if part is None:
                self.fold(joint, f"extra joint in the {where}")
            else:
                how = "name" if part in self.roles(joint) else "chain position"
                self.label(joint, f"{part}_{side}", f"{how} in the {where}")
        if limb.kind == "arm":
            self._label_fingers(limb.anchor, side)
            for joint in self._below(limb.anchor):
                self.fold(joint, "below the hand, not a finger")
        else:
            toes = self._toes(limb.anchor)
            if toes is not None:
                self.label(toes, f"toes_{side}", ("named toes" if "toes" in self.roles(toes) else "the foot's child")
                           + f" below the {where}")
            for joint in self._below(limb.anchor):
                self.fold(joint, "below the foot")

    def _below(self, joint: int) -> list[int]:
        out, stack = [], list(self.children[joint])
        while stack:
            node = stack.pop()
            out.append(node)
            stack += self.children[node]
        return out

    def _label_chain(self, chain: list[int], parts: tuple[str, ...]) -> list[str | None]:
        """Parts (in order, each at most once) for the joints of a limb chain above its end.

        Best total score: a name naming the part scores 3 (2 if it names two
        parts), an unnamed joint 1, a name naming another part -4; consecutive
        joints taking consecutive parts (the last one next to the hand or foot)
        add 0.5; a repeated name's later segments lose 0.6 each.
        """
        def score(index: int, part: int) -> float:
            roles = self.roles(chain[index])
            if not roles:
                return 1.0
            if parts[part] not in roles:
                return -4.0
            repeat = 0
            while index - repeat > 0 and self.roles(chain[index - repeat - 1]) == roles:
                repeat += 1
            return (3.0 if len(roles) == 1 else 2.0) - _REPEAT * repeat

        def skip(index: int) -> float:
            return -1.0 if set(self.roles(chain[index])) & set(parts) else 0.0

        # state: (last part used, whether the previous joint took it) -> (score, labels)
        states: dict[tuple[int, bool], tuple[float, list[int | None]]] = {(-1, False): (0.0, [])}
        for index in range(len(chain)):
            following: dict[tuple[int, bool], tuple[float, list[int | None]]] = {}
            for (last, taken), (total, labels) in states.items():
                options = [((last, False), total + skip(index), labels + [None])]
                for part in range(last + 1, len(parts)):
                    bonus = _ADJACENT if taken and part == last + 1 else 0.0
                    options.append(((part, True), total + score(index, part) + bonus, labels + [part]))
                for key, value, new in options:
                    if key not in following or value > following[key][0] + 1e-9:
                        following[key] = (value, new)
            states = following
        best = max(states.items(), key=lambda item: item[1][0] + (_ADJACENT if item[0] == (len(parts) - 1, True)
                                                                  else 0.0))
        return [None if part is None else parts[part] for part in best[1][1]]

    def _label_fingers(self, hand: int, side: str) -> None:
        below = [j for j in self._below(hand) if not self.folded(j)]
        roles = dict(zip(below, finger_roles([self.readings[j] for j in below])))
        for finger in FINGERS:
            named = [j for j in below if finger in roles[j]]
            top = sorted((j for j in named if self.parents[j] not in named), key=lambda j: (self.depth[j], j))
            if not top:
                continue
            chain = [top[0]]
            while True:
                kids = [c for c in self.children[chain[-1]] if c in named]
                if not kids:
                    break
                chain.append(kids[0])
            if finger != "thumb":
                for joint in [j for j in chain if self.readings[j].metacarpal]:
                    chain.remove(joint)
                    self.fold(joint, "metacarpal (inside the palm)")
            for number, joint in enumerate(chain, 1):
                if number <= 3:
                    self.label(joint, f"{finger}_{number:02d}_{side}",
                               f"{finger} joint {number} from the hand (name); side of the hand")
                else:
                    self.fold(joint, f"{finger} joint {number}: past the third")

    # ----- presets and invariants

    def _apply_preset(self) -> None:
        assert self.preset is not None
        fixed: dict[int, str | None] = {}
        for joint, name in enumerate(self.names):
            listed, canonical = self.preset.lookup(name)
            if not listed:
                continue
            if canonical is not None and canonical in fixed.values():
                self.labels.pop(joint, None)
                self.rules[joint] = f"unmapped: preset {self.preset.name} gives {canonical} to an earlier joint too"
                continue
            fixed[joint] = canonical
        taken = {c for c in fixed.values() if c is not None}
        for joint, canonical in list(self.labels.items()):
            if joint not in fixed and canonical in taken:
                del self.labels[joint]
                self.rules[joint] = f"unmapped: preset {self.preset.name} gives {canonical} to another joint"
        for joint, canonical in fixed.items():
            self.labels.pop(joint, None)
            if canonical is None:
                self.rules[joint] = f"folded: preset {self.preset.name}"
            else:
                self.label(joint, canonical, f"preset {self.preset.name}")

    def _keep_consistent(self) -> None:
        """Drop any label that breaks the hierarchy rule (checked parent-first), so the invariants hold."""
        owner = {canonical: joint for joint, canonical in self.labels.items()}
        for canonical in CANONICAL_JOINTS:
            joint = owner.get(canonical)
            if joint is None:
                continue
            above = set(self.ancestors(joint)[1:])
            for ancestor in canonical_ancestors(canonical):
                holder = owner.get(ancestor)
                if holder is not None and holder not in above:
                    del self.labels[joint]
                    del owner[canonical]
                    self.rules[joint] = f"unmapped: {canonical} would not sit below {ancestor} ({self.names[holder]})"
                    break


def _spread(count: int, slots: tuple[str, ...], single: str) -> list[str | None]:
    """Slots for a chain of ``count`` joints: ``single`` for one joint; else the first and the last
    slot, the middle slots spread evenly over the joints between, the rest folded."""
    if count == 0:
        return []
    if count == 1:
        return [single]
    out: list[str | None] = [None] * count
    out[0], out[-1] = slots[0], slots[-1]
    middle = slots[1:-1]
    if count - 2 >= len(middle):
        for number, slot in enumerate(middle, 1):
            out[round(number * (count - 1) / (len(middle) + 1))] = slot
    else:
        for index, slot in zip(range(1, count - 1), middle):
            out[index] = slot
    return out
