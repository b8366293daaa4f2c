"""Which frames of a library look alike: the motion graph's distance and the matching of frame pairs.

The distance (ours, in the thesis's form ``D = d(pose) + nu * d(velocity)``)
compares the weighted joints as point clouds (Kovar et al. 2002).  Every clip
is first put on the canonical skeleton (:func:`.retarget.to_canonical`, one
body for all) and resampled to one frame rate.  Each frame's joints are taken
about their weighted centroid, with their velocities; the second frame is
turned about the vertical by the angle that brings it closest to the first, so

    D(a, b) = min over theta of  sum_k w_k (|p_ak - R(theta) p_bk|^2 + nu * tau^2 |v_ak - R(theta) v_bk|^2)
                                 / (sum_k w_k * s^2)

with ``s`` 0.15 of the reference body's stature (26 cm) and ``tau`` a tenth of a
second (``data/motion_graph.json``).  ``D`` is 0 for identical frames and does
not change when a clip is turned about the vertical or moved on the ground (or
stands on a floor at another height).  With points as complex numbers ``x + iz``
the best turn has a closed form, so all distances come from two Gram products
(one complex, one real) computed in blocks of rows, never as a dense matrix.

:func:`matched_pairs` keeps the pairs close enough that the rules allow
(:class:`Rules`: the gap within a clip, the feet's contacts) and, with local
maxima, only the best of similar ones: better than their 8 neighbours, then
than any other within ``similar_within_seconds`` of both frames.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..kinematics import forward_kinematics
from ..naming import CANONICAL_JOINTS
from ..pose import Pose
from ..rotations import FloatArray

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

SETTINGS = Path(__file__).parents[1] / "data" / "motion_graph.json"
REFERENCE_BODY = Path(__file__).parents[1] / "data" / "reference_body.json"
BLOCK_ELEMENTS = 1 << 22  # distances per block of rows: bounds the memory a build takes (about 12 bytes each)


@cache
def defaults() -> dict[str, Any]:
    """The motion graph's defaults (``data/motion_graph.json``) with the reference stature."""
    settings = dict(json.loads(SETTINGS.read_text(encoding="utf-8")))
    settings["stature_m"] = float(json.loads(REFERENCE_BODY.read_text(encoding="utf-8"))["stature_m"])
    return settings


def joint_weights(weights: Mapping[str, float] | Sequence[float] | None = None) -> FloatArray:
    """One weight per canonical joint: the defaults, a mapping from canonical joint names, or a sequence."""
    if weights is None:
        weights = defaults()["joint_weights"]
    if isinstance(weights, Mapping):
        unknown = sorted(set(weights) - set(CANONICAL_JOINTS))
        if unknown:
            raise ValueError(f"weights name joints the canonical skeleton lacks: {', '.join(unknown)}")
        out = np.array([float(weights.get(name, 0.0)) for name in CANONICAL_JOINTS])
    else:
        out = np.asarray(weights, dtype=np.float64).ravel()
        if out.size != len(CANONICAL_JOINTS):
            raise ValueError(f"weights: {out.size} values for {len(CANONICAL_JOINTS)} canonical joints")
    if not np.all(np.isfinite(out)) or np.any(out < 0) or not np.any(out > 0):
        raise ValueError("weights must be finite, non-negative and not all zero")
    return out


def heading(rotations: FloatArray) -> FloatArray:
    """The turn about +Y that brings +Z onto the forward direction of quaternions ``(..., 4)`` on the ground."""
    w, x, y, z = np.moveaxis(rotations, -1, 0)
    return np.asarray(np.arctan2(2 * (x * z + w * y), 1 - 2 * (x * x + y * y)))


@dataclass
class Features:
    """What the distance compares, per frame: ``ground`` ``(N, K)`` the weighted joints' positions about
    their centroid and their scaled velocities as ``x + iz`` (each frame turned to face +Z by its hips, which
    the optimal turn makes immaterial but keeps the numbers of turned copies identical), ``height`` ``(N, K)``
    the same points' heights and vertical velocities.  Scaled so that squared differences sum to ``D``."""

    ground: NDArray[np.complex128]
    height: FloatArray

    @property
    def frame_count(self) -> int:
        return int(self.ground.shape[0])

    def squared(self) -> FloatArray:
        """``|f|^2`` per frame: ``D(a, b) = |f_a|^2 + |f_b|^2 - 2 * similarity``."""
        return np.sum(self.ground.real ** 2 + self.ground.imag ** 2, axis=1) + np.sum(self.height ** 2, axis=1)

    def costs(self, first: IntArray, second: IntArray) -> FloatArray:
        """``D`` between frame pairs, in float64 straight from the differences (0 for equal frames)."""
        out = np.empty(len(first))
        for start in range(0, len(first), 4096):
            a, b = first[start:start + 4096], second[start:start + 4096]
            product = np.einsum("pk,pk->p", np.conj(self.ground[a]), self.ground[b])
            size = np.abs(product)
            turn = np.where(size > 0, np.conj(product) / np.where(size > 0, size, 1.0), 1.0)
            ground = self.ground[a] - turn[:, None] * self.ground[b]
            height = self.height[a] - self.height[b]
            out[start:start + 4096] = (np.sum(ground.real ** 2 + ground.imag ** 2, axis=1)
                                       + np.sum(height ** 2, axis=1))
        return out

    @staticmethod
    def join(parts: Sequence[Features]) -> Features:
        parts = [p for p in parts if p.frame_count]
        return Features(np.concatenate([p.ground for p in parts]), np.concatenate([p.height for p in parts]))


def frame_features(pose: Pose, weights: FloatArray, nu: float) -> Features:
    """:class:`Features` of a canonical pose (see the module notes)."""
    settings = defaults()
    unit = settings["length_unit_in_statures"] * settings["stature_m"]
    joints = np.flatnonzero(weights > 0)
    share = np.sqrt(weights[joints] / weights[joints].sum()) / unit
    world = forward_kinematics(pose)
    positions = world.positions[:, joints]
    facing = np.exp(1j * heading(world.quaternions[:, CANONICAL_JOINTS.index("hips")]))  # forward onto +Z
    centroid = np.einsum("fjc,j->fc", positions, weights[joints] / weights[joints].sum())
    around = positions - centroid[:, None]
    if pose.frame_count > 1:
        velocity = np.gradient(positions, axis=0) * (pose.fps * settings["velocity_seconds"] * math.sqrt(nu))
    else:
        velocity = np.zeros_like(positions)
    points = np.concatenate([around, velocity], axis=1) * np.concatenate([share, share])[:, None]
    return Features((points[..., 0] + 1j * points[..., 2]) * facing[:, None], points[..., 1].copy())


# --- matching in blocks ------------------------------------------------------------------------------------


@dataclass
class Rules:
    """Which frame pairs may become transitions: the clip each frame is in, the gap within a clip, the
    feet's contact states (``None``: not compared), ``sigma`` and ``threshold``."""

    clip: IntArray
    gap: int
    contact: NDArray[np.uint8] | None
    sigma: float
    threshold: float
    continues: BoolArray = field(init=False)  # whether each frame's next frame is in the same clip

    def __post_init__(self) -> None:
        self.continues = np.append(self.clip[1:] == self.clip[:-1], False)

    @property
    def largest(self) -> float:
        """The largest ``D`` whose probability reaches the threshold (up to rounding: see :meth:`close`)."""
        return -self.sigma * math.log(self.threshold)

    def close(self, costs: FloatArray) -> BoolArray:
        """Whether pairs of these exact costs are close enough: ``exp(-D / sigma) >= threshold``."""
        return np.asarray(np.exp(-costs / self.sigma) >= self.threshold)

    def allow(self, first: IntArray, second: IntArray) -> BoolArray:
        same = self.clip[first] == self.clip[second]
        allowed = ~same | (np.abs(first - second) >= self.gap)
        if self.contact is not None:
            allowed &= self.contact[first] == self.contact[second]
        return np.asarray(allowed)


# float32 distances are trusted to within this share of |f_a|^2 + |f_b|^2 (errors of at most 4.3e-7 measured
# on the corpus library); closer calls are made again in float64 from the features, so the pairs kept do
# not depend on how the rows fall into blocks
MARGIN = 2.5e-6
TIE = 1e-12  # float64 costs this close are equal, and the pair first in frame order wins


def dense_matches(features: Features, rules: Rules, local_maxima: bool,
           first_column: int = 0) -> tuple[IntArray, IntArray, FloatArray]:
    """Frame pairs ``a < b`` (``b >= first_column``) close enough that the rules allow and, with
    ``local_maxima``, none of whose 8 neighbours allowed by the rules is closer; with their float64 costs.

    ``D = S_a + S_b - 2 (|g_ab| + h_ab)`` with ``S = |f|^2``, ``g`` the complex Gram product of the ground
    points and ``h`` the real one of the heights, a block of rows at a time (columns from the block's
    first row on: ``D`` is symmetric), in float32.  ``D <= largest + margin`` is ``|g| >= bound`` with
    ``bound = ((1 - 2 MARGIN) (S_a + S_b) - largest) / 2 - h``, one real product with two extra columns;
    ``|g| - bound`` then estimates ``(largest - D) / 2`` to within ``MARGIN (S_a + S_b)``.
    """
    count = features.frame_count
    ground = features.ground.astype(np.complex64)
    conjugate = np.conj(ground)
    squared = features.squared()
    half = ((1 - 2 * MARGIN) * squared - 0.5 * rules.largest) / 2
    ones = np.ones((count, 1))
    rows_height = np.hstack([-features.height, half[:, None], ones]).astype(np.float32)
    columns_height = np.hstack([features.height, ones, half[:, None]]).astype(np.float32)
    judge = _Judge(features, rules, squared)
    firsts: list[IntArray] = []
    seconds: list[IntArray] = []
    costs: list[FloatArray] = []
    start = 0
    while start < count - 1:
        column = max(start + 1, first_column) - 1
        stop = min(count, start + max(16, BLOCK_ELEMENTS // (count - column) - 2))
        top, bottom = max(0, start - 1), min(count, stop + 1)
        size = np.abs(conjugate[top:bottom] @ ground[column:].T)
        size -= rows_height[top:bottom] @ columns_height[column:].T  # |g| - bound
        a, b = np.nonzero(size[start - top:stop - top] >= 0)
        a += start
        b += column
        keep = (b > a) & (b >= first_column)
        a, b = a[keep], b[keep]
        keep = rules.allow(a, b)
        a, b = a[keep], b[keep]
        value = judge.value(a, b, size[a - top, b - column])
        keep, cost = judge.close(a, b, value)
        a, b, value, cost = a[keep], b[keep], value[keep], cost[keep]
        if local_maxima and len(a):
            keep = judge.no_better_neighbour(a, b, value, cost, size, (top, column))
            a, b, cost = a[keep], b[keep], cost[keep]
        firsts.append(a)
        seconds.append(b)
        costs.append(cost)
        start = stop
    if not firsts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    a, b = np.concatenate(firsts).astype(np.int64), np.concatenate(seconds).astype(np.int64)
    cost = np.concatenate(costs)
    exact = np.isnan(cost)
    cost[exact] = features.costs(a[exact], b[exact])
    return a, b, cost


class _Judge:
    """Float32 estimates of ``(largest - D) / 2`` decide where they are clear; the rest is computed again in
    float64 (``NaN`` cost: not computed yet)."""

    def __init__(self, features: Features, rules: Rules, squared: FloatArray) -> None:
        self.features, self.rules, self.squared = features, rules, squared

    def value(self, a: IntArray, b: IntArray, estimate: NDArray[np.float32]) -> FloatArray:
        """``(largest - D) / 2`` from ``|g| - bound``."""
        return np.asarray(estimate - MARGIN * (self.squared[a] + self.squared[b]))

    def doubt(self, a: IntArray, b: IntArray) -> FloatArray:
        return np.asarray(MARGIN * (self.squared[a] + self.squared[b]))

    def close(self, a: IntArray, b: IntArray, value: FloatArray) -> tuple[BoolArray, FloatArray]:
        """Which pairs are close enough, and the float64 costs computed to tell (``NaN`` elsewhere)."""
        doubt = self.doubt(a, b)
        unsure = np.abs(value) <= doubt
        cost = np.full(len(a), np.nan)
        cost[unsure] = self.features.costs(a[unsure], b[unsure])
        return (value > doubt) | (unsure & self.rules.close(np.nan_to_num(cost, nan=np.inf))), cost

    def no_better_neighbour(self, a: IntArray, b: IntArray, value: FloatArray, cost: FloatArray,
                            block: NDArray[np.float32], corner: tuple[int, int]) -> BoolArray:
        """Whether no allowed, close enough candidate among each pair's 8 neighbours is closer (``block``:
        ``|g| - bound`` of the block whose first row and column are ``corner``).  Pairs a neighbour beats
        clearly go first; float64 costs are computed only for the close calls of the others."""
        top, column = corner
        width = block.shape[1]
        flat = block.ravel()
        at = (a - top) * width + (b - column)
        mine = self.doubt(a, b)
        beaten = np.zeros(len(a), dtype=bool)
        close_calls: list[tuple[IntArray, IntArray, IntArray]] = []
        for step_a, step_b, valid in neighbours(self.rules, a, b):
            index = np.flatnonzero(valid)
            near_a, near_b = a[index] + step_a, b[index] + step_b
            other = self.value(near_a, near_b, flat.take(at[index] + (step_a * width + step_b)))
            doubt = self.doubt(near_a, near_b)
            lead = other - value[index]
            spread = doubt + mine[index]
            beaten[index[(other > doubt) & (lead > spread)]] = True
            unsure = (other >= -doubt) & (lead >= -spread) & ~((other > doubt) & (lead > spread))
            close_calls.append((index[unsure], near_a[unsure], near_b[unsure]))
        for index, near_a, near_b in close_calls:
            left = ~beaten[index]
            index, near_a, near_b = index[left], near_a[left], near_b[left]
            if len(index):
                beaten[index[self._closer(near_a, near_b, a[index], b[index], cost, index)]] = True
        return ~beaten

    def _closer(self, a: IntArray, b: IntArray, first: IntArray, second: IntArray, cost: FloatArray,
                index: IntArray) -> BoolArray:
        """Whether pairs ``(a, b)`` are close enough and closer than pairs ``(first, second)``, in float64
        (ties within ``TIE``: the pair first in frame order); ``cost[index]`` holds the second pairs'
        costs where known (``NaN`` elsewhere: computed and kept)."""
        theirs = self.features.costs(a, b)
        known = cost[index]
        missing = np.isnan(known)
        known[missing] = self.features.costs(first[missing], second[missing])
        cost[index[missing]] = known[missing]
        return beats(self.rules, (a, b, theirs), (first, second, known))


def beats(rules: Rules, pairs: tuple[IntArray, IntArray, FloatArray],
          others: tuple[IntArray, IntArray, FloatArray]) -> BoolArray:
    """Whether ``pairs`` (first frames, second frames, float64 costs) are close enough and closer than
    ``others`` (ties within ``TIE``: the pair first in frame order)."""
    a, b, theirs = pairs
    first, second, known = others
    earlier = (a < first) | ((a == first) & (b < second))
    wins = (theirs < known - TIE) | ((np.abs(theirs - known) <= TIE) & earlier)
    return np.asarray(rules.close(theirs) & wins)


def neighbours(rules: Rules, a: IntArray, b: IntArray) -> Iterator[tuple[int, int, BoolArray]]:
    """The 8 neighbours ``(a + step_a, b + step_b)`` of pairs ``(a, b)``, one step at a time, with whether the
    rules allow each (both frames in their pair's clips, the gap within a clip, the same contacts)."""
    same = rules.clip[a] == rules.clip[b]
    steps_a = {-1: rules.continues[np.maximum(a - 1, 0)] & (a > 0), 0: None, 1: rules.continues[a]}
    steps_b = {-1: rules.continues[b - 1], 0: None, 1: rules.continues[b]}
    for step_a, valid_a in steps_a.items():
        for step_b, valid_b in steps_b.items():
            if not (step_a or step_b):
                continue
            near_a, near_b = a + step_a, b + step_b
            valid = (np.abs(near_b - near_a) >= rules.gap) | ~same
            for part in (valid_a, valid_b):
                if part is not None:
                    valid &= part
            if rules.contact is not None:
                valid &= rules.contact.take(near_a, mode="clip") == rules.contact.take(near_b, mode="clip")
            yield step_a, step_b, valid


def _best_within(a: IntArray, b: IntArray, cost: FloatArray, clip: IntArray, radius: int) -> BoolArray:
    """Whether no other pair within ``radius`` frames of both frames (in the same two clips) is closer (ties
    within ``TIE``: the pair first in frame order): the best of similar transitions.  Pairs are binned in
    cells ``radius`` wide, so each is compared only with those in its own and the 8 cells around."""
    count = len(a)
    if count == 0:
        return np.ones(0, dtype=bool)
    width = max(radius, 1)
    cell_a, cell_b = a // width, b // width
    across = int(cell_b.max()) + 3
    keys = (cell_a + 1) * across + cell_b + 1
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    beaten = np.zeros(count, dtype=bool)
    for step_a, step_b in [(s, t) for s in (-1, 0, 1) for t in (-1, 0, 1)]:
        wanted = keys + step_a * across + step_b
        low = np.searchsorted(sorted_keys, wanted, side="left")
        sizes = np.searchsorted(sorted_keys, wanted, side="right") - low
        total = int(sizes.sum())
        if total == 0:
            continue
        mine = np.repeat(np.arange(count), sizes)
        position = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes) + np.repeat(low, sizes)
        other = order[position]
        first = (a[other] < a[mine]) | ((a[other] == a[mine]) & (b[other] < b[mine]))
        closer = (cost[other] < cost[mine] - TIE) | ((np.abs(cost[other] - cost[mine]) <= TIE) & first)
        hit = ((np.abs(a[other] - a[mine]) <= radius) & (np.abs(b[other] - b[mine]) <= radius)
               & (clip[a[other]] == clip[a[mine]]) & (clip[b[other]] == clip[b[mine]]) & closer)
        beaten[mine[hit]] = True
    return ~beaten


def matched_pairs(features: Features, rules: Rules, local_maxima: bool, fps: float, first_column: int = 0,
                  match: Callable[[Features, Rules, bool, int], tuple[IntArray, IntArray, FloatArray]] | None = None,
                  ) -> tuple[IntArray, IntArray, FloatArray]:
    """Matched pairs ``a < b`` (``b >= first_column``) and their float64 costs, within the threshold:
    candidates from ``match`` (:func:`.nearest.nearby_matcher`'s) or all against all, then the best of
    similar ones."""
    a, b, costs = (match or dense_matches)(features, rules, local_maxima, first_column)
    if local_maxima:
        radius = round(defaults()["similar_within_seconds"] * fps)
        keep = _best_within(a, b, costs, rules.clip, radius)
        a, b, costs = a[keep], b[keep], costs[keep]
    return a, b, costs
