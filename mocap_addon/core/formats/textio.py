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
    """Rows of numbers as text, one line per row, in a single formatting call."""
    if values.size == 0:
        return "\n" * values.shape[0] if values.ndim == 2 and values.shape[1] == 0 else ""
    rounded = np.round(values, precision) + 0.0
    row = " ".join([f"%.{precision}f"] * values.shape[1]) + "\n"
    return (row * values.shape[0]) % tuple(rounded.ravel().tolist())
