"""A blend posed one frame at a time, at any mix, fast enough to play: the live mixer's core.

:class:`LiveBlend` does once what does not depend on the mix (reading and
pairing the clips, the time warp, ``b`` on ``a``'s body, the contacts) and
then poses any frame at any mix as :func:`.mixing.blend` does for that mix
held constant.  Joints mix frame by frame (slerp), so a frame costs one slerp
of the skeleton; the ``"heading"`` root integrates its path from the first
frame up to the asked one.  Held feet depend on the frames before and on the
mix through leg IK: they are solved at :attr:`LiveBlend.grid` mixes and
interpolated between (slerp of the legs' local rotations).  The grid starts
coarse, split where the feet's contacts switch (a leg's mix of one half) so no
interpolation crosses a switch; the first time a mix falls in an interval, its
middle is solved and the interval halved until interpolating there misses the
solved legs by less than :data:`LEG_TOLERANCE`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import rotations
from ..model import MOVE_CHANNELS, SCALE_CHANNEL, TRANSLATION_CHANNELS, Clip, Skeleton, rotation_order
from ..pose import Pose, as_pose
from ..rotations import FloatArray
from ..transforms import place_translation
from .mixing import HELD_MIXES_AT_ONCE, _Joints, _pair, _Pairing, _world_of
from .paths import HeldMix, mixed_path

GRID_STEP = 0.05  # mixes between the held feet's precomputed poses, at first
REFINEMENTS = 5  # times an interval of the grid may be halved
LEG_TOLERANCE = 1e-4  # legs (about half a figure): how far an interpolated leg joint may be from the solved one
ON_GRID = 1e-12  # a mix this near a grid mix is that mix's solved legs (interpolated nowhere)
SWITCH_GAP = 1e-9  # a contact switch's mix is solved on both sides this near it


@dataclass
class LiveBlend:
    """``a`` and ``b`` paired for one set of :func:`.mixing.blend` options, posed per frame by :meth:`pose`."""

    pairing: _Pairing
    grid: FloatArray  # (G,) mixes the held legs were solved at, increasing
    legs: list[int]  # the joints holding the feet turns
    held: FloatArray  # (G, F, len(legs), 4) their local rotations at each grid mix
    checked: NDArray[np.bool_]  # (G - 1,) intervals of the grid known to interpolate within tolerance

    @classmethod
    def of(cls, a: Clip | Pose, b: Clip | Pose, *, step: float = GRID_STEP, **options: Any) -> LiveBlend:
        """Pair ``a`` and ``b`` for ``options`` (:func:`.mixing.blend`'s keywords) and solve the held feet
        on a grid of mixes ``step`` apart (refined where a mix is asked for: :meth:`_refine`)."""
        pairing = _pair(as_pose(a), as_pose(b), **options)
        if pairing.feet is None:
            return cls(pairing, np.zeros(0), [], np.zeros((0, pairing.a.frame_count, 0, 4)), np.zeros(0, bool))
        legs = sorted({j for leg in pairing.feet.legs for j in (leg.thigh, leg.shin, leg.foot)})
        grid = _grid(pairing, step)
        checked = np.diff(grid) <= 4 * SWITCH_GAP  # a switch's gap: either side's, never in between
        return cls(pairing, grid, legs, _held_legs(pairing, legs, grid), checked)

    def _refine(self, mix: float) -> None:
        """Make sure the grid interval holding ``mix`` interpolates the held legs within :data:`LEG_TOLERANCE`:
        solve its middle, compare with the interpolation there, and halve it (then check the half holding
        ``mix``) where it misses, up to :data:`REFINEMENTS` times."""
        assert self.pairing.feet is not None
        for _ in range(REFINEMENTS + 1):
            upper = int(np.clip(np.searchsorted(self.grid, mix), 1, len(self.grid) - 1))
            if self.checked[upper - 1] or np.min(np.abs(self.grid[upper - 1:upper + 1] - mix)) <= ON_GRID:
                return  # known good, or a mix solved itself (e.g. the catch game's steps of 0.05)
            middle = np.array([0.5 * (self.grid[upper - 1] + self.grid[upper])])
            exact = _held_legs(self.pairing, self.legs, middle)
            guessed = rotations.slerp(self.held[upper - 1], self.held[upper], 0.5)[None]
            distances = np.linalg.norm(_feet_places(self.pairing, self.legs, middle, exact)
                                       - _feet_places(self.pairing, self.legs, middle, guessed), axis=-1)
            if distances.max() <= LEG_TOLERANCE * self.pairing.feet.leg:
                self.checked[upper - 1] = True
                return
            self.grid = np.insert(self.grid, upper, middle[0])
            self.held = np.insert(self.held, upper, exact[0], axis=0)
            self.checked = np.insert(self.checked, upper - 1, False)
        upper = int(np.clip(np.searchsorted(self.grid, mix), 1, len(self.grid) - 1))
        self.checked[upper - 1] = True  # as fine as it gets

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
        weights = float(mix) * pairing.weights[None, :]
        if self._path is None:
            mixed = pairing.mix(pose_a, pose_b, weights, self._joints)
        else:  # the heading root's path from the first frame to this one, weight held
            root = pairing.root_joint
            mixed = pose_a.toward(pose_b, weights)
            mixed.rotations[0, root], mixed.translations[0, root] = self._path.at(weights[0, root], frame)
        if self.legs:
            self._refine(float(mix))
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
    def _path(self) -> HeldMix | None:
        steps = self.pairing.steps
        return HeldMix.of(self.pairing.heading, *steps) if self.pairing.root == "heading" and steps else None

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
            for mix in np.unique(mixes):
                self._refine(float(mix))
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


def _held_legs(pairing: _Pairing, legs: list[int], mixes: FloatArray) -> FloatArray:
    """The local rotations ``(M, F, K, 4)`` of the ``legs`` joints with the feet held, for each of ``mixes``
    held constant (a few mixes at a time: the legs' arrays)."""
    joints = list(range(pairing.a.skeleton.joint_count))
    pose_a, pose_b = pairing.poses()
    solved = [np.zeros((0, pairing.a.frame_count, len(legs), 4))]
    for start in range(0, len(mixes), HELD_MIXES_AT_ONCE):
        weights = mixes[start:start + HELD_MIXES_AT_ONCE, None, None] * pairing.weights
        weights = np.broadcast_to(weights, (len(weights), pairing.a.frame_count, len(joints)))
        mixed = pairing.mix(pose_a, pose_b, weights, joints)
        solved.append(pairing.held(mixed, weights, joints)[0].rotations[..., legs, :])
    return np.concatenate(solved)


def _feet_places(pairing: _Pairing, legs: list[int], mixes: FloatArray, turns: FloatArray) -> FloatArray:
    """World positions ``(M, F, K, 3)`` of the legs and the joints above them for ``mixes`` held constant,
    the ``legs`` joints turned by ``turns`` ``(M, F, len(legs), 4)``."""
    assert pairing.feet is not None
    joints = pairing.feet.joints
    weights = mixes[:, None, None] * pairing.weights[joints]
    weights = np.broadcast_to(weights, (len(mixes), pairing.a.frame_count, len(joints)))
    mixed = pairing.mix(*pairing.poses(joints), weights, joints)
    mixed.rotations[..., [joints.index(j) for j in legs], :] = turns
    return _world_of(pairing.a.skeleton.parents, joints, mixed)[1]


def _grid(pairing: _Pairing, step: float) -> FloatArray:
    """Mixes from 0 to 1 about ``step`` apart, with each leg's contact switch (its mix of one half: the
    mix times its joints' mask weights) and mixes just either side of it."""
    assert pairing.feet is not None
    count = max(2, int(np.ceil(1.0 / step)) + 1)
    # At mix 0 and 1 a held foot is where its clip's is, so no leg is solved; next to them legs are solved
    # (softened near straight): the grid starts again just past each end.
    mixes = set(np.linspace(0.0, 1.0, count).tolist()) | {SWITCH_GAP, 1.0 - SWITCH_GAP}
    for leg in pairing.feet.legs:
        weight = float(np.mean(pairing.weights[[leg.thigh, leg.shin, leg.foot]]))
        if weight > 0.5:
            switch = 0.5 / weight
            mixes.update((switch - SWITCH_GAP, switch, switch + SWITCH_GAP))
    return np.array(sorted(mixes))
