"""Blending two clips: the pose between them at any mix, its envelope, and the mix that reaches a target.

Each joint's local rotation (rest rotation included) is interpolated as a
quaternion along the short arc, frame by frame, so two files that write one
orientation with different Euler triples (``(x, y, z)`` and
``(x+180, 180-y, z+180)``, or 360 degrees apart) blend to that orientation;
translations and scales are interpolated linearly.  :func:`blend` writes the
result back as continuous Euler angles in ``a``'s channel layout;
:func:`blend_pose` gives it as local quaternions, and takes motions already
held that way (:class:`Posed`, e.g. read from an armature's quaternion keys).

Time: ``b``'s frame ``f * a.frame_time / b.frame_time + offset`` pairs with
``a``'s frame ``f`` (frames counted from each clip's first, fractional frames
interpolated, frames past ``b``'s ends held); ``align="scale"`` stretches ``b``
from ``offset`` to its last frame over ``a``'s length; ``align="dtw"`` warps
``b`` onto ``a`` by dynamic time warping (:mod:`.timewarp`) on root-relative
joint positions.

The *body root* is the skeleton's root, or, where the root is a fixed joint
with one child (a ground node above the hips), the first joint below it that
moves.  Root modes: ``"blend"`` interpolates it like any joint; ``"a"`` and
``"b"`` take its position and heading (turn about the up axis) from that clip
and blend only its tilt; ``"heading"`` first turns ``b``'s root path about the
up axis and moves it so it starts where ``a``'s starts, then blends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

import numpy as np

from . import rotations
from .anatomy import SAMPLES as ANATOMY_FRAMES
from .kinematics import place_translation, translation_channels
from .model import (
    MOVE_CHANNELS,
    ROTATION_CHANNELS,
    SCALE_CHANNEL,
    TRANSLATION_CHANNELS,
    Clip,
    Skeleton,
    encode_joint,
    rotation_order,
)
from .naming import map_skeleton
from .retarget import retarget
from .rotations import FloatArray
from .timewarp import time_warp
from .timing import first_frame_angles

ALIGN_MODES = ("none", "scale", "dtw")
ROOT_MODES = ("blend", "a", "b", "heading")
MASK_PRESETS_FILE = Path(__file__).parent / "data" / "blend_masks.json"

Mask = str | Mapping[str, float] | None


# Masks ----------------------------------------------------------------------------------------------------------

@cache
def _presets() -> dict[str, dict[str, Any]]:
    return json.loads(MASK_PRESETS_FILE.read_text(encoding="utf-8"))["presets"]


def mask_presets() -> dict[str, dict[str, Any]]:
    """The named masks: key -> ``{"label", "description", "joints"}`` (canonical joint names)."""
    return {key: dict(value) for key, value in _presets().items()}


def mask_weights(skeleton: Skeleton, mask: Mask) -> FloatArray:
    """Each joint's factor on the mix, ``(J,)``.

    ``None``: every joint 1.  A mapping: the weights it gives, 0 for joints it
    does not name.  A preset name (:func:`mask_presets`): 1 for the joints that
    map onto its canonical joints (``core.naming``), else 0.
    """
    if mask is None:
        return np.ones(skeleton.joint_count)
    if isinstance(mask, str):
        if mask not in _presets():
            raise ValueError(f"unknown mask preset {mask!r}; presets: {', '.join(_presets())}")
        return preset_weights(skeleton, map_skeleton(skeleton), _presets()[mask]["joints"])
    unknown = [name for name in mask if name not in skeleton.names]
    if unknown:
        raise ValueError(f"the mask names joints the skeleton lacks: {', '.join(map(str, unknown[:5]))}")
    weights = np.zeros(skeleton.joint_count)
    for name, weight in mask.items():
        weights[skeleton.index(name)] = float(weight)
    if not np.all(np.isfinite(weights)):
        raise ValueError("mask weights must be finite numbers")
    return weights


def preset_weights(skeleton: Skeleton, mapping: Mapping[str, str | None], canonical: Sequence[str]) -> FloatArray:
    """1 for joints whose canonical joint (``mapping``, joint name -> canonical or ``None``) is listed.

    A joint mapped to no canonical joint follows its parent; joints above the
    one mapped to ``hips`` (a ground node) follow the hips.
    """
    chosen = set(canonical)
    mapped = [mapping.get(name) for name in skeleton.names]
    ground = set()
    if "hips" in mapped:
        joint = skeleton.parents[mapped.index("hips")]
        while joint >= 0 and mapped[joint] is None:
            ground.add(joint)
            joint = skeleton.parents[joint]
    weights = np.zeros(skeleton.joint_count)
    for joint, (canonical_name, parent) in enumerate(zip(mapped, skeleton.parents)):
        if canonical_name is not None:
            weights[joint] = float(canonical_name in chosen)
        elif joint in ground:
            weights[joint] = float("hips" in chosen)
        elif parent >= 0:
            weights[joint] = weights[parent]
    return weights


# Local poses ----------------------------------------------------------------------------------------------------

@dataclass
class LocalPose:
    """Local rotations (unit quaternions ``(..., K, F, 4)``, rest rotation included), translations
    ``(..., K, F, 3)`` (offset included, as :func:`kinematics.joint_transform`'s) and scales
    ``(..., K, F)`` of ``K`` joints over ``F`` frames, joint-major."""

    rotations: FloatArray
    translations: FloatArray
    scales: FloatArray

    def toward(self, other: LocalPose, weights: FloatArray) -> LocalPose:
        """Slerp / lerp from this pose toward ``other`` by ``weights`` ``(..., K, F)``."""
        return LocalPose(rotations.slerp(self.rotations, other.rotations, weights),
                         self.translations + weights[..., None] * (other.translations - self.translations),
                         self.scales + weights * (other.scales - self.scales))


@dataclass
class Posed:
    """A motion held as the local pose of every joint at every frame, not as channel values.

    What a clip decodes to (:meth:`of`), or what an armature's quaternion keys
    give without a detour through Euler angles.  :func:`blend_pose`,
    :func:`envelope` and :func:`solve_mix` take it wherever they take a clip.
    """

    skeleton: Skeleton
    pose: LocalPose  # (J, F, ...)
    frame_time: float
    up_axis: str = "Y"

    @classmethod
    def of(cls, clip: Clip) -> Posed:
        """``clip`` decoded: every joint at every frame."""
        joints = range(clip.skeleton.joint_count)
        return cls(clip.skeleton, _local_pose(clip, np.arange(clip.frame_count), joints), clip.frame_time,
                   clip.up_axis)

    @property
    def frame_count(self) -> int:
        return int(self.pose.rotations.shape[1])

    def clip(self, rows: np.ndarray | None = None) -> Clip:
        """The motion (at frames ``rows``, else all) as channel values on its skeleton."""
        rows = np.arange(self.frame_count) if rows is None else rows
        joints = range(self.skeleton.joint_count)
        return Clip(self.skeleton, _channels(self.skeleton, joints, _local_pose(self, rows, joints)), self.frame_time,
                    up_axis=self.up_axis)


Motion = Clip | Posed


def _is_identity(matrix: FloatArray) -> bool:
    return bool(np.all(matrix == np.eye(3)))


def _local_pose(motion: Motion, rows: np.ndarray, joints: Sequence[int]) -> LocalPose:
    """The local pose of ``joints`` at frames ``rows`` of ``motion`` (a clip's decoded for them only)."""
    if isinstance(motion, Posed):
        index = np.ix_(np.asarray(joints, dtype=np.int64), rows)
        pose = motion.pose
        return LocalPose(pose.rotations[index], pose.translations[index], pose.scales[index])
    clip = motion
    skeleton = clip.skeleton
    whole = len(rows) == clip.frame_count and np.array_equal(rows, np.arange(clip.frame_count))
    part = clip if whole else Clip(skeleton, clip.motion[rows], clip.frame_time)
    count = len(joints)
    decoded = LocalPose(np.zeros((count, len(rows), 4)), np.empty((count, len(rows), 3)),
                        np.ones((count, len(rows))))
    starts = skeleton.channel_starts()
    for column, joint in enumerate(joints):
        layout = skeleton.channels[joint]
        order = rotation_order(layout)
        if order:
            angles = part.motion[:, [int(starts[joint]) + n for n, c in enumerate(layout) if c in ROTATION_CHANNELS]]
            decoded.rotations[column] = rotations.euler_to_quaternion(np.radians(angles), order)
        else:
            decoded.rotations[column, :, 0] = 1.0
        rest = skeleton.rest_rotations[joint]
        if not _is_identity(rest):
            decoded.rotations[column] = rotations.quaternion_multiply(rotations.matrix_to_quaternion(rest),
                                                                      decoded.rotations[column])
        decoded.translations[column] = place_translation(skeleton, joint, part.joint_translations(joint))
        scale = part.channel_values(joint, SCALE_CHANNEL)
        if scale is not None:
            decoded.scales[column] = scale
    return decoded


def _world_pose(parents: Sequence[int], pose: LocalPose) -> tuple[FloatArray, FloatArray]:
    """World rotations (quaternions ``(K, ..., F, 4)``) and positions ``(K, ..., F, 3)`` of the
    joints of ``pose`` (leading axes: several poses), whose parents are ``parents`` (``-1`` or an
    earlier joint of the pose)."""
    local_rotations = np.moveaxis(pose.rotations, -3, 0)
    local_translations = np.moveaxis(pose.translations, -3, 0)
    local_scales = np.moveaxis(pose.scales, -2, 0)
    world_rotations = np.empty_like(local_rotations)
    positions = np.empty_like(local_translations)
    scales = np.empty_like(local_scales)
    for joint, parent in enumerate(parents):
        if parent < 0:
            world_rotations[joint], positions[joint], scales[joint] = (
                local_rotations[joint], local_translations[joint], local_scales[joint])
            continue
        positions[joint] = positions[parent] + scales[parent][..., None] * _rotate(world_rotations[parent],
                                                                                    local_translations[joint])
        world_rotations[joint] = rotations.quaternion_multiply(world_rotations[parent], local_rotations[joint])
        scales[joint] = scales[parent] * local_scales[joint]
    return world_rotations, positions


def _sampled_pose(motion: Motion, frames: FloatArray, joints: Sequence[int]) -> LocalPose:
    """The local pose of ``joints`` at fractional ``frames`` (within the motion), interpolated between frames."""
    before = np.floor(frames).astype(np.int64)
    weight = frames - before
    pose = _local_pose(motion, before, joints)
    if not np.any(weight):
        return pose
    after = _local_pose(motion, np.minimum(before + 1, motion.frame_count - 1), joints)
    return pose.toward(after, np.broadcast_to(weight, (len(joints), len(weight))))


def _encode(skeleton: Skeleton, joints: Sequence[int], pose: LocalPose, reference: FloatArray) -> list[FloatArray]:
    """Channel values of each of ``joints`` in ``skeleton``'s layout, Euler angles continuous from ``reference``."""
    columns = []
    for column, joint in enumerate(joints):
        frame_rotation = rotations.quaternion_to_matrix(pose.rotations[column])
        rest = skeleton.rest_rotations[joint]
        if not _is_identity(rest):
            frame_rotation = rest.T @ frame_rotation
        columns.append(encode_joint(skeleton.channels[joint], frame_rotation,
                                    translation_channels(skeleton, joint, pose.translations[column]),
                                    pose.scales[column], skeleton.length_directions[joint], reference[joint],
                                    orthonormal=True))
    return columns


# Headings about the up axis ---------------------------------------------------------------------------------------

@dataclass
class _Heading:
    """Measures and makes turns about one up axis, in the body root's parent frame."""

    up: FloatArray  # unit (3,)
    axis: int  # the root's own axis that is measured (the one lying flattest)

    def plane(self) -> tuple[FloatArray, FloatArray]:
        helper = np.eye(3)[int(np.argmin(np.abs(self.up)))]
        first = np.cross(self.up, helper)
        first /= np.linalg.norm(first)
        return first, np.cross(self.up, first)

    def angles(self, quaternions: FloatArray) -> FloatArray:
        """Heading angle of rotations ``(..., 4)``: where their measured axis points in the horizontal plane."""
        direction = rotations.quaternion_to_matrix(quaternions)[..., :, self.axis]
        first, second = self.plane()
        return np.arctan2(direction @ second, direction @ first)

    def turns(self, angles: FloatArray) -> FloatArray:
        """Quaternions ``(..., 4)`` turning by ``angles`` about the up axis."""
        half = 0.5 * np.asarray(angles, dtype=np.float64)
        return np.concatenate([np.cos(half)[..., None], np.sin(half)[..., None] * self.up], axis=-1)

    def split(self, quaternions: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Rotations ``(..., 4)`` as a turn about the up axis times a tilt whose measured axis has no heading."""
        turn = self.turns(self.angles(quaternions))
        return turn, rotations.quaternion_multiply(rotations.quaternion_conjugate(turn), quaternions)

    def horizontal(self, vectors: FloatArray) -> FloatArray:
        return vectors - (vectors @ self.up)[..., None] * self.up


def _rotate(quaternions: FloatArray, vectors: FloatArray) -> FloatArray:
    """Vectors ``(..., 3)`` turned by unit quaternions ``(..., 4)``: ``v + 2w (u x v) + 2u x (u x v)``."""
    w, u = quaternions[..., :1], quaternions[..., 1:]
    twice = 2.0 * _cross(u, vectors)
    return vectors + w * twice + _cross(u, twice)


def _cross(a: FloatArray, b: FloatArray) -> FloatArray:
    """``np.cross`` over the last axis without its per-call overhead (it runs per joint, on few frames
    when a mix is solved)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    for axis in range(3):
        first, second = (axis + 1) % 3, (axis + 2) % 3
        np.subtract(a[..., first] * b[..., second], a[..., second] * b[..., first], out=out[..., axis])
    return out


def _up_vector(up_axis: str) -> FloatArray:
    axis = up_axis.upper().lstrip("+-")
    if axis not in rotations.AXES or len(axis) != 1:
        raise ValueError(f"not an up axis: {up_axis!r}")
    return np.eye(3)[rotations.AXES.index(axis)] * (-1.0 if up_axis.startswith("-") else 1.0)


def _body_root(motion: Motion) -> int:
    """The joint that carries the body's path: the root, or below a fixed one-child root the first that moves."""
    skeleton = motion.skeleton
    children = skeleton.child_lists()
    joint = skeleton.parents.index(-1)
    while len(children[joint]) == 1:
        pose = _local_pose(motion, np.arange(motion.frame_count), [joint])
        turns = np.abs(np.sum(pose.rotations * pose.rotations[:, :1], axis=-1))  # 1 - 1e-12: 2e-4 degrees
        if not (np.all(turns >= 1 - 1e-12)
                and np.allclose(pose.translations, pose.translations[:, :1], rtol=1e-12, atol=0.0)
                and np.allclose(pose.scales, pose.scales[:, :1], rtol=1e-12, atol=0.0)):
            break
        joint = children[joint][0]
    return joint


# Pairing a with b -------------------------------------------------------------------------------------------------

@dataclass
class _Turn:
    """Heading mode: the turn about the up axis and the move that start ``b``'s root where ``a``'s starts."""

    turn: FloatArray  # quaternion (4,)
    pivot: FloatArray  # b's root at its first paired frame
    shift: FloatArray

    def apply(self, rotation: FloatArray, translation: FloatArray) -> tuple[FloatArray, FloatArray]:
        return (rotations.quaternion_multiply(self.turn, rotation),
                _rotate(self.turn, translation - self.pivot) + self.pivot + self.shift)


@dataclass
class _Pairing:
    """``a`` and ``b`` (on ``a``'s skeleton) paired frame by frame, with the mask and the root treatment."""

    a: Motion
    b: Motion
    b_frames: FloatArray  # (Fa,) b's frame paired with each frame of a, within b
    root: str
    root_joint: int
    heading: _Heading
    weights: FloatArray  # (J,) the mask
    turn: _Turn | None = None

    def poses(self, joints: Sequence[int], frames: np.ndarray) -> tuple[LocalPose, LocalPose]:
        """Local poses of ``joints`` at ``a``'s ``frames``, from ``a`` and from ``b`` (turned in heading mode)."""
        pose_a = _local_pose(self.a, frames, joints)
        pose_b = _sampled_pose(self.b, self.b_frames[frames], joints)
        if self.turn is not None and self.root_joint in joints:
            column = list(joints).index(self.root_joint)
            pose_b.rotations[column], pose_b.translations[column] = self.turn.apply(
                pose_b.rotations[column], pose_b.translations[column])
        return pose_a, pose_b

    def mix(self, pose_a: LocalPose, pose_b: LocalPose, weights: FloatArray, joints: Sequence[int]) -> LocalPose:
        """The blended pose of ``joints`` for ``weights`` ``(..., K, F)`` (leading axes: several mixes)."""
        mixed = pose_a.toward(pose_b, weights)
        if self.root in ("a", "b") and self.root_joint in joints:
            column = list(joints).index(self.root_joint)
            turn_a, tilt_a = self.heading.split(pose_a.rotations[column])
            turn_b, tilt_b = self.heading.split(pose_b.rotations[column])
            # Blending two tilts can turn a little about the up axis: split that off too.
            _, tilt = self.heading.split(rotations.slerp(tilt_a, tilt_b, weights[..., column, :]))
            turn, source = (turn_a, pose_a) if self.root == "a" else (turn_b, pose_b)
            mixed.rotations[..., column, :, :] = rotations.quaternion_multiply(turn, tilt)
            mixed.translations[..., column, :, :] = source.translations[column]
        return mixed

    def chain_positions(self, chain: list[int], pose_a: LocalPose, pose_b: LocalPose,
                        weights: FloatArray) -> FloatArray:
        """World positions ``(n, F, 3)`` of the chain's last joint for mixes ``weights`` ``(n, F)``, from
        the chain's poses (:meth:`poses`): only this chain is blended and chained."""
        pose = self.mix(pose_a, pose_b, self.weights[chain][:, None] * weights[:, None, :], chain)
        return _world_pose(range(-1, len(chain) - 1), pose)[1][-1]


def onto(a: Motion, b: Motion, *, mapping: Mapping[str, str | None] | None = None,
         target_mapping: Mapping[str, str | None] | None = None) -> Motion:
    """``b`` on ``a``'s skeleton: ``b`` itself when their joints agree, else retargeted onto ``a``
    (:func:`.retarget.retarget`, with these bone mappings when given; ``b`` must then be a clip).
    :func:`blend` does this first."""
    if a.skeleton.same_joints(b.skeleton):
        return b
    if isinstance(b, Posed):
        raise ValueError("b's skeleton differs from a's: give b as a clip so it can be retargeted")
    # A Posed a as a clip of the frames a retarget reads: its first (bone vectors) and those its anatomy is
    # measured on (how its bones twist, see core.anatomy).
    target = a if isinstance(a, Clip) else a.clip(np.unique(np.linspace(0, a.frame_count - 1, min(
        a.frame_count, ANATOMY_FRAMES)).round().astype(np.int64)))
    try:
        return retarget(b, target, mapping=mapping, target_mapping=target_mapping, feet="free")
    except ValueError as error:
        raise ValueError(f"b's skeleton cannot be retargeted onto a's: {error}") from error


def _pose_features(motion: Motion, frames: FloatArray, root: int, heading: _Heading,
                   parent_rotation: FloatArray) -> FloatArray:
    """Joint positions at ``frames`` relative to the body root, turned so the root always faces one way,
    ``(F, 3J)``."""
    skeleton = motion.skeleton
    world, positions = _world_pose(skeleton.parents, _sampled_pose(motion, frames, range(skeleton.joint_count)))
    world_heading = _Heading(parent_rotation @ heading.up, heading.axis)
    back = rotations.quaternion_to_matrix(world_heading.turns(-world_heading.angles(world[root])))
    relative = positions - positions[root]
    return np.einsum("fab,jfb->fja", back, relative).reshape(len(frames), -1)


def _paired_frames(a: Motion, b: Motion, offset: float, align: str,
                   features: Callable[[Motion, FloatArray], FloatArray]) -> FloatArray:
    """``b``'s (fractional) frame for every frame of ``a``, within ``b``."""
    ratio = a.frame_time / b.frame_time
    last = b.frame_count - 1
    steps = np.arange(a.frame_count, dtype=np.float64)
    if align == "none":
        frames = offset + steps * ratio
    elif align == "scale":
        if offset > last:
            raise ValueError(f"offset {offset:g} is past b's last frame ({last})")
        frames = offset + steps * ((last - offset) / max(a.frame_count - 1, 1))
    else:
        count = int(np.floor((last - offset) / ratio + 1e-9)) + 1
        if count < 1:
            raise ValueError(f"offset {offset:g} is past b's last frame ({last})")
        sampled = np.clip(offset + np.arange(count) * ratio, 0, last)
        frames = offset + ratio * time_warp(features(a, steps), features(b, sampled))
    return np.clip(frames, 0.0, float(last))


def _pair(a: Motion, b: Motion, offset: float = 0, align: str = "none", root: str = "blend",
          mask: Mask = None) -> _Pairing:
    if align not in ALIGN_MODES:
        raise ValueError(f"align must be one of {', '.join(ALIGN_MODES)}, not {align!r}")
    if root not in ROOT_MODES:
        raise ValueError(f"root must be one of {', '.join(ROOT_MODES)}, not {root!r}")
    if a.frame_count == 0 or b.frame_count == 0:
        raise ValueError("blending needs at least one frame in each clip")
    if not np.isfinite(offset):
        raise ValueError(f"offset must be a finite number of frames, not {offset}")
    b = onto(a, b)
    weights = mask_weights(a.skeleton, mask)
    root_joint = _body_root(a)
    parent = a.skeleton.parents[root_joint]
    parent_rotation = np.eye(3)
    if parent >= 0:
        chain = a.skeleton.chain(parent)
        world, _ = _world_pose(range(-1, len(chain) - 1), _local_pose(a, np.zeros(1, dtype=np.int64), chain))
        parent_rotation = rotations.quaternion_to_matrix(world[-1, 0])
    up = parent_rotation.T @ _up_vector(a.up_axis)
    root_axes = _local_pose(a, np.zeros(1, dtype=np.int64), [root_joint]).rotations[0, 0]
    flatness = np.abs(up @ rotations.quaternion_to_matrix(root_axes))
    heading = _Heading(up, int(np.argmin(flatness)))

    def features(motion: Motion, frames: FloatArray) -> FloatArray:
        return _pose_features(motion, frames, root_joint, heading, parent_rotation)

    frames = _paired_frames(a, b, float(offset), align, features)
    pairing = _Pairing(a, b, frames, root, root_joint, heading, weights)
    if root == "heading":
        pose_a, pose_b = pairing.poses([root_joint], np.zeros(1, dtype=np.int64))
        turn = heading.turns(heading.angles(pose_a.rotations[0, 0]) - heading.angles(pose_b.rotations[0, 0]))
        start_a, start_b = pose_a.translations[0, 0], pose_b.translations[0, 0]
        pairing.turn = _Turn(turn, start_b, heading.horizontal(start_a - start_b))
    return pairing


def _joint_index(skeleton: Skeleton, joint: str | int) -> int:
    if isinstance(joint, str):
        if joint not in skeleton.names:
            raise ValueError(f"no joint {joint!r} in a's skeleton")
        return skeleton.index(joint)
    if not 0 <= int(joint) < skeleton.joint_count:
        raise ValueError(f"joint index {joint} out of range (a has {skeleton.joint_count} joints)")
    return int(joint)


def _same_joint(a: Skeleton, b: Skeleton, joint: int) -> bool:
    """Whether ``b``'s channel values for ``joint`` mean the same transform on ``a``'s skeleton."""
    return (a.channels[joint] == b.channels[joint]
            and bool(a.position_replaces_offset[joint] == b.position_replaces_offset[joint])
            and bool(a.translation_in_rest_frame[joint] == b.translation_in_rest_frame[joint])
            and np.array_equal(a.offsets[joint], b.offsets[joint])
            and np.array_equal(a.rest_rotations[joint], b.rest_rotations[joint])
            and np.array_equal(a.length_directions[joint], b.length_directions[joint]))


# The API ----------------------------------------------------------------------------------------------------------

def blend(a: Clip, b: Clip, mix: float | FloatArray, *, offset: float = 0, align: str = "none",
          root: str = "blend", mask: Mask = None) -> Clip:
    """The clip between ``a`` (mix 0) and ``b`` (mix 1), on ``a``'s skeleton and frame time.

    ``mix`` is a number or one value per frame of ``a``; values outside [0, 1]
    extrapolate.  ``mask`` (a preset name or joint -> weight) multiplies the mix
    per joint.  See the module docstring for ``offset``, ``align`` and
    ``root``.  A joint whose mix is 0 at every frame keeps ``a``'s channel values
    exactly; one whose mix is 1 takes ``b``'s where ``b``'s frames pair whole
    and the joint's layout agrees.  ``result.metadata["warp"]`` holds ``b``'s
    frame paired with each frame of ``a``.
    """
    pairing = _pair(a, b, offset, align, root, mask)
    count = a.frame_count
    profile, weights = _mix_weights(pairing, mix)
    skeleton = a.skeleton
    b_clip = pairing.b if isinstance(pairing.b, Clip) else None
    from_a = np.all(weights == 0.0, axis=1)
    from_b = np.all(weights == 1.0, axis=1) & np.array_equal(pairing.b_frames, np.round(pairing.b_frames))
    from_b &= np.array([b_clip is not None and _same_joint(skeleton, b_clip.skeleton, j)
                        for j in range(skeleton.joint_count)])
    if root in ("b", "heading"):
        from_a[pairing.root_joint] = False
    if root in ("a", "heading"):
        from_b[pairing.root_joint] = False
    starts = skeleton.channel_starts()
    motion = a.motion.copy()
    b_rows = pairing.b_frames.astype(np.int64)
    for joint in np.flatnonzero(from_b & ~from_a):  # only where b is a clip
        motion[:, starts[joint]:starts[joint + 1]] = cast(Clip, b_clip).motion[b_rows, starts[joint]:starts[joint + 1]]
    encoded = [int(j) for j in np.flatnonzero(~from_a & ~from_b)]
    if encoded:
        pose_a, pose_b = pairing.poses(encoded, np.arange(count))
        pose = pairing.mix(pose_a, pose_b, weights[encoded], encoded)
        for joint, values in zip(encoded, _encode(skeleton, encoded, pose, first_frame_angles(a))):
            motion[:, starts[joint]:starts[joint + 1]] = values
    metadata = dict(a.metadata)
    metadata["warp"] = pairing.b_frames
    metadata["blend"] = {"mix": float(profile[0]) if np.all(profile == profile[0]) else "profile",
                         "offset": float(offset), "align": align, "root": root,
                         "mask": mask if isinstance(mask, str | None) else "custom",
                         "b": b.metadata.get("source")}
    return Clip(skeleton.copy(), motion, a.frame_time, a.start_frame, a.unit_in_metres, a.up_axis, metadata)


def blend_pose(a: Motion, b: Motion, mix: float | FloatArray, *, offset: float = 0, align: str = "none",
               root: str = "blend", mask: Mask = None) -> LocalPose:
    """:func:`blend` as the local pose of every joint of ``a`` at every frame ``(J, F, ...)``, not
    encoded as channel values: for callers that key quaternions (the Blender blend operator).
    ``a`` and ``b`` are clips or :class:`Posed` motions; keywords as :func:`blend`'s.  Like
    :func:`blend`'s, the pose is what ``a``'s channels hold (see :func:`_held`)."""
    pairing = _pair(a, b, offset, align, root, mask)
    weights = _mix_weights(pairing, mix)[1]
    joints = list(range(a.skeleton.joint_count))
    return _held(a.skeleton, pairing.mix(*pairing.poses(joints, np.arange(a.frame_count)), weights, joints))


def _held(skeleton: Skeleton, pose: LocalPose) -> LocalPose:
    """``pose`` (every joint) as ``skeleton``'s channels hold it, as encoding and decoding would leave it:
    no turn about an axis a joint has no channel for, no move a joint cannot make (its offset), no scale
    without a scale channel.  Only joints short of three rotations and free translation pay for a
    round trip through channel values."""
    partial = []
    for joint, layout in enumerate(skeleton.channels):
        moves = {c for c in layout if c in MOVE_CHANNELS}
        if len(rotation_order(layout)) < 3 or (moves and moves != set(TRANSLATION_CHANNELS)):
            partial.append(joint)
            continue
        if not moves:
            pose.translations[joint] = place_translation(skeleton, joint, np.zeros((1, 3)))
        if SCALE_CHANNEL not in layout:
            pose.scales[joint] = 1.0
    if partial:
        motion = _channels(skeleton, partial, LocalPose(pose.rotations[partial], pose.translations[partial],
                                                        pose.scales[partial]))
        decoded = _local_pose(Clip(skeleton, motion, 1.0), np.arange(len(motion)), partial)
        pose.rotations[partial], pose.translations[partial], pose.scales[partial] = (
            decoded.rotations, decoded.translations, decoded.scales)
    return pose


def _channels(skeleton: Skeleton, joints: Sequence[int], pose: LocalPose) -> FloatArray:
    """Channel values ``(F, channels)`` of ``joints`` (the poses of ``pose``, in order), zero elsewhere."""
    starts = skeleton.channel_starts()
    motion = np.zeros((pose.rotations.shape[1], int(starts[-1])))
    for joint, values in zip(joints, _encode(skeleton, joints, pose, np.zeros((skeleton.joint_count, 3)))):
        motion[:, starts[joint]:starts[joint + 1]] = values
    return motion


def _mix_weights(pairing: _Pairing, mix: float | FloatArray) -> tuple[FloatArray, FloatArray]:
    """The mix profile ``(F,)`` (checked) and each joint's weight at each frame ``(J, F)`` (mask included)."""
    count = pairing.a.frame_count
    profile = np.asarray(mix, dtype=np.float64)
    if profile.ndim == 0:
        profile = np.full(count, float(profile))
    if profile.shape != (count,) or not np.all(np.isfinite(profile)):
        raise ValueError(f"mix must be a finite number or {count} finite values (one per frame of a)")
    return profile, pairing.weights[:, None] * profile[None, :]


def envelope(a: Motion, b: Motion, joint: str | int, mixes: Sequence[float] | FloatArray,
             **blend_options: Any) -> FloatArray:
    """World path of ``joint`` for each mix, ``(len(mixes), frames of a, 3)``, in ``a``'s axes and units.

    ``blend_options`` are :func:`blend`'s keywords.  Only the joint's chain is
    posed, for all mixes at once.  A mix may also be a per-frame profile
    (``mixes`` of shape ``(n, frames)``).
    """
    pairing = _pair(a, b, **blend_options)
    index = _joint_index(a.skeleton, joint)
    values = np.asarray(mixes, dtype=np.float64)
    count = a.frame_count
    if values.ndim == 1:
        values = np.repeat(values[:, None], count, axis=1)
    if values.ndim != 2 or values.shape[1] != count or not np.all(np.isfinite(values)):
        raise ValueError(f"mixes must be finite numbers or profiles of {count} values")
    chain = a.skeleton.chain(index)
    return pairing.chain_positions(chain, *pairing.poses(chain, np.arange(count)), values)


def solve_mix(a: Motion, b: Motion, joint: str | int, frame: int, target: Sequence[float] | FloatArray, *,
              bounds: tuple[float, float] = (0.0, 1.0), **blend_options: Any) -> tuple[float, float]:
    """The mix within ``bounds`` that brings ``joint`` nearest ``target`` at ``a``'s ``frame`` (0-based).

    Returns ``(mix, distance)``: ``distance`` is what remains, 0 (to rounding)
    when the target is in reach.  A scan over the bounds, then finer scans
    around the best; each poses one frame of the joint's chain only.
    """
    pairing = _pair(a, b, **blend_options)
    index = _joint_index(a.skeleton, joint)
    if not 0 <= frame < a.frame_count:
        raise ValueError(f"frame {frame} is outside a's {a.frame_count} frames")
    goal = np.asarray(target, dtype=np.float64).reshape(3)
    low, high = (float(v) for v in bounds)
    if not (np.isfinite(low) and np.isfinite(high) and low <= high and np.all(np.isfinite(goal))):
        raise ValueError(f"bounds must be finite with low <= high and the target finite, got {bounds}, {target}")
    chain = a.skeleton.chain(index)
    poses = pairing.poses(chain, np.array([frame]))

    def distances(mixes: FloatArray) -> FloatArray:
        positions = pairing.chain_positions(chain, *poses, mixes[:, None])
        return np.linalg.norm(positions[:, 0] - goal, axis=-1)

    grid = np.linspace(low, high, 101)
    while True:
        found = distances(grid)
        best = int(np.argmin(found))
        step = grid[1] - grid[0] if len(grid) > 1 else 0.0
        if step <= 1e-12 * max(1.0, high - low):
            return float(grid[best]), float(found[best])
        grid = np.linspace(max(low, grid[best] - step), min(high, grid[best] + step), 21)
