"""Forward kinematics, vectorised over frames and batched by hierarchy depth."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from .bones import choose_tails
from .errors import MocapWriteError
from .model import ROTATION_CHANNELS, SCALE_CHANNEL, Clip, Skeleton, encode_motion, rotation_order
from .rotations import FloatArray, listed_within


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
    """Each joint's local rotation (rest @ frame), translation and scale per frame.

    Shapes ``(F, J, 3, 3)``, ``(F, J, 3)`` and ``(F, J)``.
    """
    skeleton = clip.skeleton
    rotation = _local_rotations(clip)
    translation = np.stack([place_translation(skeleton, j, clip.joint_translations(j))
                            for j in range(skeleton.joint_count)], axis=1)
    scales = clip.local_scales()
    if scales is None:
        scales = np.ones((clip.frame_count, skeleton.joint_count))
    return rotation, translation, scales


def _local_rotations(clip: Clip) -> FloatArray:
    """Each joint's local rotation (rest @ frame) per frame ``(F, J, 3, 3)``, joint-major underneath."""
    rotation = clip.local_rotations()
    rest = clip.skeleton.rest_rotations
    if np.allclose(rest, np.eye(3), rtol=0, atol=1e-15):
        return rotation
    return np.moveaxis(rest[:, None] @ np.moveaxis(rotation, 1, 0), 0, 1)


def joint_transform(clip: Clip, joint: int) -> tuple[FloatArray, FloatArray]:
    """One joint's local rotation (rest @ frame) ``(F, 3, 3)`` and translation ``(F, 3)``."""
    rotation = clip.skeleton.rest_rotations[joint] @ clip.joint_rotations(joint)
    return rotation, place_translation(clip.skeleton, joint, clip.joint_translations(joint))


def place_translation(skeleton: Skeleton, joint: int, channel: FloatArray) -> FloatArray:
    """A joint's local translation from its channel translation: rotated by the rest
    rotation where the model says so, then added to the offset unless it replaces it."""
    if skeleton.translation_in_rest_frame[joint]:
        channel = channel @ skeleton.rest_rotations[joint].T
    return channel if skeleton.position_replaces_offset[joint] else channel + skeleton.offsets[joint]


def translation_channels(skeleton: Skeleton, joint: int, local: FloatArray) -> FloatArray:
    """A joint's channel translation from its local translation (:func:`place_translation` undone)."""
    moved = local if skeleton.position_replaces_offset[joint] else local - skeleton.offsets[joint]
    return moved @ skeleton.rest_rotations[joint] if skeleton.translation_in_rest_frame[joint] else moved


FRAMES_PER_BLOCK = 2048


def forward_kinematics(clip: Clip) -> Pose:
    """World rotation, position and scale of every joint at every frame.

    Frames are independent, so long clips are cut into blocks that stay in the
    CPU cache and run on a small thread pool (numpy releases the GIL).
    """
    frames = clip.frame_count
    if frames <= FRAMES_PER_BLOCK:
        return _forward_kinematics_block(clip)
    joints = clip.skeleton.joint_count
    pose = Pose(np.empty((frames, joints, 3, 3)), np.empty((frames, joints, 3)), np.empty((frames, joints)))

    def run(start: int) -> None:
        block = Clip(clip.skeleton, clip.motion[start:start + FRAMES_PER_BLOCK], clip.frame_time)
        part = _forward_kinematics_block(block)
        stop = start + block.frame_count
        pose.rotations[start:stop] = part.rotations
        pose.positions[start:stop] = part.positions
        pose.scales[start:stop] = part.scales

    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        list(pool.map(run, range(0, frames, FRAMES_PER_BLOCK)))
    return pose


def _forward_kinematics_block(clip: Clip) -> Pose:
    """Forward kinematics for all frames at once, on joint-major arrays (see :func:`compose`)."""
    rotation, translation, scale = local_transforms(clip)
    world_rotation, world_position, world_scale = compose(
        clip.skeleton.parents, np.ascontiguousarray(np.moveaxis(rotation, 1, 0)),
        np.ascontiguousarray(np.moveaxis(translation, 1, 0)), np.ascontiguousarray(scale.T))
    return Pose(np.moveaxis(world_rotation, 0, 1), np.moveaxis(world_position, 0, 1), world_scale.T)


def compose(parents: list[int], rotation: FloatArray, translation: FloatArray,
            scale: FloatArray | None = None) -> tuple[FloatArray, FloatArray, FloatArray]:
    """World rotations ``(J, F, 3, 3)``, positions ``(J, F, 3)`` and scales ``(J, F)`` from
    joint-major local ones: one batched product per joint, parents first (no recursion).
    ``scale`` ``(J, F)`` may be ``None`` (all 1)."""
    scaled = scale is not None and bool(np.any(scale != 1.0))
    if scale is None:
        scale = np.ones(translation.shape[:2])
    world_rotation = np.empty_like(rotation)
    world_position = np.empty_like(translation)
    world_scale = np.empty_like(scale)
    for joint, parent in enumerate(parents):
        if parent < 0:
            world_rotation[joint] = rotation[joint]
            world_position[joint] = translation[joint]
            world_scale[joint] = scale[joint]
            continue
        np.matmul(world_rotation[parent], rotation[joint], out=world_rotation[joint])
        moved = (world_rotation[parent] @ translation[joint][..., None])[..., 0]
        if scaled:
            moved *= world_scale[parent][:, None]
        np.add(world_position[parent], moved, out=world_position[joint])
        np.multiply(world_scale[parent], scale[joint], out=world_scale[joint])
    return world_rotation, world_position, world_scale


class SparsePose:
    """World rotations and positions of the joints asked for only, built from local transforms.

    A transfer that needs one joint's rotation relative to another's needs the
    local rotations between them, not the world rotations of every joint:
    :meth:`relative` multiplies only along that path, and :meth:`rotation` and
    :meth:`position` compose from the root (cached) for the few joints that
    need world values.
    """

    def __init__(self, clip: Clip) -> None:
        self.clip = clip
        self.parents = clip.skeleton.parents
        self.local = np.moveaxis(_local_rotations(clip), 1, 0)  # (J, F, 3, 3), each joint contiguous
        self._rotations: dict[int, FloatArray] = {}

    def rotation(self, joint: int) -> FloatArray:
        """World rotations ``(F, 3, 3)`` of ``joint`` (and, cached, of the ancestors on the way)."""
        missing = []
        while joint >= 0 and joint not in self._rotations:
            missing.append(joint)
            joint = self.parents[joint]
        for below in reversed(missing):
            parent = self.parents[below]
            self._rotations[below] = (self.local[below] if parent < 0
                                      else np.matmul(self._rotations[parent], self.local[below]))
        return self._rotations[missing[0] if missing else joint]

    def relative(self, upper: int, lower: int) -> FloatArray | None:
        """``rotation(upper)^T @ rotation(lower)`` ``(F, 3, 3)``; ``None`` when they are one joint.

        Where ``upper`` is an ancestor of ``lower`` this is the product of the
        local rotations below it, so no world rotation is built.
        """
        if upper == lower:
            return None
        path = [lower]
        while self.parents[path[-1]] not in (upper, -1):
            path.append(self.parents[path[-1]])
        if self.parents[path[-1]] != upper:
            return np.matmul(np.swapaxes(self.rotation(upper), -1, -2), self.rotation(lower))
        product = self.local[path[-1]]
        for joint in reversed(path[:-1]):
            product = np.matmul(product, self.local[joint])
        return product

    def position(self, joint: int) -> FloatArray:
        """World origins ``(F, 3)`` of ``joint`` (only its chain's translations are read)."""
        clip, skeleton = self.clip, self.clip.skeleton
        chain = skeleton.chain(joint)
        position = place_translation(skeleton, chain[0], clip.joint_translations(chain[0]))
        grown: FloatArray | float = 1.0
        for parent, child in pairwise(chain):
            scale = clip.channel_values(parent, SCALE_CHANNEL)
            grown = grown if scale is None else grown * scale[:, None]
            offset = place_translation(skeleton, child, clip.joint_translations(child))
            position = position + grown * (self.rotation(parent) @ offset[..., None])[..., 0]
        return position


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


def rest_pose(skeleton: Skeleton) -> tuple[FloatArray, FloatArray]:
    """World rotations ``(J, 3, 3)`` and origins ``(J, 3)`` of the rest pose (channels zero, offsets applied)."""
    rest = skeleton.copy()
    rest.position_replaces_offset = np.zeros(skeleton.joint_count, dtype=bool)
    rest.channels = [() for _ in skeleton.names]
    pose = forward_kinematics(Clip(rest, np.zeros((1, 0)), 1.0))
    return pose.rotations[0], pose.positions[0]


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


def rebase(clip: Clip, rest_frames: FloatArray, layouts: list[tuple[str, ...]],
           translation_in_rest_frame: bool = False) -> Clip:
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
    rotation, translation, scales = local_transforms(clip)
    new_rotation = back[None] @ rotation @ change[None]
    new_translation = (back[None] @ translation[..., None])[..., 0]
    new_rest = back @ skeleton.rest_rotations @ change
    offsets = (back @ skeleton.offsets[..., None])[..., 0]
    count = skeleton.joint_count
    target = Skeleton(list(skeleton.names), list(skeleton.parents), offsets, layouts,
                      [e @ change[j] for j, e in enumerate(skeleton.end_sites)], new_rest,
                      np.zeros(count, dtype=bool), np.full(count, translation_in_rest_frame),
                      (np.swapaxes(change, -1, -2) @ skeleton.length_directions[..., None])[..., 0])
    frame_rotation: FloatArray = np.matmul(np.swapaxes(new_rest, -1, -2)[None], new_rotation)
    moved = new_translation - offsets[None]
    if translation_in_rest_frame:
        moved = (np.swapaxes(new_rest, -1, -2)[None] @ moved[..., None])[..., 0]
    motion = encode_motion(target, frame_rotation, moved, scales)
    return Clip(target, motion, clip.frame_time, clip.start_frame, clip.unit_in_metres, clip.up_axis,
                dict(clip.metadata))


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
    rotation, translation, scales = local_transforms(clip)
    dropped_scale = [j for j, layout in enumerate(layouts) if "s" not in layout]
    if np.any(np.abs(scales[:, dropped_scale] - 1.0) > 1e-5):  # files write 0.999999 for 1
        raise MocapWriteError("the clip scales joints, which the target layout cannot hold")
    result = clip.copy()
    target = result.skeleton
    target.channels = layouts
    target.rest_rotations = np.broadcast_to(np.eye(3), (skeleton.joint_count, 3, 3)).copy()
    turned = np.einsum("jab,jb->ja", skeleton.rest_rotations, skeleton.length_directions)
    target.length_directions = np.where(skeleton.translation_in_rest_frame[:, None],
                                        turned, skeleton.length_directions)
    target.translation_in_rest_frame = np.zeros(skeleton.joint_count, dtype=bool)
    target.position_replaces_offset = replaces
    target.validate()
    base = np.where(replaces[:, None], 0.0, skeleton.offsets)
    result.motion = encode_motion(target, rotation, translation - base[None], scales)
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
