"""Fast reading of plain decimal tables (a BVH file's MOTION rows), vectorised and on several cores.

``np.loadtxt`` is exact and strict but holds the GIL, so a large block is read
at one core's speed.  Motion data is usually simpler than what it accepts:
whitespace-separated decimals such as ``-12.345678``.  Those are read here with
numpy operations on the bytes (which release the GIL), block by block on a
small thread pool.  Each number's digits make an exact integer mantissa (at
most 15 digits, below 2**53) and one division by an exact power of ten rounds
it correctly, so every value is the double ``float()`` gives for its text.
Anything else (exponents, ``nan``, longer mantissas, other characters, a row of
another length) makes :func:`read_table` return ``None``, and the caller reads
the text with its strict reader, which also names the line of an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..rotations import FloatArray
from ..threads import usable_threads

_POWERS_OF_TEN = 10.0 ** np.arange(16)
_MAX_DIGITS = 15  # mantissas below 10**15 < 2**53 are exact doubles
_BLOCK_BYTES = 1 << 18  # small enough for the cache, large enough to amortise each numpy call
_LONGEST_BLOCK = 1 << 22  # a longer line is left to the strict reader (its memory stays bounded)
_MAX_THREADS = 4
_DOT, _MINUS, _PLUS, _NEWLINE = 46, 45, 43, 10
_IN_TOKEN = np.ones(256, dtype=bool)
_IN_TOKEN[[ord(" "), ord("\t"), ord("\r"), ord("\n")]] = False  # what separates numbers, as for np.loadtxt


def read_table(data: bytes, start: int, columns: int, rows: int | None = None) -> FloatArray | None:
    """Rows of ``columns`` numbers from ``data[start:]`` (blank lines skipped), or ``None`` when the
    text is not plain decimals in rows of that length.  ``rows``, the number expected, lets the
    blocks be copied into one array as they come (a wrong guess costs only a concatenation)."""
    if columns <= 0:
        return None
    blocks = []
    while start < len(data):
        stop = data.find(b"\n", start + _BLOCK_BYTES)
        stop = len(data) if stop < 0 else stop + 1
        if stop - start > _LONGEST_BLOCK:
            return None
        blocks.append(np.frombuffer(data, np.uint8, stop - start, start))
        start = stop
    # Every value takes at least two bytes: a larger count is not believed (nor allocated).
    plausible = rows is not None and 0 < rows * columns <= sum(block.size for block in blocks) // 2
    threads = usable_threads(_MAX_THREADS)
    if len(blocks) == 1 or threads == 1:
        return _gathered((_read_block(block, columns) for block in blocks), columns, rows if plausible else None)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        parts = pool.map(lambda text: _read_block(text, columns), blocks)
        return _gathered(parts, columns, rows if plausible else None)


def _gathered(parts: Iterable[FloatArray | None], columns: int, rows: int | None) -> FloatArray | None:
    """The blocks' values as rows, copied into one array of ``rows`` rows when given, or ``None``."""
    out = np.empty(rows * columns if rows else 0)
    filled = 0
    extra: list[FloatArray] = []
    for part in parts:
        if part is None:
            return None
        if not extra and filled + part.size <= out.size:
            out[filled:filled + part.size] = part
            filled += part.size
        else:
            extra.append(part)
    values = np.concatenate([out[:filled], *extra]) if extra or filled < out.size else out
    return values.reshape(-1, columns)


def _read_block(text: np.ndarray, columns: int) -> FloatArray | None:
    """The numbers of the whole lines in ``text`` (bytes as ``uint8``), or ``None`` (see :func:`read_table`)."""
    size = text.size
    digit_values = text - np.uint8(48)
    digit = digit_values < 10
    token = _IN_TOKEN.take(text)
    edges = np.empty(size + 1, dtype=bool)
    edges[0], edges[-1] = token[0], token[-1]
    np.not_equal(token[1:], token[:-1], out=edges[1:-1])
    bounds = np.flatnonzero(edges)
    starts, ends = bounds[0::2], bounds[1::2]  # ends are exclusive
    if not starts.size:
        return np.zeros(0)
    digits_through = np.cumsum(digit, dtype=np.int32)
    digits_before = np.concatenate([[0], digits_through[starts[1:] - 1]])
    if starts[0] > 0:
        digits_before[0] = digits_through[starts[0] - 1]
    digit_count = digits_through[ends - 1] - digits_before
    if digit_count.min() == 0 or digit_count.max() > _MAX_DIGITS:
        return None
    dots, minus, plus = (np.flatnonzero(text == mark) for mark in (_DOT, _MINUS, _PLUS))
    spaces = size - int(np.count_nonzero(token))
    if int(digits_through[-1]) + spaces + dots.size + minus.size + plus.size != size:
        return None  # other characters: exponents, nan, words
    if not _rows_are_whole(text, starts, columns):
        return None
    place = np.repeat(digits_before + digit_count - 1, digit_count)
    place -= np.arange(place.size, dtype=np.int32)
    weights = _POWERS_OF_TEN.take(place)
    weights *= digit_values[digit]
    values = np.add.reduceat(weights, digits_before)
    decimals = _decimals(starts, ends, dots, digits_through)
    if decimals is None:
        return None
    values /= _POWERS_OF_TEN.take(decimals)
    for signs, negative in ((minus, True), (plus, False)):
        if signs.size:
            owner = np.searchsorted(starts, signs, side="right") - 1
            if np.any(starts[owner] != signs):
                return None  # a sign inside a number
            if negative:
                values[owner] = -values[owner]
    return values


def _decimals(starts: np.ndarray, ends: np.ndarray, dots: np.ndarray,
              digits_through: np.ndarray) -> np.ndarray | None:
    """Digits after each token's point (0 without one), or ``None`` if a token has two points."""
    if dots.size == starts.size and np.all(dots >= starts) and np.all(dots < ends):
        return digits_through[ends - 1] - digits_through[dots]  # the usual case: one point per number
    owner = np.searchsorted(starts, dots, side="right") - 1
    if np.any(owner[1:] == owner[:-1]):
        return None
    decimals = np.zeros(starts.size, dtype=np.int64)
    decimals[owner] = digits_through[ends[owner] - 1] - digits_through[dots]
    return decimals


def _rows_are_whole(text: np.ndarray, starts: np.ndarray, columns: int) -> bool:
    """Whether every non-blank line of the block holds exactly ``columns`` numbers."""
    line_ends = np.flatnonzero(text == _NEWLINE)
    through = np.concatenate([[0], np.searchsorted(starts, line_ends), [starts.size]])
    per_line = np.diff(through)
    return bool(np.all((per_line == 0) | (per_line == columns)))
