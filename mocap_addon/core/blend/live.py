"""A blend posed one frame at a time, at any mix, fast enough to play: the live mixer's core.

:class:`LiveBlend` does once what does not depend on the mix (reading and
pairing the clips, the time warp, ``b`` on ``a``'s body, the contacts) and
then poses any frame at any mix as :func:`.mixing.blend` does for that mix
held constant.  Joints mix frame by frame (slerp), so a frame costs one slerp
of the skeleton; the ``"heading"`` root integrates its path from the first
frame up to the asked one.  Held feet depend on the frames before and on the
mix through leg IK: they are solved at :attr:`LiveBlend.grid` mixes once and
interpolated between (slerp of the legs' local rotations), the grid split where
the feet's contacts switch (a leg's mix of one half) so no interpolation
crosses a switch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import rotations
from ..kinematics import place_translation
from ..model import MOVE_CHANNELS, SCALE_CHANNEL, TRANSLATION_CHANNELS, Clip, Skeleton, rotation_order
from ..pose import Pose, as_pose
from ..rotations import FloatArray
from .mixing import HELD_MIXES_AT_ONCE, _Joints, _pair, _Pairing
from .paths import mixed_path, mixed_root_at

GRID_STEP = 0.025  # mixes between the held feet's precomputed poses
SWITCH_GAP = 1e-9  # a contact switch's mix is solved on both sides this near it


@dataclass
class LiveBlend:
    """``a`` and ``b`` paired for one set of :func:`.mixing.blend` options, posed per frame by :meth:`pose`."""

    pairing: _Pairing
    grid: FloatArray  # (G,) mixes the held legs were solved at, increasing
    legs: list[int]  # the joints holding the feet turns
    held: FloatArray  # (G, F, len(legs), 4) their local rotations at each grid mix

    @classmethod
    def of(cls, a: Clip | Pose, b: Clip | Pose, *, step: float = GRID_STEP, **options: Any) -> LiveBlend:
        """Pair ``a`` and ``b`` for ``options`` (:func:`.mixing.blend`'s keywords) and solve the held feet
        on a grid of mixes ``step`` apart."""
        pairing = _pair(as_pose(a), as_pose(b), **options)
        if pairing.feet is None:
            return cls(pairing, np.zeros(0), [], np.zeros((0, pairing.a.frame_count, 0, 4)))
        grid = _grid(pairing, step)
        joints = list(range(pairing.a.skeleton.joint_count))
        legs = sorted({j for leg in pairing.feet.legs for j in (leg.thigh, leg.shin, leg.foot)})
        pose_a, pose_b = pairing.poses()
        solved = []
        for start in range(0, len(grid), HELD_MIXES_AT_ONCE):  # a few mixes at a time: the legs' arrays
            weights = grid[start:start + HELD_MIXES_AT_ONCE, None, None] * pairing.weights
            weights = np.broadcast_to(weights, (len(weights), pairing.a.frame_count, len(joints)))
            mixed = pairing.mix(pose_a, pose_b, weights, joints)
            solved.append(pairing.held(mixed, weights, joints)[0].rotations[..., legs, :])
        return cls(pairing, grid, legs, np.concatenate(solved))

    @property
    def frame_count(self) -> int:
        return self.pairing.a.frame_count

    def pose(self, frame: int, mix: float) -> Pose:
        """The blend at ``a``'s ``frame`` (0-based) for ``mix`` held constant, as one frame held by ``a``'s
        channels (:meth:`.pose.Pose.held`): what :func:`.mixing.blend` gives at that frame."""
        turns, moves, scales = self.frame(frame, mix)
        return replace(self.pairing.a.at([frame]), rotations=turns[None], translations=moves[None],
                       scales=None if scales is None else scales[None])

    def frame(self, frame: int, mix: float) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """:meth:`pose`'s local rotations ``(J, 4)``, translations ``(J, 3)`` and scales ``(J,)`` (``None``
        where neither clip scales), straight from the precomputed arrays: what a frame change needs."""
        pairing = self.pairing
        if not 0 <= frame < self.frame_count:
            raise ValueError(f"frame {frame} is outside a's {self.frame_count} frames")
        rows = [frame]
        pose_a, pose_b = (_Joints(r[rows], t[rows], c[rows]) for r, t, c in self._arrays)
        mixed = pairing.mix(pose_a, pose_b, float(mix) * pairing.weights[None, :], self._joints)
        if pairing.root == "heading" and pairing.steps is not None:  # its path from the first frame to this
            root = pairing.root_joint
            mixed.rotations[0, root], mixed.translations[0, root] = mixed_root_at(
                pairing.heading, *pairing.steps, float(mix) * pairing.weights[root], frame)
        if self.legs:
            mixed.rotations[0, self.legs] = self._held_legs(frame, float(mix))
        held = self._held
        if held.partial:
            one = replace(pairing.a.at(rows), rotations=mixed.rotations, translations=mixed.translations,
                          scales=mixed.scales if self._scaled else None).held()
            return one.rotations[0], one.translations[0], None if one.scales is None else one.scales[0]
        moves = np.where(held.still[:, None], held.places, mixed.translations[0])
        scales = np.where(held.unscaled, 1.0, mixed.scales[0]) if self._scaled else None
        return mixed.rotations[0], moves, scales

    @cached_property
    def _joints(self) -> list[int]:
        return list(range(self.pairing.a.skeleton.joint_count))

    @cached_property
    def _scaled(self) -> bool:
        return self.pairing.a.scales is not None or self.pairing.b.scales is not None

    @cached_property
    def _arrays(self) -> tuple[tuple[FloatArray, FloatArray, FloatArray], ...]:
        return tuple((p.rotations, p.translations, p.scale_values()) for p in (self.pairing.a, self.pairing.b))

    @cached_property
    def _held(self) -> _Held:
        return _Held.of(self.pairing.a.skeleton)

    def poses(self, mixes: FloatArray) -> Pose:
        """Every frame of ``a``, each at its own mix ``mixes`` ``(F,)`` held constant: :meth:`pose` at every
        frame at once (the ``"heading"`` root's path integrated once per distinct mix)."""
        pairing = self.pairing
        mixes = np.asarray(mixes, dtype=np.float64)
        if mixes.shape != (self.frame_count,) or not np.all(np.isfinite(mixes)):
            raise ValueError(f"mixes must be {self.frame_count} finite values (one per frame of a)")
        joints = list(range(pairing.a.skeleton.joint_count))
        mixed = pairing.mix(*pairing.poses(), mixes[:, None] * pairing.weights[None, :], joints)
        if pairing.root == "heading" and pairing.steps is not None:
            root = pairing.root_joint
            for mix in np.unique(mixes):
                rows = np.flatnonzero(mixes == mix)
                held = np.full(rows[-1] + 1, mix * pairing.weights[root])
                turn, place = mixed_path(pairing.heading, *pairing.steps, held)
                mixed.rotations[rows, root], mixed.translations[rows, root] = turn[rows], place[rows]
        if self.legs:
            frames = np.arange(self.frame_count)
            mixed.rotations[:, self.legs] = self._held_legs(frames, mixes)
        return replace(pairing.a, rotations=mixed.rotations, translations=mixed.translations,
                       scales=None if pairing.a.scales is None and pairing.b.scales is None else mixed.scales,
                       metadata=dict(pairing.a.metadata)).held()

    def _held_legs(self, frames: NDArray[np.int64] | int, mixes: FloatArray | float) -> FloatArray:
        """The held legs' local rotations at ``frames`` for ``mixes``: the grid's, slerped between the two
        grid mixes around each (the nearest past the grid's ends)."""
        grid = self.grid
        mix = np.asarray(mixes, dtype=np.float64)
        upper = np.clip(np.searchsorted(grid, mix), 1, len(grid) - 1)
        low, high = grid[upper - 1], grid[upper]
        share = np.clip((mix - low) / (high - low), 0.0, 1.0)
        share = np.where(high - low <= 2 * SWITCH_GAP, np.round(share), share)  # the gap at a switch: nearer side
        return rotations.slerp(self.held[upper - 1, frames], self.held[upper, frames], share[..., None])


@dataclass
class _Held:
    """What :meth:`.pose.Pose.held` does to a skeleton's poses, worked out once: joints that cannot move
    keep their offsets, joints without a scale channel scale 1; ``partial`` joints need their channels."""

    still: NDArray[np.bool_]  # (J,)
    places: FloatArray  # (J, 3) the still joints' translations
    unscaled: NDArray[np.bool_]  # (J,)
    partial: bool

    @classmethod
    def of(cls, skeleton: Skeleton) -> _Held:
        still = np.zeros(skeleton.joint_count, dtype=bool)
        places = np.zeros((skeleton.joint_count, 3))
        partial = False
        for joint, layout in enumerate(skeleton.channels):
            moves = {c for c in layout if c in MOVE_CHANNELS}
            partial |= len(rotation_order(layout)) < 3 or bool(moves and moves != set(TRANSLATION_CHANNELS))
            if not moves:
                still[joint] = True
                places[joint] = place_translation(skeleton, joint, np.zeros(3))
        unscaled = np.array([SCALE_CHANNEL not in layout for layout in skeleton.channels])
        return cls(still, places, unscaled, partial)


def _grid(pairing: _Pairing, step: float) -> FloatArray:
    """Mixes from 0 to 1 about ``step`` apart, with each leg's contact switch (its mix of one half: the
    mix times its joints' mask weights) and mixes just either side of it."""
    assert pairing.feet is not None
    count = max(2, int(np.ceil(1.0 / step)) + 1)
    mixes = set(np.linspace(0.0, 1.0, count).tolist())
    for leg in pairing.feet.legs:
        weight = float(np.mean(pairing.weights[[leg.thigh, leg.shin, leg.foot]]))
        if weight > 0.5:
            switch = 0.5 / weight
            mixes.update((switch - SWITCH_GAP, switch, switch + SWITCH_GAP))
    return np.array(sorted(mixes))
