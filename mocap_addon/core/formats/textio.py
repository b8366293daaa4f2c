"""Small text and file helpers shared by the format modules."""

from __future__ import annotations

import os
import re
import tempfile

import numpy as np

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


def number_problem(token: str) -> str | None:
    """Why ``token`` is not a finite decimal number, or ``None`` if it is one."""
    if _NUMBER.match(token):
        return None
    if token.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return f"{token[:30]!r} is not a finite number"
    return f"{token[:30]!r} is not a number"


def decode_text(raw: bytes) -> str:
    """Bytes of one line as text: UTF-8, falling back to Latin-1 (never fails)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place.

    An ``OSError`` names ``path`` (not the temporary file) with the system's reason.
    """
    target = os.path.abspath(os.fspath(path))
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(target),
                                             dir=os.path.dirname(target))
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, _new_file_mode(target))
        os.replace(temporary, target)
    except BaseException as error:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise OSError(error.errno, error.strerror, target) from None
        raise


def _new_file_mode(target: str) -> int:
    """The mode ``open`` would give ``target``: kept if it exists, else 0o666 less the umask."""
    if os.path.exists(target):
        return os.stat(target).st_mode & 0o7777
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def format_rows(values: np.ndarray, precision: int) -> str:
    """Rows of numbers as text, one line per row, each number as ``%.{precision}f`` would write it.

    The digits come from integer arithmetic on whole columns of numbers: each
    number gets a fixed-width field (sign, digits, point, separator) padded with
    zero bytes, and dropping the zero bytes leaves exactly the text ``%``
    formatting gives, in half its time.  Numbers too large for exact integers
    at this precision are formatted by ``%`` instead.
    """
    if values.size == 0:
        return "\n" * values.shape[0] if values.ndim == 2 and values.shape[1] == 0 else ""
    rounded = np.round(values, precision) + 0.0
    scale = 10 ** precision
    if not np.all(np.abs(rounded) < 2.0 ** 52 / scale):
        row = " ".join([f"%.{precision}f"] * values.shape[1]) + "\n"
        return (row * values.shape[0]) % tuple(rounded.ravel().tolist())
    return "".join(_fixed_point(rounded[start:start + _ROWS_PER_BLOCK], precision)
                   for start in range(0, len(rounded), _ROWS_PER_BLOCK))


_ROWS_PER_BLOCK = 4096


def _fixed_point(rows: np.ndarray, precision: int) -> str:
    """``rows`` (already rounded to ``precision``) as text, built digit by digit with numpy."""
    scaled = np.rint(np.abs(rows) * 10 ** precision).astype(np.int64).ravel()
    whole = scaled // 10 ** precision
    length = np.ones(scaled.size, dtype=np.int64)  # digits before the point
    while (present := whole >= 10 ** int(length.max())).any():
        length += present
    digits = int(length.max())
    point = 1 if precision else 0
    width = 1 + digits + point + precision + 1
    chars = np.zeros((scaled.size, width), dtype=np.uint8)  # zero bytes are dropped at the end
    chars[:, -1] = ord(" ")
    chars[rows.shape[1] - 1::rows.shape[1], -1] = ord("\n")
    rest, column = scaled, width - 2
    for place in range(precision + digits):
        rest, digit = np.divmod(rest, 10)
        if place == precision and point:
            chars[:, column] = ord(".")
            column -= 1
        shown = place < precision + 1 or whole >= 10 ** (place - precision)
        chars[:, column] = np.where(shown, 48 + digit, 0)
        column -= 1
    negative = np.flatnonzero(rows.ravel() < 0)
    chars[negative, width - 2 - precision - point - length[negative]] = ord("-")
    return chars[chars != 0].tobytes().decode("ascii")
