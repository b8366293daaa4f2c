"""Foot contacts: when each foot is planted on the floor, and the measures of planted feet.

A foot is read at two points, the ankle (canonical ``foot``) and the ball of the
foot (``toes``), found through the bone-name mapping (:func:`.naming.map_skeleton`).
A point touches the floor at a frame when it is *low* (within a fraction of a
leg length of its own lowest level in the clip) and *slow* (moving less than a
few tenths of a leg length per second); the foot is planted while either of its
points touches.  Runs shorter than a few hundredths of a second are dropped and
gaps as short are closed.  Heights are read along the clip's up axis, found from
the motion itself (the signed world axis nearest the mean hips-to-head line), and
every length is in leg lengths (thigh + shin), so neither the file's floor height,
nor its unit, nor its up axis matters.

The same arrays serve retargeting (which feet to pin), blending and the motion
graph (``Contacts.planted``: ``(F, 2)`` left, right), and the measures used to
judge a result: slide per contact frame, planted height, floor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..kinematics import end_site_positions, forward_kinematics
from ..model import Clip
from ..naming import map_skeleton
from ..pose import Pose
from ..rotations import FloatArray
from ..transforms import World
from .reference import LEG_JOINTS, TOP_JOINTS

SIDES = ("l", "r")
LOW = 0.06  # leg lengths above a point's own lowest level
SLOW = 0.5  # leg lengths per second
SHORTEST = 0.05  # seconds: shorter contacts are dropped, shorter gaps closed
FLOOR_QUANTILE = 2.0  # percent of frames allowed below the floor (glitches, a toe through it)
SPEED_WINDOW = 1 / 60  # seconds each side of a frame over which its speed is measured


@dataclass
class Contacts:
    """Where the feet are and when they touch the floor, frame by frame.

    ``points`` ``(F, 2, 2, 3)``: world positions of the ankle and the ball of the
    foot (sides ``l, r``; points ``foot, toes``) in the clip's units and axes (a
    foot without a toes joint has its ankle twice); ``touching`` ``(F, 2, 2)``
    which of them touch the floor; ``up`` the unit up vector; ``floor`` the
    floor's height along ``up`` (clip units); ``leg`` the leg length (clip units).
    """

    points: FloatArray
    touching: NDArray[np.bool_]
    up: FloatArray
    floor: float
    leg: float
    frame_time: float
    take_starts: tuple[int, ...] = (0,)

    @property
    def frame_count(self) -> int:
        return int(self.points.shape[0])

    @property
    def planted(self) -> NDArray[np.bool_]:
        """``(F, 2)``: left and right foot planted (ankle or ball touching)."""
        return np.asarray(self.touching.any(axis=2))

    def heights(self) -> FloatArray:
        """Height of each point above the floor ``(F, 2, 2)``, in leg lengths."""
        return (self.points @ self.up - self.floor) / self.leg

    def planted_height(self) -> float:
        """The ankles' median height above the floor while touching, in leg lengths (NaN: never)."""
        ankles = self.heights()[..., 0][self.touching[..., 0]]
        return float(np.median(ankles)) if ankles.size else float("nan")

    def slide(self, points: FloatArray | None = None) -> float:
        """Mean horizontal travel per contact frame of the touching points, in leg lengths.

        Over every pair of consecutive frames of one take in which a point touches
        at both; ``points`` ``(F, 2, 2, 3)`` measures other positions (a
        retarget's feet, in this clip's units and axes) over these contacts.
        """
        points = self.points if points is None else points
        step = np.diff(points, axis=0)
        step -= (step @ self.up)[..., None] * self.up
        both = self.touching[1:] & self.touching[:-1]
        both[[t - 1 for t in self.take_starts if t > 0]] = False
        if not both.any():
            return 0.0
        return float(np.linalg.norm(step, axis=-1)[both].mean()) / self.leg


def find_contacts(clip: Clip | Pose, mapping: Mapping[str, str | None] | None = None, *, low: float = LOW,
                  slow: float = SLOW, shortest: float = SHORTEST, world: World | None = None) -> Contacts:
    """The feet's contacts in ``clip`` (see the module notes); ``mapping`` as :func:`.naming.map_skeleton` gives.

    ``low`` (leg lengths), ``slow`` (leg lengths per second) and ``shortest``
    (seconds) are the thresholds; ``world``: the clip's forward kinematics where
    the caller has them.  A skeleton without hips, a head or spine joint, and
    both legs down to the feet raises ``ValueError`` naming them.
    """
    skeleton = clip.skeleton
    mapping = map_skeleton(skeleton) if mapping is None else mapping
    index = {c: skeleton.index(n) for n, c in mapping.items() if c is not None}
    needed = ["hips"] + [f"{j}_{s}" for s in SIDES for j in LEG_JOINTS]
    missing = [c for c in needed if c not in index]
    top = next((index[c] for c in TOP_JOINTS if c in index), None)
    if missing or top is None:
        raise ValueError("contacts need hips, a spine or head joint and both legs down to the feet; missing: "
                         + ", ".join(missing + ([] if top is not None else ["head"])))
    pose = forward_kinematics(clip, standing_joints(skeleton.parents, index)) if world is None else world
    positions = pose.positions
    feet = [[index[f"foot_{s}"], index.get(f"toes_{s}", index[f"foot_{s}"])] for s in SIDES]
    points = positions[:, np.array(feet)]
    up = up_axis(positions[:, top] - positions[:, index["hips"]])
    leg = leg_length(positions, [[index[f"{j}_{s}"] for j in LEG_JOINTS] for s in SIDES])
    floor = floor_height(sole_points(clip, pose, [f[0] for f in feet]), up)
    takes = tuple(clip.take_starts())
    touching = touching_floor(points, up, leg, clip.frame_time, low=low, slow=slow, shortest=shortest,
                              take_starts=takes)
    return Contacts(points, touching, up, floor, leg, clip.frame_time, takes)


def up_axis(hips_to_head: FloatArray) -> FloatArray:
    """The signed world axis nearest the mean direction of ``hips_to_head`` ``(F, 3)``: the clip's up."""
    lengths = np.linalg.norm(hips_to_head, axis=-1, keepdims=True)
    mean = (hips_to_head / np.where(lengths > 0, lengths, 1.0)).mean(axis=0)
    axis = int(np.argmax(np.abs(mean)))
    up = np.zeros(3)
    up[axis] = 1.0 if mean[axis] >= 0 else -1.0
    return up


def leg_length(positions: FloatArray, legs: list[list[int]]) -> float:
    """Thigh + shin ``(hip, knee, ankle)`` joints per leg, median over frames, mean of the legs."""
    total = 0.0
    for hip, knee, ankle in legs:
        total += float(np.median(np.linalg.norm(positions[:, knee] - positions[:, hip], axis=-1)
                                 + np.linalg.norm(positions[:, ankle] - positions[:, knee], axis=-1)))
    return total / len(legs)


def standing_joints(parents: list[int], index: Mapping[str, int]) -> list[int]:
    """The joints contacts and planted feet read (of ``index``, canonical joint -> joint): the hips, the
    trunk up to the head, the legs and every joint below the ankles (forward kinematics of these suffices)."""
    legs = [index[c] for c in ["hips", *TOP_JOINTS] + [f"{j}_{s}" for s in SIDES for j in LEG_JOINTS] if c in index]
    return legs + _below(parents, [index[f"foot_{s}"] for s in SIDES if f"foot_{s}" in index])


def _below(parents: list[int], feet: list[int]) -> list[int]:
    """``feet`` and every joint below them, in order."""
    below = set(feet)
    for joint, parent in enumerate(parents):
        if parent in below:
            below.add(joint)
    return sorted(below)


def sole_points(clip: Clip | Pose, pose: World, feet: list[int]) -> FloatArray:
    """World positions ``(F, n, 3)`` of every joint and end site from the ankles down."""
    joints = _below(clip.skeleton.parents, feet)
    sites = end_site_positions(clip, pose, joints)
    return np.concatenate([pose.positions[:, joints], *sites], axis=1)


def floor_height(points: FloatArray, up: FloatArray) -> float:
    """The floor's height along ``up``: the lowest of ``points`` ``(F, n, 3)`` per frame, at a low quantile
    over frames (a few glitches or a toe through the floor do not lower it)."""
    lowest = (points @ up).min(axis=1)
    return float(np.percentile(lowest, FLOOR_QUANTILE))


def touching_floor(points: FloatArray, up: FloatArray, leg: float, frame_time: float, *, low: float = LOW,
                   slow: float = SLOW, shortest: float = SHORTEST,
                   take_starts: tuple[int, ...] = (0,)) -> NDArray[np.bool_]:
    """Which points ``(F, ...)`` of ``points`` ``(F, ..., 3)`` touch the floor: low and slow (see the module notes).

    Each point's lowest level is its own low quantile of heights in the take; speeds are
    central differences over about ``SPEED_WINDOW`` each side, within the take
    (``take_starts``: each take's first frame).
    """
    frames = points.shape[0]
    heights = points @ up
    starts = np.array(sorted({0, *(t for t in take_starts if t < frames)}))
    ends = np.append(starts[1:], frames)
    level = np.empty_like(heights)
    for first, stop in zip(starts, ends):  # each take its own floor
        level[first:stop] = np.percentile(heights[first:stop], FLOOR_QUANTILE, axis=0)
    near = heights <= level + low * leg
    reach = max(1, round(SPEED_WINDOW / frame_time))
    take = np.searchsorted(starts, np.arange(frames), side="right") - 1
    ahead = np.minimum(np.arange(frames) + reach, ends[take] - 1)
    behind = np.maximum(np.arange(frames) - reach, starts[take])
    span = np.maximum(ahead - behind, 1) * frame_time
    shape = (frames,) + (1,) * (points.ndim - 2)
    speed = np.linalg.norm(points[ahead] - points[behind], axis=-1) / span.reshape(shape) / leg
    still = speed <= slow if frames > 1 else np.ones_like(near)
    return _without_short_runs(near & still, max(1, round(shortest / frame_time)))


def _without_short_runs(flags: NDArray[np.bool_], shortest: int) -> NDArray[np.bool_]:
    """``flags`` ``(F, ...)`` with gaps shorter than ``shortest`` frames closed, then runs as short dropped."""
    if shortest <= 1 or flags.shape[0] == 0:
        return flags
    closed = ~_drop_short(~flags, shortest, keep_edges=True)
    return _drop_short(closed, shortest, keep_edges=False)


def _drop_short(flags: NDArray[np.bool_], shortest: int, *, keep_edges: bool) -> NDArray[np.bool_]:
    """Runs of ``True`` shorter than ``shortest`` frames set ``False`` (along the first axis, every column
    apart); with ``keep_edges`` runs touching the first or last frame are kept."""
    frames = flags.shape[0]
    flat = flags.reshape(frames, -1).T  # (columns, F)
    begins = flat & ~np.concatenate([np.zeros((flat.shape[0], 1), dtype=bool), flat[:, :-1]], axis=1)
    run = np.cumsum(begins, axis=1) + (np.arange(flat.shape[0]) * (frames + 1))[:, None]  # unique per column
    run = np.where(flat, run, -1)
    lengths = np.bincount(run[flat], minlength=flat.shape[0] * (frames + 1))
    short = flat & (lengths[np.maximum(run, 0)] < shortest)
    if keep_edges:
        edge_runs = np.concatenate([run[:, :1], run[:, -1:]], axis=1)
        short &= ~np.isin(run, edge_runs[edge_runs >= 0])
    return np.asarray((flat & ~short).T.reshape(flags.shape))
