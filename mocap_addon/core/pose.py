"""The motion every tool works on: the local pose of every joint at every frame.

A :class:`Pose` holds, per frame and joint, the joint's whole local rotation
(its rest rotation included) as a unit quaternion kept in one hemisphere along
time, its local translation (the joint's origin in its parent's frame, offset
included) and, where any joint scales, its uniform scale::

    world = parent world @ T(translation) @ R(rotation) @ S(scale)

A :class:`~.model.Clip` holds the same motion as a file's channel values.
:meth:`Pose.of` and :meth:`Pose.to_clip` are the only places
where a file's Euler angles become quaternions and back, so retargeting,
blending and resampling never see an Euler angle.  Two exceptions: joints with
fewer than three rotation channels hold only their angles about their own axes
(:meth:`Pose.held`), and key reduction of Euler-mode bones works on the angles
Blender keys (:mod:`.reduce.keyed` converts to them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike

from . import rotations
from .model import (
    MOVE_CHANNELS,
    ROTATION_CHANNELS,
    SCALE_CHANNEL,
    TRANSLATION_CHANNELS,
    Clip,
    Skeleton,
    Timed,
    encode_joint,
    rotation_order,
)
from .rotations import FloatArray
from .transforms import World, place_translation, translation_channels, world_transforms

if TYPE_CHECKING:
    from numpy.typing import NDArray


@dataclass
class Pose(Timed):
    """Local rotations ``(F, J, 4)``, translations ``(F, J, 3)`` and scales ``(F, J)`` (or ``None``:
    every joint 1) of a skeleton's joints, with the clip's timing and unit (see the module docstring)."""

    skeleton: Skeleton
    rotations: FloatArray
    translations: FloatArray
    scales: FloatArray | None
    frame_time: float
    start_frame: int = 1
    unit_in_metres: float | None = None
    up_axis: str = "Y"
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        frames, joints = self.rotations.shape[0], self.skeleton.joint_count
        if self.rotations.shape != (frames, joints, 4) or self.translations.shape != (frames, joints, 3):
            raise ValueError(f"a pose of {joints} joints needs rotations (F, {joints}, 4) and translations "
                             f"(F, {joints}, 3), got {self.rotations.shape} and {self.translations.shape}")
        if self.scales is not None and self.scales.shape != (frames, joints):
            raise ValueError(f"scales must be (F, {joints}), got {self.scales.shape}")
        self.check_frame_time()

    @classmethod
    def of(cls, clip: Clip, decoded: Sequence[int] | None = None) -> Pose:
        """``clip``'s channel values as local poses ; with ``decoded``, only those joints
        at every frame and the others held at their first frame's pose (for a tool that reads nothing else
        past the first frame: less decoding, the same results)."""
        count = clip.skeleton.joint_count
        joints = np.arange(count) if decoded is None else np.unique(np.asarray(decoded, dtype=np.int64))
        turns, moves, scales = decode(clip.skeleton, clip.motion, joints)
        if len(joints) < count and clip.frame_count:
            first = decode(clip.skeleton, clip.motion[:1], np.arange(count))
            every = [np.repeat(start, clip.frame_count, axis=0) for start in first]
            for whole, part in zip(every, (turns, moves, scales)):
                whole[:, joints] = part
            turns, moves, scales = every
        scaled = any(SCALE_CHANNEL in layout for layout in clip.skeleton.channels)
        return cls(clip.skeleton, turns, moves, scales if scaled else None,
                   clip.frame_time, clip.start_frame,
                   clip.unit_in_metres, clip.up_axis, dict(clip.metadata))

    @property
    def frame_count(self) -> int:
        return int(self.rotations.shape[0])

    @property
    def joint_count(self) -> int:
        return self.skeleton.joint_count

    def scale_values(self) -> FloatArray:
        """Scales ``(F, J)``, ones where the pose has none."""
        return np.ones(self.rotations.shape[:2]) if self.scales is None else self.scales

    def world(self) -> World:
        """Forward kinematics: every joint's world rotation, position and scale at every frame."""
        return world_transforms(self.skeleton.parents, self.rotations, self.translations, self.scales)

    def to_clip(self, layouts: Sequence[tuple[str, ...]] | None = None, *,
                reference: FloatArray | None = None) -> Clip:
        """The motion as channel values in ``layouts`` (default: the skeleton's own), Euler angles
        continuous in time and starting nearest ``reference`` ``(J, 3)`` (degrees) when given.
        What a joint's channels cannot hold (see :meth:`held`) is lost."""
        skeleton = self.skeleton
        if layouts is not None:
            skeleton = skeleton.copy()
            skeleton.channels = [tuple(layout) for layout in layouts]
            skeleton.validate()
        joints = np.arange(skeleton.joint_count)
        motion = encode(skeleton, self.rotations, self.translations, self.scales, joints, reference)
        return Clip(skeleton, motion, self.frame_time, self.start_frame, self.unit_in_metres, self.up_axis,
                    dict(self.metadata))

    def at(self, rows: ArrayLike) -> Pose:
        """The pose at frames ``rows`` (indices from 0)."""
        index = np.asarray(rows, dtype=np.int64)
        return dataclasses.replace(self, rotations=self.rotations[index], translations=self.translations[index],
                                   scales=None if self.scales is None else self.scales[index],
                                   metadata=dict(self.metadata))

    def sample(self, frames: ArrayLike) -> Pose:
        """The pose at fractional ``frames`` (within the pose): rotations slerped and translations and
        scales interpolated linearly between the frames either side."""
        position = np.asarray(frames, dtype=np.float64)
        before = np.clip(np.floor(position).astype(np.int64), 0, self.frame_count - 1)
        weight = position - before
        if not np.any(weight):
            return self if np.array_equal(before, np.arange(self.frame_count)) else self.at(before)
        after = np.minimum(before + 1, self.frame_count - 1)
        return self.at(before).toward(self.at(after), np.broadcast_to(weight[:, None], (len(weight), self.joint_count)))

    def toward(self, other: Pose, weights: ArrayLike) -> Pose:
        """Slerp / lerp from this pose toward ``other`` (same skeleton and frames) by ``weights`` ``(F, J)``."""
        share = np.asarray(weights, dtype=np.float64)
        scales = None
        if self.scales is not None or other.scales is not None:
            mine, theirs = self.scale_values(), other.scale_values()
            scales = mine + share * (theirs - mine)
        return dataclasses.replace(
            self, rotations=rotations.slerp(self.rotations, other.rotations, share),
            translations=self.translations + share[..., None] * (other.translations - self.translations),
            scales=scales, metadata=dict(self.metadata))

    def held(self) -> Pose:
        """The pose as the skeleton's channels hold it: no turn about an axis a joint has no channel
        for, no move a joint cannot make (its offset), no scale without a scale channel.  Joints short
        of three rotations or of free translation go through their channel values (their own angles)."""
        skeleton = self.skeleton
        moved = self.translations.copy()
        scales = None if self.scales is None else self.scales.copy()
        partial = []
        for joint, layout in enumerate(skeleton.channels):
            moves = {c for c in layout if c in MOVE_CHANNELS}
            if len(rotation_order(layout)) < 3 or (moves and moves != set(TRANSLATION_CHANNELS)):
                partial.append(joint)
                continue
            if not moves:
                moved[:, joint] = place_translation(skeleton, joint, np.zeros(3))
            if scales is not None and SCALE_CHANNEL not in layout:
                scales[:, joint] = 1.0
        rotated = self.rotations.copy() if partial else self.rotations
        if partial:
            joints = np.array(partial)
            motion = np.zeros((self.frame_count, int(skeleton.channel_starts()[-1])))
            motion[:, columns(skeleton, joints)] = encode(skeleton, rotated, moved, scales, joints)
            turns, moves_back, scale_back = decode(skeleton, motion, joints)
            rotated[:, joints] = turns
            moved[:, joints] = moves_back
            if scales is not None:
                scales[:, joints] = scale_back
        return dataclasses.replace(self, rotations=rotated, translations=moved, scales=scales,
                                   metadata=dict(self.metadata))

    def copy(self) -> Pose:
        return dataclasses.replace(self, skeleton=self.skeleton.copy(), rotations=self.rotations.copy(),
                                   translations=self.translations.copy(),
                                   scales=None if self.scales is None else self.scales.copy(),
                                   metadata=dict(self.metadata))


def as_pose(motion: Clip | Pose) -> Pose:
    """``motion`` as a pose (a clip decoded, a pose as it is)."""
    return motion if isinstance(motion, Pose) else Pose.of(motion)


Motion = TypeVar("Motion", bound="Clip | Pose")  # a tool gives back the kind of motion it is given


def like(given: Motion, result: Pose, reference: FloatArray | None = None) -> Motion:
    """``result`` in the kind of motion a tool was ``given``: a pose, or a clip in the result's own layouts."""
    return cast(Motion, result if isinstance(given, Pose) else result.to_clip(reference=reference))


def columns(skeleton: Skeleton, joints: NDArray[np.int64]) -> NDArray[np.int64]:
    """The channel columns of ``joints``, in their order."""
    starts = skeleton.channel_starts()
    return np.concatenate([np.arange(starts[j], starts[j + 1]) for j in joints]).astype(np.int64) \
        if len(joints) else np.zeros(0, dtype=np.int64)


_BATCH = 16384  # frames x joints converted at once: a cache-sized batch (whole groups of joints run slower)


def _by_layout(skeleton: Skeleton, joints: NDArray[np.int64],
               frames: int) -> list[tuple[tuple[str, ...], NDArray[np.int64]]]:
    """``joints`` grouped by channel layout, in cache-sized batches: each layout and the positions in
    ``joints`` of a batch of joints that have it (joints that share a layout convert together)."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for position, joint in enumerate(joints):
        groups.setdefault(skeleton.channels[joint], []).append(position)
    size = max(1, _BATCH // max(frames, 1))
    return [(layout, np.array(positions[start:start + size], dtype=np.int64))
            for layout, positions in groups.items() for start in range(0, len(positions), size)]


def decode(skeleton: Skeleton, motion: FloatArray,
           joints: NDArray[np.int64]) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Local rotations ``(F, K, 4)`` (rest included, continuous in time), translations ``(F, K, 3)``
    (offset included) and scales ``(F, K)`` of ``joints`` from a clip's channel values ``(F, C)``."""
    frames = len(motion)
    # Filled a batch of joints at a time (joint-major: each joint's frames contiguous), handed out frame-major.
    turns = np.empty((len(joints), frames, 4))
    moves = np.empty((len(joints), frames, 3))
    scales = np.ones((len(joints), frames))
    starts = skeleton.channel_starts()
    for layout, positions in _by_layout(skeleton, joints, frames):
        members = joints[positions]

        def values(channel: str, members: NDArray[np.int64] = members,
                   layout: tuple[str, ...] = layout) -> FloatArray:
            return motion[:, starts[members] + layout.index(channel)]  # (F, n)

        order = rotation_order(layout)
        steady = True
        if order:
            angles = np.radians(np.stack([values("r" + axis.lower()) for axis in order], axis=-1))
            turn = rotations.euler_to_quaternion(angles, order)
            # Angles that step less than half a turn in all (the rotation between frames is at most
            # that) give quaternions in one hemisphere already; a wrap of 360 degrees flips the sign.
            steady = frames < 2 or float(np.abs(np.diff(angles, axis=0)).sum(axis=-1).max()) < np.pi
        else:
            turn = np.broadcast_to([1.0, 0.0, 0.0, 0.0], (frames, len(members), 4))
        rests = skeleton.rest_rotations[members]
        if not np.all(rests == np.eye(3)):
            turn = rotations.quaternion_multiply(rotations.matrix_to_quaternion(rests), turn)
        turns[positions] = np.moveaxis(turn if steady else rotations.quaternion_continuity(turn), 1, 0)
        if not any(c in MOVE_CHANNELS for c in layout):  # at the offset, or the origin where channels replace it
            moves[positions] = place_translation(skeleton, members, np.zeros((len(members), 3)))[:, None]
        else:
            channel = np.zeros((frames, len(members), 3))
            for axis, name in enumerate(TRANSLATION_CHANNELS):
                if name in layout:
                    channel[..., axis] = values(name)
            if "l" in layout:
                channel += values("l")[..., None] * skeleton.length_directions[members]
            moves[positions] = np.moveaxis(place_translation(skeleton, members, channel), 1, 0)
        if SCALE_CHANNEL in layout:
            scales[positions] = values(SCALE_CHANNEL).T
    return np.moveaxis(turns, 0, 1), np.moveaxis(moves, 0, 1), scales.T


def encode(skeleton: Skeleton, turns: FloatArray, moves: FloatArray, scales: FloatArray | None,
           joints: NDArray[np.int64], reference: FloatArray | None = None) -> FloatArray:
    """Channel values ``(F, columns of joints)`` of ``joints`` from local poses of every joint
    ``(F, J, ...)``; Euler angles continuous, starting nearest ``reference`` ``(J, 3)`` (degrees)."""
    starts = skeleton.channel_starts()
    widths = np.array([starts[j + 1] - starts[j] for j in joints], dtype=np.int64)
    first_column = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    out = np.empty((turns.shape[0], int(widths.sum())))
    if not len(out):
        return out
    # A batch of joints at a time, each batch's frames copied out together (no copy of every joint at once).
    for layout, positions in _by_layout(skeleton, joints, len(out)):
        if not layout:
            continue
        members = joints[positions]
        rests = skeleton.rest_rotations[members]
        frame_rotation = turns[:, members]
        if not np.all(rests == np.eye(3)):
            frame_rotation = rotations.quaternion_multiply(
                rotations.quaternion_conjugate(rotations.matrix_to_quaternion(rests)), frame_rotation)
        moved = (translation_channels(skeleton, members, moves[:, members])
                 if any(c in MOVE_CHANNELS for c in layout) else None)
        scale = None if scales is None else scales[:, members]
        # Joints that hold still (a retarget's unpartnered joints, ends) are encoded once.
        rows = slice(0, 1) if all(part is None or np.all(part == part[:1]) for part in (frame_rotation, moved, scale)) \
            else slice(None)
        values = encode_joint(layout, frame_rotation[rows], None if moved is None else moved[rows],
                              None if scale is None else scale[rows], skeleton.length_directions[members],
                              None if reference is None else reference[members])
        out[:, (first_column[positions][:, None] + np.arange(len(layout))).ravel()] = values.reshape(len(values), -1)
    return out


def first_angles(motion: Clip | Pose) -> FloatArray | None:
    """Each joint's first-frame angles ``(J, 3)`` in its own order (degrees, zero-padded) where
    ``motion`` is a clip, so a tool's result starts near its input's angles; ``None`` for a pose."""
    if isinstance(motion, Pose) or motion.frame_count == 0:
        return None
    out = np.zeros((motion.skeleton.joint_count, 3))
    starts = motion.skeleton.channel_starts()
    for joint, layout in enumerate(motion.skeleton.channels):
        values = [motion.motion[0, starts[joint] + n] for n, c in enumerate(layout) if c in ROTATION_CHANNELS]
        out[joint, :len(values)] = values
    return out
