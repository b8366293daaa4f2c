"""Which limb is left and which right: from names where they agree, else from the rest pose.

Names vote per limb; a pair whose names disagree (or only one of which is
named) is settled pair-wise.  Where names leave a side open, the rest pose
decides: left is the direction from the right limbs to the left ones of a pair
named both sides, else up x forward (up from the hips to the head, forward
from the ankles to the toes).  A side nothing supports is left open.
"""

from __future__ import annotations

import numpy as np

from .figure import Figure
from .landmarks import Body, Limb, toes_of


def settle_sides(figure: Figure, body: Body) -> None:
    """Set each limb's side (and the rule that gave it) where names or the rest pose say."""
    _sides_from_names(figure, body.limbs)
    left = _left_direction(figure, body)
    if left is not None:
        _sides_from_rest_pose(figure, body.limbs, left)


def _sides_from_names(figure: Figure, limbs: list[Limb]) -> None:
    for limb in limbs:
        votes = [figure.readings[j].side for j in limb.chain if figure.readings[j].side]
        if votes and votes.count(votes[0]) * 2 > len(votes):
            limb.side, limb.side_rule = votes[0], "side from name"
    for pair in _pairs(limbs):
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


def _sides_from_rest_pose(figure: Figure, limbs: list[Limb], left: np.ndarray) -> None:
    """The limb of a pair further to the left is the left one; a single limb is on the side of its fork."""
    for pair in _pairs(limbs):
        if not pair or all(limb.side for limb in pair):
            continue
        lateral = [float(_centre(figure, limb) @ left) for limb in pair]
        if len(pair) == 2:
            if abs(lateral[0] - lateral[1]) > 1e-6 * _extent(figure):
                for limb, value in zip(pair, lateral):
                    limb.side = "l" if value == max(lateral) else "r"
                    limb.side_rule = "side from the rest pose"
        elif pair[0].side is None:
            offset = lateral[0] - float(figure.positions[pair[0].fork] @ left)
            if abs(offset) > 1e-6 * _extent(figure):
                pair[0].side, pair[0].side_rule = ("l" if offset > 0 else "r"), "side from the rest pose"


def _left_direction(figure: Figure, body: Body) -> np.ndarray | None:
    """Which way is the body's left: from a pair of limbs whose names give sides, else up x forward
    (up from the hips to the head, forward from the ankles to the toes)."""
    for kind in ("leg", "arm"):
        pair = {limb.side: limb for limb in body.limbs if limb.kind == kind and limb.side}
        if len(pair) == 2:
            direction = _centre(figure, pair["l"]) - _centre(figure, pair["r"])
            if np.linalg.norm(direction) > 1e-9 * _extent(figure):
                return np.asarray(direction)
    top = body.head if body.head is not None else body.chest
    if body.hips is None or top is None:
        return None
    up = figure.positions[top] - figure.positions[body.hips]
    forward = np.zeros(3)
    for limb in body.limbs:
        if limb.kind == "leg":
            forward += _toe_point(figure, limb.anchor) - figure.positions[limb.anchor]
    forward -= (forward @ up) / max(float(up @ up), 1e-300) * up
    left = np.cross(up, forward)
    return left if np.linalg.norm(left) > 1e-9 * _extent(figure) ** 2 else None


def _pairs(limbs: list[Limb]) -> list[list[Limb]]:
    """The arms, then the legs."""
    return [[limb for limb in limbs if limb.kind == kind] for kind in ("arm", "leg")]


def _toe_point(figure: Figure, foot: int) -> np.ndarray:
    toes = toes_of(figure, foot)
    if toes is not None:
        return np.asarray(figure.positions[toes])
    sites = figure.end_sites[foot]
    return np.asarray(figure.positions[foot] + (sites[0] if len(sites) else 0.0))


def _centre(figure: Figure, limb: Limb) -> np.ndarray:
    return np.asarray(figure.positions[limb.chain].mean(axis=0))


def _extent(figure: Figure) -> float:
    """The rest pose's largest extent along an axis (lengths are judged against it)."""
    return max(float(np.ptp(figure.positions, axis=0).max()) if len(figure.positions) else 0.0, 1e-12)
