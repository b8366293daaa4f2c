"""How a body moves, measured: hinge axes of knees and elbows, left-right lines, facing against travel.

These fix each bone's twist for retargeting (:func:`twist_axes`, used by
:func:`.retarget.figure`) and judge a result as an animator would
(:func:`hinge_axes`, :func:`facing_to_travel`, :func:`turn_between`).  A hinge's
axis is ``upper x lower`` of its two bones in frames where it bends over
``BENT`` degrees, read in a joint's own frame: the knee's flexion axis is the
thigh's +X on the canonical skeleton, the elbow's the upper arm's -Y (left) and
+Y (right).  Everything reads a few hundred evenly spread frames at most.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..kinematics import forward_kinematics
from ..model import Clip
from ..naming import map_skeleton
from ..pose import Pose
from ..rotations import FloatArray
from .reference import reference_body

BENT = 10.0  # degrees: a hinge bent less than this tells nothing of its axis
SAMPLES = 128  # frames read at most


@dataclass
class Sampled:
    """World rotations ``(F, J, 3, 3)`` and positions ``(F, J, 3)`` of a clip at a few frames, with its
    canonical joints."""

    rotations: FloatArray
    positions: FloatArray
    canonical: dict[str, int]

    @classmethod
    def of(cls, clip: Clip | Pose, mapping: Mapping[str, str | None] | None = None,
           frames: int | None = SAMPLES) -> Sampled:
        """``clip`` at up to ``frames`` evenly spread frames (all of them: ``None``)."""
        mapping = map_skeleton(clip.skeleton) if mapping is None else mapping
        canonical = {c: clip.skeleton.index(n) for n, c in mapping.items() if c is not None}
        count = clip.frame_count
        chosen = np.arange(count) if frames is None or count <= frames else np.linspace(0, count - 1, frames).round()
        rows = chosen.astype(np.int64)
        part = Clip(clip.skeleton, clip.motion[rows], clip.frame_time) if isinstance(clip, Clip) else clip.at(rows)
        world = forward_kinematics(part)
        return cls(world.rotations, world.positions, canonical)

    def has(self, *joints: str) -> bool:
        return all(j in self.canonical for j in joints)

    def hinge(self, limb: tuple[str, ...], frame_of: str) -> FloatArray | None:
        """The mean flexion axis (unit) of the hinge in the middle of ``limb`` (upper, middle, lower joint)
        in ``frame_of``'s own frame, or ``None`` where it never bends over ``BENT`` degrees (or a joint is
        unmapped)."""
        upper, middle, lower = limb
        if not self.has(upper, middle, lower, frame_of):
            return None
        points = self.positions[:, [self.canonical[upper], self.canonical[middle], self.canonical[lower]]]
        first, second = _unit(points[:, 1] - points[:, 0]), _unit(points[:, 2] - points[:, 1])
        normal = np.cross(first, second)
        bent = (np.sum(first * second, axis=-1) < np.cos(np.radians(BENT))) & (np.linalg.norm(normal, axis=-1) > 1e-6)
        if not bent.any():
            return None
        return self._mean_in(frame_of, _unit(normal[bent]), bent)

    def line(self, ends: tuple[str, ...], frame_of: str) -> FloatArray | None:
        """The mean direction (unit) from the first joint of ``ends`` to the second in ``frame_of``'s own
        frame, or ``None``."""
        start, end = ends
        if not self.has(start, end, frame_of):
            return None
        lines = _unit(self.positions[:, self.canonical[end]] - self.positions[:, self.canonical[start]])
        return self._mean_in(frame_of, lines, np.ones(len(lines), dtype=bool))

    def _mean_in(self, joint: str, vectors: FloatArray, frames: np.ndarray) -> FloatArray | None:
        rotations = self.rotations[frames, self.canonical[joint]]
        mean = np.einsum("fba,fb->a", rotations, vectors) / len(vectors)
        size = float(np.linalg.norm(mean))
        return mean / size if size > 1e-6 else None


def twist_axes(clip: Clip | Pose, canonical: dict[str, int]) -> dict[int, tuple[FloatArray, FloatArray]]:
    """For each mapped joint whose twist the anatomy fixes: its measured axis (in its own frame) and the
    canonical axis it should lie along (see ``data/reference_body.json``, ``anatomy``)."""
    body = reference_body()
    mapping = {clip.skeleton.names[j]: c for c, j in canonical.items()}
    sampled = Sampled.of(clip, mapping)
    out = {}
    for joint, (measure, axis) in body.twists.items():
        if joint not in canonical:
            continue
        if measure in body.hinges:
            found = sampled.hinge(body.hinges[measure], joint)
        else:
            found = sampled.line(body.lines[measure], joint)
        if found is not None:
            out[canonical[joint]] = (found, axis)
    return out


def hinge_axes(clip: Clip | Pose, mapping: Mapping[str, str | None] | None = None,
               frames: int | None = SAMPLES) -> dict[str, FloatArray | None]:
    """Knee axes in the thighs' frames and elbow axes in the upper arms' (``knee_l``, ``knee_r``,
    ``elbow_l``, ``elbow_r`` -> unit vector, or ``None`` where it never bends)."""
    sampled = Sampled.of(clip, mapping, frames)
    body = reference_body()
    return {name: sampled.hinge(joints, joints[0]) for name, joints in body.hinges.items()}


def largest_bend_step(clip: Clip | Pose, hinges: tuple[str, ...] = ("knee_l", "knee_r"),
                      mapping: Mapping[str, str | None] | None = None) -> float:
    """The largest change (degrees) of a hinge's bend (the angle between its two bones) from one frame to
    the next, over every frame of ``clip`` (a knee that snaps shows here)."""
    sampled = Sampled.of(clip, mapping, None)
    body = reference_body()
    largest = 0.0
    for name in hinges:
        if not sampled.has(*body.hinges[name]) or len(sampled.positions) < 2:
            continue
        points = sampled.positions[:, [sampled.canonical[j] for j in body.hinges[name]]]
        first, second = _unit(points[:, 1] - points[:, 0]), _unit(points[:, 2] - points[:, 1])
        bend = np.degrees(np.arccos(np.clip(np.sum(first * second, axis=-1), -1.0, 1.0)))
        largest = max(largest, float(np.abs(np.diff(bend)).max()))
    return largest


def facing_to_travel(clip: Clip | Pose, joints: tuple[str, ...] = ("hips", "spine_04", "head"),
                     mapping: Mapping[str, str | None] | None = None, axis: FloatArray | None = None,
                     up: FloatArray | None = None) -> dict[str, float]:
    """Median angle (degrees) between each joint's ``axis`` (default +Z) and the direction of travel,
    both across ``up`` (default +Y), over the frames in which the hips move faster than a third of
    their mean speed (the hips' travel over about half a second)."""
    axis = np.array([0.0, 0.0, 1.0]) if axis is None else axis
    up = np.array([0.0, 1.0, 0.0]) if up is None else up
    sampled = Sampled.of(clip, mapping, None)
    hips = sampled.positions[:, sampled.canonical["hips"]]
    reach = max(1, round(0.25 / clip.frame_time))
    count = len(hips)
    travel = hips[np.minimum(np.arange(count) + reach, count - 1)] - hips[np.maximum(np.arange(count) - reach, 0)]
    travel -= np.outer(travel @ up, up)
    speed = np.linalg.norm(travel, axis=-1)
    moving = speed > speed.mean() / 3
    out = {}
    for joint in joints:
        if joint not in sampled.canonical or not moving.any():
            continue
        facing = sampled.rotations[:, sampled.canonical[joint]] @ axis
        facing -= np.outer(facing @ up, up)
        cosine = np.sum(_unit(facing) * _unit(travel), axis=-1)[moving]
        out[joint] = float(np.degrees(np.median(np.arccos(np.clip(cosine, -1.0, 1.0)))))
    return out


def turn_between(clip: Clip | Pose, upper: str, lower: str, mapping: Mapping[str, str | None] | None = None,
                 frames: int | None = SAMPLES) -> FloatArray:
    """The mean rotation (3, 3) of ``lower``'s frame in ``upper``'s (e.g. the head on the hips)."""
    sampled = Sampled.of(clip, mapping, frames)
    one, two = sampled.rotations[:, sampled.canonical[upper]], sampled.rotations[:, sampled.canonical[lower]]
    mean = np.mean(np.swapaxes(one, -1, -2) @ two, axis=0)
    u, _, vt = np.linalg.svd(mean)
    return np.asarray(u @ np.diag([1.0, 1.0, np.linalg.det(u @ vt)]) @ vt)


def angle_between(a: FloatArray, b: FloatArray) -> float:
    """Degrees between two vectors."""
    return float(np.degrees(np.arccos(np.clip(_unit(a) @ _unit(b), -1.0, 1.0))))


def _unit(vectors: FloatArray) -> FloatArray:
    lengths = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(lengths > 0, lengths, 1.0)


def twist_about(rotation: FloatArray, axis: FloatArray) -> float:
    """The twist (degrees) of ``rotation`` (3, 3) about unit ``axis`` (swing-twist decomposition)."""
    w = 0.5 * np.sqrt(max(1.0 + np.trace(rotation), 0.0))
    vector = np.array([rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0],
                       rotation[1, 0] - rotation[0, 1]]) / 4.0
    return float(np.degrees(2.0 * np.arctan2(vector @ axis, w)))
