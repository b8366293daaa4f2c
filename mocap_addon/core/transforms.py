"""Joint transforms composed down a hierarchy: arrays in, arrays out (the forward kinematics every motion
type stands on, :mod:`.pose` and :mod:`.kinematics` among them), and the rest pose."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from . import rotations
from .model import Skeleton
from .rotations import FloatArray
from .threads import usable_threads


@dataclass
class World:
    """World transforms of every joint at every frame: unit quaternions ``(F, J, 4)``, joint
    origins ``(F, J, 3)`` and accumulated uniform scales ``(F, J)``, so that
    world = T(position) @ R(quaternion) * scale.  :attr:`rotations` gives the matrices."""

    quaternions: FloatArray
    positions: FloatArray
    scales: FloatArray
    _joint_rotations: dict[int, FloatArray] = field(default_factory=dict, init=False, repr=False, compare=False)

    @cached_property
    def rotations(self) -> FloatArray:
        """World rotation matrices ``(F, J, 3, 3)``."""
        return rotations.quaternion_to_matrix(self.quaternions)

    def joint_rotations(self, joint: int) -> FloatArray:
        """One joint's world rotation matrices ``(F, 3, 3)``, without building every joint's."""
        if "rotations" in self.__dict__:
            return self.rotations[:, joint]
        if joint not in self._joint_rotations:
            self._joint_rotations[joint] = rotations.quaternion_to_matrix(self.quaternions[:, joint])
        return self._joint_rotations[joint]

    def joint(self, joint: int) -> tuple[FloatArray, FloatArray]:
        """One joint's world rotation matrices ``(F, 3, 3)`` and origins ``(F, 3)``."""
        return self.joint_rotations(joint), self.positions[:, joint]


def place_translation(skeleton: Skeleton, joint: int | np.ndarray, channel: FloatArray) -> FloatArray:
    """A joint's local translation from its channel translation: rotated by the rest rotation
    where the model says so, then added to the offset unless it replaces it.  ``joint`` may be an
    array of ``n`` joints, ``channel`` then ``(..., n, 3)``."""
    joint = np.asarray(joint)
    in_rest = skeleton.translation_in_rest_frame[joint]
    if np.any(in_rest):
        turned = np.einsum("...ab,...b->...a", skeleton.rest_rotations[joint], channel)
        channel = np.where(in_rest[..., None], turned, channel)
    return np.where(skeleton.position_replaces_offset[joint][..., None], channel, channel + skeleton.offsets[joint])


def translation_channels(skeleton: Skeleton, joint: int | np.ndarray, local: FloatArray) -> FloatArray:
    """A joint's channel translation from its local translation (:func:`place_translation` undone)."""
    joint = np.asarray(joint)
    moved = np.where(skeleton.position_replaces_offset[joint][..., None], local, local - skeleton.offsets[joint])
    in_rest = skeleton.translation_in_rest_frame[joint]
    if np.any(in_rest):
        turned = np.einsum("...ba,...b->...a", skeleton.rest_rotations[joint], moved)
        moved = np.where(in_rest[..., None], turned, moved)
    return moved


def depth_levels(parents: list[int]) -> list[np.ndarray]:
    """Joints grouped by depth in the hierarchy (roots first); a level's parents are all in earlier levels."""
    depth = np.zeros(len(parents), dtype=np.int64)
    for joint, parent in enumerate(parents):
        depth[joint] = 0 if parent < 0 else depth[parent] + 1
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max(initial=-1)) + 2))
    return [order[a:b] for a, b in pairwise(bounds)]


def compose(parents: list[int], local_rotations: FloatArray, local_translations: FloatArray,
            local_scales: FloatArray | None = None,
            levels: list[np.ndarray] | None = None) -> tuple[FloatArray, FloatArray, FloatArray | None]:
    """World quaternions ``(4, J, ...)``, positions ``(3, J, ...)`` and scales ``(J, ...)`` (``None``
    when ``local_scales`` is) from component-major local ones: the one forward kinematics of the core.

    A few dozen elementwise operations per depth of the hierarchy, every joint of a depth at once;
    hierarchies deeper than :data:`DEEP` (chains of thousands of joints) compose by pointer jumping
    instead, in a number of steps that grows with the logarithm of their depth.
    """
    levels = depth_levels(parents) if levels is None else levels
    if len(levels) > DEEP:
        return _compose_by_jumping(parents, local_rotations, local_translations, local_scales)
    parent_index = np.asarray(parents, dtype=np.int64)
    world = np.empty_like(local_rotations)
    positions = np.empty_like(local_translations)
    scales = None if local_scales is None else np.empty_like(local_scales)
    for depth, joints in enumerate(levels):
        if depth == 0:
            world[:, joints], positions[:, joints] = local_rotations[:, joints], local_translations[:, joints]
            if scales is not None and local_scales is not None:
                scales[joints] = local_scales[joints]
            continue
        above = parent_index[joints]
        turned = world[:, above]
        world[:, joints] = rotations.hamilton(turned, local_rotations[:, joints])
        moved = rotations.rotate(turned, local_translations[:, joints])
        if scales is not None and local_scales is not None:
            moved *= scales[above]
            scales[joints] = scales[above] * local_scales[joints]
        positions[:, joints] = positions[:, above] + moved
    return world, positions, scales


DEEP = 32


def _compose_by_jumping(parents: list[int], local_rotations: FloatArray, local_translations: FloatArray,
                        local_scales: FloatArray | None) -> tuple[FloatArray, FloatArray, FloatArray | None]:
    """:func:`compose` by pointer jumping: each joint holds its transform relative to an ancestor and
    composes it with that ancestor's, which then points twice as far up, until every joint reaches the root."""
    world, positions = local_rotations.copy(), local_translations.copy()
    scales = None if local_scales is None else local_scales.copy()
    above = np.asarray(parents, dtype=np.int64).copy()
    while True:
        linked = np.flatnonzero(above >= 0)
        if not len(linked):
            return world, positions, scales
        up = above[linked]
        turned, placed = world[:, up], positions[:, up]  # copies: this step reads the values before it
        moved = rotations.rotate(turned, positions[:, linked])
        if scales is not None:
            grown = scales[up]
            moved *= grown
            scales[linked] = grown * scales[linked]
        positions[:, linked] = placed + moved
        world[:, linked] = rotations.hamilton(turned, world[:, linked])
        above[linked] = above[up]


FRAMES_PER_BLOCK = 2048




def world_transforms(parents: list[int], local_rotations: FloatArray, local_translations: FloatArray,
                     local_scales: FloatArray | None, only: Sequence[int] | None = None) -> World:
    """World rotation, position and scale of every joint at every frame from local quaternions ``(F, J, 4)``,
    translations ``(F, J, 3)`` and scales ``(F, J)`` (or ``None``); with ``only``, of those joints and their
    ancestors alone (the other joints' transforms are NaN).

    Frames are independent, so long motions are cut into blocks that stay in
    the CPU cache and run on a small thread pool (numpy releases the GIL).
    """
    frames, joints = local_rotations.shape[:2]
    if only is None:
        columns: slice | NDArray[np.int64] = slice(None)
        world = World(np.empty((frames, joints, 4)), np.empty((frames, joints, 3)), np.ones((frames, joints)))
        levels = depth_levels(parents)
    else:
        columns, parents = _with_ancestors(parents, only)
        world = World(np.full((frames, joints, 4), np.nan), np.full((frames, joints, 3), np.nan),
                      np.full((frames, joints), np.nan))
        world.scales[:, columns] = 1.0
        levels = depth_levels(parents)

    def run(start: int) -> None:
        rows = slice(start, min(start + FRAMES_PER_BLOCK, frames))
        scales = None if local_scales is None else np.ascontiguousarray(local_scales[rows, columns].T)
        turns, places, grown = compose(parents, np.ascontiguousarray(local_rotations[rows, columns].transpose(2, 1, 0)),
                                       np.ascontiguousarray(local_translations[rows, columns].transpose(2, 1, 0)),
                                       scales, levels)
        world.quaternions[rows, columns] = turns.transpose(2, 1, 0)
        world.positions[rows, columns] = places.transpose(2, 1, 0)
        if grown is not None:
            world.scales[rows, columns] = grown.T

    starts = range(0, frames, FRAMES_PER_BLOCK)
    threads = usable_threads(4)
    if len(starts) <= 1 or threads == 1:
        list(map(run, starts))
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(run, starts))
    return world


def _with_ancestors(parents: list[int], only: Sequence[int]) -> tuple[NDArray[np.int64], list[int]]:
    """The joints ``only`` and their ancestors, in order, and their parents as positions in that list."""
    kept: set[int] = set()
    for joint in only:
        while joint >= 0 and joint not in kept:
            kept.add(joint)
            joint = parents[joint]
    joints = sorted(kept)
    slot = {joint: position for position, joint in enumerate(joints)}
    return np.array(joints, dtype=np.int64), [slot.get(parents[joint], -1) for joint in joints]


def rest_pose(skeleton: Skeleton) -> tuple[FloatArray, FloatArray]:
    """World rotations ``(J, 3, 3)`` and origins ``(J, 3)`` of the rest pose (channels zero, offsets applied)."""
    turns = rotations.matrix_to_quaternion(skeleton.rest_rotations).T[:, :, None]
    world, positions, _ = compose(skeleton.parents, turns, skeleton.offsets.T[:, :, None])
    return rotations.quaternion_to_matrix(world[:, :, 0].T), positions[:, :, 0].T


def rest_positions(skeleton: Skeleton) -> FloatArray:
    """World joint origins ``(J, 3)`` of the rest pose."""
    return rest_pose(skeleton)[1]
