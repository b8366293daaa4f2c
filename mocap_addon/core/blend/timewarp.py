"""Dynamic time warping: every frame of one sequence paired with a frame of another, in order.

Every frame of ``a`` is kept and paired with a (fractional) frame of ``b``,
monotone and slope-limited: the steps (1, 1), (1, 2) and (2, 1) all advance
``a``, so ``b`` plays at between half and double speed and no frame is held
or skipped for long.  The cost counts each frame of ``a`` once, its squared
feature distance ``c`` to the frame of ``b`` it pairs with (the asymmetric
pattern; the middle frame of a (2, 1) step pairs half way)::

    g(i, j) = c(i, j) + min(g(i-1, j-1),
                            g(i-1, j-2),
                            g(i-2, j-1) + (c(i-1, j-1) + c(i-1, j)) / 2)

so paths over longer or shorter stretches of ``b`` compare fairly, which is
what open ends need: with ``open_begin`` the first frame of ``a`` may pair
with any frame of ``b``, with ``open_end`` the last may.  Both ends paired is
the classic warp; both open is subsequence alignment (the part of ``b`` that
best matches all of ``a``).

Every step advances ``a``, so a row of the cost depends only on the two rows
before it: the Python loop runs over rows, each a few numpy operations over
the *band*, the cells a slope-limited path between the allowed ends can
visit, with costs computed block by block from one matrix product.  Memory is
one byte per band cell; beyond :data:`MAX_CELLS` the warp is first found on
every k-th frame of both sequences, then again in a band of a few frames
about that coarse path (coarse to fine), so memory stays bounded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..rotations import FloatArray

BLOCK_CELLS = 2_000_000  # costs computed at once at most
ROWS_PER_BLOCK = 256
MAX_CELLS = 8_000_000  # band cells solved at full resolution; beyond, coarse to fine
SLACK = 2  # frames either side of the coarse path searched, beyond the coarse step
STILL = 0.05  # a sequence whose last frames change under this share of its typical change is still at its end
LOOP_SLACK = 0.1  # a longer loop joins within this share of the typical squared distance of the best join

# Backtracking: (rows back, columns back) of each step.
_STEPS = ((1, 1), (1, 2), (2, 1))


def band(count_a: int, count_b: int, open_begin: bool = False,
         open_end: bool = False, begin_within: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For each row ``i`` of ``a``, the first and last column of ``b`` a slope-limited path between the
    allowed ends can visit (both non-decreasing; empty where only a (2, 1) step passes); an open begin
    ``begin_within`` the first that many columns.  Raises ``ValueError`` where there is no such path."""
    rows = np.arange(count_a)
    left = count_a - 1 - rows
    low = np.zeros(count_a, dtype=np.int64) if open_begin else (rows + 1) // 2
    if not open_end:
        low = np.maximum(low, count_b - 1 - 2 * left)
    high = count_b - 1 - (left + 1) // 2
    if not open_begin:
        high = np.minimum(high, 2 * rows)
    elif begin_within is not None:
        high = np.minimum(high, max(int(begin_within), 1) - 1 + 2 * rows)
    # A path's steps advance b by between half and double what they advance a (a row may be the middle of a
    # (2, 1) step, so its band may be empty).
    fits = count_b - 1 >= count_a // 2 and (open_begin or open_end or count_a - 1 <= 2 * (count_b - 1))
    fits = fits and (open_begin or open_end or count_b - 1 <= 2 * (count_a - 1))
    if count_a == 0 or count_b == 0 or not fits:
        ends = {(False, False): "with both ends paired", (True, False): "ending together",
                (False, True): "starting together", (True, True): "at all"}[(open_begin, open_end)]
        raise ValueError(f"cannot warp {count_a} frames onto {count_b} {ends}: a warp plays b at between half "
                         "and double speed")
    return low.astype(np.int64), high.astype(np.int64)


def time_warp(a: FloatArray, b: FloatArray, *, open_begin: bool = False, open_end: bool = False,
              begin_within: int | None = None) -> FloatArray:
    """For every row of ``a`` ``(Fa, D)``, the (fractional) row of ``b`` ``(Fb, D)`` it pairs with.

    With both ends paired (the default) the first rows pair and the last rows
    pair; ``open_begin`` / ``open_end`` let ``a``'s first / last row pair with
    any row of ``b`` (see the module notes; an open begin only among the first ``begin_within`` rows,
    when given).  The warp runs straight between the
    ends of the path's steps, so its slope stays within [1/2, 2].  Raises
    ``ValueError`` where no such path exists (one sequence more than twice the
    other with both ends paired, ``b`` under half of ``a`` with any).
    """
    a = np.asarray(a, dtype=np.float64).reshape(len(a), -1)
    b = np.asarray(b, dtype=np.float64).reshape(len(b), -1)
    count_a, count_b = len(a), len(b)
    low, high = band(count_a, count_b, open_begin, open_end, begin_within)
    cells = int(np.sum(high - low + 1))
    guess = None
    if cells > MAX_CELLS:
        factor = int(np.ceil(np.sqrt(cells / MAX_CELLS)))
        rows_a, rows_b = _every(count_a, factor), _every(count_b, factor)
        coarse = time_warp(a[rows_a], b[rows_b], open_begin=open_begin, open_end=open_end,
                           begin_within=None if begin_within is None else -(-begin_within // factor))
        guess = np.interp(np.arange(count_a), rows_a, np.interp(coarse, np.arange(len(rows_b)), rows_b))
        reach = factor + SLACK
        low = np.maximum(low, np.floor(guess).astype(np.int64) - reach)
        high = np.minimum(high, np.ceil(guess).astype(np.int64) + reach)
    choices, last = _accumulate(a, b, low, high)
    end = int(low[-1] + np.argmin(last)) if open_end else count_b - 1
    if not np.isfinite(last[end - low[-1]]):
        if guess is None:
            raise AssertionError("time warp found no path within its band")
        return guess  # the band about the coarse path held no slope-limited path: keep the coarse one
    rows, columns = _backtrack(choices, low, count_a - 1, end)
    return np.interp(np.arange(count_a), rows, columns)


def _every(count: int, factor: int) -> np.ndarray:
    """Every ``factor``-th index of ``count``, the first and last kept."""
    return np.unique(np.linspace(0, count - 1, (count - 1) // factor + 1).round().astype(np.int64))


def _accumulate(a: FloatArray, b: FloatArray, low: np.ndarray,
                high: np.ndarray) -> tuple[list[np.ndarray], FloatArray]:
    """The best step into every band cell, row by row (index into ``_STEPS``; row 0 has none), and the
    accumulated costs of the last row's band."""
    count_a, count_b = len(a), len(b)
    squares_b = np.einsum("ij,ij->i", b, b)
    # Accumulated costs of the two rows before (padded with two infinite cells on the left), and the costs
    # of the row before (padded with one).
    before = np.full(count_b + 2, np.inf)
    two_before = np.full(count_b + 2, np.inf)
    cost_before = np.full(count_b + 1, np.inf)
    choices: list[np.ndarray] = [np.zeros(1, dtype=np.int8)]
    block_cost = np.zeros((0, 0))
    block_start = block_first = block_stop = 0
    for row in range(count_a):
        if row >= block_stop:
            block_first = max(int(low[row]) - 1, 0)
            width = int(high[-1]) + 1 - block_first
            block_stop = min(row + max(1, min(ROWS_PER_BLOCK, BLOCK_CELLS // max(width, 1))), count_a)
            last = int(high[min(block_stop, count_a - 1)])
            rows = a[row:block_stop]
            block_cost = (np.einsum("ij,ij->i", rows, rows)[:, None] + squares_b[block_first: last + 1][None]
                          - 2.0 * rows @ b[block_first: last + 1].T)
            np.maximum(block_cost, 0.0, out=block_cost)
            block_start = row
        costs = np.full(count_b + 1, np.inf)  # costs[j + 1] = c(row, j)
        first, stop = max(int(low[row]) - 1, 0), int(high[min(row + 1, count_a - 1)]) + 1
        costs[first + 1: stop + 1] = block_cost[row - block_start, first - block_first: stop - block_first]
        current = np.full(count_b + 2, np.inf)
        first_column, last_column = int(low[row]), int(high[row]) + 1
        here = costs[first_column + 1: last_column + 1]
        if row == 0:  # every band cell may start a path (one cell unless the begin is open)
            current[first_column + 2: last_column + 2] = here
        else:
            diagonal = before[first_column + 1: last_column + 1]
            wide = before[first_column: last_column]
            tall = two_before[first_column + 1: last_column + 1] + 0.5 * (
                cost_before[first_column: last_column] + cost_before[first_column + 1: last_column + 1])
            best = np.minimum(diagonal, wide)
            step = (wide < diagonal).astype(np.int8)
            step[tall < best] = 2
            current[first_column + 2: last_column + 2] = np.minimum(best, tall) + here
            choices.append(step)
        two_before, before, cost_before = before, current, costs
    return choices, before[int(low[-1]) + 2: int(high[-1]) + 3]


def _backtrack(choices: list[np.ndarray], low: np.ndarray, row: int, column: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the best path's step ends, from the first row to ``(row, column)``."""
    rows, columns = [row], [column]
    while row > 0:
        back_rows, back_columns = _STEPS[int(choices[row][column - int(low[row])])]
        row, column = row - back_rows, column - back_columns
        rows.append(row)
        columns.append(column)
    return np.array(rows[::-1], dtype=np.float64), np.array(columns[::-1], dtype=np.float64)


@dataclass
class Warp:
    """Where each frame of ``a`` pairs in ``b`` when ``a``'s timeline is kept (:func:`warp_onto`)."""

    frames: FloatArray  # (Fa,) b's (fractional) frame
    loops: NDArray[np.int64]  # (Fa,) how many times b has looped back by then
    loop_frame: int | None  # b goes on from the frame after this one when it loops (None: never loops)
    held_from: int | None  # the first frame of a paired with b held at its last, if any
    subsequence: bool  # b longer than a: the part of b that best matches all of a

    def report(self) -> dict[str, object]:
        """What the warp did, for a result's metadata."""
        return {"b_first": float(self.frames[0]), "b_last": float(self.frames[-1]),
                "match": "part of b" if self.subsequence else "b, looped" if self.loop_frame is not None
                else "b from its first frame",
                "loop_frame": self.loop_frame, "loops": int(self.loops[-1]) if len(self.loops) else 0,
                "held_from": self.held_from}


def warp_onto(a: FloatArray, b: FloatArray, *, reach: int = 1, shortest: int = 2, smoothing: float = 0.0,
              states: int = 0) -> Warp:
    """Every row of ``a`` ``(Fa, D)`` paired with a row of ``b`` ``(Fb, D)``, whatever their lengths.

    ``b`` longer than ``a``: the part of ``b`` that best matches all of ``a``
    (both ends open).  Otherwise ``b`` at between half and double speed from
    its first ``shortest`` rows (the one that best matches) and where it runs
    out before ``a``, on again from the row after its loop frame
    (:func:`loop_frame`, with ``reach``, ``shortest`` and ``states``) as often
    as needed; or, where it is still at its end or no row is like its last,
    from its first row and held at its last.  ``smoothing``: the warp's speed
    is smoothed over about that many rows (a Gaussian's deviation), so ``b``
    does not speed up and slow down from frame to frame (still within the
    limits).
    """
    count_a, count_b = len(a), len(b)
    if count_b > count_a:
        return Warp(_smoothed(time_warp(a, b, open_begin=True, open_end=True), smoothing),
                    np.zeros(count_a, dtype=np.int64), None, None, True)
    loop = loop_frame(b, reach, shortest, states)
    rows = np.arange(max(2 * (count_a - 1) + 1, count_b))  # enough of b for double speed all the way
    if loop is None:
        found = _smoothed(time_warp(a, b[np.minimum(rows, count_b - 1)], open_end=True), smoothing)
        held = np.flatnonzero(found >= count_b - 1)
        return Warp(np.minimum(found, count_b - 1.0), np.zeros(count_a, dtype=np.int64), None,
                    int(held[0]) if len(held) else None, False)
    span = count_b - 1 - loop
    rows = np.where(rows < count_b, rows, loop + 1 + (rows - count_b) % span)
    found = _smoothed(time_warp(a, b[rows], open_begin=True, open_end=True, begin_within=shortest), smoothing)
    # Past b's last row, each pass of the loop starts from its loop frame (standing for the last row).
    beyond = found - (count_b - 1)
    loops = np.maximum(np.ceil(beyond / span), 0).astype(np.int64)
    frames = np.where(loops > 0, loop + beyond - (loops - 1) * span, found)
    return Warp(frames, loops, loop, None, False)


def _smoothed(warp: FloatArray, deviation: float) -> FloatArray:
    """``warp`` with its steps smoothed by a Gaussian of ``deviation`` rows, from the same first value (each
    smoothed step a mean of steps, so the slope limits hold)."""
    if deviation <= 0 or len(warp) < 3:
        return warp
    reach = int(np.ceil(3 * deviation))
    kernel = np.exp(-0.5 * (np.arange(-reach, reach + 1) / deviation) ** 2)
    steps = np.diff(warp)
    padded = np.concatenate([np.full(reach, steps[0]), steps, np.full(reach, steps[-1])])
    smoothed = np.convolve(padded, kernel / kernel.sum(), mode="valid")
    return np.concatenate([warp[:1], warp[0] + np.cumsum(smoothed)])


def loop_frame(features: FloatArray, reach: int = 1, shortest: int = 2, states: int = 0) -> int | None:
    """The row a sequence ``(F, D)`` is best continued from when it runs out, or ``None``.

    A row at least ``shortest`` rows before the last, in the same state (the
    last ``states`` columns, e.g. which feet are planted, each on the same side
    of half its largest value) whose other features, and their change over
    ``reach`` rows either side (one side at the ends), are like the last's.  Of
    the rows most like it within their stretch, the earliest that joins about
    as well as the best (within :data:`LOOP_SLACK` of the typical distance to
    the last), so the loop plays as much of the sequence as it can (a sequence
    that runs out plays on, however well it joins: held still it would stop
    while ``a`` moves on).  ``None`` where the sequence is still at its end
    (its last ``reach`` rows change under :data:`STILL` of its typical change)
    or no row is in its last's state.
    """
    count = len(features)
    last = count - 1
    if count <= shortest + 1 or count <= reach:
        return None
    rows = np.arange(count)
    ahead, behind = np.minimum(rows + reach, last), np.maximum(rows - reach, 0)
    posed, marks = features[:, :features.shape[1] - states], features[:, features.shape[1] - states:]
    change = (posed[ahead] - posed[behind]) * (reach / (ahead - behind))[:, None]  # per reach rows
    sizes = np.sum(change ** 2, axis=1)
    if sizes[last] <= STILL ** 2 * np.median(sizes):
        return None
    distance = np.sum((posed - posed[last]) ** 2, axis=1) + np.sum((change - change[last]) ** 2, axis=1)
    typical = float(np.median(distance))
    on = marks >= 0.5 * np.maximum(marks.max(axis=0), 1e-300)
    candidates = np.where(np.all(on == on[last], axis=1), distance, np.inf)[:last - shortest + 1]
    lowest = np.ones(len(candidates), dtype=bool)  # the bottoms of their stretches
    lowest[1:] &= candidates[1:] <= candidates[:-1]
    lowest[:-1] &= candidates[:-1] <= candidates[1:]
    best = float(candidates.min())
    if not np.isfinite(best):
        return None
    return int(np.flatnonzero(lowest & (candidates <= best + LOOP_SLACK * typical))[0])
