"""A varied library of any size from a few captures: many subjects, speeds and styles, no two frames alike.

A real library (CMU's: 2,600 takes of 140 subjects) repeats its motions (hundreds of walks) but never its
frames: each take is another body, another speed, another style.  Copies of a few captures are not like
that: every copy of a frame is a perfect match of every other, so the pairs that match grow with the square
of the copies.  Here each *variant* of a capture (on the canonical skeleton) is

- another subject: legs, arms and spine each scaled by 0.88-1.12 (the hips' height with the legs);
- another speed and timing: played 0.75-1.3 times as fast, with a slow warp of its timing (up to a fifth
  of a second ahead or behind, over a few seconds);
- another style: every weighted joint's rotation turned by a slow random rotation of up to 8 degrees;
- mirrored (left and right swapped) one time in two;
- placed elsewhere: turned and moved on the ground (which the motion graph's distance ignores).

``copies`` makes the other kind for comparison: the captures again and again, only turned and moved.
Not a test and not part of the add-on: ``scripts/bench_transitions.py --library varied|copies`` builds on it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from mocap_addon.core import load
from mocap_addon.core.naming import CANONICAL_JOINTS, CANONICAL_PARENTS
from mocap_addon.core.pose import Pose
from mocap_addon.core.rotations import quaternion_multiply
from mocap_addon.core.transitions.frame_matching import joint_weights
from mocap_addon.core.transitions.graph import library_pose

FPS = 30.0
CHAINS = {"legs": ("upper_leg", "lower_leg", "foot", "toes"), "arms": ("clavicle", "upper_arm", "lower_arm", "hand"),
          "spine": ("spine", "neck", "head")}
MIRRORED = [CANONICAL_JOINTS.index(n[:-2] + ("_r" if n.endswith("_l") else "_l")) if n[-2:] in ("_l", "_r") else i
            for i, n in enumerate(CANONICAL_JOINTS)]


def captures(paths: list[str]) -> list[Pose]:
    """The captures on the canonical skeleton at ``FPS``."""
    poses = [library_pose(load(path), FPS) for path in paths]
    for pose, path in zip(poses, paths):
        pose.metadata["name"] = path.rsplit("/", 1)[-1]
    return poses


def variants(bases: list[Pose], seed: int = 0, varied: bool = True) -> Iterator[Pose]:
    """Variants of the ``bases`` in turn, without end (the first ``n`` are the same whatever comes after);
    not ``varied``: copies, only turned and moved on the ground."""
    for number in range(10 ** 9):
        base = bases[number % len(bases)]
        rng = np.random.default_rng([seed, number])
        yield (variant(base, rng, f"{base.metadata.get('name', 'capture')} #{number}") if varied
               else placed(base, rng, f"{base.metadata.get('name', 'capture')} copy #{number}"))


def axis_angle_quaternions(vectors: np.ndarray) -> np.ndarray:
    """Quaternions ``(..., 4)`` of rotation vectors ``(..., 3)`` (radians)."""
    angle = np.linalg.norm(vectors, axis=-1, keepdims=True)
    axis = vectors / np.where(angle > 0, angle, 1.0)
    return np.concatenate([np.cos(angle / 2), axis * np.sin(angle / 2)], axis=-1)


def variant(base: Pose, rng: np.random.Generator, name: str) -> Pose:
    """One variant of a canonical ``base`` (see the module notes)."""
    duration = (base.frame_count - 1) / FPS
    speed = rng.uniform(0.75, 1.3)
    period = rng.uniform(2.0, 5.0)
    swing = min(0.2, 0.5 * speed * period / (2 * math.pi))  # keeps the warped time going forwards
    length = max(2, int(duration / speed * FPS))
    seconds = np.arange(length) / FPS
    played = speed * seconds + swing * np.sin(2 * math.pi * seconds / period + rng.uniform(0, 2 * math.pi))
    pose = base.sample(np.clip(played * FPS, 0, base.frame_count - 1))
    skeleton = pose.skeleton.copy()
    rotations, translations = pose.rotations.copy(), pose.translations.copy()
    scale = {chain: rng.uniform(0.88, 1.12) for chain in CHAINS}
    for joint, joint_name in enumerate(CANONICAL_JOINTS):
        for chain, prefixes in CHAINS.items():
            if joint_name.startswith(prefixes) and CANONICAL_PARENTS[joint_name]:
                skeleton.offsets[joint] *= scale[chain]
                translations[:, joint] *= scale[chain]
    translations[:, 0, 1] *= scale["legs"]
    weighted = np.flatnonzero(joint_weights() > 0)
    phases = rng.uniform(0, 2 * math.pi, (2, len(weighted), 3))
    periods = rng.uniform(1.0, 4.0, (2, len(weighted), 3))
    wave = np.sin(2 * math.pi * seconds[:, None, None, None] / periods + phases).sum(axis=1) / 2
    style = axis_angle_quaternions(np.radians(8.0) * wave)
    rotations[:, weighted] = quaternion_multiply(rotations[:, weighted], style)
    if rng.random() < 0.5:  # mirrored about the body's left-right (X) plane
        rotations = rotations[:, MIRRORED] * np.array([1.0, 1.0, -1.0, -1.0])
        translations = translations[:, MIRRORED] * np.array([-1.0, 1.0, 1.0])
    return placed(Pose(skeleton, rotations, translations, None, 1.0 / FPS, unit_in_metres=pose.unit_in_metres,
                       up_axis=pose.up_axis), rng, name)


def placed(pose: Pose, rng: np.random.Generator, name: str) -> Pose:
    """``pose`` turned about the vertical and moved on the ground at random."""
    rotations, translations = pose.rotations.copy(), pose.translations.copy()
    turn = axis_angle_quaternions(np.array([0.0, rng.uniform(-math.pi, math.pi), 0.0]))
    rotations[:, 0] = quaternion_multiply(np.broadcast_to(turn, rotations[:, 0].shape), rotations[:, 0])
    ground = translations[:, 0, [0, 2]] @ _yaw_matrix(turn)
    translations[:, 0, 0], translations[:, 0, 2] = ground[:, 0] + rng.uniform(-5, 5), ground[:, 1] + rng.uniform(-5, 5)
    return Pose(pose.skeleton, rotations, translations, None, 1.0 / FPS, unit_in_metres=pose.unit_in_metres,
                up_axis=pose.up_axis, metadata={"name": name})


def _yaw_matrix(turn: np.ndarray) -> np.ndarray:
    """The ``(2, 2)`` matrix taking ground points ``(x, z)`` (rows) to their turn about +Y by ``turn``."""
    angle = 2 * math.atan2(turn[2], turn[0])
    cos, sin = math.cos(angle), math.sin(angle)
    return np.array([[cos, -sin], [sin, cos]])


def library(paths: list[str], frames: int, seed: int = 0, varied: bool = True) -> list[Pose]:
    """Variants (or copies) of the captures at ``paths`` until they hold at least ``frames`` frames."""
    out: list[Pose] = []
    total = 0
    for pose in variants(captures(paths), seed, varied):
        if total >= frames:
            return out
        out.append(pose)
        total += pose.frame_count
    return out
