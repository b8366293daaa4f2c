"""Paths over the floor: headings about an up axis, and a path read in its own moving heading frame.

A body's path is its root's place and its *heading* (the turn about the up axis
of one of the root's own axes) at every frame.  Read in its own moving heading
frame, a path is, per frame, a *turn* (the heading's change to the next frame:
the turning rate) and a *move* over the floor (to the next frame, in the
heading frame of the frame it starts from: the speed, forward and sideways),
with the root's height beside them.  These do not change when the whole path
is turned about the up axis or moved over the floor, so two paths that start
anywhere, facing any way, mix by mixing them frame by frame and integrating
from a start (:func:`mixed_path`): a straight path and a curving one mixed
half and half curve half as much, at the mean of their speeds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rotations
from ..rotations import FloatArray
from ..vectors import turned_about


@dataclass
class Heading:
    """Measures and makes turns about one up axis (unit, in the frame the rotations are given in)."""

    up: FloatArray  # unit (3,)
    axis: int  # the rotations' own axis that is measured (one lying flat: the root's flattest)

    def plane(self) -> tuple[FloatArray, FloatArray]:
        helper = np.eye(3)[int(np.argmin(np.abs(self.up)))]
        first = np.cross(self.up, helper)
        first /= np.linalg.norm(first)
        return first, np.cross(self.up, first)

    def angles(self, quaternions: FloatArray) -> FloatArray:
        """Heading angle of rotations ``(..., 4)``: where their measured axis points in the horizontal plane."""
        direction = rotations.quaternion_to_matrix(quaternions)[..., :, self.axis]
        first, second = self.plane()
        return np.arctan2(direction @ second, direction @ first)

    def turns(self, angles: FloatArray) -> FloatArray:
        """Quaternions ``(..., 4)`` turning by ``angles`` about the up axis."""
        half = 0.5 * np.asarray(angles, dtype=np.float64)
        return np.concatenate([np.cos(half)[..., None], np.sin(half)[..., None] * self.up], axis=-1)

    def split(self, quaternions: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Rotations ``(..., 4)`` as a turn about the up axis times a tilt whose measured axis has no heading."""
        turn = self.turns(self.angles(quaternions))
        return turn, rotations.quaternion_multiply(rotations.quaternion_conjugate(turn), quaternions)

    def horizontal(self, vectors: FloatArray) -> FloatArray:
        return vectors - (vectors @ self.up)[..., None] * self.up

    def turned(self, vectors: FloatArray, angles: FloatArray) -> FloatArray:
        """``vectors`` ``(..., 3)`` turned by ``angles`` ``(...)`` about the up axis."""
        return turned_about(self.up, vectors, angles)

    def moved(self, quaternions: FloatArray, translations: FloatArray, angle: float, pivot: FloatArray,
              shift: FloatArray) -> tuple[FloatArray, FloatArray]:
        """A root's rotations and translations turned by ``angle`` about the up axis through ``pivot``,
        then moved by ``shift``: the same path elsewhere on the floor, facing another way."""
        turn = self.turns(np.asarray(angle))
        return (rotations.quaternion_multiply(turn, quaternions),
                rotations.quaternion_rotate(turn, translations - pivot) + pivot + shift)


def wrapped(angles: FloatArray) -> FloatArray:
    """Angles wrapped into [-pi, pi)."""
    return (angles + np.pi) % (2 * np.pi) - np.pi


@dataclass
class Steps:
    """A root's path in its own moving heading frame (see the module notes): ``F`` frames."""

    start_heading: float
    start_place: FloatArray  # (3,) horizontal part of the first translation
    turns: FloatArray  # (F - 1,) heading change to the next frame (radians)
    moves: FloatArray  # (F - 1, 3) floor move to the next frame, in the heading frame of the frame before
    heights: FloatArray  # (F,) translations along the up axis
    tilts: FloatArray  # (F, 4) the rotations without their heading

    @classmethod
    def of(cls, heading: Heading, quaternions: FloatArray, translations: FloatArray) -> Steps:
        """The steps of a root's local rotations ``(F, 4)`` and translations ``(F, 3)`` (in the frame
        ``heading`` measures in)."""
        angles = heading.angles(quaternions)
        floor = heading.horizontal(translations)
        moves = heading.turned(np.diff(floor, axis=0), -angles[:-1])
        tilts = heading.split(quaternions)[1]
        return cls(float(angles[0]), floor[0], wrapped(np.diff(angles)), moves, translations @ heading.up, tilts)


def mixed_path(heading: Heading, a: Steps, b: Steps, weights: FloatArray, *,
               last_only: bool = False) -> tuple[FloatArray, FloatArray]:
    """Rotations ``(..., K, 4)`` and translations ``(..., K, 3)`` of the root whose path mixes ``a``'s and
    ``b``'s by ``weights`` ``(..., K)`` (0: ``a``, 1: ``b``; ``K`` up to the frames of both), from ``a``'s start;
    ``last_only``: only the last frame's (``K`` 1), still integrated from the start.

    Per frame the turn and the move are interpolated (by the weight of the frame
    a step starts from) and integrated from ``a``'s first heading and place;
    heights are interpolated, and tilts slerped.  All ``0`` gives ``a``'s path,
    all ``1`` ``b``'s started where ``a``'s starts, turned to ``a``'s first heading.
    """
    weights = np.asarray(weights, dtype=np.float64)
    count = weights.shape[-1]
    step = weights[..., :-1]
    turns = a.turns[:count - 1] + step * (b.turns[:count - 1] - a.turns[:count - 1])
    angles = a.start_heading + np.concatenate([np.zeros(weights.shape[:-1] + (1,)), np.cumsum(turns, axis=-1)],
                                              axis=-1)
    # Moves over the floor as complex numbers in the plane's axes: turning one about the up axis is a product.
    first, second = heading.plane()
    move_a, move_b = ((s.moves[:count - 1] @ first) + 1j * (s.moves[:count - 1] @ second) for s in (a, b))
    steps = (move_a + step * (move_b - move_a)) * np.exp(1j * angles[..., :-1])
    if last_only:
        travelled = np.sum(steps, axis=-1, keepdims=True)
        frames = slice(count - 1, count)
        angles, weights = angles[..., frames], weights[..., frames]
    else:
        travelled = np.concatenate([np.zeros(weights.shape[:-1] + (1,)), np.cumsum(steps, axis=-1)], axis=-1)
        frames = slice(0, count)
    places = a.start_place + travelled.real[..., None] * first + travelled.imag[..., None] * second
    heights = a.heights[frames] + weights * (b.heights[frames] - a.heights[frames])
    tilts = heading.split(rotations.slerp(a.tilts[frames], b.tilts[frames], weights))[1]
    return (rotations.quaternion_multiply(heading.turns(angles), tilts),
            places + heights[..., None] * heading.up)


@dataclass
class HeldMix:
    """:func:`mixed_path` for one weight held from the first frame, one frame at a time: the sums it
    integrates are split into parts that do not depend on the weight, so a frame is a few array products
    over the steps before it."""

    heading: Heading
    a: Steps
    b: Steps
    plane: tuple[FloatArray, FloatArray]
    turned_a: FloatArray  # (F, ) a's heading before each step, a's turns summed
    turned_b: FloatArray  # b's less a's, summed
    moves: tuple[FloatArray, FloatArray]  # a's moves and b's less a's (F - 1, 3)
    across: tuple[FloatArray, FloatArray]  # the same, turned a quarter about the up axis

    @classmethod
    def of(cls, heading: Heading, a: Steps, b: Steps) -> HeldMix:
        count = min(len(a.turns), len(b.turns))
        turned_a = np.concatenate([np.zeros(1), np.cumsum(a.turns[:count])])
        turned_b = np.concatenate([np.zeros(1), np.cumsum(b.turns[:count] - a.turns[:count])])
        moves = (a.moves[:count], b.moves[:count] - a.moves[:count])
        across = tuple(np.cross(heading.up, m) for m in moves)
        return cls(heading, a, b, heading.plane(), turned_a, turned_b, moves, (across[0], across[1]))

    def at(self, weight: float, frame: int) -> tuple[FloatArray, FloatArray]:
        """The root's rotation ``(4,)`` and translation ``(3,)`` at ``frame`` (within both paths)."""
        a, b, up = self.a, self.b, self.heading.up
        angles = a.start_heading + self.turned_a[:frame + 1] + weight * self.turned_b[:frame + 1]
        cosines, sines = np.cos(angles[:-1]), np.sin(angles[:-1])
        moves = self.moves[0][:frame] + weight * self.moves[1][:frame]
        across = self.across[0][:frame] + weight * self.across[1][:frame]
        # Moves lie in the floor: turning one by an angle about up is cos * move + sin * (up x move).
        place = a.start_place + cosines @ moves + sines @ across
        height = a.heights[frame] + weight * (b.heights[frame] - a.heights[frame])
        tilt = rotations.slerp(a.tilts[frame], b.tilts[frame], weight)
        first, second = self.plane
        direction = rotations.quaternion_to_matrix(tilt)[:, self.heading.axis]
        tilt_turn = self.heading.turns(np.arctan2(direction @ second, direction @ first))
        tilt = rotations.quaternion_multiply(rotations.quaternion_conjugate(tilt_turn), tilt)
        return rotations.quaternion_multiply(self.heading.turns(angles[-1]), tilt), place + height * up
