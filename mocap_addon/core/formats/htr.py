"""Motion Analysis HTR (hierarchical translation-rotation): read and write.

A segment's local transform is ``T(base) @ R0 @ T(t) @ R(frame) @ S(SF)``:
``R0`` from the base position's angles, ``R(frame)`` from the frame's, both
composed in the header's ``EulerRotationOrder``, and the frame translation ``t``
in the segment's base frame.  Two points readers disagree on are options (see
the README's "HTR conventions"):

* ``order_reading="listed"``: ``ZYX`` means ``Rz @ Ry @ Rx``; ``"reversed"``: ``Rx @ Ry @ Rz``.
* ``translation="rotated"``: frame translations are turned by the base rotation;
  ``"parent"``: they add to the base translation in the parent's frame,
  ``T(base + t) @ R0 @ R(frame)`` (format notes, eq. 3.4-3.6).  Exporters
  differ, so by default (``"evidence"``) each file is read both ways and the
  reading under which its planted feet slide least is kept (the format notes'
  where they tie or no feet are found); ``metadata["htr"]`` records the choice
  and the slides measured, and ``metadata["notes"]`` says it in words.  Files
  this module writes say their reading in a comment, which is followed.

A file may repeat its segment blocks in several sets: they are read as
consecutive frames, a set whose numbering restarts beginning a new take
(``clip.metadata["takes"]``: the takes' first frames), and written back so.
Frame blocks are parsed with numpy in bulk, one call per block.
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from ..bones import aligned_frames, choose_tails
from ..errors import MocapFormatError, MocapWriteError
from ..files import read_regular_file
from ..kinematics import rebase_in_blocks
from ..model import Clip, Skeleton
from ..options import HTR_ORDER, HTR_TRANSLATION, HTR_TRANSLATION_READING
from ..rotations import check_order, euler_to_matrix, matrix_to_euler
from ..transforms import rest_pose
from ..units import UNITS_IN_METRES, convert_unit, unit_name
from .fileformat import FileFormat
from .textio import (
    MAGNITUDE_LIMIT,
    WHOLE_NUMBER_LIMIT,
    atomic_write,
    decode_text,
    format_rows,
    long_line_token_counts,
    longest_line,
    number_problem,
    quote,
    require_writable,
    safe_names,
    shorten,
    token_count,
    unix_line_ends,
    within_limit,
)

_ROWS_PER_PIECE = 1 << 14  # rows formatted at a time when writing: the text is streamed, never held whole
SLIDE_TIE = 0.05  # slides within this fraction of each other (or both under 1e-6 leg lengths) tie
FEWEST_CONTACT_STEPS = 10  # fewer steps of planted points than this are no evidence
_WRITTEN_READING = "FrameTranslations"  # a comment our writer leaves: how its frame translations are read
_WRITTEN = re.compile(rb"^#[ \t]*" + _WRITTEN_READING.encode() + rb"[ \t]+(rotated|parent)[ \t]*$", re.MULTILINE)
_SECTION = re.compile(rb"^[ \t]*\[([^\]\r\n]*)\][ \t]*\r?$", re.MULTILINE)
_AXES = {"X": 0, "Y": 1, "Z": 2}
# Segment names are single tokens and must not close a [section] or stand for a parent keyword.
_UNSAFE_IN_NAMES = re.compile(r"[\s#\]]+")
_RESERVED_NAMES = ("global", "header", "segmentnames&hierarchy", "baseposition", "endoffile")
_MOST_FIELDS = 1000  # fields on one line, far more than any HTR line holds
_ROW_BYTES = 64  # bytes a frame row may take per value before its values are counted first


@dataclass
class _Section:
    name: str
    line: int  # line number of the [name] line
    start: int  # byte offset after the header line
    end: int


@dataclass
class _Text:
    """The file's bytes with its sections located; line numbers for error messages."""
    path: str
    data: bytes
    sections: list[_Section] = field(default_factory=list)
    long_lines: bool = False  # a line long enough to count its values before numpy reads it

    def lines(self, section: _Section) -> list[tuple[int, list[str]]]:
        """Non-empty lines of a small section as (line number, tokens), comments removed."""
        out = []
        block = self.data[section.start:section.end]
        for number, raw in enumerate(block.split(b"\n"), start=section.line + 1):
            tokens = decode_text(raw).split("#", 1)[0].split(maxsplit=_MOST_FIELDS)
            if len(tokens) > _MOST_FIELDS:
                raise self.error(f"{token_count(raw.split(b'#', 1)[0])} fields on one line: no HTR line has more "
                                 f"than {_MOST_FIELDS}", number)
            if tokens:
                out.append((number, tokens))
        return out

    def error(self, message: str, line: int | None) -> MocapFormatError:
        return MocapFormatError(message, self.path, line)


def _locate(path: str, data: bytes) -> _Text:
    text = _Text(path, data, long_lines=longest_line(data) > 8 * _ROW_BYTES)
    matches = list(_SECTION.finditer(data))
    line, position = 1, 0
    for n, match in enumerate(matches):
        line += data.count(b"\n", position, match.start())
        position = match.start()
        end = matches[n + 1].start() if n + 1 < len(matches) else len(data)
        header_end = data.find(b"\n", match.start())
        start = len(data) if header_end < 0 else header_end + 1
        text.sections.append(_Section(decode_text(match.group(1)).strip(), line, start, end))
    return text


def _float(token: str, text: _Text, line: int, what: str) -> float:
    problem = number_problem(token)
    if problem:
        raise text.error(f"{what}: {problem}", line)
    return float(token)


@dataclass
class _Header:
    values: dict[str, str]
    lines: dict[str, int]

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key.lower(), default)


def _read_header(text: _Text, section: _Section) -> _Header:
    values, lines = {}, {}
    for number, tokens in text.lines(section):
        key = tokens[0].lower()
        values[key] = " ".join(tokens[1:])
        lines[key] = number
    return _Header(values, lines)


def read_htr(path: str | os.PathLike[str], *, order_reading: str = "listed", translation: str = "evidence") -> Clip:
    """Read an HTR file; see the module notes for the two reading options."""
    return parse_htr(read_regular_file(path), os.fspath(path), order_reading=order_reading, translation=translation)


@dataclass
class _Settings:
    """What an HTR header says about how to read the rest of the file."""

    file_type: str
    listed: str  # EulerRotationOrder as written
    order: str  # the order the angles are applied in (``listed`` or reversed)
    radians: bool
    scale_factor: float
    fps: float
    length_axis: str
    units: str


def parse_htr(data: bytes, path: str = "<data>", *, order_reading: str = "listed",
              translation: str = "evidence") -> Clip:
    """Parse HTR bytes; see :func:`read_htr`."""
    HTR_ORDER.check(order_reading)
    HTR_TRANSLATION_READING.check(translation)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    data = unix_line_ends(data)
    text = _locate(path, data)
    named = _sections(text, data)
    header = _read_header(text, named["header"])
    settings = _settings(text, header, named["header"].line, order_reading)
    warnings_found: list[str] = []
    names, parents, hierarchy_lines = _read_hierarchy(text, named["segmentnames&hierarchy"])
    base = _read_base(text, named["baseposition"], names)
    frame_numbers, motion_blocks, takes = _read_frames(text, names, hierarchy_lines)
    for key, actual, what in (("NumFrames", len(frame_numbers), "frames are present"),
                              ("NumSegments", len(names), "segments are listed")):
        declared = header.get(key)
        if declared is not None and (number_problem(declared) is not None or float(declared) != actual):
            warnings_found.append(f"{key} says {shorten(declared)} but {actual} {what}")
    order, count = settings.order, len(names)
    order_index = [ord(c) - ord("X") for c in order]
    base_angles = np.degrees(base[:, 3:6]) if settings.radians else base[:, 3:6]
    rest = euler_to_matrix(np.radians(base_angles[:, order_index]), order)
    motion = _channel_values(motion_blocks, len(frame_numbers), order_index, settings, warnings_found)
    tokens = ("tx", "ty", "tz", *(f"r{c.lower()}" for c in order), "s")
    axis = np.zeros(3)
    axis[_AXES[settings.length_axis]] = 1.0
    with np.errstate(over="ignore"):  # an overflow is reported just below
        lengths = base[:, 6] * settings.scale_factor
        offsets = base[:, 0:3] * settings.scale_factor
    if not (within_limit(motion) and within_limit(offsets) and within_limit(lengths)):
        raise text.error(f"values overflow the limit {MAGNITUDE_LIMIT:g} once scaled by ScaleFactor "
                         "(or turned from radians to degrees)",
                         header.lines.get("scalefactor") or header.lines.get("rotationunits") or named["header"].line)
    has_child = np.zeros(count, dtype=bool)
    has_child[[p for p in parents if p >= 0]] = True
    end_sites = [np.zeros((0, 3)) if has_child[j] else (lengths[j] * axis)[None] for j in range(count)]
    skeleton = Skeleton(names, parents, offsets, [tokens] * count, end_sites, rest_rotations=rest,
                        translation_in_rest_frame=np.full(count, translation == "rotated"))
    metadata = {
        "format": "htr", "source": path, "warnings": warnings_found,
        "bone_vectors": (lengths[:, None] * axis).tolist(),
        "htr": {"header": header.values, "bone_lengths": lengths.tolist(), "bone_length_axis": settings.length_axis,
                "euler_rotation_order": settings.listed, "order_reading": order_reading, "translation": translation,
                "file_type": settings.file_type, "scale_factor": settings.scale_factor},
    }
    if len(takes) > 1:
        metadata["takes"] = takes
    clip = Clip(skeleton, motion, 1.0 / settings.fps, start_frame=int(frame_numbers[0]) if len(frame_numbers) else 0,
                unit_in_metres=UNITS_IN_METRES.get(settings.units),
                up_axis=(header.get("GlobalAxisofGravity", "Y") or "Y").upper(), metadata=metadata)
    if translation == "evidence":
        written = _WRITTEN.search(data, 0, named["header"].start)
        if written is None:
            _read_translations_by_evidence(clip)
        else:
            clip.metadata["htr"].update(translation=written.group(1).decode(), translation_chosen_by="file")
            skeleton.translation_in_rest_frame[:] = written.group(1) == b"rotated"
    return clip


def _sections(text: _Text, data: bytes) -> dict[str, _Section]:
    """The file's sections by lower-case name (the first of each), the three every HTR needs checked."""
    named: dict[str, _Section] = {}
    for section in text.sections:
        named.setdefault(section.name.lower(), section)
    first_content = next((n for n, raw in enumerate(data.split(b"\n", 50)[:50], start=1)
                          if decode_text(raw).split("#", 1)[0].strip()), 1)
    if "header" not in named:
        raise text.error("not an HTR file: no [Header] section", first_content)
    for required in ("SegmentNames&Hierarchy", "BasePosition"):
        if required.lower() not in named:
            # Reading ends at the end of the file without finding it: name the last line.
            raise text.error(f"no [{required}] section", data.count(b"\n", 0, len(data.rstrip())) + 1)
    return named


def _settings(text: _Text, header: _Header, header_line: int, order_reading: str) -> _Settings:
    """The header's reading settings, checked (errors name their line)."""

    def header_number(key: str, default: float | None = None) -> float:
        value = header.get(key)
        if value is None:
            if default is None:
                raise text.error(f"header has no {key}", header_line)
            return default
        return _float(value, text, header.lines[key.lower()], key)

    file_type = (header.get("FileType") or "htr").lower()
    if file_type not in ("htr", "gtr"):
        raise text.error(f"unknown FileType {quote(file_type)}", header.lines.get("filetype"))
    order_text = header.get("EulerRotationOrder", "ZYX") or "ZYX"
    try:
        listed = check_order(order_text)
    except ValueError:
        raise text.error(f"EulerRotationOrder {quote(order_text)} is not a rotation order",
                         header.lines.get("eulerrotationorder")) from None
    if len(listed) != 3:
        raise text.error(f"EulerRotationOrder {quote(order_text)} needs three axes",
                         header.lines.get("eulerrotationorder"))
    radians = (header.get("RotationUnits", "Degrees") or "").lower().startswith("rad")
    scale_factor = header_number("ScaleFactor", 1.0)
    fps = header_number("DataFrameRate")
    if not fps > 0:
        raise text.error("DataFrameRate must be positive", header.lines.get("dataframerate"))
    if not 1 / fps <= MAGNITUDE_LIMIT:
        raise text.error(f"DataFrameRate is too small: the frame time would pass the limit {MAGNITUDE_LIMIT:g} s",
                         header.lines.get("dataframerate"))
    length_axis = (header.get("BoneLengthAxis", "Y") or "Y").upper()
    if length_axis not in _AXES:
        raise text.error(f"BoneLengthAxis {quote(length_axis)} is not X, Y or Z", header.lines.get("bonelengthaxis"))
    return _Settings(file_type, listed, listed if order_reading == "listed" else listed[::-1], radians, scale_factor,
                     fps, length_axis, (header.get("CalibrationUnits", "") or "").lower())


def _channel_values(blocks: list[np.ndarray], frames: int, order_index: list[int], settings: _Settings,
                    warnings_found: list[str]) -> np.ndarray:
    """Each segment's frame values as clip channels ``tx ty tz`` (scaled), three angles (degrees, in the
    applied order) and ``s`` (0 read as 1, reported)."""
    motion = np.empty((frames, len(blocks) * 7))
    zero_scale = 0
    for joint, values in enumerate(blocks):
        angles = np.degrees(values[:, 3:6]) if settings.radians else values[:, 3:6]
        scales = values[:, 6].copy()
        zero = scales == 0.0
        zero_scale += int(zero.sum())
        scales[zero] = 1.0
        motion[:, joint * 7: joint * 7 + 3] = values[:, 0:3] * settings.scale_factor
        motion[:, joint * 7 + 3: joint * 7 + 6] = angles[:, order_index]
        motion[:, joint * 7 + 6] = scales
    if zero_scale:
        warnings_found.append(f"{zero_scale} scale factors of 0 read as 1 (no scale)")
    return motion


def _read_translations_by_evidence(clip: Clip) -> None:
    """Set ``clip``'s frame translation reading to the one under which its planted feet slide least.

    Both readings are measured over the same frames: those in which a foot is
    planted under either.  Where no joint with a base rotation moves, the
    readings are one; where they tie or no feet are found, the format notes'
    (``"parent"``) is kept.  The slides (leg lengths per contact frame) go
    into ``metadata["htr"]["translation_slide"]`` and a note into ``metadata["notes"]``.
    """
    from dataclasses import replace

    from ..body.contacts import find_contacts
    from ..naming import map_skeleton

    skeleton = clip.skeleton
    info = clip.metadata["htr"]
    info["translation"], info["translation_chosen_by"] = "parent", "format notes"
    skeleton.translation_in_rest_frame[:] = False
    turned = np.abs(skeleton.rest_rotations - np.eye(3)).max(axis=(1, 2)) > 1e-12
    moving = [j for j in np.flatnonzero(turned) if np.any(clip.joint_translations(int(j)) != 0.0)]
    if not moving or clip.frame_count < 2:
        return
    rotated = Clip(skeleton.copy(), clip.motion, clip.frame_time, metadata=clip.metadata)
    rotated.skeleton.translation_in_rest_frame[:] = True
    try:
        mapping = map_skeleton(skeleton)
        found = {"parent": find_contacts(clip, mapping), "rotated": find_contacts(rotated, mapping)}
    except ValueError:
        found = {}
    touching = found["parent"].touching | found["rotated"].touching if found else np.zeros((0, 2, 2), dtype=bool)
    if np.count_nonzero(touching[1:] & touching[:-1]) < FEWEST_CONTACT_STEPS:
        clip.metadata.setdefault("notes", []).append(
            "frame translations added in the parent's frame (format notes): "
            + ("too few planted frames" if found else "no feet") + " to tell the readings apart")
        return
    slides = {name: replace(contacts, touching=touching).slide() for name, contacts in found.items()}
    info["translation_slide"] = slides
    low, high = sorted(slides.values())
    tie = high - low <= SLIDE_TIE * high or high < 1e-6
    chosen = "parent" if tie else min(slides, key=slides.__getitem__)
    info["translation"], info["translation_chosen_by"] = chosen, "format notes" if tie else "evidence"
    skeleton.translation_in_rest_frame[:] = chosen == "rotated"
    words = {"rotated": "turned by the base rotation", "parent": "added in the parent's frame"}
    other = "parent" if chosen == "rotated" else "rotated"
    clip.metadata.setdefault("notes", []).append(
        f"frame translations {words[chosen]}: planted feet slide {slides[chosen]:.4f} leg lengths per frame read "
        f"so, {slides[other]:.4f} {words[other]} (Frame Translation forces either)")


def _read_hierarchy(text: _Text, section: _Section) -> tuple[list[str], list[int], dict[str, int]]:
    """Segments in parent-before-child order (file order kept where possible)."""
    declared: dict[str, tuple[str, int]] = {}
    for number, tokens in text.lines(section):
        if len(tokens) != 2:
            raise text.error(f"expected 'child parent', found {len(tokens)} fields", number)
        child, parent = tokens
        if child in declared:
            raise text.error(f"segment {quote(child)} is listed twice", number)
        declared[child] = (parent, number)
    if not declared:
        raise text.error("no segments in [SegmentNames&Hierarchy]", section.line)
    names: list[str] = []
    placed: set[str] = set()
    for child in declared:
        chain: dict[str, None] = {}  # insertion-ordered set
        current = child
        while current not in placed:
            if current in chain:
                raise text.error(f"hierarchy cycle through {quote(current)}", declared[current][1])
            chain[current] = None
            up = declared[current][0]
            if up.upper() == "GLOBAL":
                break
            if up not in declared:
                raise text.error(f"parent {quote(up)} of {quote(current)} is never defined", declared[current][1])
            current = up
        for name in reversed(chain):
            names.append(name)
            placed.add(name)
    index = {name: n for n, name in enumerate(names)}
    parents = [-1 if declared[n][0].upper() == "GLOBAL" else index[declared[n][0]] for n in names]
    return names, parents, {n: declared[n][1] for n in names}


def _read_base(text: _Text, section: _Section, names: list[str]) -> np.ndarray:
    rows: dict[str, list[float]] = {}
    known = set(names)
    for number, tokens in text.lines(section):
        if len(tokens) != 8:
            raise text.error(f"expected 'name Tx Ty Tz Rx Ry Rz BoneLength', found {len(tokens)} fields", number)
        if tokens[0] not in known:
            raise text.error(f"base position for unknown segment {quote(tokens[0])}", number)
        rows[tokens[0]] = [_float(t, text, number, shorten(tokens[0])) for t in tokens[1:]]
    missing = [n for n in names if n not in rows]
    if missing:
        raise text.error(f"no base position for {quote(missing[0])}", section.line)
    base = np.array([rows[n] for n in names])
    if not np.isfinite(base).all():
        raise text.error("base position values must be finite", section.line)
    return base


def _read_frames(text: _Text, names: list[str],
                 hierarchy_lines: dict[str, int]) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
    """Frame numbers, each segment's ``(frames, 7)`` values and the takes' first frames.

    A file may hold several consecutive sets of the segment blocks (``[Hips]`` …
    ``[Hips]`` …): they are read in file order as consecutive frames, and a set
    whose numbering does not continue the one before (it restarts) begins a new take.
    """
    sections: dict[str, list[_Section]] = {name: [] for name in names}
    for section in text.sections:
        if section.name in sections:
            sections[section.name].append(section)
    for name in names:
        if not sections[name]:
            raise text.error(f"segment {quote(name)} has no [{shorten(name)}] frame block", hierarchy_lines[name])
    first = names[0]
    reference = [_read_block(text, section, first)[0] for section in sections[first]]
    values = []
    for name in names:
        if len(sections[name]) != len(reference):
            raise text.error(f"[{shorten(name)}] has {len(sections[name])} frame block(s), [{shorten(first)}] "
                             f"{len(reference)}", sections[name][-1].line)
        blocks = [_read_block(text, section, name) for section in sections[name]]
        for section, (numbers, _), expected in zip(sections[name], blocks, reference):
            if not np.array_equal(numbers, expected):
                missing = sorted(set(expected.tolist()) ^ set(numbers.tolist()))
                raise text.error(f"[{shorten(name)}] has {len(numbers)} frames, the first block {len(expected)} "
                                 f"(frame {missing[0]:g} differs)" if missing
                                 else f"[{shorten(name)}] frames out of order", section.line)
        values.append(np.concatenate([block for _, block in blocks]))
    sizes = np.cumsum([len(numbers) for numbers in reference])
    takes = [0] + [int(sizes[n - 1]) for n in range(1, len(reference))
                   if reference[n][0] != reference[n - 1][-1] + 1]
    return np.concatenate(reference), values, takes


def _read_block(text: _Text, section: _Section, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Frame numbers and the (frames, 7) values of one segment's block."""
    block = text.data[section.start:section.end]
    if text.long_lines and any(count != 8 for count in long_line_token_counts(block, 8 * _ROW_BYTES, b"#")):
        _raise_bad_row(text, section, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = np.loadtxt(io.BytesIO(block), comments="#", ndmin=2, dtype=np.float64)
    except ValueError:
        rows = None
    if rows is None or rows.shape[0] == 0 or rows.shape[1] != 8 or not within_limit(rows):
        _raise_bad_row(text, section, name)
    numbers = rows[:, 0]
    if (np.any(np.diff(numbers) != 1) or numbers[0] != np.round(numbers[0])
            or abs(numbers[0]) + len(numbers) >= WHOLE_NUMBER_LIMIT):
        _raise_bad_row(text, section, name, numbers)
    return numbers, rows[:, 1:]


def _raise_bad_row(text: _Text, section: _Section, name: str, numbers: np.ndarray | None = None) -> NoReturn:
    """Name the first bad line of a frame block (only runs on bad input)."""
    previous = None
    rows = text.lines(section)
    if not rows:
        raise text.error(f"[{shorten(name)}] has no frames", section.line)
    for number, tokens in rows:
        if len(tokens) != 8:
            raise text.error(f"[{shorten(name)}]: expected 'frame Tx Ty Tz Rx Ry Rz SF' (8 values), "
                             f"found {len(tokens)}",
                             number)
        for token in tokens:
            _float(token, text, number, f"[{shorten(name)}]")
        frame = float(tokens[0])
        if previous is not None and frame != previous + 1:
            raise text.error(f"[{shorten(name)}]: frame {frame:g} follows frame {previous:g} "
                             "(missing or out of order)",
                             number)
        if frame != round(frame):
            raise text.error(f"[{shorten(name)}]: frame number {quote(tokens[0])} is not a whole number", number)
        if abs(frame) >= WHOLE_NUMBER_LIMIT:
            raise text.error(f"[{shorten(name)}]: frame number {quote(tokens[0])} is beyond "
                             f"{WHOLE_NUMBER_LIMIT - 1}", number)
        previous = frame
    raise text.error(f"[{shorten(name)}]: unreadable frame block", section.line)


def htr_form(clip: Clip, *, euler_order: str = "ZYX", order_reading: str = "listed", translation: str = "parent",
             bone_length_axis: str = "Y") -> Clip:
    """The clip as HTR holds it: ``tx ty tz`` + three rotations + ``s`` per segment, base frames along the bones.

    A clip already in that form is returned as it is; any other (BVH, ASF) is
    rebased so each segment's ``bone_length_axis`` points along its bone.
    """
    HTR_ORDER.check(order_reading)
    HTR_TRANSLATION.check(translation)
    order = euler_order if order_reading == "listed" else euler_order[::-1]
    layout = ("tx", "ty", "tz", *(f"r{c.lower()}" for c in order), "s")
    skeleton = clip.skeleton
    rotated = translation == "rotated"
    if (all(c == layout for c in skeleton.channels) and not skeleton.position_replaces_offset.any()
            and bool(np.all(skeleton.translation_in_rest_frame == rotated))):
        return clip
    rotations, heads = rest_pose(skeleton)
    sites = [heads[j] + (rotations[j] @ e.T).T for j, e in enumerate(skeleton.end_sites)]
    up = np.eye(3)[_AXES.get(clip.up_axis.upper().lstrip("+-"), 1)]
    tails = choose_tails(skeleton.parents, heads, sites, up)
    frames = aligned_frames(heads, tails, rotations, along=_AXES[bone_length_axis])
    return rebase_in_blocks(clip, frames, [layout] * skeleton.joint_count, rotated)


def write_htr(clip: Clip, path: str | os.PathLike[str], *, precision: int = 8, order_reading: str | None = None,
              translation: str | None = None, euler_order: str | None = None,
              bone_length_axis: str | None = None) -> None:
    """Write ``clip`` as HTR (atomically).  Unset options follow the clip's own HTR reading, else ZYX, Y and
    frame translations in the parent's frame (the format notes': what a reader falls back to)."""
    atomic_write(path, htr_pieces(clip, precision=precision, order_reading=order_reading, translation=translation,
                                  euler_order=euler_order, bone_length_axis=bone_length_axis))


def format_htr(clip: Clip, *, precision: int = 8, order_reading: str | None = None, translation: str | None = None,
               euler_order: str | None = None, bone_length_axis: str | None = None) -> str:
    """The HTR text for ``clip``.  ``CalibrationUnits`` names the clip's unit (lengths in a unit
    without a name are converted to mm); a clip that states no unit is written without it."""
    return "".join(htr_pieces(clip, precision=precision, order_reading=order_reading, translation=translation,
                              euler_order=euler_order, bone_length_axis=bone_length_axis))


def htr_pieces(clip: Clip, *, precision: int = 8, order_reading: str | None = None, translation: str | None = None,
               euler_order: str | None = None, bone_length_axis: str | None = None) -> Iterator[str]:
    """:func:`format_htr`'s text in pieces (the header, then each segment's frame block): a writer streams
    them to its file, so a long take's text is never held whole.  Everything is checked before the first
    piece (a refused clip raises ``MocapWriteError`` before anything is written)."""
    header, blocks = _htr_header_and_blocks(clip, precision=precision, order_reading=order_reading,
                                            translation=translation, euler_order=euler_order,
                                            bone_length_axis=bone_length_axis)
    yield header
    yield from blocks
    yield "[EndOfFile]\n"


def _htr_header_and_blocks(clip: Clip, *, precision: int, order_reading: str | None, translation: str | None,
                           euler_order: str | None, bone_length_axis: str | None) -> tuple[str, Iterator[str]]:
    """The header text and a generator of the frame blocks' texts, once the clip is checked."""
    unit = unit_name(clip.unit_in_metres)
    if clip.unit_in_metres is not None and unit is None:
        clip, unit = convert_unit(clip, UNITS_IN_METRES["mm"]), "mm"
    known = clip.metadata.get("htr", {}) if clip.metadata.get("format") == "htr" else {}
    listed = check_order(euler_order or known.get("euler_rotation_order", "ZYX"))
    reading = order_reading or known.get("order_reading", "listed")
    moving = translation or known.get("translation", "parent")
    axis = (bone_length_axis or known.get("bone_length_axis", "Y")).upper()
    require_writable(clip, "HTR")
    if clip.frame_count == 0:
        raise MocapWriteError("cannot write HTR: the clip has no frames (an HTR frame block needs at least one)")
    form = htr_form(clip, euler_order=listed, order_reading=reading, translation=moving, bone_length_axis=axis)
    require_writable(form, "HTR")
    skeleton = form.skeleton
    names = safe_names(skeleton.names, _UNSAFE_IN_NAMES, _RESERVED_NAMES, "segment")
    order = listed if reading == "listed" else listed[::-1]
    by_axis = [order.index(c) for c in "XYZ"]  # file columns Rx Ry Rz from composition order
    base_angles = np.degrees(matrix_to_euler(skeleton.rest_rotations, order))[:, by_axis]
    lengths = _bone_lengths(form, known, axis, rest_pose(skeleton)[1])
    lines = ["# Motion Analysis HTR, written by Mocap I/O", f"# {_WRITTEN_READING} {moving}", "[Header]",
             "FileType htr", "DataType HTRS",
             "FileVersion 1", f"NumSegments {skeleton.joint_count}", f"NumFrames {form.frame_count}",
             f"DataFrameRate {form.fps:.10g}", f"EulerRotationOrder {listed}",
             *([f"CalibrationUnits {unit}"] if unit else []), "RotationUnits Degrees",
             f"GlobalAxisofGravity {form.up_axis.upper().lstrip('+-')}", f"BoneLengthAxis {axis}",
             "ScaleFactor 1.0", "[SegmentNames&Hierarchy]"]
    lines += [f"{name}\t{'GLOBAL' if p < 0 else names[p]}" for name, p in zip(names, skeleton.parents)]
    lines.append("[BasePosition]")
    base = np.column_stack([skeleton.offsets, base_angles, lengths])
    if not np.isfinite(base).all():
        raise MocapWriteError("cannot write HTR: base positions overflow (the skeleton is too large)")
    rows = format_rows(base, precision).splitlines()
    lines += [f"{name}\t{row}" for name, row in zip(names, rows)]
    starts = skeleton.channel_starts()

    def blocks() -> Iterator[str]:
        for first, end in form.take_ranges():  # one set of segment blocks per take, numbered afresh
            numbers = np.arange(form.start_frame, form.start_frame + end - first, dtype=np.float64)
            for joint, name in enumerate(names):
                values = form.motion[first:end, starts[joint]: starts[joint + 1]]
                columns = np.column_stack([numbers, values[:, :3], values[:, 3:6][:, by_axis], values[:, 6]])
                # SF to significant digits where it must: a tiny scale written as 0 would read back as 1.
                yield f"[{name}]\n"
                for row in range(0, len(columns), _ROWS_PER_PIECE):
                    yield format_rows(columns[row:row + _ROWS_PER_PIECE], precision, significant=[7])

    return "\n".join(lines) + "\n", blocks()


def _bone_lengths(clip: Clip, known: dict, axis: str, heads: np.ndarray) -> np.ndarray:
    """Each segment's BoneLength: the file's own where known, else the distance to its bone's tail."""
    skeleton = clip.skeleton
    stored = known.get("bone_lengths")
    if stored is not None and len(stored) == skeleton.joint_count and known.get("bone_length_axis") == axis:
        return np.asarray(stored, dtype=np.float64)
    lengths = np.zeros(skeleton.joint_count)
    for joint, parent in enumerate(skeleton.parents):
        if len(skeleton.end_sites[joint]):
            lengths[joint] = float(skeleton.end_sites[joint][0][_AXES[axis]])
        if parent >= 0:
            along = float(skeleton.offsets[joint][_AXES[axis]])
            lengths[parent] = max(lengths[parent], along)
    return lengths


def unit_note(clip: Clip) -> str | None:
    """A written file names the clip's unit in ``CalibrationUnits``: a unit without a name is converted
    to mm, and a clip that states no unit is written without it."""
    if clip.unit_in_metres is None:
        return "no unit known: HTR written without CalibrationUnits"
    if unit_name(clip.unit_in_metres) is None:
        return f"HTR lengths converted to mm from the clip's unit ({clip.unit_in_metres:.6g} m)"
    return None


FORMAT = FileFormat("htr", "HTR", __name__, readers={".htr": "read_htr"}, writer="write_htr",
                    signatures={".htr": ("[HEADER]",)}, unit_note="unit_note", up_axis_known=True)
