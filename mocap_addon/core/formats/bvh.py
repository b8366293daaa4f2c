"""Biovision Hierarchy (BVH): read and write.

The hierarchy is parsed line by line with an explicit stack (no recursion);
the MOTION block is parsed by numpy's C tokenizer in one call.  Position channels replace
the joint's OFFSET by default (``position_mode="replace"``, as Blender's
importer, MotionBuilder and Mixamo read them); ``position_mode="add"`` adds them.
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from ..errors import MocapFormatError
from ..files import read_regular_file
from ..kinematics import conform
from ..model import ROTATION_CHANNELS, TRANSLATION_CHANNELS, Clip, Skeleton, rotation_order
from ..options import BVH_POSITIONS
from ..rotations import check_order, listed_within
from ..units import unit_name
from .fileformat import FileFormat
from .table import read_table
from .textio import (
    MAGNITUDE_LIMIT,
    atomic_write,
    decode_text,
    format_rows,
    long_line_token_counts,
    number_problem,
    number_text,
    quote,
    require_writable,
    token_count,
    unix_line_ends,
    whole_number_problem,
    within_limit,
)

_NON_SPACE = re.compile(rb"\S")
_CHANNEL_TOKENS = {f"{a}{kind}": f"{'t' if kind == 'position' else 'r'}{a}"
                   for a in "xyz" for kind in ("position", "rotation")}
_CHANNEL_NAMES = {token: name[0].upper() + name[1:] for name, token in _CHANNEL_TOKENS.items()}
# Bytes a motion row may take per value before its values are counted rather than handed to numpy.
_ROW_BYTES = 64
# Written files indent one tab per level up to this depth, so a 10,000-level chain stays linear in size.
_MAX_INDENT = 32


@dataclass
class _Node:
    name: str
    line: int
    parent: int
    index: int = -1
    is_end_site: bool = False
    offset: list[float] | None = None
    channels: list[str] = field(default_factory=list)


def _number(token: str, path: str, line: int, what: str) -> float:
    problem = number_problem(token)
    if problem:
        raise MocapFormatError(f"{what}: {problem}", path, line)
    return float(token)


class _HierarchyParser:
    """Builds the joint list from HIERARCHY lines, one line at a time."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.joints: list[_Node] = []
        self.end_sites: list[tuple[int, list[float]]] = []
        self.stack: list[_Node] = []
        self.pending: _Node | None = None

    def error(self, message: str, line: int) -> MocapFormatError:
        return MocapFormatError(message, self.path, line)

    def feed(self, text: str, line: int) -> None:
        stripped = text.strip()
        if not stripped:
            return
        if stripped.endswith("{") and stripped != "{":
            self.feed(stripped[:-1], line)
            self.feed("{", line)
            return
        keyword, _, rest = stripped.replace("\t", " ").partition(" ")
        keyword_upper = keyword.upper()
        if self.pending is not None and stripped != "{":
            raise self.error(f"expected '{{' after {quote(self.pending.name)}, found {quote(stripped)}", line)
        if stripped == "{":
            if self.pending is None:
                raise self.error("'{' without a ROOT, JOINT or End Site before it", line)
            self.stack.append(self.pending)
            self.pending = None
        elif stripped == "}":
            if not self.stack:
                raise self.error("'}' closes nothing", line)
            node = self.stack.pop()
            if node.offset is None:
                raise self.error(f"{quote(node.name)} has no OFFSET", node.line)
            if node.is_end_site:
                self.end_sites.append((node.parent, node.offset))
        elif keyword_upper in ("ROOT", "JOINT"):
            name = rest.strip()
            if not name:
                raise self.error(f"{keyword} without a name", line)
            if keyword_upper == "ROOT" and self.stack:
                raise self.error("ROOT inside another joint (missing '}'?)", line)
            if keyword_upper == "JOINT" and (not self.stack or self.stack[-1].is_end_site):
                raise self.error("JOINT outside a ROOT", line)
            parent = self.stack[-1].index if self.stack else -1
            node = _Node(name, line, parent, index=len(self.joints))
            self.joints.append(node)
            self.pending = node
        elif keyword_upper == "END" and rest.strip().upper() == "SITE":
            if not self.stack or self.stack[-1].is_end_site:
                raise self.error("End Site outside a joint", line)
            self.pending = _Node("End Site", line, self.stack[-1].index, is_end_site=True)
        elif keyword_upper == "OFFSET":
            node = self.current(keyword, line)
            values = rest.split(maxsplit=3)
            if len(values) != 3:
                raise self.error(f"OFFSET needs 3 numbers, found {token_count(rest.encode())}", line)
            node.offset = [_number(v, self.path, line, "OFFSET") for v in values]
        elif keyword_upper == "CHANNELS":
            node = self.current(keyword, line)
            if node.is_end_site:
                raise self.error("an End Site has no CHANNELS", line)
            tokens = rest.split(maxsplit=len(_CHANNEL_TOKENS) + 1)  # a count and at most six names
            if not tokens:
                raise self.error("CHANNELS must start with a count", line)
            problem = whole_number_problem(tokens[0])
            if problem:
                raise self.error(f"CHANNELS must start with a count: {problem}", line)
            count, names = int(tokens[0]), tokens[1:]
            if count != len(names) or len(names) > len(_CHANNEL_TOKENS):
                raise self.error(f"CHANNELS says {count} but names {token_count(rest.encode()) - 1}", line)
            for name in names:
                token = _CHANNEL_TOKENS.get(name.lower())
                if token is None:
                    raise self.error(f"unknown channel {quote(name)}", line)
                if token in node.channels:
                    raise self.error(f"channel {quote(name)} appears twice", line)
                node.channels.append(token)
        else:
            raise self.error(f"unexpected {quote(stripped)} in HIERARCHY", line)

    def current(self, keyword: str, line: int) -> _Node:
        if not self.stack:
            raise self.error(f"{keyword} outside a joint", line)
        return self.stack[-1]

    def skeleton(self, line: int, position_mode: str) -> Skeleton:
        if self.pending is not None or self.stack:
            node = self.pending or self.stack[-1]
            raise self.error(f"{quote(node.name)} (line {node.line}) is not closed before MOTION", line)
        if not self.joints:
            raise self.error("no ROOT before MOTION", line)
        end_sites: list[list[list[float]]] = [[] for _ in self.joints]
        for joint, offset in self.end_sites:
            end_sites[joint].append(offset)
        replaces = [position_mode == "replace" and any(c in TRANSLATION_CHANNELS for c in j.channels)
                    for j in self.joints]
        return Skeleton(
            names=[j.name for j in self.joints],
            parents=[j.parent for j in self.joints],
            offsets=np.array([j.offset for j in self.joints]),
            channels=[tuple(j.channels) for j in self.joints],
            end_sites=[np.array(e).reshape(-1, 3) for e in end_sites],
            position_replaces_offset=np.array(replaces, dtype=bool),
        )


def _next_line(data: bytes, start: int) -> tuple[bytes, int]:
    end = data.find(b"\n", start)
    if end < 0:
        return data[start:], len(data)
    return data[start:end], end + 1


def _header_value(data: bytes, position: int, line: int, path: str,
                  label: str) -> tuple[str, int, int]:
    """The text after ``label:`` on the next non-blank line, its line number and the next position."""
    while position < len(data):
        raw, position = _next_line(data, position)
        line += 1
        text = decode_text(raw).strip()
        if not text:
            continue
        key, colon, value = text.partition(":")
        if not colon or " ".join(key.split()).lower() != label.lower():
            raise MocapFormatError(f"expected '{label}:', found {quote(text)}", path, line)
        return value.strip(), line, position
    raise MocapFormatError(f"missing '{label}:' after MOTION", path, line)


def read_bvh(path: str | os.PathLike[str], *, position_mode: str = "replace",
             strict: bool = True) -> Clip:
    """Read a BVH file.  ``strict=False`` reads an incomplete file: it accepts a ``Frames:`` count that
    disagrees with the rows, and drops a last row cut short; both are said in ``metadata["warnings"]``."""
    return parse_bvh(read_regular_file(path), os.fspath(path), position_mode=position_mode, strict=strict)


def parse_bvh(data: bytes, path: str = "<data>", *, position_mode: str = "replace",
              strict: bool = True) -> Clip:
    """Parse BVH bytes; see :func:`read_bvh`."""
    BVH_POSITIONS.check(position_mode)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    data = unix_line_ends(data)
    parser = _HierarchyParser(path)
    position, line = 0, 0
    seen_hierarchy = False
    while True:
        if position >= len(data):
            what = "MOTION" if seen_hierarchy else "HIERARCHY"
            raise MocapFormatError(f"not a BVH file: no {what} section", path, max(line, 1))
        raw, position = _next_line(data, position)
        line += 1
        text = decode_text(raw).strip()
        if not text:
            continue
        if not seen_hierarchy:
            if text.upper() != "HIERARCHY":
                raise MocapFormatError(f"not a BVH file: expected HIERARCHY, found {quote(text, 30)}", path, line)
            seen_hierarchy = True
        elif text.upper() == "MOTION":
            break
        else:
            parser.feed(text, line)
    skeleton = parser.skeleton(line, position_mode)

    value, frames_line, position = _header_value(data, position, line, path, "Frames")
    problem = whole_number_problem(value)
    if problem:
        raise MocapFormatError(f"Frames: needs a frame count: {problem}", path, frames_line)
    declared = int(value)
    value, time_line, position = _header_value(data, position, frames_line, path, "Frame Time")
    frame_time = _number(value, path, time_line, "Frame Time")
    if not frame_time > 0:
        raise MocapFormatError(f"Frame Time must be positive, found {quote(value)}", path, time_line)
    if not 1 / frame_time <= MAGNITUDE_LIMIT:
        raise MocapFormatError(f"Frame Time {quote(value)} is too small: the frame rate would pass the limit "
                               f"{MAGNITUDE_LIMIT:g}",
                               path, time_line)

    channel_count = int(skeleton.channel_starts()[-1])
    warnings_found: list[str] = []
    cut = None if strict else _cut_last_row(data, position, channel_count)
    if cut is not None:
        data, values, cut_line = data[:cut[0]], cut[1], data.count(b"\n", 0, cut[0]) + 1
    motion = _parse_motion(data, position, channel_count, path, time_line, declared)
    if cut is not None:
        warnings_found.append(f"line {cut_line}: frame {motion.shape[0] + 1} is cut short ({values} of "
                              f"{channel_count} values): dropped")
    if motion.shape[0] != declared:
        message = f"Frames: says {declared} but {motion.shape[0]} rows follow"
        if strict:
            raise MocapFormatError(message, path, frames_line)
        warnings_found.append(message)
    return Clip(skeleton, motion, frame_time, start_frame=1, up_axis="Y",
                metadata={"format": "bvh", "source": path, "warnings": warnings_found})


def _cut_last_row(data: bytes, start: int, channel_count: int) -> tuple[int, int] | None:
    """Where the last MOTION row starts and how many values it has, if it has fewer than a row
    needs (a file cut in the middle of its last row), else ``None``."""
    end = len(data)
    while end > start and data[end - 1:end].isspace():
        end -= 1
    if end <= start or not channel_count:
        return None
    line_start = max(data.rfind(b"\n", start, end) + 1, start)
    values = token_count(data[line_start:end])
    return (line_start, values) if values < channel_count else None


def _parse_motion(data: bytes, start: int, channel_count: int, path: str, line_before: int,
                  declared: int) -> np.ndarray:
    """Rows of channel values from the MOTION data lines (``data`` from byte ``start``).

    Plain decimals are read by :func:`.table.read_table` on several cores; other
    text by numpy's C tokenizer (``np.loadtxt`` on bytes, without copying it);
    only when that refuses, or the shape or values are wrong, does a
    line-by-line pass run to name the first bad line and column.  ``declared``
    is the number of rows the header announces.
    """
    if _NON_SPACE.search(data, start) is None:
        return np.zeros((0 if channel_count else data.count(b"\n", start), channel_count))
    rows = read_table(data, start, channel_count, declared)
    if rows is not None:
        if not within_limit(rows):
            _raise_first_bad_line(data[start:], channel_count, path, line_before)
        return rows
    if any(count != channel_count for count in long_line_token_counts(data[start:], _ROW_BYTES * channel_count)):
        _raise_first_bad_line(data[start:], channel_count, path, line_before)
    stream = io.BytesIO(data)
    stream.seek(start)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = np.loadtxt(stream, dtype=np.float64, comments=None, ndmin=2)
    except ValueError:
        rows = None
    if rows is None or rows.shape[1] != channel_count or not within_limit(rows):
        _raise_first_bad_line(data[start:], channel_count, path, line_before)
    return rows


def _raise_first_bad_line(block: bytes, channel_count: int, path: str, line_before: int) -> NoReturn:
    """Name the first bad value or row of a MOTION block (only runs on bad input)."""
    frame = 0
    for number, raw in enumerate(block.split(b"\n"), start=line_before + 1):
        count = token_count(raw)
        if not count:
            continue
        frame += 1
        if count != channel_count:
            raise MocapFormatError(f"expected {channel_count} values in frame {frame}, found {count}", path, number)
        for match in re.finditer(rb"\S+", raw):
            problem = number_problem(decode_text(match.group()))
            if problem:
                column = len(decode_text(raw[:match.start()])) + 1
                raise MocapFormatError(f"frame {frame}: {problem}", path, number, column)
    raise MocapFormatError("unreadable MOTION data", path, line_before + 1)


def bvh_layout(clip: Clip, default_order: str = "ZXY") -> list[tuple[str, ...]]:
    """Channel layouts BVH can hold for ``clip``: its own where possible.

    Every joint gets three rotation channels (Blender's importer, and others, read
    no other count).  A joint with fewer takes, where its first rotation channel
    was, the clip's most common three-axis order if that lists its axes in their
    sequence, else its own axes followed by the missing ones (the added angles are
    zero); a joint with none takes the common order (``default_order`` if the clip
    has none) after its position channels.  Scale and length channels have no BVH
    counterpart: ``l`` becomes position channels, ``s`` is dropped (its values must be 1).
    """
    skeleton = clip.skeleton
    rested = ~np.all(np.abs(skeleton.rest_rotations - np.eye(3)) <= 1e-12, axis=(1, 2))
    turned = skeleton.translation_in_rest_frame & rested
    orders = Counter(o for o in map(rotation_order, skeleton.channels) if len(o) == 3)
    common = orders.most_common(1)[0][0] if orders else check_order(default_order)
    layouts = []
    for joint, layout in enumerate(skeleton.channels):
        order = rotation_order(layout)
        if len(order) < 3:
            order = common if listed_within(order, common) else order + "".join(a for a in "XYZ" if a not in order)
            turns: tuple[str, ...] | None = tuple(f"r{axis.lower()}" for axis in order)
        else:
            turns = None  # kept in place
        # A translation that no longer lies along the file's own axes needs all three channels.
        moves = TRANSLATION_CHANNELS if "l" in layout or (turned[joint] and any(
            c in TRANSLATION_CHANNELS for c in layout)) else None
        out: list[str] = []
        for channel in layout:
            if channel in ROTATION_CHANNELS:
                if turns is None:
                    out.append(channel)
                elif not any(c in ROTATION_CHANNELS for c in out):
                    out += turns
            elif channel in TRANSLATION_CHANNELS or channel == "l":
                if moves is None:
                    out.append(channel)
                elif not any(c in TRANSLATION_CHANNELS for c in out):
                    out += moves
        if turns is not None and not any(c in ROTATION_CHANNELS for c in out):
            out += turns
        layouts.append(tuple(out))
    return layouts


def _joint_name(name: str) -> str:
    """``name`` as the reader will read it back: one line, no '{' at its end, not empty."""
    name = re.sub(r"[\r\n]+", "_", name).strip()
    return name + "_" if name.endswith("{") else name or "joint"


def write_bvh(clip: Clip, path: str | os.PathLike[str], *, precision: int = 6,
              position_mode: str = "replace") -> None:
    """Write ``clip`` as BVH (atomically: a temporary file renamed into place)."""
    atomic_write(path, format_bvh(clip, precision=precision, position_mode=position_mode).encode("utf-8"))


def format_bvh(clip: Clip, *, precision: int = 6, position_mode: str = "replace") -> str:
    """The BVH text for ``clip``; motion is formatted in one vectorised call."""
    BVH_POSITIONS.check(position_mode)
    require_writable(clip, "BVH", numbered=False)
    layouts = bvh_layout(clip)
    replaces = [position_mode == "replace" and any(c in TRANSLATION_CHANNELS for c in layout)
                for layout in layouts]
    clip = conform(clip, layouts, np.array(replaces, dtype=bool))
    require_writable(clip, "BVH", numbered=False)
    skeleton = clip.skeleton
    lines = ["HIERARCHY"]
    children = skeleton.child_lists()

    def offset_line(indent: str, offset: np.ndarray) -> str:
        return f"{indent}OFFSET " + " ".join(number_text(v, 9) for v in offset)

    # Depth-first without recursion: a stack of (joint, depth) and closing markers.
    # The file lists joints depth first, so the motion columns follow that order.
    stack: list[tuple[int, int]] = [(j, 0) for j in reversed(range(skeleton.joint_count))
                                    if skeleton.parents[j] < 0]
    starts = skeleton.channel_starts()
    columns: list[int] = []
    while stack:
        joint, depth = stack.pop()
        indent = "\t" * min(depth, _MAX_INDENT)
        if joint < 0:
            lines.append(indent + "}")
            continue
        columns.extend(range(starts[joint], starts[joint + 1]))
        keyword = "ROOT" if skeleton.parents[joint] < 0 else "JOINT"
        lines.append(f"{indent}{keyword} {_joint_name(skeleton.names[joint])}")
        lines.append(indent + "{")
        lines.append(offset_line(indent + "\t", skeleton.offsets[joint]))
        layout = skeleton.channels[joint]
        lines.append(f"{indent}\tCHANNELS {len(layout)}"
                     + "".join(" " + _CHANNEL_NAMES[c] for c in layout))
        for site in skeleton.end_sites[joint]:
            lines += [f"{indent}\tEnd Site", f"{indent}\t{{", offset_line(indent + "\t\t", site),
                      f"{indent}\t}}"]
        stack.append((-1, depth))
        stack.extend((child, depth + 1) for child in reversed(children[joint]))
    lines += ["MOTION", f"Frames: {clip.frame_count}", f"Frame Time: {clip.frame_time!r}"]
    header = "\n".join(lines) + "\n"
    motion = clip.motion if columns == list(range(len(columns))) else clip.motion[:, columns]
    return header + format_rows(motion, precision)


def unit_note(clip: Clip) -> str:
    """BVH states no unit: a written file's lengths are in the clip's unit, whatever it is."""
    if clip.unit_in_metres is None:
        return "BVH states no unit: lengths written as they are (their unit is not known either)"
    unit = unit_name(clip.unit_in_metres) or f"{clip.unit_in_metres:.6g} m"
    return f"BVH states no unit: lengths written in the clip's unit, {unit}"


FORMAT = FileFormat("bvh", "BVH", __name__, readers={".bvh": "read_bvh"}, writer="write_bvh",
                    signatures={".bvh": ("HIERARCHY",)}, unit_note="unit_note", up_axis_known=False,
                    expected_unit="cm")
