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

from dataclasses import dataclass

import numpy as np

from ..core import Clip, Skeleton, forward_kinematics
from ..core.rotations import FloatArray

_MIN_ALIGNMENT = 0.2


@dataclass
class RestRig:
    """Rest bones in armature space: heads, tails and orientations (columns x, y, z)."""

    heads: FloatArray  # (J, 3)
    tails: FloatArray  # (J, 3)
    orientations: FloatArray  # (J, 3, 3)
    joint_rotations: FloatArray  # (J, 3, 3) the joints' rest rotations as operators on Blender vectors


def rest_pose(skeleton: Skeleton) -> tuple[FloatArray, FloatArray]:
    """World rotations (J, 3, 3) and positions (J, 3) of the rest pose, in file axes and units."""
    rest = skeleton.copy()
    rest.position_replaces_offset = np.zeros(skeleton.joint_count, dtype=bool)
    rest.channels = [() for _ in skeleton.names]
    pose = forward_kinematics(Clip(rest, np.zeros((1, 0)), 1.0))
    return pose.rotations[0], pose.positions[0]


def _subtree_sizes(parents: list[int]) -> np.ndarray:
    sizes = np.ones(len(parents), dtype=np.int64)
    for joint in range(len(parents) - 1, -1, -1):
        if parents[joint] >= 0:
            sizes[parents[joint]] += sizes[joint]
    return sizes


def _unit(vectors: FloatArray) -> FloatArray:
    lengths = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(lengths > 0, lengths, 1.0)


def choose_tails(skeleton: Skeleton, heads: FloatArray, end_sites: list[FloatArray]) -> FloatArray:
    """Tail of each bone: the child the chain continues through, else its End Site, else a stub.

    A root continues into its largest subtree (the spine over the legs); any
    other joint into the child straightest ahead of the bone that leads to it
    (the neck over the shoulders).  Children at the joint itself are skipped.
    """
    parents = skeleton.parents
    sizes = _subtree_sizes(parents)
    extent = float(np.ptp(heads, axis=0).max()) if len(heads) > 1 else 1.0
    stub = 0.05 * (extent if extent > 0 else 1.0)
    tails = np.empty_like(heads)
    children: list[list[int]] = [[] for _ in parents]
    for joint, parent in enumerate(parents):
        if parent >= 0:
            children[parent].append(joint)
    tiny = 1e-6 * max(extent, 1e-9)
    for joint in range(len(parents)):
        head = heads[joint]
        parent = parents[joint]
        incoming = head - heads[parent] if parent >= 0 else np.zeros(3)
        candidates = [c for c in children[joint] if np.linalg.norm(heads[c] - head) > tiny]
        if candidates:
            if parent >= 0 and np.linalg.norm(incoming) > tiny:
                direction = _unit(incoming)
                best = max(candidates, key=lambda c: float(_unit(heads[c] - head) @ direction))
            else:
                best = max(candidates, key=lambda c: (int(sizes[c]), float(heads[c][2] - head[2])))
            tails[joint] = heads[best]
            continue
        sites = [s for s in end_sites[joint] if np.linalg.norm(s - head) > tiny]
        if sites:
            tails[joint] = sites[0]
            continue
        direction = _unit(incoming) if np.linalg.norm(incoming) > tiny else np.array([0.0, 0.0, 1.0])
        length = 0.5 * np.linalg.norm(incoming) if np.linalg.norm(incoming) > tiny else stub
        tails[joint] = head + direction * min(max(length, tiny * 10), stub * 2)
    return tails


def bone_orientations(heads: FloatArray, tails: FloatArray, joint_axes: FloatArray) -> FloatArray:
    """Frames with Y along each bone and X as near the joint's own X axis as possible.

    ``joint_axes`` holds each joint's X, Y, Z axes as columns.  Where the bone
    runs along the joint's X axis, the joint's Z axis decides instead.
    """
    y = _unit(tails - heads)
    x = joint_axes[:, :, 0] - np.sum(joint_axes[:, :, 0] * y, axis=1, keepdims=True) * y
    weak = np.linalg.norm(x, axis=1) < _MIN_ALIGNMENT
    z_ref = joint_axes[:, :, 2] - np.sum(joint_axes[:, :, 2] * y, axis=1, keepdims=True) * y
    x = np.where(weak[:, None], np.cross(y, _unit(z_ref)), x)
    x = _unit(x)
    z = np.cross(x, y)
    return np.stack([x, y, z], axis=-1)


def build_rest_rig(skeleton: Skeleton, conversion: FloatArray, scale: float) -> RestRig:
    """Rest bones for ``skeleton`` in Blender axes; ``conversion`` maps file axes to Blender's."""
    rotations, positions = rest_pose(skeleton)
    heads = scale * positions @ conversion.T
    sites = [scale * (positions[j] + rotations[j] @ s.T).T @ conversion.T if len(s) else np.zeros((0, 3))
             for j, s in enumerate(skeleton.end_sites)]
    tails = choose_tails(skeleton, heads, sites)
    # The joint's own axes as Blender vectors are the columns of C @ G; as an operator
    # acting on Blender vectors its rotation is C @ G @ C^T.
    axes = conversion @ rotations
    return RestRig(heads, tails, bone_orientations(heads, tails, axes), axes @ conversion.T)


@dataclass
class BasisPose:
    """Per-frame ``matrix_basis`` parts for every bone: rotations (F, J, 3, 3), locations (F, J, 3), scales (F, J)."""

    rotations: FloatArray
    locations: FloatArray
    scales: FloatArray


def _relative(parents: list[int], rotations: FloatArray, positions: FloatArray,
              joint: int) -> tuple[FloatArray, FloatArray]:
    """Rotation and translation of ``joint`` in its parent's frame (any leading frame axes).

    True inverses, not transposes: Blender's stored rest matrices are only
    orthonormal to float32 precision (worse for bones pointing along -Y), and
    its pose evaluation multiplies by them as they are.
    """
    parent = parents[joint]
    if parent < 0:
        return rotations[..., joint, :, :], positions[..., joint, :]
    inverse = np.linalg.inv(rotations[..., parent, :, :])
    offset = positions[..., joint, :] - positions[..., parent, :]
    return inverse @ rotations[..., joint, :, :], (inverse @ offset[..., None])[..., 0]


def clip_to_basis(clip: Clip, rig: RestRig, conversion: FloatArray, scale: float) -> BasisPose:
    """Bone ``matrix_basis`` parts for every frame of ``clip``."""
    pose = forward_kinematics(clip)
    parents = clip.skeleton.parents
    # Armature-space bone rotation and head per frame: the bone turns with its joint.
    joint_now = conversion @ pose.rotations @ conversion.T
    bone_rotations = joint_now @ np.swapaxes(rig.joint_rotations, -1, -2) @ rig.orientations
    heads = scale * pose.positions @ conversion.T
    rotations = np.empty_like(bone_rotations)
    locations = np.empty_like(heads)
    local_scales = pose.scales.copy()
    for joint, parent in enumerate(parents):
        rest_rotation, rest_offset = _relative(parents, rig.orientations, rig.heads, joint)
        now_rotation, now_offset = _relative(parents, bone_rotations, heads, joint)
        if parent >= 0:
            now_offset = now_offset / pose.scales[:, parent, None]
            local_scales[:, joint] = pose.scales[:, joint] / pose.scales[:, parent]
        rest_inverse = np.linalg.inv(rest_rotation)
        rotations[:, joint] = rest_inverse @ now_rotation
        locations[:, joint] = (now_offset - rest_offset) @ rest_inverse.T
    return BasisPose(rotations, locations, local_scales)


def basis_to_joints(basis: BasisPose, parents: list[int], orientations: FloatArray, heads: FloatArray,
                    joint_rotations: FloatArray, conversion: FloatArray,
                    scale: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Inverse of :func:`clip_to_basis`: joint world rotations, positions (file axes and units), scales."""
    frames, joints = basis.rotations.shape[:2]
    bone_rotations = np.empty((frames, joints, 3, 3))
    bone_heads = np.empty((frames, joints, 3))
    world_scales = np.empty((frames, joints))
    for joint, parent in enumerate(parents):
        rest_rotation, rest_offset = _relative(parents, orientations, heads, joint)
        rotation = rest_rotation @ basis.rotations[:, joint]
        offset = rest_offset + basis.locations[:, joint] @ rest_rotation.T
        if parent < 0:
            bone_rotations[:, joint] = rotation
            bone_heads[:, joint] = offset
            world_scales[:, joint] = basis.scales[:, joint]
            continue
        parent_rotation = bone_rotations[:, parent]
        bone_rotations[:, joint] = parent_rotation @ rotation
        moved = (parent_rotation @ offset[..., None])[..., 0] * world_scales[:, parent, None]
        bone_heads[:, joint] = bone_heads[:, parent] + moved
        world_scales[:, joint] = world_scales[:, parent] * basis.scales[:, joint]
    back = conversion.T
    joint_now = bone_rotations @ np.linalg.inv(orientations) @ joint_rotations
    return back @ joint_now @ conversion, bone_heads @ conversion / scale, world_scales
