"""Keyed curves: which keys a curve needs, and linear interpolation between kept keys."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..rotations import FloatArray

IntArray = NDArray[np.int64]
Span = tuple[IntArray, IntArray, FloatArray]  # frames either side and the weight of the right one

STRAIGHT = 1e-9  # a key this near (relative to its curve's size) the line through its neighbours changes nothing


def curve_keys(values: FloatArray, frames: IntArray) -> IntArray:
    """Of the keys at ``frames`` on a curve with ``values`` (one per clip frame), those that matter:
    one key for a constant curve, none inside a straight run (both within :func:`straightness`)."""
    if len(values) and np.ptp(values) <= straightness(values[None])[0, 0]:
        return frames[:1]
    return unbent(values[None], frames)


def straightness(curves: FloatArray) -> FloatArray:
    """How far ``(k, 1)`` from straight a value of each curve ``(k, F)`` may be and still change
    nothing: :data:`STRAIGHT` of the curve's size (range plus magnitude), or of 1 for tiny curves
    (rounding noise on a constant component must not count as a bend)."""
    size = np.ptp(curves, axis=1) + np.abs(curves).max(axis=1, initial=0.0) + 1.0
    return STRAIGHT * size[:, None]


def unbent(curves: FloatArray, frames: IntArray) -> IntArray:
    """The keys at ``frames`` left when those inside runs where every curve ``(k, F)`` is straight
    go: dropping them changes none of the curves (beyond :func:`straightness`)."""
    if len(frames) < 3:
        return frames
    tolerance = straightness(curves)
    slope = np.diff(curves[:, frames], axis=1) / np.diff(frames)
    keep = np.ones(len(frames), dtype=bool)
    keep[1:-1] = (np.abs(np.diff(slope, axis=1)) * np.diff(frames)[1:] > tolerance).any(axis=0)
    # A run loses its inside keys only if every value in it lies on the chord between its ends.
    ends = np.flatnonzero(keep)
    for run in np.flatnonzero(np.diff(ends) > 1):
        start, stop = frames[ends[run]], frames[ends[run + 1]]
        chord = np.linspace(curves[:, start], curves[:, stop], stop - start + 1, axis=1)
        if (np.abs(curves[:, start:stop + 1] - chord) > tolerance).any():
            keep[ends[run] + 1:ends[run + 1]] = True
    return frames[keep]


def interpolate(values: FloatArray, frames: IntArray, at: IntArray) -> FloatArray:
    """Linear interpolation at frames ``at`` of the keys ``values[frames]`` (held beyond the ends)."""
    left, right, weight = spans(frames, at)
    share = weight.reshape((-1,) + (1,) * (values.ndim - 1))
    return np.asarray(values[left] * (1.0 - share) + values[right] * share, dtype=np.float64)


def spans(frames: IntArray, at: IntArray) -> Span:
    """For each frame in ``at``: the kept frames either side and the weight of the right one."""
    if len(frames) == 1:
        same = np.full(len(at), frames[0], dtype=np.int64)
        return same, same, np.zeros(len(at))
    right_index = np.clip(np.searchsorted(frames, at), 1, len(frames) - 1)
    left, right = frames[right_index - 1], frames[right_index]
    weight: FloatArray = np.clip((at - left) / (right - left), 0.0, 1.0)
    return left, right, weight


def stacked_spans(frames: list[IntArray], at: IntArray) -> Span:
    """:func:`spans` of every joint's kept frames, as ``(J, n)`` arrays."""
    found = [spans(kept, at) for kept in frames]
    return np.array([x[0] for x in found]), np.array([x[1] for x in found]), np.array([x[2] for x in found])


def interior(starts: IntArray, ends: IntArray, with_end: bool = False
             ) -> tuple[IntArray, IntArray, FloatArray, IntArray]:
    """The frames strictly inside each segment (and its end, ``with_end``): segment index, frame,
    weight of the end, and the offset of each non-empty segment's first frame (for ``reduceat``)."""
    lengths = np.maximum(ends - starts - (0 if with_end else 1), 0)
    segment = np.repeat(np.arange(len(starts)), lengths)
    offsets = np.cumsum(lengths) - lengths
    frames = starts[segment] + 1 + np.arange(int(lengths.sum())) - offsets[segment]
    weight = (frames - starts[segment]) / (ends - starts)[segment]
    return segment, frames, weight, offsets[lengths > 0]


def segment_worst(ratio: FloatArray, offsets: IntArray, filled: NDArray[np.bool_]) -> FloatArray:
    """Largest ``ratio`` per segment; ``filled`` marks the segments that have frames (others: 0)."""
    worst = np.zeros(len(filled))
    if len(ratio):
        worst[filled] = np.maximum.reduceat(ratio, offsets)
    return worst


def lerp(series: FloatArray, rows: IntArray, left: IntArray, right: IntArray, weight: FloatArray) -> FloatArray:
    """``series[:, rows, left]`` towards ``series[:, rows, right]`` by ``weight`` (indices broadcast);
    ``series`` is component-major, ``(k, rows, frames)``.  Gathers by one flat index (faster)."""
    flat = series.reshape(series.shape[0], -1)
    base = rows * series.shape[2]
    return np.take(flat, base + left, axis=1) * (1 - weight) + np.take(flat, base + right, axis=1) * weight
