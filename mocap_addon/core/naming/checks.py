"""Checks a finished mapping must pass: each limb chain runs down the skeleton's tree and ends in its hand or foot.

A hand mapped onto a short bone on the chest (a shoulder blade named ``hand_l``)
leaves the arm above it empty: the retarget would keep that arm in its
reference pose for the whole take.  These checks say so, whoever made the
mapping (detection, a preset, a person).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from ..model import Skeleton
from .canonical import ARM, LEG, SIDES

LIMB_CHAINS = {"arm": (ARM[:3], "hand"), "leg": (LEG[:2], "foot")}


def limb_chain_warnings(skeleton: Skeleton, mapping: Mapping[str, str | None]) -> list[str]:
    """One sentence per limb whose mapped chain is out of the tree's order, or whose hand (foot) has no
    upper and lower arm (leg) mapped above it: not the distal end of a limb."""
    joint_of = {canonical: skeleton.index(name) for name, canonical in mapping.items()
                if canonical is not None and name in skeleton.names}
    warnings = []
    for kind, (parts, end) in LIMB_CHAINS.items():
        for side in SIDES:
            chain = [(part, joint_of.get(f"{part}_{side}")) for part in parts]
            mapped = [(part, joint) for part, joint in chain if joint is not None]
            tip = joint_of.get(f"{end}_{side}")
            for (upper, above), (lower, below) in pairwise(mapped):
                if not _is_above(skeleton.parents, above, below):
                    warnings.append(f"{kind} {side}: {lower}_{side} ({skeleton.names[below]}) does not hang below "
                                    f"{upper}_{side} ({skeleton.names[above]})")
            if tip is None:
                continue
            missing = [f"{part}_{side}" for part, joint in chain[-2:] if joint is None]
            if missing:
                warnings.append(f"{end}_{side} ({skeleton.names[tip]}) does not end the {kind}: "
                                f"{' and '.join(missing)} not mapped above it (a short bone named "
                                f"{end}? check the mapping)")
            elif mapped and not _is_above(skeleton.parents, mapped[-1][1], tip):
                warnings.append(f"{end}_{side} ({skeleton.names[tip]}) is not below {mapped[-1][0]}_{side} "
                                f"({skeleton.names[mapped[-1][1]]}): the {kind}'s end is not its {end}")
    return warnings


def _is_above(parents: Sequence[int], upper: int, lower: int) -> bool:
    """``upper`` is a proper ancestor of ``lower``."""
    joint = parents[lower]
    while joint >= 0:
        if joint == upper:
            return True
        joint = parents[joint]
    return False
