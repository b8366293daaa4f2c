"""Bone rest frames and pose conversion between a core clip and Blender bones (numpy only).

Blender poses a bone by ``matrix_basis``, relative to its rest matrix.  A
joint of the file keeps its own rest orientation (identity for BVH, the base
rotation for HTR, the axis for ASF), which rarely has Y along the bone.  So
each bone gets a rest frame ``O`` with Y along the bone and X and Z as close
as possible to the joint's own axes (that is the computed roll), and each
frame's rotation is re-expressed relative to it::

    pose (armature space)  P = A(f) @ A(rest)^-1 @ B
    basis                  = (B_parent^-1 @ B)^-1 @ (P_parent^-1 @ P)

where ``A`` is the joint's transform in Blender axes and ``B`` the bone's rest
matrix.  The pose is unchanged whatever rest frame is chosen.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...core import Skeleton, rotations
from ...core.bones import aligned_frames
from ...core.kinematics import rest_bones
from ...core.model import rotation_order
from ...core.rotations import AXES, FloatArray
from ...core.transforms import rest_pose
from ...core.vectors import unit

# Blender 4.2 and 4.5 delete bones shorter than 1e-6 (armature space) when edit mode ends, and 5.0
# keeps them with a rest orientation made of float32 noise: every bone is given at least this length,
# a small fraction of the figure, and never less than a floor well above Blender's limit.
MIN_BONE_FRACTION = 1e-3  # of the rest figure's extent
MIN_BONE_LENGTH = 1e-4  # Blender units


@dataclass
class RestRig:
    """Rest bones in armature space: heads, tails, orientations (columns x, y, z) and joint axes."""

    heads: FloatArray  # (J, 3)
    tails: FloatArray  # (J, 3)
    orientations: FloatArray  # (J, 3, 3)
    joint_axes: FloatArray  # (J, 3, 3) each joint's own rest axes as Blender vectors (columns)


def build_rest_rig(skeleton: Skeleton, conversion: FloatArray, scale: float,
                   bone_vectors: FloatArray | None = None) -> RestRig:
    """Rest bones for ``skeleton`` in Blender axes; ``conversion`` maps file axes to Blender's.

    ``bone_vectors`` (J, 3), in each joint's own frame and file units, fix the
    bones a format defines itself (HTR's BoneLength along BoneLengthAxis);
    zero vectors, or none given, leave the tail to :func:`choose_tails`.
    """
    rotations, _ = rest_pose(skeleton)
    up = conversion.T @ np.array([0.0, 0.0, 1.0])  # Blender's up, in file axes
    heads, tails = (scale * points @ conversion.T for points in rest_bones(skeleton, up, bone_vectors))
    axes = conversion @ rotations
    tails = lengthened(heads, tails, axes[:, :, 1])
    return RestRig(heads, tails, aligned_frames(heads, tails, axes, along=1), axes)


def lengthened(heads: FloatArray, tails: FloatArray, fallback: FloatArray) -> FloatArray:
    """``tails`` with every bone shorter than the minimum (:data:`MIN_BONE_FRACTION` of the figure's
    extent, at least :data:`MIN_BONE_LENGTH`) made that long along its own direction (``fallback``
    ``(J, 3)`` where it has none).  Only the rig changes: the import record keeps the file's values."""
    points = np.concatenate([heads, tails])
    minimum = max(MIN_BONE_FRACTION * float(np.ptp(points, axis=0).max(initial=0.0)), MIN_BONE_LENGTH)
    vectors = tails - heads
    lengths = np.linalg.norm(vectors, axis=1)
    short = lengths < minimum
    if not short.any():
        return tails
    directions = unit(np.where((lengths > 0)[:, None], vectors, fallback))
    return np.where(short[:, None], heads + minimum * directions, tails)


@dataclass
class BoneFrames:
    """Constant matrices linking a joint's local transform to its bone's ``matrix_basis``.

    With ``N = axes^T @ O`` (joint rest axes to bone rest frame), ``L`` the bone's
    rest matrix relative to its parent bone and ``U = N_parent^-1`` (``C`` for
    roots, the file-to-Blender conversion)::

        basis rotation = L^-1 @ U @ R_local @ N
        basis location = L^-1 @ (scale * U @ t_local - l)

    so no world transforms are needed.  True inverses, not transposes: Blender's
    stored rest matrices are orthonormal only to float32 precision (worse for
    some bone directions), and its pose evaluation uses them as they are.
    """

    to_bone: FloatArray  # N, (J, 3, 3)
    from_parent: FloatArray  # U, (J, 3, 3)
    rest_inverse: FloatArray  # L^-1, (J, 3, 3)
    rest_offset: FloatArray  # l, (J, 3)

    @classmethod
    def of(cls, parents: list[int], rig: RestRig, conversion: FloatArray) -> BoneFrames:
        to_bone = np.swapaxes(rig.joint_axes, -1, -2) @ rig.orientations
        inverse_orientation = np.linalg.inv(rig.orientations)
        index = np.array(parents)
        has_parent = index >= 0
        parent = np.where(has_parent, index, 0)
        from_parent = np.where(has_parent[:, None, None], np.linalg.inv(to_bone)[parent], conversion)
        rest = np.where(has_parent[:, None, None], inverse_orientation[parent] @ rig.orientations,
                        rig.orientations)
        offset = np.where(has_parent[:, None],
                          (inverse_orientation[parent] @ (rig.heads - rig.heads[parent])[..., None])[..., 0],
                          rig.heads)
        return cls(to_bone, from_parent, np.linalg.inv(rest), offset)

    @property
    def left(self) -> FloatArray:
        """``L^-1 @ U`` ``(J, 3, 3)``: what multiplies a joint's local rotation from the left."""
        return self.rest_inverse @ self.from_parent

    @cached_property
    def turns(self) -> FloatArray:
        """:attr:`left` and :attr:`to_bone` of every joint as unit quaternions ``(J, 2, 4)``.

        Blender's rest matrices are rotations only to float32: their nearest
        rotations keep a product as exact (to first order) as the matrices would.
        """
        return rotations.matrix_to_quaternion(rotations.nearest_rotation(np.stack([self.left, self.to_bone], axis=1)))

    def euler_orders(self, skeleton: Skeleton) -> list[str]:
        """Each bone's Euler order (ours): its joint's channel order on the bone's axes (:func:`bone_euler_order`)."""
        return [bone_euler_order(rotation_order(layout) or "ZYX", self.to_bone[joint])
                for joint, layout in enumerate(skeleton.channels)]


def local_basis(frames: BoneFrames, joint: int, local_rotations: FloatArray, local_translations: FloatArray,
                scale: float) -> tuple[FloatArray, FloatArray]:
    """A bone's ``matrix_basis`` rotation ``(F, 4)`` and location ``(F, 3)`` from its joint's local
    rotation (unit quaternions) and translation (file axes and units).

    The rotation is ``left @ R_local @ to_bone``, the constant factors folded into one 4x4 product.
    """
    left, to_bone = frames.turns[joint]
    turned = local_rotations @ rotations.quaternion_product_matrix(left, to_bone)
    moved = scale * local_translations @ frames.from_parent[joint].T - frames.rest_offset[joint]
    return turned, moved @ frames.rest_inverse[joint].T


def basis_to_local(frames: BoneFrames, joint: int, rotation: FloatArray, location: FloatArray,
                   scale: float) -> tuple[FloatArray, FloatArray]:
    """Inverse of :func:`local_basis`: a joint's local rotation (unit quaternions ``(F, 4)``) and translation
    ``(F, 3)`` from its bone's ``matrix_basis`` rotation (unit quaternions) and location."""
    left, to_bone = frames.turns[joint]
    inverse = rotations.quaternion_conjugate
    return (rotation @ rotations.quaternion_product_matrix(inverse(left), inverse(to_bone)),
            _joint_translation(frames, joint, location, scale))


def _joint_translation(frames: BoneFrames, joint: int, location: FloatArray, scale: float) -> FloatArray:
    offset = location @ np.linalg.inv(frames.rest_inverse[joint]).T + frames.rest_offset[joint]
    return offset @ np.linalg.inv(frames.from_parent[joint]).T / scale


def bone_euler_order(order: str, to_bone: FloatArray) -> str:
    """A joint's rotation order (ours, on the joint's axes) on the matching axes of its bone.

    A bone's basis rotation is ``N^T @ R @ N`` for the joint's frame rotation ``R``
    (``N``: :attr:`BoneFrames.to_bone`).  Where ``N`` relabels axes (bones along a
    joint axis, as in a T-pose), composing the same axes in the same sequence gives
    the file's own angles, up to sign: Euler curves then read like the file's
    channels and meet gimbal lock only where the file does (the file's order on the
    bone's own axes can sit at it for a whole take, and its curves drift by whole
    turns).  Each bone axis is matched to the joint axis it runs nearest.
    """
    full = order + "".join(a for a in AXES if a not in order)
    match = max(itertools.permutations(range(3)), key=lambda p: sum(abs(to_bone[p[b], b]) for b in range(3)))
    return "".join(AXES[match.index(AXES.index(axis))] for axis in full)
