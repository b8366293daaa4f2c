"""The canonical skeleton every mapping aims at: 54 humanoid joints, their parents and sides."""

from __future__ import annotations

from .names import FINGERS

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
