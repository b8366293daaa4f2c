"""What a reduced action's F-curves hold: each joint's keyed values, as Blender plays them back.

Rotations are keyed as quaternions (components lerped, then normalised) or,
for Euler-mode bones, as Euler angles of ``pre @ R @ post`` lerped one by one;
locations and scales are lerped.  Arrays are component-major
(``(k, joints, frames)``), so evaluating many joints is a few elementwise operations.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import cast

import numpy as np

from .. import rotations
from ..model import MOVE_CHANNELS, SCALE_CHANNEL
from ..pose import Motion, Pose, as_pose, columns, encode, first_angles
from ..rotations import FloatArray
from .curves import STRAIGHT, IntArray, Span, lerp, stacked_spans


@dataclass
class EulerKeys:
    """Rotations keyed as Euler angles: of ``pre[j] @ R @ post[j]`` in ``orders[j]`` (our order names),
    with ``R`` the joint's local rotation (rest @ frame) and angles made continuous over time."""

    orders: list[str]
    pre: FloatArray  # (J, 3, 3)
    post: FloatArray  # (J, 3, 3)


class Keyed:
    """A pose's keyed curves: rotation values ``(k, J, F)``, the translations of the joints that move
    and the scales of those that scale (rows ``translation_row`` / ``scale_row``, -1 where constant)."""

    def __init__(self, pose: Pose, euler: EulerKeys | None) -> None:
        skeleton = pose.skeleton
        self.joint_count = count = skeleton.joint_count
        self.frame_count = frames = pose.frame_count
        self.euler = euler
        if euler is None:
            self.values = np.ascontiguousarray(pose.rotations.transpose(2, 1, 0))
        else:
            self.orders = np.array(euler.orders)
            self.pre = rotations.matrix_to_quaternion(np.linalg.inv(euler.pre)).T  # (4, J)
            self.post = rotations.matrix_to_quaternion(np.linalg.inv(euler.post)).T
            self.values = np.empty((3, count, frames))
            for joint in range(count):
                rotation = rotations.quaternion_to_matrix(pose.rotations[:, joint])
                self.values[:, joint] = rotations.euler_continuity(rotations.matrix_to_euler(
                    euler.pre[joint] @ rotation @ euler.post[joint], euler.orders[joint])).T
        self.offsets = np.zeros((3, count, 1))
        if frames:
            self.offsets[:, :, 0] = pose.translations[0].T
        self.moving = np.array([j for j, layout in enumerate(skeleton.channels)
                                if any(c in MOVE_CHANNELS for c in layout)], dtype=np.int64)
        scales = pose.scale_values()
        self.scaled = np.array([j for j, layout in enumerate(skeleton.channels) if SCALE_CHANNEL in layout
                                and np.abs(scales[:, j] - 1.0).max(initial=0.0) > 1e-9], dtype=np.int64)
        self.translation_row = self._rows(self.moving)
        self.scale_row = self._rows(self.scaled)
        self.translations = np.ascontiguousarray(pose.translations[:, self.moving].transpose(2, 1, 0))
        self.scales = np.ascontiguousarray(scales[:, self.scaled].T)[None]
        self.still = self._still()

    def _rows(self, joints: IntArray) -> IntArray:
        rows = np.full(self.joint_count, -1, dtype=np.int64)
        rows[joints] = np.arange(len(joints))
        return rows

    def _still(self) -> np.ndarray:
        """Joints whose keyed values never change: they need their first and last keys only."""
        def spread(series: FloatArray) -> FloatArray:
            return (series.max(axis=-1, initial=-np.inf) - series.min(axis=-1, initial=np.inf)).max(axis=0)

        still = np.ones(self.joint_count, dtype=bool)
        if self.frame_count:
            still = spread(self.values) <= STRAIGHT * (1 + np.abs(self.values).max())
            still[self.moving] &= spread(self.translations) == 0
            still[self.scaled] &= spread(self.scales) == 0
        return still

    def curves(self, joint: int) -> FloatArray:
        """A joint's keyed curves ``(k, F)``: rotation values, then translation and scale if it has them."""
        parts = [self.values[:, joint]]
        if self.translation_row[joint] >= 0:
            parts.append(self.translations[:, self.translation_row[joint]])
        if self.scale_row[joint] >= 0:
            parts.append(self.scales[:, self.scale_row[joint]])
        return np.concatenate(parts)

    def curve_count(self, joint: int) -> int:
        """How many F-curves the joint writes (a uniform scale is keyed on three)."""
        return len(self.curves(joint)) + (2 if self.scale_row[joint] >= 0 else 0)

    def local(self, joints: IntArray, values: FloatArray) -> FloatArray:
        """Unit local quaternions ``(4, ...)`` from keyed values ``(k, ...)`` of ``joints`` (broadcast):
        keyed quaternions normalised, as Blender does, or Euler angles turned into rotations."""
        if self.euler is None:
            return values / np.sqrt((values * values).sum(axis=0))
        joints = np.broadcast_to(joints, values.shape[1:])
        out = np.empty((4,) + values.shape[1:])
        orders = self.orders[joints]
        for order in np.unique(orders):
            rows = orders == order
            keyed = rotations.euler_to_quaternion(np.moveaxis(values[:, rows], 0, -1), str(order))
            out[:, rows] = rotations.hamilton(rotations.hamilton(self.pre[:, joints[rows]], np.moveaxis(keyed, -1, 0)),
                                              self.post[:, joints[rows]])
        return out

    def at(self, at: IntArray, span: Span | None = None) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Every joint's local rotation ``(4, J, n)``, translation ``(3, J, n)`` and scale ``(J, n)`` at
        frames ``at``: interpolated over ``span`` (arrays ``(n,)``, the same for all joints, or
        ``(J, n)``), or exact where none is given."""
        count, n = self.joint_count, len(at)

        def value(series: FloatArray, joints: IntArray) -> FloatArray:
            """``series`` ``(k, rows, F)``, whose rows belong to ``joints``, at the frames: ``(k, rows, n)``."""
            if span is None:
                return series[:, :, at]
            left, right, weight = span
            if left.ndim == 1:  # every joint the same frames: gathers along the frame axis only
                return np.take(series, left, axis=2) * (1 - weight) + np.take(series, right, axis=2) * weight
            return lerp(series, np.arange(len(joints))[:, None], left[joints], right[joints], weight[joints])

        rotation = self.local(np.arange(count)[:, None], value(self.values, np.arange(count)))
        translation = np.broadcast_to(self.offsets, (3, count, n)).copy()
        if len(self.moving):
            translation[:, self.moving] = value(self.translations, self.moving)
        scale = np.ones((count, n))
        if len(self.scaled):
            scale[self.scaled] = value(self.scales, self.scaled)[0]
        return rotation, translation, scale


def played_back(motion: Motion, frames: list[IntArray]) -> Motion:
    """Every frame of ``motion`` as the keys at ``frames`` (a reduction's, per joint) play back in Blender:
    LINEAR quaternion keys (components lerped, then normalised), translations and scales lerped.

    What a file holds of a reduced motion (it keeps every frame): importing it
    shows at every frame what an import reduced at that tolerance shows.  A pose
    gives a pose; a clip gives a clip whose joints that keep every key keep their
    channels as read, the others re-encoded in their own layouts (angles starting
    at their first frame's).
    """
    pose = as_pose(motion)
    at = np.arange(pose.frame_count)
    rotation, translation, scale = Keyed(pose, None).at(at, stacked_spans(frames, at))
    result = dataclasses.replace(pose, rotations=rotations.quaternion_continuity(rotation.transpose(2, 1, 0)),
                                 translations=np.ascontiguousarray(translation.transpose(2, 1, 0)),
                                 scales=None if pose.scales is None else np.ascontiguousarray(scale.T),
                                 metadata=dict(pose.metadata))
    if isinstance(motion, Pose):
        return cast(Motion, result)
    skeleton = motion.skeleton
    dropped = np.array([joint for joint, keys in enumerate(frames)
                        if len(keys) < motion.frame_count and skeleton.channels[joint]], dtype=np.int64)
    channels = motion.motion.copy()
    if len(dropped):
        channels[:, columns(skeleton, dropped)] = encode(skeleton, result.rotations, result.translations,
                                                         result.scales, dropped, first_angles(motion))
    return cast(Motion, dataclasses.replace(motion, motion=channels, metadata=dict(motion.metadata)))
