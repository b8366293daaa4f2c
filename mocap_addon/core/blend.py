"""Blending two clips: the pose between them at any mix, its envelope, and the mix that reaches a target.

Each joint's local rotation (rest rotation included) is interpolated as a
quaternion along the short arc, frame by frame, so two files that write one
orientation with different Euler triples (``(x, y, z)`` and
``(x+180, 180-y, z+180)``, or 360 degrees apart) blend to that orientation;
translations and scales are interpolated linearly.  Clips and poses
(:class:`.pose.Pose`, e.g. read from an armature's keys) blend alike; a clip's
blend is written back as continuous Euler angles in ``a``'s channel layout.

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
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, cast

import numpy as np

from . import rotations
from .kinematics import compose
from .model import Clip, Skeleton
from .naming import map_skeleton
from .pose import Motion, Pose, as_pose, encode, first_angles
from .retarget import retarget
from .rotations import FloatArray
from .timewarp import time_warp
from .vectors import up_vector

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


# Poses ----------------------------------------------------------------------------------------------------------


@dataclass
class _Joints:
    """Local rotations ``(..., F, K, 4)``, translations ``(..., F, K, 3)`` and scales ``(..., F, K)`` of
    some joints of a pose (leading axes: several mixes at once)."""

    rotations: FloatArray
    translations: FloatArray
    scales: FloatArray

    @classmethod
    def of(cls, pose: Pose, joints: Sequence[int] | slice = slice(None)) -> _Joints:
        return cls(pose.rotations[:, joints], pose.translations[:, joints], pose.scale_values()[:, joints])

    def toward(self, other: _Joints, weights: FloatArray) -> _Joints:
        """Slerp / lerp from these joints toward ``other``'s by ``weights`` ``(..., F, K)``."""
        return _Joints(rotations.slerp(self.rotations, other.rotations, weights),
                       self.translations + weights[..., None] * (other.translations - self.translations),
                       self.scales + weights * (other.scales - self.scales))


def _chain_end(joints: _Joints) -> FloatArray:
    """World positions ``(..., F, 3)`` of the last joint of a chain whose joints each hang from the one before."""
    count = joints.rotations.shape[-2]
    _, positions, _ = compose(list(range(-1, count - 1)), np.moveaxis(joints.rotations, (-2, -1), (1, 0)),
                              np.moveaxis(joints.translations, (-2, -1), (1, 0)), np.moveaxis(joints.scales, -1, 0))
    return np.moveaxis(positions[:, -1], 0, -1)


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


def _body_root(pose: Pose) -> int:
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


# Pairing a with b -------------------------------------------------------------------------------------------------

@dataclass
class _Turn:
    """Heading mode: the turn about the up axis and the move that start ``b``'s root where ``a``'s starts."""

    turn: FloatArray  # quaternion (4,)
    pivot: FloatArray  # b's root at its first paired frame
    shift: FloatArray

    def apply(self, rotation: FloatArray, translation: FloatArray) -> tuple[FloatArray, FloatArray]:
        return (rotations.quaternion_multiply(self.turn, rotation),
                rotations.quaternion_rotate(self.turn, translation - self.pivot) + self.pivot + self.shift)


@dataclass
class _Pairing:
    """``a`` and ``b`` (on ``a``'s skeleton, sampled at the frames paired with ``a``'s) frame by frame,
    with the mask and the root treatment."""

    a: Pose
    b: Pose  # at the frames paired with a's (turned in heading mode)
    b_onto_a: Clip | Pose  # b as given, on a's skeleton
    b_frames: FloatArray  # (Fa,) b's frame paired with each frame of a, within b
    root: str
    root_joint: int
    heading: _Heading
    weights: FloatArray  # (J,) the mask

    def poses(self, joints: Sequence[int] | slice = slice(None),
              frames: np.ndarray | slice = slice(None)) -> tuple[_Joints, _Joints]:
        """Local poses of ``joints`` at ``a``'s ``frames``, from ``a`` and from ``b``."""
        return _Joints.of(self.a.at(frames) if isinstance(frames, np.ndarray) else self.a, joints), \
            _Joints.of(self.b.at(frames) if isinstance(frames, np.ndarray) else self.b, joints)

    def mix(self, pose_a: _Joints, pose_b: _Joints, weights: FloatArray, joints: Sequence[int]) -> _Joints:
        """The blended pose of ``joints`` for ``weights`` ``(..., F, K)`` (leading axes: several mixes)."""
        mixed = pose_a.toward(pose_b, weights)
        if self.root in ("a", "b") and self.root_joint in joints:
            column = list(joints).index(self.root_joint)
            turn_a, tilt_a = self.heading.split(pose_a.rotations[:, column])
            turn_b, tilt_b = self.heading.split(pose_b.rotations[:, column])
            # Blending two tilts can turn a little about the up axis: split that off too.
            _, tilt = self.heading.split(rotations.slerp(tilt_a, tilt_b, weights[..., column]))
            turn, source = (turn_a, pose_a) if self.root == "a" else (turn_b, pose_b)
            mixed.rotations[..., column, :] = rotations.quaternion_multiply(turn, tilt)
            mixed.translations[..., column, :] = source.translations[:, column]
        return mixed

    def chain_positions(self, chain: list[int], pose_a: _Joints, pose_b: _Joints,
                        weights: FloatArray) -> FloatArray:
        """World positions ``(n, F, 3)`` of the chain's last joint for mixes ``weights`` ``(n, F)``, from
        the chain's poses (:meth:`poses`): only this chain is blended and chained."""
        return _chain_end(self.mix(pose_a, pose_b, weights[:, :, None] * self.weights[chain], chain))


def onto(a: Clip | Pose, b: Clip | Pose, *, mapping: Mapping[str, str | None] | None = None,
         target_mapping: Mapping[str, str | None] | None = None) -> Clip | Pose:
    """``b`` on ``a``'s skeleton: ``b`` itself when their joints agree, else retargeted onto ``a``
    (:func:`.retarget.retarget`, with these bone mappings when given).  :func:`blend` does this first."""
    if a.skeleton.same_joints(b.skeleton):
        return b
    # a itself: its first frame gives the bone vectors, its motion how its bones twist (core.anatomy)
    target = a
    try:
        return retarget(b, target, mapping=mapping, target_mapping=target_mapping, feet="free")
    except ValueError as error:
        raise ValueError(f"b's skeleton cannot be retargeted onto a's: {error}") from error


def _pose_features(pose: Pose, frames: FloatArray, root: int, heading: _Heading,
                   parent_rotation: FloatArray) -> FloatArray:
    """Joint positions at ``frames`` relative to the body root, turned so the root always faces one way,
    ``(F, 3J)``."""
    world = pose.sample(frames).world()
    world_heading = _Heading(parent_rotation @ heading.up, heading.axis)
    back = world_heading.turns(-world_heading.angles(world.quaternions[:, root]))
    relative = world.positions - world.positions[:, root:root + 1]
    return rotations.quaternion_rotate(back[:, None], relative).reshape(len(frames), -1)


def _paired_frames(a: Pose, b: Pose, offset: float, align: str,
                   features: Callable[[Pose, FloatArray], FloatArray]) -> FloatArray:
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


def _pair(a: Clip | Pose, b: Clip | Pose, offset: float = 0, align: str = "none", root: str = "blend",
          mask: Mask = None) -> _Pairing:
    if align not in ALIGN_MODES:
        raise ValueError(f"align must be one of {', '.join(ALIGN_MODES)}, not {align!r}")
    if root not in ROOT_MODES:
        raise ValueError(f"root must be one of {', '.join(ROOT_MODES)}, not {root!r}")
    if a.frame_count == 0 or b.frame_count == 0:
        raise ValueError("blending needs at least one frame in each clip")
    if not np.isfinite(offset):
        raise ValueError(f"offset must be a finite number of frames, not {offset}")
    b_onto_a = onto(a, b)
    pose_a, pose_b = as_pose(a), as_pose(b_onto_a)
    weights = mask_weights(a.skeleton, mask)
    root_joint = _body_root(pose_a)
    parent = a.skeleton.parents[root_joint]
    first = pose_a.at([0]).world()
    parent_rotation = first.rotations[0, parent] if parent >= 0 else np.eye(3)
    up = parent_rotation.T @ up_vector(a.up_axis)
    flatness = np.abs(up @ rotations.quaternion_to_matrix(pose_a.rotations[0, root_joint]))
    heading = _Heading(up, int(np.argmin(flatness)))

    def features(motion: Pose, frames: FloatArray) -> FloatArray:
        return _pose_features(motion, frames, root_joint, heading, parent_rotation)

    frames = _paired_frames(pose_a, pose_b, float(offset), align, features)
    paired = pose_b.sample(frames)
    if root == "heading":
        turn = heading.turns(heading.angles(pose_a.rotations[0, root_joint])
                             - heading.angles(paired.rotations[0, root_joint]))
        start_a, start_b = pose_a.translations[0, root_joint], paired.translations[0, root_joint]
        moved = _Turn(turn, start_b, heading.horizontal(start_a - start_b))
        paired.rotations[:, root_joint], paired.translations[:, root_joint] = moved.apply(
            paired.rotations[:, root_joint], paired.translations[:, root_joint])
    return _Pairing(pose_a, paired, b_onto_a, frames, root, root_joint, heading, weights)


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

def blend(a: Motion, b: Clip | Pose, mix: float | FloatArray, *, offset: float = 0, align: str = "none",
          root: str = "blend", mask: Mask = None) -> Motion:
    """The motion between ``a`` (mix 0) and ``b`` (mix 1), on ``a``'s skeleton and frame time.

    ``a`` and ``b`` are clips or poses (:class:`.pose.Pose`); the result is
    ``a``'s kind.  ``mix`` is a number or one value per frame of ``a``; values
    outside [0, 1] extrapolate.  ``mask`` (a preset name or joint -> weight)
    multiplies the mix per joint.  See the module docstring for ``offset``,
    ``align`` and ``root``.  The result holds what ``a``'s channels can hold
    (:meth:`.pose.Pose.held`).  For clips, a joint whose mix is 0 at every
    frame keeps ``a``'s channel values exactly; one whose mix is 1 takes
    ``b``'s where ``b``'s frames pair whole and the joint's layout agrees.
    ``result.metadata["warp"]`` holds ``b``'s frame paired with each frame of ``a``.
    """
    pairing = _pair(a, b, offset, align, root, mask)
    profile, weights = _mix_weights(pairing, mix)
    joints = list(range(a.skeleton.joint_count))
    mixed = pairing.mix(*pairing.poses(), weights, joints)
    metadata = dict(a.metadata)
    metadata["warp"] = pairing.b_frames
    metadata["blend"] = {"mix": float(profile[0]) if np.all(profile == profile[0]) else "profile",
                         "offset": float(offset), "align": align, "root": root,
                         "mask": mask if isinstance(mask, str | None) else "custom",
                         "b": b.metadata.get("source")}
    pose = replace(pairing.a, rotations=mixed.rotations, translations=mixed.translations,
                   scales=None if pairing.a.scales is None and pairing.b.scales is None else mixed.scales,
                   metadata=metadata).held()
    return cast(Motion, pose if isinstance(a, Pose) else _channels_of(a, pose, pairing, weights))


def _channels_of(a: Clip, pose: Pose, pairing: _Pairing, weights: FloatArray) -> Clip:
    """The blend as channel values in ``a``'s layout: ``a``'s own values where its joints do not mix,
    ``b``'s own where they mix fully and ``b``'s values mean the same, the rest encoded continuous from
    ``a``'s first angles."""
    skeleton = a.skeleton
    b_clip = pairing.b_onto_a if isinstance(pairing.b_onto_a, Clip) else None
    from_a = np.all(weights == 0.0, axis=0)
    from_b = np.all(weights == 1.0, axis=0) & np.array_equal(pairing.b_frames, np.round(pairing.b_frames))
    from_b &= np.array([b_clip is not None and _same_joint(skeleton, b_clip.skeleton, j)
                        for j in range(skeleton.joint_count)])
    if pairing.root in ("b", "heading"):
        from_a[pairing.root_joint] = False
    if pairing.root in ("a", "heading"):
        from_b[pairing.root_joint] = False
    starts = skeleton.channel_starts()
    motion = a.motion.copy()
    b_rows = pairing.b_frames.astype(np.int64)
    for joint in np.flatnonzero(from_b & ~from_a):  # only where b is a clip
        motion[:, starts[joint]:starts[joint + 1]] = cast(Clip, b_clip).motion[b_rows, starts[joint]:starts[joint + 1]]
    encoded = np.flatnonzero(~from_a & ~from_b)
    if len(encoded):
        columns = np.concatenate([np.arange(starts[j], starts[j + 1]) for j in encoded])
        motion[:, columns] = encode(skeleton, pose.rotations, pose.translations, pose.scales, encoded,
                                    first_angles(a))
    return Clip(skeleton.copy(), motion, a.frame_time, a.start_frame, a.unit_in_metres, a.up_axis, pose.metadata)


def _mix_weights(pairing: _Pairing, mix: float | FloatArray) -> tuple[FloatArray, FloatArray]:
    """The mix profile ``(F,)`` (checked) and each joint's weight at each frame ``(F, J)`` (mask included)."""
    count = pairing.a.frame_count
    profile = np.asarray(mix, dtype=np.float64)
    if profile.ndim == 0:
        profile = np.full(count, float(profile))
    if profile.shape != (count,) or not np.all(np.isfinite(profile)):
        raise ValueError(f"mix must be a finite number or {count} finite values (one per frame of a)")
    return profile, profile[:, None] * pairing.weights[None, :]


def envelope(a: Clip | Pose, b: Clip | Pose, joint: str | int, mixes: Sequence[float] | FloatArray,
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
    return pairing.chain_positions(chain, *pairing.poses(chain), values)


def solve_mix(a: Clip | Pose, b: Clip | Pose, joint: str | int, frame: int, target: Sequence[float] | FloatArray, *,
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
