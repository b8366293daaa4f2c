"""Whether two motions are on one body, and which joint carries a body's path."""

from __future__ import annotations

import numpy as np

from ..model import MOVE_CHANNELS, Skeleton
from ..pose import Motion, Pose, as_pose
from ..rotations import FloatArray


def body_root(pose: Pose) -> int:
    """The joint that carries the body's path: the root, or below a fixed one-child root the first that moves."""
    skeleton = pose.skeleton
    children = skeleton.child_lists()
    joint = skeleton.parents.index(-1)
    while len(children[joint]) == 1:
        turns = np.abs(np.sum(pose.rotations[:, joint] * pose.rotations[:1, joint], axis=-1))  # 1 - 1e-12: 2e-4 deg
        scales = pose.scale_values()[:, joint]
        if not (np.all(turns >= 1 - 1e-12)
                and np.allclose(pose.translations[:, joint], pose.translations[:1, joint], rtol=1e-12, atol=0.0)
                and np.allclose(scales, scales[:1], rtol=1e-12, atol=0.0)):
            break
        joint = children[joint][0]
    return joint


def same_body(a: Motion, b: Motion | Skeleton) -> bool:
    """Whether ``b`` is on ``a``'s body: the same joints and rest rotations, and below the body root the
    same bone vectors (each joint's local translation, its channels' values included, median over frames;
    a bare skeleton's are its offsets)."""
    pose_a = as_pose(a)
    skeleton_a, skeleton_b = pose_a.skeleton, b if isinstance(b, Skeleton) else b.skeleton
    if not (skeleton_a.same_joints(skeleton_b)
            and np.allclose(skeleton_a.rest_rotations, skeleton_b.rest_rotations, rtol=0.0, atol=1e-9)):
        return False
    root = body_root(pose_a)
    below = [j for j in range(skeleton_a.joint_count) if root in skeleton_a.chain(j)[:-1]]
    moving = [j for j in below if any(c in MOVE_CHANNELS for c in skeleton_a.channels[j] + skeleton_b.channels[j])]
    still = [j for j in below if j not in moving]  # their translations are their offsets at every frame
    bones_a = _bone_vectors(pose_a, still, moving)
    bones_b = skeleton_b.offsets[still + moving] if isinstance(b, Skeleton) else _bone_vectors(as_pose(b), still,
                                                                                                 moving)
    size = float(np.linalg.norm(bones_a, axis=-1).max(initial=0.0))
    return bool(np.abs(bones_a - bones_b).max(initial=0.0) <= 1e-6 * max(size, 1e-300))


def _bone_vectors(pose: Pose, still: list[int], moving: list[int]) -> FloatArray:
    return np.concatenate([pose.translations[0, still], np.median(pose.translations[:, moving], axis=0)])
