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
from typing import Any

import numpy as np

from .. import rotations
from ..model import Clip
from ..pose import Pose, as_pose
from ..rotations import FloatArray
from .mixing import HELD_MIXES_AT_ONCE, _pair, _Pairing

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
        pairing = self.pairing
        if not 0 <= frame < self.frame_count:
            raise ValueError(f"frame {frame} is outside a's {self.frame_count} frames")
        joints = list(range(pairing.a.skeleton.joint_count))
        weights = float(mix) * pairing.weights[None, :]
        mixed = pairing.mix(*pairing.poses(slice(None), np.array([frame])), weights, joints, frame)
        if self.legs:
            mixed.rotations[0, self.legs] = self._held_legs(frame, float(mix))
        one = pairing.a.at([frame])
        return replace(one, rotations=mixed.rotations, translations=mixed.translations,
                       scales=None if pairing.a.scales is None and pairing.b.scales is None else mixed.scales).held()

    def _held_legs(self, frame: int, mix: float) -> FloatArray:
        """The held legs' local rotations at ``frame`` for ``mix``: the grid's, slerped between the two
        grid mixes around it (the nearest past the grid's ends)."""
        grid = self.grid
        upper = int(np.clip(np.searchsorted(grid, mix), 1, len(grid) - 1))
        low, high = grid[upper - 1], grid[upper]
        share = float(np.clip((mix - low) / (high - low), 0.0, 1.0))
        if high - low <= 2 * SWITCH_GAP:  # the gap at a switch: the nearer side
            share = float(round(share))
        return rotations.slerp(self.held[upper - 1, frame], self.held[upper, frame], share)


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
