"""AMC, the motion file: each frame's dof values for the bones of an ASF, in bulk where the layout repeats."""

from __future__ import annotations

import re
import warnings

import numpy as np

from ...errors import MocapFormatError
from ..textio import (
    WHOLE_NUMBER,
    WHOLE_NUMBER_LIMIT,
    decode_text,
    long_line_token_counts,
    number_problem,
    quote,
    token_count,
    unix_line_ends,
    whole_number_problem,
    within_limit,
)
from .asf import AsfSkeleton, Bone

_MOST_FIELDS = 8  # on an AMC line: a bone name and at most seven dofs


def parse_amc(data: bytes, asf: AsfSkeleton, path: str = "<data>", *,
              lenient: bool = False) -> tuple[np.ndarray, int, bool, list[str]]:
    """AMC values ``(frames, dofs)`` in ASF bone order and dof order, first frame number,
    degrees or not, and warnings.  The common case (every frame lists the same bones in
    the same order) is checked and converted in bulk; anything else takes a line-by-line
    pass that names the first bad line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    raw_lines = unix_line_ends(data).split(b"\n")
    degrees, has_header = True, False
    body_start = len(raw_lines)
    for number, raw in enumerate(raw_lines):
        text = decode_text(raw).strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith(":"):
            keyword = text.split(maxsplit=1)[0].upper()
            if keyword in (":RADIANS", ":DEGREES"):
                degrees = keyword == ":DEGREES"
            has_header = True
            continue
        if not _is_frame_number(text.split(maxsplit=1)):
            raise MocapFormatError(f"expected a frame number, found {quote(text, 30)}", path, number + 1)
        body_start = number
        break
    if body_start == len(raw_lines):
        if not has_header:
            raise MocapFormatError("no AMC header (:FULLY-SPECIFIED, :DEGREES) and no frames", path,
                                   len(data[:len(data.rstrip())].split(b"\n")))
        return np.zeros((0, sum(len(b.dof) for b in asf.bones))), 1, degrees, []
    body = b"\n".join(raw_lines[body_start:])
    values = _bulk_frames(body, asf)
    if values is not None:
        return values[0], values[1], degrees, []
    rows, first, warnings_found = _frames_by_line(raw_lines, body_start, asf, path, lenient)
    return rows, first, degrees, warnings_found


def _bulk_frames(body: bytes, asf: AsfSkeleton) -> tuple[np.ndarray, int] | None:
    """Values and first frame number if every frame repeats the first frame's layout exactly."""
    moving = {b.name: b for b in asf.bones if b.dof}
    if any(count > _MOST_FIELDS for count in long_line_token_counts(body, _MOST_FIELDS * 64)):
        return None  # the line-by-line pass names that line without splitting it all
    tokens = decode_text(body).split()
    period = 1 + sum(1 + len(b.dof) for b in moving.values())
    if not tokens or len(tokens) % period:
        return None
    frames = len(tokens) // period
    names, widths, position = [], [], 1
    while position < period:
        name = tokens[position]
        bone = moving.get(name)
        if bone is None:
            return None
        names.append(name)
        widths.append(len(bone.dof))
        position += 1 + len(bone.dof)
    if position != period or sorted(names) != sorted(moving):
        return None
    offsets = np.concatenate([[1], np.cumsum([1 + w for w in widths])[:-1] + 1])
    for name, offset in zip(names, offsets):
        if tokens[offset::period] != [name] * frames:
            return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = np.array(tokens, dtype=object).reshape(frames, period)
            numbers = table[:, 0].astype(np.float64)
            keep = np.ones(period, dtype=bool)
            keep[0] = False
            keep[offsets] = False
            values = table[:, keep].astype(np.float64)
    except ValueError:
        return None
    if (not within_limit(values) or np.any(np.diff(numbers) != 1) or numbers[0] != np.round(numbers[0])
            or abs(numbers[0]) + frames >= WHOLE_NUMBER_LIMIT):
        return None
    # Columns are in the file's bone order; put them in ASF bone order.
    file_columns: dict[str, list[int]] = {}
    column = 0
    for name, width in zip(names, widths):
        file_columns[name] = list(range(column, column + width))
        column += width
    order = [c for b in asf.bones for c in file_columns.get(b.name, [])]
    return values[:, order], int(numbers[0])


def _frames_by_line(raw_lines: list[bytes], body_start: int, asf: AsfSkeleton, path: str,
                    lenient: bool) -> tuple[np.ndarray, int, list[str]]:
    """Line-by-line reading with exact errors (and the lenient hold-previous option)."""
    moving = {b.name: b for b in asf.bones if b.dof}
    order = [b.name for b in asf.bones if b.dof]
    frames: list[dict[str, list[float]]] = []
    numbers: list[int] = []
    held: dict[str, int] = {}
    frame_lines: list[int] = []

    def close_frame() -> None:
        if not frames:
            return
        current = frames[-1]
        missing = [n for n in order if n not in current]
        if missing:
            if not lenient or len(frames) == 1:
                raise MocapFormatError(f"frame {numbers[-1]} has no line for bone {quote(missing[0])}", path,
                                       frame_lines[-1])
            for name in missing:
                current[name] = frames[-2][name]
                held[name] = held.get(name, 0) + 1

    for number, raw in enumerate(raw_lines[body_start:], start=body_start + 1):
        text = decode_text(raw).split("#", 1)[0]
        tokens = text.split(maxsplit=_MOST_FIELDS)
        if not tokens:
            continue
        if _is_frame_number(tokens):
            close_frame()
            frame = _frame_number(tokens[0], path, number)
            if numbers and frame != numbers[-1] + 1:
                raise MocapFormatError(f"frame {frame} follows frame {numbers[-1]}", path, number)
            numbers.append(frame)
            frame_lines.append(number)
            frames.append({})
        else:
            _read_bone_values(text, tokens, asf, moving, frames[-1], numbers[-1], path, number)
    close_frame()
    table = np.array([[v for name in order for v in frame[name]] for frame in frames]).reshape(
        len(frames), sum(len(moving[n].dof) for n in order))
    notes = [f"bone {quote(name)} missing in {count} frame(s): previous values held" for name, count in held.items()]
    return table, numbers[0] if numbers else 1, notes


def _read_bone_values(text: str, tokens: list[str], asf: AsfSkeleton, moving: dict[str, Bone],
                      frame: dict[str, list[float]], frame_number: int, path: str, number: int) -> None:
    """One bone's line of a frame, checked, into ``frame``."""
    name = tokens[0]
    if name not in moving:
        known = any(b.name == name for b in asf.bones)
        reason = "has no dof" if known else "is not in the skeleton"
        raise MocapFormatError(f"bone {quote(name)} {reason}", path, number)
    bone = moving[name]
    if len(tokens) - 1 != len(bone.dof):
        found = len(tokens) if len(tokens) <= _MOST_FIELDS else token_count(text.encode())
        raise MocapFormatError(f"bone {quote(name)} needs {len(bone.dof)} values ({' '.join(bone.dof)}), "
                               f"found {found - 1}", path, number)
    if name in frame:
        raise MocapFormatError(f"bone {quote(name)} appears twice in frame {frame_number}", path, number)
    values = []
    for match in list(re.finditer(r"\S+", text))[1:]:
        problem = number_problem(match.group())
        if problem:
            raise MocapFormatError(f"bone {quote(name)}: {problem}", path, number, match.start() + 1)
        values.append(float(match.group()))
    frame[name] = values


def _is_frame_number(tokens: list[str]) -> bool:
    return len(tokens) == 1 and WHOLE_NUMBER.match(tokens[0]) is not None


def _frame_number(token: str, path: str, line: int) -> int:
    problem = whole_number_problem(token, signed=True)
    if problem:
        raise MocapFormatError(f"frame number {problem}", path, line)
    return int(token)
