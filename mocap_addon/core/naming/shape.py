"""The body from the tree's shape, where names do not give it: the legs' fork, the arms' fork, the limbs' ends.

From the root, follow the biggest subtree: the first joint with two more
branches at least three joints deep is the hips (legs), the next joint with two
more branches at least two deep is the top of the spine (arms, and the neck).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..vectors import unit
from .figure import Figure


class LimbPair(NamedTuple):
    """The joint a pair of arms or legs hangs from (``None`` if not found) and the two hands or feet."""

    fork: int | None
    ends: list[int]


class _Fork(NamedTuple):
    joint: int
    branches: list[int]  # side branches deep enough to be limbs
    main: int  # the child with the biggest subtree, where the main line goes on


def limbs_by_shape(figure: Figure, legs: LimbPair, arms: LimbPair, head: int | None) -> tuple[LimbPair, LimbPair]:
    """``legs`` and ``arms`` with what the shape gives where names left a fork unknown."""
    forks = _main_line_forks(figure)
    if legs.fork is None and forks and (arms.fork is None or (forks[0].joint != arms.fork
                                                              and figure.is_ancestor(forks[0].joint, arms.fork))):
        fork = forks[0]
        ends = [_chain_end(figure, b, "leg") for b in fork.branches]
        if len(fork.branches) == 2 and not any(figure.is_ancestor(b, h) for b in fork.branches for h in arms.ends) \
                and all(figure.may_be(end, "foot") for end in ends):
            legs = LimbPair(fork.joint, ends)
    if arms.fork is None and len(forks) == 2 and (legs.fork is None or figure.is_ancestor(legs.fork, forks[1].joint)):
        fork = forks[1]
        branches = _arm_branches(figure, fork.joint, [*fork.branches, fork.main], legs.fork, head)
        ends = [_chain_end(figure, b, "arm") for b in branches]
        if ends and all(figure.may_be(end, "hand") for end in ends):
            arms = LimbPair(fork.joint, ends)
    return legs, arms


def head_by_shape(figure: Figure, fork: int, hands: list[int]) -> int | None:
    """The top of the branch of the spine's top that holds no hand: where it forks or ends."""
    branches = [c for c in figure.children[fork] if not figure.folded(c)
                and not any(figure.is_ancestor(c, h) for h in hands)]
    named = [c for c in branches if figure.central(c, "neck")]
    if len(branches) != 1 and not named:
        return None
    return figure.line_down((named or branches)[0])[-1]


def _main_line_forks(figure: Figure) -> list[_Fork]:
    """Down the biggest subtree from the biggest root: the first joint with two more branches three
    joints deep or more, then the next with two more two deep or more."""
    roots = [j for j, p in enumerate(figure.parents) if p < 0]
    joint: int | None = max(roots, key=lambda j: figure.size[j])
    forks: list[_Fork] = []
    while joint is not None and len(forks) < 2:
        kids = [c for c in figure.children[joint] if not figure.folded(c)]
        if not kids:
            break
        main = max(kids, key=lambda c: figure.size[c])
        deep = 3 if not forks else 2
        branches = [c for c in kids if c != main and figure.chain_depth(c) >= deep]
        if len(branches) >= 2:
            forks.append(_Fork(joint, branches, main))
        joint = main
    return forks


def _arm_branches(figure: Figure, fork: int, branches: list[int], hips: int | None, head: int | None) -> list[int]:
    """The two branches of the spine's top that are arms: not the one leading to the head,
    else the two furthest from the line through the hips and the fork."""
    candidates = [b for b in branches if head is None or not figure.is_ancestor(b, head)]
    if len(candidates) == 2:
        return candidates
    if len(candidates) != 3 or hips is None:
        return []
    up = figure.positions[fork] - figure.positions[hips]
    norm = float(np.linalg.norm(up))
    if norm == 0:
        return []
    up /= norm

    def off_axis(branch: int) -> float:
        offset = figure.positions[branch] - figure.positions[fork]
        return float(np.linalg.norm(offset - (offset @ up) * up))

    ranked = sorted(candidates, key=off_axis)
    return ranked[1:] if off_axis(ranked[1]) > 1e-9 else []


def _chain_end(figure: Figure, joint: int, kind: str) -> int:
    """The hand or foot of an unnamed limb: the hand where the chain forks into fingers (else its
    last joint); the foot where the chain turns most (at least 30 degrees), two joints or more down."""
    chain = figure.line_down(joint)
    if kind == "arm":
        return chain[-1]
    positions = figure.positions
    best, turn = chain[-1], np.cos(np.radians(30.0))
    for index in range(2, len(chain) - 1):
        incoming = unit(positions[chain[index]] - positions[chain[index - 1]])
        outgoing = unit(positions[chain[index + 1]] - positions[chain[index]])
        if float(incoming @ outgoing) < turn:
            best, turn = chain[index], float(incoming @ outgoing)
    return best
