"""Forward kinematics of clips and poses, rest bones, and re-layouts of a clip's channels (:func:`conform`,
:func:`rebase`); the array maths beneath is :mod:`.transforms` (re-exported here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from . import rotations
from .bones import choose_tails
from .errors import MocapWriteError
from .model import ROTATION_CHANNELS, Clip, Skeleton, rotation_order
from .pose import Pose
from .rotations import FloatArray, listed_within
from .transforms import (
    World,
    compose,
    depth_levels,
    place_translation,
    rest_pose,
    rest_positions,
    translation_channels,
    world_transforms,
)

__all__ = ["World", "compose", "conform", "depth_levels", "end_site_positions", "forward_kinematics",
           "local_transforms", "place_translation", "rebase", "rest_bones", "rest_pose", "rest_positions",
           "translation_channels", "world_positions"]


def forward_kinematics(motion: Clip | Pose, only: Sequence[int] | None = None) -> World:
    """World rotation, position and scale of every joint at every frame of a clip or a pose
    (:func:`.transforms.world_transforms`); with ``only``, of those joints and their ancestors alone (the
    others NaN)."""
    pose = Pose.of(motion) if isinstance(motion, Clip) else motion
    return world_transforms(pose.skeleton.parents, pose.rotations, pose.translations, pose.scales, only)


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
    pose = Pose.of(clip)
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
    pose = Pose.of(clip)
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
    pose = Pose.of(clip)
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
