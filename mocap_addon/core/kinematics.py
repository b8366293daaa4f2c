"""Forward kinematics, vectorised over frames and batched by hierarchy depth."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Clip, Skeleton, encode_motion
from .rotations import FloatArray


@dataclass
class Pose:
    """World transforms of every joint at every frame.

    ``rotations`` ``(F, J, 3, 3)`` are pure rotations, ``positions`` ``(F, J, 3)``
    the joint origins and ``scales`` ``(F, J)`` the accumulated uniform scale, so
    that world = T(position) @ rotation * scale.
    """

    rotations: FloatArray
    positions: FloatArray
    scales: FloatArray


def local_transforms(clip: Clip) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Each joint's local rotation (rest @ frame), translation and scale per frame."""
    skeleton = clip.skeleton
    frame_rotations = clip.local_rotations()
    rotation = np.einsum("jab,fjbc->fjac", skeleton.rest_rotations, frame_rotations)
    channel_translation = clip.local_translations()
    in_rest = skeleton.translation_in_rest_frame
    if np.any(in_rest):
        rotated = np.einsum("jab,fjb->fja", skeleton.rest_rotations, channel_translation)
        channel_translation = np.where(in_rest[None, :, None], rotated, channel_translation)  # type: ignore[index]
    base = np.where(skeleton.position_replaces_offset[:, None], 0.0, skeleton.offsets)  # type: ignore[index]
    translation = base[None] + channel_translation
    scales = clip.local_scales()
    if scales is None:
        scales = np.ones((clip.frame_count, skeleton.joint_count))
    return rotation, translation, scales


def forward_kinematics(clip: Clip) -> Pose:
    """World rotation, position and scale of every joint at every frame."""
    rotation, translation, scale = local_transforms(clip)
    world_rotation = np.empty_like(rotation)
    world_position = np.empty_like(translation)
    world_scale = np.empty_like(scale)
    parents = np.asarray(clip.skeleton.parents)
    for level in clip.skeleton.depth_levels():
        roots = level[parents[level] < 0]
        world_rotation[:, roots] = rotation[:, roots]
        world_position[:, roots] = translation[:, roots]
        world_scale[:, roots] = scale[:, roots]
        inner = level[parents[level] >= 0]
        if inner.size:
            up = parents[inner]
            parent_rotation = world_rotation[:, up]
            parent_scale = world_scale[:, up]
            world_rotation[:, inner] = parent_rotation @ rotation[:, inner]
            moved = np.einsum("fjab,fjb->fja", parent_rotation, translation[:, inner])
            world_position[:, inner] = world_position[:, up] + parent_scale[..., None] * moved
            world_scale[:, inner] = parent_scale * scale[:, inner]
    return Pose(world_rotation, world_position, world_scale)


def world_positions(clip: Clip) -> FloatArray:
    """Joint origins ``(frames, joints, 3)`` in the file's own axes and units."""
    return forward_kinematics(clip).positions


def end_site_positions(clip: Clip, pose: Pose | None = None) -> list[FloatArray]:
    """World positions ``(F, k, 3)`` of each joint's end sites (``k`` may be 0)."""
    pose = forward_kinematics(clip) if pose is None else pose
    out = []
    for joint, sites in enumerate(clip.skeleton.end_sites):
        linear = pose.rotations[:, joint] * pose.scales[:, joint, None, None]
        out.append(pose.positions[:, joint, None] + np.einsum("fab,kb->fka", linear, sites))
    return out


def rest_positions(skeleton: Skeleton) -> FloatArray:
    """World joint origins ``(J, 3)`` of the rest pose (all channels zero, offsets applied)."""
    rest = skeleton.copy()
    rest.position_replaces_offset = np.zeros(skeleton.joint_count, dtype=bool)
    rest.channels = [() for _ in skeleton.names]
    return world_positions(Clip(rest, np.zeros((1, 0)), 1.0))[0]


def conform(clip: Clip, layouts: list[tuple[str, ...]] | None = None,
            position_replaces_offset: np.ndarray | None = None) -> Clip:
    """The same motion on identity rest rotations, with new channel layouts.

    This is the form BVH holds: each joint's frame rotation becomes its rest
    rotation times its old one, translations are expressed in the parent frame,
    and position channels replace or add to the offset as asked.  Offsets, end
    sites and world poses are unchanged; the clip itself is returned when
    nothing needs to change, so values read from a file are written back exactly.
    A scale other than 1 on a joint whose new layout has no ``s`` raises ``ValueError``.
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
    rotation, translation, scales = local_transforms(clip)
    dropped_scale = [j for j, layout in enumerate(layouts) if "s" not in layout]
    if np.any(np.abs(scales[:, dropped_scale] - 1.0) > 1e-9):
        raise ValueError("the clip scales joints, which the target layout cannot hold")
    result = clip.copy()
    target = result.skeleton
    target.channels = layouts
    target.rest_rotations = np.broadcast_to(np.eye(3), (skeleton.joint_count, 3, 3)).copy()
    turned = np.einsum("jab,jb->ja", skeleton.rest_rotations, skeleton.length_directions)
    target.length_directions = np.where(skeleton.translation_in_rest_frame[:, None],  # type: ignore[index]
                                        turned, skeleton.length_directions)
    target.translation_in_rest_frame = np.zeros(skeleton.joint_count, dtype=bool)
    target.position_replaces_offset = replaces
    target.validate()
    base = np.where(replaces[:, None], 0.0, skeleton.offsets)
    result.motion = encode_motion(target, rotation, translation - base[None], scales)
    return result
