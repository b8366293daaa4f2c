"""Soles: where a foot meets the floor (heel, ball, toe tip), its pitch, and the height of its lowest point.

A skeleton's foot model (:class:`Foot`) is read from a standing pose (its rest,
or a capture's first frame) in its body axes: the *tip* is the foot's point
farthest forward among the joints and end sites from the ankle down, the
*ball* the point under the toes joint (under the tip where no toes joint is
mapped), at the height of the lowest of the two, and the *heel* the point under
the ankle at that height, a fifth of the ankle-to-tip length behind it.  Heel
and ball ride on the foot bone, the tip on the toes bone, so in the standing
pose the sole (heel to ball) is flat, whatever the bones' own axes.

The *pitch* of a foot is the angle of its heel-to-ball line above the floor
(positive: toes up, as at heel strike), the toes' pitch that of the ball-to-tip
line (where it is at least :data:`TOE_LINE` of the sole long); turning the foot
about :func:`across` raises its pitch.  A retarget solves the target's pitch
from the source's (see :mod:`.footing`) instead of copying the ankle's rotation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..model import Skeleton
from ..rotations import FloatArray
from ..transforms import World
from ..vectors import unit
from .reference import descendants

HEEL_BACK = 0.2  # of the ankle-to-tip length: how far behind the ankle the heel is
TOE_LINE = 0.1  # of the heel-to-ball length: a shorter ball-to-tip line has no pitch to solve


@dataclass(frozen=True)
class Foot:
    """One foot's joints and its contact points in their frames: ``heel`` and ``ball`` in the foot's
    (ankle joint's) frame, ``tip`` in the toes joint's (the foot's where ``toes`` is ``None``)."""

    foot: int
    toes: int | None
    heel: FloatArray
    ball: FloatArray
    tip: FloatArray
    toe_line: bool  # whether the toes bone is long enough that its pitch means something
    right: FloatArray  # the body's right in the foot's frame: turning about it raises the toes
    toes_right: FloatArray  # the same in the toes' frame

    @property
    def tip_joint(self) -> int:
        return self.foot if self.toes is None else self.toes

    def points(self, world: Callable[[int], tuple[FloatArray, FloatArray]]) -> FloatArray:
        """World heel, ball and tip ``(F, 3, 3)``; ``world(joint)``: its world rotations ``(F, 3, 3)`` and
        origins ``(F, 3)``."""
        foot_turn, ankle = world(self.foot)
        toes_turn, toes = world(self.tip_joint)
        return np.stack([ankle + foot_turn @ self.heel, ankle + foot_turn @ self.ball,
                         toes + toes_turn @ self.tip], axis=1)


def foot_of(skeleton: Skeleton, canonical: dict[str, int], side: str, rotations: FloatArray,
            positions: FloatArray, up: FloatArray, forward: FloatArray) -> Foot:
    """The foot model of ``side`` from a standing pose: world ``rotations`` ``(J, 3, 3)`` and ``positions``
    ``(J, 3)``, the body's ``up`` and ``forward`` in its world."""
    foot = canonical[f"foot_{side}"]
    toes = canonical.get(f"toes_{side}")
    below = descendants(skeleton.parents)[foot]
    points = [positions[below]] + [positions[j] + skeleton.end_sites[j] @ rotations[j].T for j in below]
    candidates = np.concatenate(points)
    ankle = positions[foot]
    ahead = (candidates - ankle) @ forward
    tip = candidates[int(np.argmax(ahead))]
    ball = positions[toes] if toes is not None and toes in below else tip
    sole = min(float(ball @ up), float(tip @ up))
    ball_contact = ball - (ball @ up - sole) * up
    length = max(float(ahead.max()), 0.0)
    heel = ankle - (ankle @ up - sole) * up - HEEL_BACK * length * forward
    tip_joint = foot if toes is None or toes not in below else toes
    if tip_joint == foot:
        toes = None

    def local(joint: int, point: FloatArray) -> FloatArray:
        return np.asarray(rotations[joint].T @ (point - positions[joint]))

    toe_line = toes is not None and bool(np.linalg.norm(tip - ball_contact) > TOE_LINE * np.linalg.norm(
        ball_contact - heel))
    right = np.cross(forward, up)
    return Foot(foot, toes, local(foot, heel), local(foot, ball_contact), local(tip_joint, tip), toe_line,
                rotations[foot].T @ right, rotations[tip_joint].T @ right)


def pitch(start: FloatArray, end: FloatArray, up: FloatArray) -> FloatArray:
    """The angle (radians) of the line from ``start`` to ``end`` ``(..., 3)`` above the floor across ``up``."""
    line = end - start
    return np.asarray(np.arctan2(line @ up, np.linalg.norm(line - (line @ up)[..., None] * up, axis=-1)))


def across(right: FloatArray, up: FloatArray) -> FloatArray:
    """The horizontal unit axes ``(F, 3)`` nearest a foot's ``right`` ``(F, 3)`` (as the foot carries it):
    turning the foot about them raises its toes, however steep its sole (even on end)."""
    return unit(right - (right @ up)[:, None] * up)


def feet_points(feet: tuple[Foot, ...], world: World) -> FloatArray:
    """Heel, ball and tip of each foot ``(F, feet, 3, 3)`` in a motion's ``world``."""
    return np.stack([foot.points(world.joint) for foot in feet], axis=1)


def lowest(points: FloatArray, up: FloatArray, floor: float) -> FloatArray:
    """Height of the lowest of ``points`` ``(F, ..., n, 3)`` above ``floor`` along ``up`` ``(F, ...)``."""
    return np.asarray((points @ up).min(axis=-1) - floor)


def feet_of(skeleton: Skeleton, canonical: dict[str, int], rotations: FloatArray, positions: FloatArray,
            body: FloatArray) -> tuple[Foot, Foot]:
    """Both feet's models (left, right) from a standing pose whose body axes are ``body`` (the rotation
    taking its vectors to canonical ones: left +X, up +Y, forward +Z)."""
    up, forward = body.T @ np.array([0.0, 1.0, 0.0]), body.T @ np.array([0.0, 0.0, 1.0])
    left, right = (foot_of(skeleton, canonical, side, rotations, positions, up, forward) for side in "lr")
    return left, right
