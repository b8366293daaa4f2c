"""Where the body is in the tree: hands, feet and head, the forks the limbs hang from, the hips and the chest.

Names find the hands, feet and head; the hips are where the legs and the spine
meet, the chest (``spine_04``) where the arms and the neck branch.  Where names
leave a fork unknown, the tree's shape gives it (:mod:`.shape`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .canonical import SIDES
from .figure import Figure
from .shape import LimbPair, head_by_shape, limbs_by_shape


@dataclass
class Limb:
    """An arm or a leg: the joints from below its fork down to its hand or foot, and its side once known."""

    kind: str  # "arm" or "leg"
    fork: int  # the joint the limb hangs from
    anchor: int  # hand or foot
    chain: list[int]  # joints from below the fork to the anchor, anchor included
    side: str | None = None
    side_rule: str = ""


@dataclass
class Body:
    """The landmarks found (joint indices, ``None`` where not found) and the limbs hanging from them."""

    hips: int | None
    hips_rule: str  # how the hips were found
    chest: int | None  # the spine's top, carrying the arms and the neck
    arm_fork: int | None  # where the arms hang from: the chest, or a neck-named joint above it
    head: int | None
    limbs: list[Limb]


def find_body(figure: Figure) -> Body:
    """The body's landmarks, from names where they say, else from the tree's shape."""
    head = _head_by_name(figure, _top_named(figure, "hand") + _top_named(figure, "foot"))
    legs, arms = _limbs_by_name(figure, head)
    if legs.fork is None or arms.fork is None:
        legs, arms = limbs_by_shape(figure, legs, arms, head)
    if legs.fork is not None and arms.fork is not None and not figure.is_ancestor(legs.fork, arms.fork):
        arms = LimbPair(None, [])  # arms above the legs' fork: not a body we know
    limbs = [Limb(kind, pair.fork, end, figure.path(pair.fork, end))
             for kind, pair in (("arm", arms), ("leg", legs)) if pair.fork is not None for end in pair.ends]
    hips, hips_rule = _hips(figure, legs.fork)
    chest = _chest(figure, hips, arms.fork)
    if head is None and arms.fork is not None:
        head = head_by_shape(figure, arms.fork, arms.ends)
    return Body(hips, hips_rule, chest, arms.fork, head, limbs)


def toes_of(figure: Figure, foot: int) -> int | None:
    """The toes below a foot: the nearest joint named toes, else the foot's only unnamed child."""
    queue = list(figure.children[foot])
    while queue:
        joint = queue.pop(0)
        if "toes" in figure.roles(joint) and not figure.folded(joint):
            return joint
        queue += figure.children[joint]
    kids = [c for c in figure.children[foot] if not figure.folded(c)]
    return kids[0] if len(kids) == 1 and not figure.roles(kids[0]) else None


def _limbs_by_name(figure: Figure, head: int | None) -> tuple[LimbPair, LimbPair]:
    """Legs and arms from the hands and feet names find: the arms hang where the hands and the head
    part, the legs where the feet and the arms (else the head) part."""
    hands = _anchors(figure, "hand", head)
    feet = _anchors(figure, "foot", head)
    arm_fork = figure.common_ancestor(hands + ([head] if head is not None else [])) if len(hands) == 2 else None
    leg_fork = None
    if len(feet) == 2:
        upper = arm_fork if arm_fork is not None else head
        leg_fork = figure.common_ancestor(feet + ([upper] if upper is not None else []))
    return LimbPair(leg_fork, feet), LimbPair(arm_fork, hands)


def _top_named(figure: Figure, role: str) -> list[int]:
    """Joints named ``role`` with no joint named so above them."""
    named = {j for j in range(len(figure.names)) if role in figure.roles(j) and not figure.folded(j)}
    return sorted(j for j in named if not any(a in named for a in figure.ancestors(j)[1:]))


def _anchors(figure: Figure, role: str, head: int | None) -> list[int]:
    """The two hands (or feet): the top joint named so in each branch; with more than two, the left and
    right pair most at the ends of limbs (two joints or more between each and where it branches off:
    room for the upper and lower arm or leg), then branching off at one joint, then with the biggest
    subtrees (fingers), then branching off nearest the head."""
    top = _top_named(figure, role)
    if len(top) <= 2:
        return top if len(top) == 2 else []
    everyone = figure.common_ancestor(top)

    def branch_point(joint: int) -> int | None:
        return figure.common_ancestor([joint, head]) if head is not None else everyone

    def near_head(joint: int) -> int:
        fork = branch_point(joint)
        return figure.depth[fork] if fork is not None else 0

    def limb_end(joint: int) -> bool:
        fork = branch_point(joint)
        above = figure.path(fork, joint)[:-1] if fork is not None and fork != joint else []
        return sum(not figure.folded(j) for j in above) >= 2

    by_side: dict[str | None, list[int]] = {}
    for joint in top:
        by_side.setdefault(figure.readings[joint].side, []).append(joint)
    lefts, rights = by_side.get(SIDES[0], []), by_side.get(SIDES[1], [])

    def worth(pair: tuple[int, int]) -> tuple[int, bool, int, int, int]:
        return (limb_end(pair[0]) + limb_end(pair[1]), branch_point(pair[0]) == branch_point(pair[1]),
                figure.size[pair[0]] + figure.size[pair[1]], near_head(pair[0]) + near_head(pair[1]),
                -pair[0] - pair[1])

    pairs = [(left, right) for left in lefts for right in rights]
    if not pairs:
        return []
    left, right = max(pairs, key=worth)
    return [left, right]


def _head_by_name(figure: Figure, limbs: list[int]) -> int | None:
    """The highest joint named head outside the limbs."""
    heads = [j for j in range(len(figure.names)) if figure.central(j, "head")
             and not any(figure.is_ancestor(limb, j) for limb in limbs)]
    return min(heads, key=lambda j: (figure.depth[j], j)) if heads else None


def _hips(figure: Figure, leg_fork: int | None) -> tuple[int | None, str]:
    """The legs' fork, or its parent where a spine-named fork hangs from a hips-named joint (3ds Max Biped);
    with no legs found, the top joint named hips or pelvis.  Also the rule that decided."""
    if leg_fork is None:
        named = [j for j in range(len(figure.names)) if figure.central(j, "hips")]
        return (min(named, key=lambda j: (figure.depth[j], j)) if named else None), "named hips (no legs found)"
    parent = figure.parents[leg_fork]
    if parent >= 0 and figure.central(leg_fork, "spine") and "hips" not in figure.roles(leg_fork) \
            and figure.central(parent, "hips"):
        return parent, "named hips, just above the spine joint the legs hang from"
    return leg_fork, "where the legs and the spine meet"


def _chest(figure: Figure, hips: int | None, arm_fork: int | None) -> int | None:
    """The arms' fork, or its parent where the clavicles hang from a neck-named joint (Biped)."""
    if arm_fork is None:
        return None
    if figure.central(arm_fork, "neck") and "spine" not in figure.roles(arm_fork):
        parent = figure.parents[arm_fork]
        return parent if parent >= 0 and parent != hips and (hips is None or figure.is_ancestor(hips, parent)) \
            else None
    return arm_fork if arm_fork != hips else None
