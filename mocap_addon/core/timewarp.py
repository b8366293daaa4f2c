"""Dynamic time warping of two feature sequences: monotone, slope-limited, endpoints paired.

The step pattern is Sakoe and Chiba's symmetric one with slope constraint 1
(steps (1, 1), (1, 2) and (2, 1), every step advancing both sequences), so
the warp's slope stays within [1/2, 2] and no frame is held or skipped for
long.  With ``c`` the squared feature distance the accumulated cost is::

    g(i, j) = min(g(i-1, j-1) + 2 c(i, j),
                  g(i-1, j-2) + 2 c(i, j-1) + c(i, j),
                  g(i-2, j-1) + 2 c(i-1, j) + c(i, j))

Every step advances ``i``, so a whole row depends only on the two rows before
it: the Python loop runs over rows, each row is a few numpy operations, and
only the band of cells that can lie on a path (the slope limits from both
ends) is computed.  Costs come block by block from one matrix product.
"""

from __future__ import annotations

import numpy as np

from .rotations import FloatArray

ROWS_PER_BLOCK = 256
# Band cells (one byte of backtracking each) above which the warp is found on every k-th frame instead.
MAX_CELLS = 60_000_000

# Backtracking: (rows back, columns back) of each step.
_STEPS = ((1, 1), (1, 2), (2, 1))


def _band(count_a: int, count_b: int) -> tuple[np.ndarray, np.ndarray]:
    """For each row ``i``, the first and last column a slope-limited path from (0, 0) to the end can visit."""
    rows = np.arange(count_a)
    left = count_a - 1 - rows
    low = np.maximum((rows + 1) // 2, count_b - 1 - 2 * left)
    high = np.minimum(2 * rows, count_b - 1 - (left + 1) // 2)
    return low, high


def time_warp(a: FloatArray, b: FloatArray) -> FloatArray:
    """For every row of ``a`` ``(Fa, D)``, the (fractional) row of ``b`` ``(Fb, D)`` it pairs with.

    The first rows and the last rows pair; the warp runs straight between the
    ends of the path's steps, so its slope stays within [1/2, 2].  Raises
    ``ValueError`` when one sequence is more than twice as long as the other,
    which no path with these slopes can pair.  Beyond :data:`MAX_CELLS` band
    cells (two sequences of about 13,000 rows) the warp is found on every
    k-th row and drawn straight between them, keeping memory bounded.
    """
    a = np.asarray(a, dtype=np.float64).reshape(len(a), -1)
    b = np.asarray(b, dtype=np.float64).reshape(len(b), -1)
    count_a, count_b = len(a), len(b)
    if count_a == 0 or count_b == 0:
        raise ValueError("time warping needs at least one frame on each side")
    if count_a == 1 or count_b == 1:
        if count_a != count_b:
            raise ValueError(f"cannot warp {count_a} frames onto {count_b}: one clip has a single frame")
        return np.zeros(1)
    if count_b - 1 > 2 * (count_a - 1) or count_a - 1 > 2 * (count_b - 1):
        raise ValueError(f"cannot warp {count_a} frames onto {count_b}: time warping pairs clips whose "
                         "lengths differ by at most a factor of two (use the offset or scale alignment)")
    low, high = _band(count_a, count_b)
    cells = int(np.sum(high - low + 1))
    if cells > MAX_CELLS:
        return _coarse_warp(a, b, int(np.ceil(np.sqrt(cells / MAX_CELLS))))
    choices = _accumulate(a, b, low, high)
    rows, columns = _backtrack(choices, low, count_a, count_b)
    return np.interp(np.arange(count_a), rows, columns)


def _coarse_warp(a: FloatArray, b: FloatArray, factor: int) -> FloatArray:
    """The warp of every ``factor``-th row (first and last kept), drawn straight between them."""
    rows_a = np.unique(np.linspace(0, len(a) - 1, (len(a) - 1) // factor + 1).round().astype(np.int64))
    rows_b = np.unique(np.linspace(0, len(b) - 1, (len(b) - 1) // factor + 1).round().astype(np.int64))
    coarse = time_warp(a[rows_a], b[rows_b])
    return np.interp(np.arange(len(a)), rows_a, np.interp(coarse, np.arange(len(rows_b)), rows_b))


def _accumulate(a: FloatArray, b: FloatArray, low: np.ndarray, high: np.ndarray) -> list[np.ndarray]:
    """The best step into every band cell, row by row (index into ``_STEPS``; row 0 has none)."""
    count_a, count_b = len(a), len(b)
    squares_b = np.einsum("ij,ij->i", b, b)
    # Accumulated cost of the two rows before, padded with two infinite cells on the left.
    before = np.full(count_b + 2, np.inf)
    two_before = np.full(count_b + 2, np.inf)
    cost_before = np.zeros(count_b)
    choices: list[np.ndarray] = [np.zeros(1, dtype=np.int8)]
    block_cost = np.zeros((0, 0))
    block_start = block_first = 0
    for row in range(count_a):
        if row % ROWS_PER_BLOCK == 0:
            block_stop = min(row + ROWS_PER_BLOCK, count_a)
            block_start, block_first = row, max(int(low[row]) - 1, 0)
            last = int(high[min(block_stop, count_a - 1)])
            block = b[block_first: last + 1]
            block_cost = (np.einsum("ij,ij->i", a[row:block_stop], a[row:block_stop])[:, None]
                          + squares_b[block_first: last + 1][None] - 2.0 * a[row:block_stop] @ block.T)
            np.maximum(block_cost, 0.0, out=block_cost)
        costs = np.zeros(count_b)
        first, stop = max(int(low[row]) - 1, 0), int(high[min(row + 1, count_a - 1)]) + 1
        costs[first:stop] = block_cost[row - block_start, first - block_first: stop - block_first]
        current = np.full(count_b + 2, np.inf)
        if row == 0:
            current[2] = 2.0 * costs[0]
        else:
            first_column, last_column = int(low[row]), int(high[row]) + 1
            here = costs[first_column:last_column]
            diagonal = before[first_column + 1: last_column + 1] + 2.0 * here
            wide = before[first_column:last_column] + 2.0 * costs[first_column - 1: last_column - 1] + here
            tall = two_before[first_column + 1: last_column + 1] + 2.0 * cost_before[first_column:last_column] + here
            best = np.minimum(diagonal, wide)
            step = (wide < diagonal).astype(np.int8)
            step[tall < best] = 2
            current[first_column + 2: last_column + 2] = np.minimum(best, tall)
            choices.append(step)
        two_before, before, cost_before = before, current, costs
    return choices


def _backtrack(choices: list[np.ndarray], low: np.ndarray, count_a: int,
               count_b: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the best path's step ends, from the first frames to the last."""
    rows, columns = [count_a - 1], [count_b - 1]
    row, column = count_a - 1, count_b - 1
    while row > 0:
        back_rows, back_columns = _STEPS[int(choices[row][column - int(low[row])])]
        row, column = row - back_rows, column - back_columns
        rows.append(row)
        columns.append(column)
    if column != 0:
        raise AssertionError("time warp path did not return to the first frames")
    return np.array(rows[::-1], dtype=np.float64), np.array(columns[::-1], dtype=np.float64)
