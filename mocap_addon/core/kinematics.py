"""Forward kinematics, vectorised over frames and batched by hierarchy depth, and rest poses."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from . import rotations
from .bones import choose_tails
from .errors import MocapWriteError
from .model import ROTATION_CHANNELS, Clip, Skeleton, rotation_order
from .rotations import FloatArray, listed_within

if TYPE_CHECKING:
    from .pose import Pose


@dataclass
class World:
    """World transforms of every joint at every frame: unit quaternions ``(F, J, 4)``, joint
    origins ``(F, J, 3)`` and accumulated uniform scales ``(F, J)``, so that
    world = T(position) @ R(quaternion) * scale.  :attr:`rotations` gives the matrices."""

    quaternions: FloatArray
    positions: FloatArray
    scales: FloatArray

    @cached_property
    def rotations(self) -> FloatArray:
        """World rotation matrices ``(F, J, 3, 3)``."""
        return rotations.quaternion_to_matrix(self.quaternions)


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


def forward_kinematics(motion: Clip | Pose) -> World:
    """World rotation, position and scale of every joint at every frame of a clip or a pose.

    Frames are independent, so long motions are cut into blocks that stay in
    the CPU cache and run on a small thread pool (numpy releases the GIL).
    """
    pose = motion.pose() if isinstance(motion, Clip) else motion
    frames, joints = pose.frame_count, pose.joint_count
    parents = pose.skeleton.parents
    levels = depth_levels(parents)
    world = World(np.empty((frames, joints, 4)), np.empty((frames, joints, 3)), np.ones((frames, joints)))

    def run(start: int) -> None:
        rows = slice(start, min(start + FRAMES_PER_BLOCK, frames))
        scales = None if pose.scales is None else np.ascontiguousarray(pose.scales[rows].T)
        turns, places, grown = compose(parents, np.ascontiguousarray(pose.rotations[rows].transpose(2, 1, 0)),
                                       np.ascontiguousarray(pose.translations[rows].transpose(2, 1, 0)), scales,
                                       levels)
        world.quaternions[rows] = turns.transpose(2, 1, 0)
        world.positions[rows] = places.transpose(2, 1, 0)
        if grown is not None:
            world.scales[rows] = grown.T

    starts = range(0, frames, FRAMES_PER_BLOCK)
    if len(starts) <= 1:
        list(map(run, starts))
    else:
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            list(pool.map(run, starts))
    return world


def world_positions(motion: Clip | Pose) -> FloatArray:
    """Joint origins ``(frames, joints, 3)`` in the file's own axes and units."""
    return forward_kinematics(motion).positions


def end_site_positions(motion: Clip | Pose, world: World | None = None,
                       joints: Sequence[int] | None = None) -> list[FloatArray]:
    """World positions ``(F, k, 3)`` of each joint's end sites (``k`` may be 0); of ``joints`` only, in
    that order, when given."""
    world = forward_kinematics(motion) if world is None else world
    out = []
    for joint in range(motion.skeleton.joint_count) if joints is None else joints:
        sites = motion.skeleton.end_sites[joint]
        if not len(sites):
            out.append(np.zeros((len(world.positions), 0, 3)))
            continue
        turned = rotations.quaternion_rotate(world.quaternions[:, joint, None], sites)
        out.append(world.positions[:, joint, None] + turned * world.scales[:, joint, None, None])
    return out


def rest_pose(skeleton: Skeleton) -> tuple[FloatArray, FloatArray]:
    """World rotations ``(J, 3, 3)`` and origins ``(J, 3)`` of the rest pose (channels zero, offsets applied)."""
    turns = rotations.matrix_to_quaternion(skeleton.rest_rotations).T[:, :, None]
    world, positions, _ = compose(skeleton.parents, turns, skeleton.offsets.T[:, :, None])
    return rotations.quaternion_to_matrix(world[:, :, 0].T), positions[:, :, 0].T


def rest_positions(skeleton: Skeleton) -> FloatArray:
    """World joint origins ``(J, 3)`` of the rest pose."""
    return rest_pose(skeleton)[1]


def rest_bones(skeleton: Skeleton, up: FloatArray,
               bone_vectors: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    """Rest heads and tails ``(J, 3)`` of each joint's bone, in file axes and units.

    The tail is chosen by :func:`~.bones.choose_tails` (``up`` breaks ties and
    points stubs), unless ``bone_vectors`` ``(J, 3)``, in each joint's own frame,
    fix the bone a format defines itself (HTR's BoneLength along BoneLengthAxis;
    zero vectors leave the choice to ``choose_tails``).
    """
    rotations, heads = rest_pose(skeleton)
    sites = [heads[j] + s @ rotations[j].T for j, s in enumerate(skeleton.end_sites)]
    tails = choose_tails(skeleton.parents, heads, sites, up=up)
    if bone_vectors is not None:
        given = (rotations @ bone_vectors[..., None])[..., 0]
        usable = np.linalg.norm(given, axis=1) > 1e-9 * max(float(np.ptp(heads, axis=0).max()), 1e-9)
        tails = np.where(usable[:, None], heads + given, tails)
    return heads, tails


def local_transforms(clip: Clip) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Each joint's local rotation matrix (rest @ frame) ``(F, J, 3, 3)``, translation ``(F, J, 3)``
    and scale ``(F, J)``: the clip's pose, for writers that need matrices."""
    pose = clip.pose()
    return rotations.quaternion_to_matrix(pose.rotations), pose.translations, pose.scale_values()


def rebase(clip: Clip, rest_frames: FloatArray, layouts: list[tuple[str, ...]],
           translation_in_rest_frame: bool = False, reference: FloatArray | None = None) -> Clip:
    """The same motion with each joint's rest orientation turned to ``rest_frames`` (world, ``(J, 3, 3)``).

    Every joint frame is rotated by a constant ``D = G0^T @ rest_frame`` (``G0``
    its old rest orientation), so a local transform becomes
    ``D_parent^T @ L @ D``: the base-pose conversion of the format notes.  The
    new rest rotation is the rest pose's local rotation, offsets and end sites
    are re-expressed in the new frames, position channels add to the offsets,
    and the world poses are unchanged.
    """
    skeleton = clip.skeleton
    old_rest, _ = rest_pose(skeleton)
    change = np.swapaxes(old_rest, -1, -2) @ rest_frames
    parents = np.array(skeleton.parents)
    parent_change = np.where((parents >= 0)[:, None, None], change[np.maximum(parents, 0)], np.eye(3))
    back: FloatArray = np.swapaxes(parent_change, -1, -2).astype(np.float64)
    pose = clip.pose()
    turned = rotations.quaternion_multiply(rotations.quaternion_multiply(rotations.matrix_to_quaternion(back),
                                                                         pose.rotations),
                                           rotations.matrix_to_quaternion(change))
    count = skeleton.joint_count
    target = Skeleton(list(skeleton.names), list(skeleton.parents), (back @ skeleton.offsets[..., None])[..., 0],
                      layouts, [e @ change[j] for j, e in enumerate(skeleton.end_sites)],
                      back @ skeleton.rest_rotations @ change, np.zeros(count, dtype=bool),
                      np.full(count, translation_in_rest_frame),
                      (np.swapaxes(change, -1, -2) @ skeleton.length_directions[..., None])[..., 0])
    moved = np.einsum("jab,fjb->fja", back, pose.translations)
    return replace(pose, skeleton=target, rotations=turned, translations=moved).to_clip(reference=reference)


FRAME_BLOCK = 16384  # frames re-encoded at a time: the pose arrays of a long take are never held whole


def rebase_in_blocks(clip: Clip, rest_frames: FloatArray, layouts: list[tuple[str, ...]],
                     translation_in_rest_frame: bool = False) -> Clip:
    """:func:`rebase` a block of frames at a time, each block's angles continuing from the last frame
    before it, so memory stays near the motion's own size on long takes."""
    if clip.frame_count <= FRAME_BLOCK or any(0 < len(rotation_order(layout)) < 3 for layout in layouts):
        return rebase(clip, rest_frames, layouts, translation_in_rest_frame)
    blocks: list[Clip] = []
    for first in range(0, clip.frame_count, FRAME_BLOCK):
        part = replace(clip, motion=clip.motion[first:first + FRAME_BLOCK])
        blocks.append(rebase(part, rest_frames, layouts, translation_in_rest_frame,
                             reference=None if not blocks else last_angles(blocks[-1].skeleton,
                                                                           blocks[-1].motion[-1])))
    return replace(blocks[0], motion=np.concatenate([block.motion for block in blocks]))


def last_angles(skeleton: Skeleton, row: FloatArray) -> FloatArray:
    """Each joint's angles (degrees, in its rotation order; zeros for axes it lacks) in one frame's channel
    values ``row``: where the next block of frames is encoded from (``reference``), so blocks continue."""
    angles = np.zeros((skeleton.joint_count, 3))
    starts = skeleton.channel_starts()
    for joint, layout in enumerate(skeleton.channels):
        order = rotation_order(layout)
        columns = [int(starts[joint]) + layout.index(f"r{axis.lower()}") for axis in order]
        angles[joint, :len(order)] = row[columns]
    return angles


def conform(clip: Clip, layouts: list[tuple[str, ...]] | None = None,
            position_replaces_offset: np.ndarray | None = None) -> Clip:
    """The same motion on identity rest rotations, with new channel layouts.

    This is the form BVH holds: each joint's frame rotation becomes its rest
    rotation times its old one, translations are expressed in the parent frame,
    and position channels replace or add to the offset as asked.  Offsets, end
    sites and world poses are unchanged; the clip itself is returned when
    nothing needs to change, so values read from a file are written back exactly.
    A scale other than 1 on a joint whose new layout has no ``s`` raises ``MocapWriteError``.
    """
    skeleton = clip.skeleton
    layouts = skeleton.channels if layouts is None else [tuple(c) for c in layouts]
    replaces = (skeleton.position_replaces_offset if position_replaces_offset is None
                else np.asarray(position_replaces_offset, dtype=bool))
    unchanged = (layouts == skeleton.channels
                 and np.array_equal(replaces, skeleton.position_replaces_offset)
                 and np.allclose(skeleton.rest_rotations, np.eye(3), rtol=0, atol=1e-12)
                 and not np.any(skeleton.translation_in_rest_frame))
    if unchanged:
        return clip
    pose = clip.pose()
    dropped_scale = [j for j, layout in enumerate(layouts) if "s" not in layout]
    if np.any(np.abs(pose.scale_values()[:, dropped_scale] - 1.0) > 1e-5):  # files write 0.999999 for 1
        raise MocapWriteError("the clip scales joints, which the target layout cannot hold")
    target = skeleton.copy()
    target.channels = layouts
    target.rest_rotations = np.broadcast_to(np.eye(3), (skeleton.joint_count, 3, 3)).copy()
    turned = np.einsum("jab,jb->ja", skeleton.rest_rotations, skeleton.length_directions)
    target.length_directions = np.where(skeleton.translation_in_rest_frame[:, None],
                                        turned, skeleton.length_directions)
    target.translation_in_rest_frame = np.zeros(skeleton.joint_count, dtype=bool)
    target.position_replaces_offset = replaces
    target.validate()
    result = replace(pose, skeleton=target).to_clip()
    _keep_raw_angles(clip, result)
    return result


def _keep_raw_angles(source: Clip, target: Clip) -> None:
    """Copy rotation channels unchanged where a joint's rotation did not change form.

    That is, where the joint had no rest rotation and its new order lists its old
    axes in the same sequence (axes it gains are zero): the file's own angles
    (past ±180° included) then survive a re-layout.
    """
    old, new = source.skeleton, target.skeleton
    old_starts, new_starts = old.channel_starts(), new.channel_starts()
    rest_is_identity = np.all(np.abs(old.rest_rotations - np.eye(3)) <= 1e-12, axis=(1, 2))
    for joint in np.flatnonzero(rest_is_identity):
        old_layout, new_layout = old.channels[joint], new.channels[joint]
        if not listed_within(rotation_order(old_layout), rotation_order(new_layout)):
            continue
        for channel in ROTATION_CHANNELS:
            if channel in new_layout:
                column = new_starts[joint] + new_layout.index(channel)
                target.motion[:, column] = (source.motion[:, old_starts[joint] + old_layout.index(channel)]
                                            if channel in old_layout else 0.0)
