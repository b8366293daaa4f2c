"""Small text and file helpers shared by the format modules.

Everything here is linear in its input, whatever the input: the readers use
these helpers on hostile files (huge tokens, huge lines, huge numbers).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Collection, Iterable, Sequence

import numpy as np

from ..errors import MocapWriteError
from ..model import Clip

# Possessive quantifiers: a 50 MB run of digits is matched or refused without backtracking.
_NUMBER = re.compile(r"[+-]?+(?:[0-9]++(?:\.[0-9]*+)?+|\.[0-9]++)(?:[eE][+-]?+[0-9]++)?+\Z")
WHOLE_NUMBER = re.compile(r"[+-]?+[0-9]++\Z")
# Frame numbers and counts are kept below this (a frame number of 10**9 is a day at 11 kHz).
WHOLE_NUMBER_LIMIT = 10**9
# Every value a reader accepts stays within this magnitude.  A real capture never comes near it (a kilometre in
# millimetres is 1e6, 2,700 turns in degrees 1e6); below it, forward kinematics, squared distances and their
# sums over millions of frames stay far from overflow, so no later step meets inf or NaN.
MAGNITUDE_LIMIT = 1e9
_QUOTE_LIMIT = 40
_SCAN_BLOCK = 1 << 22
# bytes.split() whitespace becomes b" ", every other byte b"x": tokens are where b"x" follows b" ".
_TOKEN_MARKS = bytes(32 if byte in b" \t\n\r\x0b\x0c" else 120 for byte in range(256))


def quote(text: str, limit: int = _QUOTE_LIMIT) -> str:
    """``repr`` of ``text`` for a message, cut after ``limit`` characters (a file may hold a 50 MB token)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def shorten(text: str, limit: int = _QUOTE_LIMIT) -> str:
    """``text`` for a message, cut after ``limit`` characters."""
    return text if len(text) <= limit else text[:limit] + "..."


def number_problem(token: str) -> str | None:
    """Why ``token`` is not a finite decimal number, or ``None`` if it is one."""
    if _NUMBER.match(token):
        value = float(token)
        if math.isinf(value):
            return f"{quote(token)} is too large for a floating-point number"
        if abs(value) > MAGNITUDE_LIMIT:
            return f"{quote(token)} is too large (the limit is {MAGNITUDE_LIMIT:g})"
        return None
    if token.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return f"{quote(token)} is not a finite number"
    return f"{quote(token)} is not a number"


def within_limit(values: np.ndarray) -> bool:
    """Whether every value is a number of magnitude at most ``MAGNITUDE_LIMIT`` (NaN is not)."""
    return values.size == 0 or bool(values.max() <= MAGNITUDE_LIMIT and values.min() >= -MAGNITUDE_LIMIT)


def whole_number_problem(token: str, *, signed: bool = False) -> str | None:
    """Why ``token`` is not a whole number written in ASCII digits below ``WHOLE_NUMBER_LIMIT``, or ``None``."""
    if not WHOLE_NUMBER.match(token) or (not signed and token[0] in "+-"):
        return f"{quote(token)} is not a {'' if signed else 'non-negative '}whole number"
    digits = token.lstrip("+-").lstrip("0")
    if len(digits) > 9 or int(digits or "0") >= WHOLE_NUMBER_LIMIT:
        return f"{quote(token)} is too large (the limit is {WHOLE_NUMBER_LIMIT - 1})"
    return None


def token_count(line: bytes) -> int:
    """Number of whitespace-separated tokens in ``line``, without splitting it."""
    marks = line.translate(_TOKEN_MARKS)
    return marks.count(b" x") + marks.startswith(b"x")


def longest_line(data: bytes, start: int = 0, end: int | None = None) -> int:
    """Length in bytes of the longest ``\\n``-separated line of ``data[start:end]``.

    A vectorised scan in blocks of 4 MB, so memory stays small however many lines there are.
    """
    view = np.frombuffer(data, dtype=np.uint8)[start:end]
    longest, last = 0, -1
    for offset in range(0, view.size, _SCAN_BLOCK):
        breaks = np.flatnonzero(view[offset:offset + _SCAN_BLOCK] == 10) + offset
        if breaks.size:
            longest = max(longest, int(np.diff(breaks, prepend=last).max()) - 1)
            last = int(breaks[-1])
    return max(longest, view.size - last - 1)


def long_line_token_counts(block: bytes, longer_than: int, comment: bytes | None = None) -> list[int]:
    """Token counts of the lines of ``block`` longer than ``longer_than`` bytes (text after ``comment`` left out).

    numpy reads a whole row before it compares its length with the others, so a
    reader checks rows this long itself first: counting tokens is linear and cheap.
    """
    if longest_line(block) <= longer_than:
        return []
    return [token_count(line.split(comment, 1)[0] if comment else line)
            for line in block.split(b"\n") if len(line) > longer_than]


def unix_line_ends(data: bytes) -> bytes:
    """``data`` with lone carriage returns (old Mac line ends) turned into ``\\n``; CRLF is left alone."""
    carriage_returns = data.count(b"\r")
    if carriage_returns == 0 or carriage_returns == data.count(b"\r\n"):
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def decode_text(raw: bytes) -> str:
    """Bytes of one line as text: UTF-8, falling back to Latin-1 (never fails)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def atomic_write(path: str | os.PathLike[str], data: bytes | Iterable[str]) -> None:
    """Write ``data`` (bytes, or pieces of text written as UTF-8 as they come, so a large file is never
    held whole) to a temporary file beside ``path`` and rename it into place.

    An ``OSError`` names ``path`` (not the temporary file) with the system's reason.  The temporary
    name is never longer than a name the file system takes (``path``'s own name may be 255 bytes).
    """
    target = os.path.abspath(os.fspath(path))
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=temporary_suffix(target),
                                             dir=os.path.dirname(target))
        with os.fdopen(handle, "wb") as stream:
            if isinstance(data, bytes):
                stream.write(data)
            else:
                for piece in data:
                    stream.write(piece.encode("utf-8"))
        os.chmod(temporary, _new_file_mode(target))
        os.replace(temporary, target)
    except BaseException as error:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise OSError(error.errno, error.strerror, target) from None
        raise


def temporary_suffix(target: str) -> str:
    """The end of a temporary name beside ``target``: its own name where that leaves room for a short
    prefix within the 255 bytes a name may have, else only its extension."""
    name = os.path.basename(target)
    return name if len(os.fsencode(name)) <= 200 else os.path.splitext(name)[1][-16:]


def _new_file_mode(target: str) -> int:
    """The mode ``open`` would give ``target``: kept if it exists, else 0o666 less the umask."""
    if os.path.exists(target):
        return os.stat(target).st_mode & 0o7777
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def format_rows(values: np.ndarray, precision: int, significant: Sequence[int] = ()) -> str:
    """Rows of numbers as text, one line per row, each number as ``%.{precision}f`` would write it.

    The digits come from integer arithmetic on whole columns of numbers: each
    number gets a fixed-width field (sign, digits, point, separator) padded with
    zero bytes, and dropping the zero bytes leaves exactly the text ``%``
    formatting gives, in half its time.  Numbers too large for exact integers
    at this precision are formatted by ``%`` instead, as they are (rounding them
    first would move them by an ulp, and past ~1e302 overflow).  A ``significant``
    column holding a value too small for ``precision`` decimals is written to
    ``precision`` significant digits instead, so it does not become 0.
    """
    if values.size == 0:
        return "\n" * values.shape[0] if values.ndim == 2 and values.shape[1] == 0 else ""
    keep_digits = [c for c in significant
                   if np.any((values[:, c] != 0) & (np.abs(values[:, c]) < 10.0 ** -precision))]
    if np.all(np.abs(values) < 2.0 ** 52 / 10 ** precision) and not keep_digits:
        return "".join(_fixed_point(values[start:start + _ROWS_PER_BLOCK], precision)
                       for start in range(0, len(values), _ROWS_PER_BLOCK))
    rounded = printable(values, precision)
    rounded[:, keep_digits] = values[:, keep_digits] + 0.0
    row = " ".join(f"%.{precision}{'g' if column in keep_digits else 'f'}"
                   for column in range(values.shape[1])) + "\n"
    return (row * values.shape[0]) % tuple(rounded.ravel().tolist())


def printable(values: np.ndarray, precision: int) -> np.ndarray:
    """``values`` as ``%.{precision}f`` should see them: rounded to ``precision`` decimals (so none is written
    "-0.000") where that is exact, kept as they are where they are too large to round exactly."""
    exact = np.abs(values) < 2.0 ** 52 / 10 ** precision
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(exact, np.round(values, precision), values) + 0.0


_ROWS_PER_BLOCK = 4096


def _fixed_point(rows: np.ndarray, precision: int) -> str:
    """``rows`` rounded to ``precision`` decimals as text (as :func:`printable` rounds them: none written
    "-0.000"), built digit by digit with numpy."""
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
    negative = np.flatnonzero((rows.ravel() < 0) & (scaled > 0))
    chars[negative, width - 2 - precision - point - length[negative]] = ord("-")
    return chars[chars != 0].tobytes().decode("ascii")


def number_text(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, or exactly where rounding would overflow to inf."""
    text = f"{value + 0.0:.{digits}g}"
    return text if math.isfinite(float(text)) else repr(float(value))


def safe_names(names: list[str], unsafe: re.Pattern[str], reserved: Collection[str] = (),
               fallback: str = "joint") -> list[str]:
    """Names a format can hold and read back as written: each run of ``unsafe`` characters becomes '_',
    a name in ``reserved`` (lower case, compared in any case) gets a '_' added, and a name met again gets
    '_2', '_3'... so all are unique.  Names that are already fine are kept as they are."""
    taken: set[str] = set()
    suffixes: dict[str, int] = {}
    out = []
    for name in names:
        base = unsafe.sub("_", name) or fallback
        if base.lower() in reserved:
            base += "_"
        candidate = base
        while candidate in taken:
            suffixes[base] = suffixes.get(base, 1) + 1
            candidate = f"{base}_{suffixes[base]}"
        taken.add(candidate)
        out.append(candidate)
    return out


_UNBOUNDED = f"is not a finite number within {MAGNITUDE_LIMIT:g}"


def _bounded(values: np.ndarray) -> np.ndarray:
    """Per value: a number of magnitude at most ``MAGNITUDE_LIMIT``."""
    return np.abs(values) <= MAGNITUDE_LIMIT


def require_writable(clip: Clip, form: str, *, numbered: bool = True) -> None:
    """Raise ``MocapWriteError`` unless every number ``clip`` would put in a ``form`` file is finite and within
    ``MAGNITUDE_LIMIT`` (as the readers ask) and,
    for a format that numbers its frames, the numbers stay below ``WHOLE_NUMBER_LIMIT`` (as the readers
    ask), naming the first culprit."""
    skeleton = clip.skeleton
    per_joint = {"offset": skeleton.offsets, "rest rotation": skeleton.rest_rotations,
                 "length direction": skeleton.length_directions}
    for what, values in per_joint.items():
        bad = ~_bounded(values.reshape(skeleton.joint_count, -1)).all(axis=1)
        if bad.any():
            name = skeleton.names[int(np.argmax(bad))]
            raise MocapWriteError(f"cannot write {form}: the {what} of joint {quote(name)} {_UNBOUNDED}")
    for joint, sites in enumerate(skeleton.end_sites):
        if not within_limit(sites):
            raise MocapWriteError(f"cannot write {form}: an end site of joint {quote(skeleton.names[joint])} "
                                  f"{_UNBOUNDED}")
    if not within_limit(clip.motion):
        frame, column = (int(i) for i in np.argwhere(~_bounded(clip.motion))[0])
        joint = int(np.searchsorted(skeleton.channel_starts(), column, side="right")) - 1
        channel = skeleton.channels[joint][column - int(skeleton.channel_starts()[joint])]
        raise MocapWriteError(f"cannot write {form}: frame {clip.start_frame + frame}, joint "
                              f"{quote(skeleton.names[joint])}, channel {channel} {_UNBOUNDED}")
    if not clip.fps <= MAGNITUDE_LIMIT:
        raise MocapWriteError(f"cannot write {form}: the frame time {clip.frame_time!r} s is too short")
    if not clip.frame_time <= MAGNITUDE_LIMIT:
        raise MocapWriteError(f"cannot write {form}: the frame time {clip.frame_time!r} s is too long")
    last = abs(clip.start_frame) + clip.frame_count
    if numbered and last >= WHOLE_NUMBER_LIMIT:
        raise MocapWriteError(f"cannot write {form}: frame numbers reach {last}, beyond {WHOLE_NUMBER_LIMIT - 1}")
