"""Key reduction's search: shared frames, then keys dropped joint by joint, then verification.

1. Shared frames: one set of frames for every joint, each segment as long as
   true forward kinematics of every head and tail allows (greedy, many
   windows searched side by side).  Joints that never move keep their first
   and last frames only.
2. Per joint, leaves first: the tolerance left at each frame for the points a
   joint moves (the bound minus a bound on their present error) is spent on
   that joint: its keys are dropped, cheapest first, while turning it by
   ``θ`` (which moves a point ``r`` away by at most ``2 r sin(θ/2)``) stays
   within what is left.  Joints of one height have disjoint subtrees and are
   done together.
3. Verification with true forward kinematics at every frame; where a point is
   out of bounds, its whole chain gets a key at that frame, until none is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ..rotations import FloatArray
from .curves import IntArray, interior, lerp, segment_worst, spans, stacked_spans, unbent
from .points import BonePoints

Fits = Callable[[IntArray, IntArray], NDArray[np.bool_]]

_WINDOW = 64  # frames per greedy window (windows run side by side)
_CHUNK = 4096  # frames per forward-kinematics batch (bounds temporary memory)


def _windows(frame_count: int, width: int = _WINDOW) -> tuple[IntArray, IntArray]:
    starts = np.arange(0, frame_count - 1, width, dtype=np.int64)
    return starts, np.minimum(starts + width, frame_count - 1)


def _greedy(windows: tuple[IntArray, IntArray], fits: Fits) -> IntArray:
    """Keys over each window ``[start, end]``: from each key, the furthest next key that ``fits``.

    ``fits(a, b)`` says for each segment from ``a`` to ``b`` whether its inside
    frames stay within bounds (one-frame segments have none).  Each step tries
    the last segment's length, doubles it while it fits, then bisects; all
    windows take their steps together.  Returns the sorted keys, window ends included.
    """
    starts, ends = windows
    current = starts.copy()
    length = np.full(len(starts), 2, dtype=np.int64)
    found = [starts, ends]
    while True:
        lanes = np.flatnonzero(current < ends)
        if not len(lanes):
            break
        a, end = current[lanes], ends[lanes]
        good = np.minimum(a + 1, end)
        bad = np.full(len(lanes), -1, dtype=np.int64)
        probe = np.minimum(a + np.maximum(length[lanes], 2), end)
        testing = good < end
        while testing.any():
            which = np.flatnonzero(testing)
            ok = fits(a[which], probe[which])
            good[which[ok]] = probe[which[ok]]
            bad[which[~ok]] = probe[which[~ok]]
            testing[which[~ok]] = False
            testing &= good < end
            probe = np.minimum(a + 2 * (probe - a), end)
        searching = bad > good + 1
        while searching.any():
            which = np.flatnonzero(searching)
            middle = (good[which] + bad[which]) // 2
            ok = fits(a[which], middle)
            good[which[ok]] = middle[ok]
            bad[which[~ok]] = middle[~ok]
            searching = bad > good + 1
        length[lanes] = good - a
        current[lanes] = good
        found.append(good)
    return np.unique(np.concatenate(found))


def _cheaper(price: FloatArray, tie: FloatArray, neighbour: IntArray) -> NDArray[np.bool_]:
    """Whether each price is below its neighbour's (none: ``-1``), ties broken by ``tie``."""
    other = np.where(neighbour >= 0, price[neighbour], np.inf)
    return (price < other) | ((price == other) & (tie < np.where(neighbour >= 0, tie[neighbour], 2.0)))


def shared_frames(points: BonePoints, bound: float) -> IntArray:
    """Step 1: one set of frames for every joint, each segment as long as true forward kinematics of
    every point allows (every joint interpolated from a key to the next)."""
    def worst(a: IntArray, b: IntArray) -> FloatArray:
        segment, at, weight, offsets = interior(a, b)
        distance = np.empty(len(at))
        for start in range(0, len(at), _CHUNK):
            part = slice(start, start + _CHUNK)
            span = (a[segment[part]], b[segment[part]], weight[part])
            distance[part] = points.distances(at[part], span).max(axis=0)
        return segment_worst(distance, offsets, b - a > 1)

    def fits(a: IntArray, b: IntArray) -> NDArray[np.bool_]:
        # The middle frame first (errors peak near it); only segments that pass it are checked whole.
        middle = (a + b) // 2
        ok = points.distances(middle, (a, b, (middle - a) / (b - a))).max(axis=0) <= bound
        ok[ok] = worst(a[ok], b[ok]) <= bound
        return ok

    return _greedy(_windows(points.keyed.frame_count), fits)


class _Budget:
    """Step 2 for some joints with disjoint subtrees: how far each joint's points may move at each
    frame (``room``: the bound less a bound on their present ``error``) and how far dropping keys
    would move them (turning a joint by ``θ`` moves a point ``r`` away by at most ``2 r sin(θ/2)``)."""

    def __init__(self, points: BonePoints, joints: IntArray, frames: list[IntArray], error: FloatArray,
                 bound: float) -> None:
        keyed = points.keyed
        self.keyed, self.joints = keyed, joints
        count, frame_count = len(joints), keyed.frame_count
        left, right, weight = stacked_spans([frames[joint] for joint in joints], np.arange(frame_count))
        column = joints[:, None]
        self.current = keyed.local(column, lerp(keyed.values, column, left, right, weight))
        self.translation_row, self.scale_row = keyed.translation_row[joints], keyed.scale_row[joints]
        self.current_translation = (lerp(keyed.translations, np.maximum(self.translation_row, 0)[:, None], left,
                                         right, weight) if (self.translation_row >= 0).any() else None)
        self.current_scale = (lerp(keyed.scales, np.maximum(self.scale_row, 0)[:, None], left, right, weight)[0]
                              if (self.scale_row >= 0).any() else None)
        self.radius = np.zeros((count, frame_count))
        self.room = np.full((count, frame_count), bound)
        self.parent_scale = np.ones((count, frame_count))
        for row, joint in enumerate(joints):
            for point in points.affected[joint]:  # one point at a time: no (3, P, F) temporaries
                step = points.original[:, point] - points.original[:, joint]
                np.maximum(self.radius[row], np.sqrt((step * step).sum(axis=0)), out=self.radius[row])
                np.minimum(self.room[row], bound - error[point], out=self.room[row])
            if points.world_scale is not None and points.parents[joint] >= 0:
                self.parent_scale[row] = points.world_scale[points.parents[joint]]
        self.radius += 2 * bound  # points may already be up to ``bound`` away, and so may the joint
        np.maximum(self.room, 0.0, out=self.room)

    def moved(self, row: IntArray, at: IntArray, a: IntArray, b: IntArray, w: FloatArray) -> FloatArray:
        """How far the points of joint ``joints[row]`` may move at frames ``at`` if it is keyed at ``a``
        and ``b`` instead of its present keys."""
        keyed, joint = self.keyed, self.joints[row]
        turned = keyed.local(joint, lerp(keyed.values, joint, a, b, w))
        distance = _chord(turned, self.current[:, row, at]) * self.radius[row, at]
        has = self.translation_row[row] >= 0
        if self.current_translation is not None and has.any():
            step = (lerp(keyed.translations, self.translation_row[row[has]], a[has], b[has], w[has])
                    - self.current_translation[:, row[has], at[has]])
            distance[has] += np.sqrt((step * step).sum(axis=0)) * self.parent_scale[row[has], at[has]]
        has = self.scale_row[row] >= 0
        if self.current_scale is not None and has.any():
            before = self.current_scale[row[has], at[has]]
            step = lerp(keyed.scales, self.scale_row[row[has]], a[has], b[has], w[has])[0] - before
            distance[has] += np.abs(step) / np.abs(before) * self.radius[row[has], at[has]]
        return distance

    def share(self, row: IntArray, at: IntArray, a: IntArray, b: IntArray, w: FloatArray) -> FloatArray:
        """The share of the room a move takes (infinite where it does not fit)."""
        use = self.moved(row, at, a, b, w)
        free = self.room[row, at]
        return np.where(use <= free, use / np.where(free > 0, free, 1.0), np.inf)

    def cost(self, row: IntArray, a: IntArray, b: IntArray, key: IntArray) -> FloatArray:
        """Per segment, the largest share of the room its inside frames would use.  The dropped
        key's own frame is tried first: where it overflows, the price is above 1 anyway."""
        price = self.share(row, key, a, b, (key - a) / (b - a))
        open_ = np.flatnonzero(price <= 1.0)
        segment, at, w, offsets = interior(a[open_], b[open_])
        price[open_] = segment_worst(self.share(row[open_][segment], at, a[open_][segment], b[open_][segment], w),
                                     offsets, b[open_] - a[open_] > 1)
        return price


def relax(points: BonePoints, joints: IntArray, frames: list[IntArray], error: FloatArray,
          bound: float) -> list[IntArray]:
    """Step 2: drop keys of ``joints`` (their subtrees are disjoint) while their points stay within
    what they can still take, cheapest key first; ``error`` (a bound on each point's distance,
    ``(P, F)``) grows in place by what the dropped keys may add."""
    count, frame_count = len(joints), points.keyed.frame_count
    if not count:
        return frames
    budget = _Budget(points, joints, frames, error, bound)
    # A joint that fits with its first and last keys alone needs no search.
    ends = np.array([0, frame_count - 1])
    rows = np.arange(count)
    alone = budget.cost(rows, np.zeros(count, dtype=np.int64), np.full(count, frame_count - 1),
                        np.full(count, frame_count // 2)) <= 1.0
    present = [ends if alone[row] else unbent(points.keyed.curves(joint), frames[joint])
               for row, joint in enumerate(joints)]
    keys, owner, alive = _drop_cheapest(budget, present)
    result = list(frames)
    everywhere = np.arange(frame_count)
    for row, joint in enumerate(joints):
        kept = keys[alive & (owner == row)]
        if len(kept) == len(frames[joint]):
            continue
        error[points.affected[joint]] += budget.moved(np.full(frame_count, row), everywhere, *spans(kept, everywhere))
        result[joint] = kept
    return result


def _drop_cheapest(budget: _Budget, present: list[IntArray]) -> tuple[IntArray, IntArray, NDArray[np.bool_]]:
    """The joints' keys in one list, linked within each joint: drop the keys whose removal costs least
    among their neighbours', re-pricing only the neighbours of what was dropped, until none fits.
    Returns the keys, the row (joint) each belongs to and whether it is kept."""
    keys = np.concatenate(present)
    owner = np.repeat(np.arange(len(present)), [len(kept) for kept in present])
    index = np.arange(len(keys))
    first = np.r_[True, owner[1:] != owner[:-1]]
    last = np.r_[owner[1:] != owner[:-1], True]
    before, after = np.where(first, -1, index - 1), np.where(last, -1, index + 1)
    alive = np.ones(len(keys), dtype=bool)
    price = np.full(len(keys), np.inf)
    stale = (before >= 0) & (after >= 0)
    tie = (index * 2654435761 % 4294967296) / 4294967296.0  # a fixed shuffle to break ties
    while True:
        which = np.flatnonzero(stale & alive & (before >= 0) & (after >= 0))
        # Priced in batches of about _CHUNK * 16 frames inside, to bound temporary memory.
        inside = np.cumsum(keys[after[which]] - keys[before[which]])
        for batch in np.split(which, np.searchsorted(inside, np.arange(1, 1 + inside[-1] // (16 * _CHUNK))
                                                     * 16 * _CHUNK) if len(which) else []):
            price[batch] = budget.cost(owner[batch], keys[before[batch]], keys[after[batch]], keys[batch])
        stale[:] = False
        inner = alive & (before >= 0) & (after >= 0)
        own = np.where(inner, price, np.inf)
        drop = np.flatnonzero(inner & (own <= 1.0) & _cheaper(own, tie, before) & _cheaper(own, tie, after))
        if not len(drop):
            return keys, owner, alive
        alive[drop] = False
        previous, following = before[drop], after[drop]
        after[previous], before[following] = following, previous
        stale[previous] = stale[following] = True


def verify(points: BonePoints, frames: list[IntArray], bound: float) -> tuple[list[IntArray], float]:
    """Step 3: measure with true forward kinematics; key every frame where a point is out of bounds
    on its whole chain, until none is.  Returns the frames and the worst distance.

    Each round keys at least one more frame or ends, so it ends after at most one round per frame
    (a non-finite error, which no key mends, counts as out of bounds and ends it with every frame kept).
    """
    while True:
        error = points.errors(frames)
        outside = ~(error <= bound)
        worst = float(error.max(initial=0.0))
        if not outside.any():
            return frames, worst
        extra: list[list[IntArray]] = [[] for _ in frames]
        for point, row in enumerate(outside):
            if row.any():
                for joint in points.skeleton.chain(int(points.point_joint[point])):
                    extra[joint].append(np.flatnonzero(row))
        grown = [np.union1d(kept, np.concatenate(more)) if more else kept for kept, more in zip(frames, extra)]
        if sum(len(kept) for kept in grown) == sum(len(kept) for kept in frames):
            return grown, worst
        frames = grown


def _chord(a: FloatArray, b: FloatArray) -> FloatArray:
    """``2 sin(θ/2)`` for the angle ``θ`` between unit quaternions ``(4, ...)``: how far a point
    at distance 1 from the joint moves between the two rotations."""
    d2 = np.minimum(((a - b) ** 2).sum(axis=0), ((a + b) ** 2).sum(axis=0))
    return np.sqrt(d2 * np.maximum(4.0 - d2, 0.0))
