"""The points key reduction bounds: every bone's head and tail, in world space, at every frame."""

from __future__ import annotations

import numpy as np

from .. import rotations
from ..kinematics import rest_bones
from ..model import Clip
from ..pose import Pose, as_pose
from ..rotations import FloatArray
from ..transforms import compose, depth_levels, rest_pose
from ..vectors import up_vector
from .curves import IntArray, Span, interpolate, spans, stacked_spans
from .keyed import Keyed

_CHUNK = 4096  # frames per forward-kinematics batch (bounds temporary memory)


def default_tails(motion: Clip | Pose) -> FloatArray:
    """Rest tails ``(J, 3)`` of the bones an import builds, in file axes (up: the file's)."""
    vectors = motion.metadata.get("bone_vectors")
    return rest_bones(motion.skeleton, up_vector(motion.up_axis),
                      None if vectors is None else np.asarray(vectors, dtype=np.float64))[1]


def _tail_vectors(motion: Clip | Pose, tails: FloatArray) -> FloatArray:
    """Each bone's tail from its head in its joint's own frame ``(J, 3)``."""
    rest_rotations, rest_heads = rest_pose(motion.skeleton)
    return np.einsum("jba,jb->ja", rest_rotations, tails - rest_heads)


def bone_points(motion: Clip | Pose, tails: FloatArray, frames: list[IntArray] | None = None) -> FloatArray:
    """World heads then tails ``(F, 2J, 3)`` of every bone at every frame (file axes and units).

    ``tails`` are the rest tails in file axes.  With ``frames``, the pose is the one
    played back from keys at those frames only, per joint (quaternion keys:
    components lerped and normalised; translations and scales lerped).
    """
    pose = as_pose(motion)
    turns, moves, scales = pose.rotations, pose.translations, pose.scale_values()
    if frames is not None:
        everywhere = np.arange(pose.frame_count)
        turns, moves, scales = np.empty_like(turns), np.empty_like(moves), np.empty_like(scales)
        for joint, kept in enumerate(frames):
            keyed = interpolate(pose.rotations[:, joint], kept, everywhere)
            turns[:, joint] = keyed / np.linalg.norm(keyed, axis=-1, keepdims=True)
            moves[:, joint] = interpolate(pose.translations[:, joint], kept, everywhere)
            scales[:, joint] = interpolate(pose.scale_values()[:, joint], kept, everywhere)
    world, heads, grown = compose(pose.skeleton.parents, turns.transpose(2, 1, 0), moves.transpose(2, 1, 0),
                                  scales.T)
    assert grown is not None
    ends = heads + rotations.rotate(world, _tail_vectors(pose, tails).T[:, :, None]) * grown
    return np.concatenate([heads, ends], axis=1).transpose(2, 1, 0)


def figure_height(motion: Clip | Pose, tails: FloatArray | None = None) -> float:
    """The figure's height in its rest pose, along the file's up axis (file units).

    Heads and tails (``tails``, default :func:`default_tails`) count.  A rest
    pose whose joints all coincide (HTR files that keep the pose in the frames)
    is replaced by the first frame; a figure lying down (less tall than a
    quarter of its largest extent) is measured along its largest extent.
    """
    tails = default_tails(motion) if tails is None else tails
    heads = rest_pose(motion.skeleton)[1]
    points = np.concatenate([heads, tails])
    if motion.frame_count and float(np.ptp(heads, axis=0).max(initial=0.0)) <= 1e-9 * (1 + np.abs(heads).max()):
        first = motion.at([0]) if isinstance(motion, Pose) else Clip(motion.skeleton, motion.motion[:1],
                                                                     motion.frame_time)
        points = bone_points(first, tails)[0]
    extents = np.ptp(points, axis=0)
    upright = float(extents @ np.abs(up_vector(motion.up_axis)))
    largest = float(extents.max(initial=0.0))
    height = upright if upright >= 0.25 * largest else largest
    return height if height > 0 else 1.0


class BonePoints:
    """The keyed motion's bone heads and tails (rows of :attr:`original`, ``(3, P, F)``): every head,
    and the tails that are not also a child's head; which points each joint moves; true forward
    kinematics of the keys kept."""

    def __init__(self, keyed: Keyed, pose: Pose, tails: FloatArray) -> None:
        self.keyed = keyed
        self.skeleton = pose.skeleton
        self.parents = np.array(pose.skeleton.parents, dtype=np.int64)
        self.levels = depth_levels(pose.skeleton.parents)
        vectors = _tail_vectors(pose, tails)
        self._structure(vectors)
        self.tail_vectors = vectors[self.tail_joints].T[:, :, None]
        frames = keyed.frame_count
        self.original = np.empty((3, len(self.point_joint), frames))
        # World scales are kept only for clips that scale joints (1 everywhere otherwise).
        self.world_scale = np.ones((keyed.joint_count, frames)) if len(keyed.scaled) else None
        for start in range(0, frames, _CHUNK):
            at = np.arange(start, min(start + _CHUNK, frames))
            self.original[:, :, at], scale = self.points(at)
            if self.world_scale is not None:
                self.world_scale[:, at] = scale

    def _structure(self, tail_vectors: FloatArray) -> None:
        """Which tails to check, each joint's affected points (rows of ``original``), and the
        joints' heights above their deepest leaf."""
        keyed = self.keyed
        count, offsets = keyed.joint_count, keyed.offsets
        size = max(float(np.abs(tail_vectors).max(initial=0.0)), float(np.abs(offsets).max(initial=0.0)), 1e-300)
        child_head = np.zeros(count, dtype=bool)
        for joint, parent in enumerate(self.parents):
            if parent >= 0 and keyed.translation_row[joint] < 0 and \
                    np.abs(tail_vectors[parent] - offsets[:, joint, 0]).max() <= 1e-12 * size:
                child_head[parent] = True
        self.tail_joints = np.flatnonzero(~child_head)
        self.point_joint = np.concatenate([np.arange(count), self.tail_joints])
        tail_row = np.full(count, -1, dtype=np.int64)
        tail_row[self.tail_joints] = count + np.arange(len(self.tail_joints))
        subtree: list[list[int]] = [[j] for j in range(count)]
        self.height = np.zeros(count, dtype=np.int64)
        for joint in range(count - 1, -1, -1):
            parent = self.parents[joint]
            if parent >= 0:
                subtree[parent] += subtree[joint]
                self.height[parent] = max(self.height[parent], self.height[joint] + 1)
        self.affected = []
        for joint in range(count):
            heads = [d for d in subtree[joint] if d != joint or keyed.translation_row[joint] >= 0]
            ends = [int(tail_row[d]) for d in subtree[joint] if tail_row[d] >= 0]
            self.affected.append(np.array(heads + ends, dtype=np.int64))

    def levels_leaves_first(self) -> list[IntArray]:
        """Joints grouped by height above their deepest leaf; joints of one group never
        contain one another, so their subtrees are disjoint."""
        return [np.flatnonzero(self.height == h) for h in range(int(self.height.max(initial=0)) + 1)]

    def points(self, at: IntArray, span: Span | None = None) -> tuple[FloatArray, FloatArray]:
        """Points ``(3, P, n)`` and world scales ``(J, n)`` at frames ``at``, the keys interpolated over
        ``span`` (see :meth:`.Keyed.at`) or exact."""
        rotation, translation, scale = self.keyed.at(at, span)
        world, heads, grown = compose(self.skeleton.parents, rotation, translation,
                                      scale if len(self.keyed.scaled) else None, self.levels)
        grown = np.ones_like(scale) if grown is None else grown
        ends = self.tail_joints
        tails = heads[:, ends] + rotations.rotate(world[:, ends], self.tail_vectors) * grown[ends]
        return np.concatenate([heads, tails], axis=1), grown

    def distances(self, at: IntArray, span: Span | None = None) -> FloatArray:
        """Distance ``(P, n)`` of every point from the original at frames ``at``."""
        step = self.points(at, span)[0] - self.original[:, :, at]
        return np.sqrt((step * step).sum(axis=0))

    def errors(self, frames: list[IntArray] | IntArray) -> FloatArray:
        """True distance ``(P, F)`` of every point from the original, joints keyed at ``frames``
        (one array per joint, or one array for all)."""
        out = np.empty((len(self.point_joint), self.keyed.frame_count))
        for start in range(0, self.keyed.frame_count, _CHUNK):
            at = np.arange(start, min(start + _CHUNK, self.keyed.frame_count))
            span = spans(frames, at) if isinstance(frames, np.ndarray) else stacked_spans(frames, at)
            out[:, at] = self.distances(at, span)
        return out
