"""Acclaim ASF (skeleton) and AMC (motion), per the Acclaim specification v1.10.

Each bone becomes a joint at the bone's start whose frame is the bone's axis
frame ``C``.  With motion rotation ``M`` from the dof values, the spec's
``W_b = W_p C_b M_b C_b^-1`` gives a local rotation ``(C_p^-1 C_b) M_b``, so
``C_p^-1 C_b`` is the joint's rest rotation and ``M_b`` its frame rotation; the
joint sits at its parent bone's end, ``C_p^-1 (length_p direction_p)`` in the
parent's frame; a leaf's end is an End Site.  Order tokens list rotations in the
order they are applied: ``dof rx ry rz`` and ``axis XYZ`` both mean
``Rz @ Ry @ Rx`` (CMU's BVH conversion writes ``dof rx ry rz`` as channels
``Zrotation Yrotation Xrotation``).

Units: ``:units length L`` scales lengths.  CMU files say ``length 0.45`` and
in practice their lengths are in units of 1/0.45 inch, so by default lengths
are kept as written and ``unit_in_metres = 0.0254 / L``
(``length_reading="cmu"``); ``length_reading="spec"`` multiplies them by ``L``
on read-in, as the specification's text says, and leaves the unit unknown.
Written files state the clip's unit the same way, ``L = 0.0254 / unit`` (a
metre where the clip states none), with lengths as they are.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..bones import choose_tails
from ..errors import MocapFormatError, MocapWriteError
from ..kinematics import local_transforms, rest_pose
from ..model import ROTATION_CHANNELS, TRANSLATION_CHANNELS, Clip, Skeleton, encode_motion
from ..rotations import euler_to_matrix, matrix_to_euler
from .textio import (
    WHOLE_NUMBER,
    WHOLE_NUMBER_LIMIT,
    atomic_write,
    decode_text,
    long_line_token_counts,
    number_problem,
    number_text,
    printable,
    quote,
    require_writable,
    safe_names,
    shorten,
    token_count,
    unix_line_ends,
    whole_number_problem,
)

LENGTH_READINGS = ("cmu", "spec")
DOF_TOKENS = {"rx": "rx", "ry": "ry", "rz": "rz", "tx": "tx", "ty": "ty", "tz": "tz", "l": "l"}
_SEPARATORS = re.compile(r"[,()]")
_MOST_FIELDS = 8  # on an AMC line: a bone name and at most seven dofs
_MOST_ASF_FIELDS = 64  # on an ASF line outside :hierarchy (a dof line has eight)
# A bone name is one word without the characters ASF reads as separators, and no keyword (":name").
_UNSAFE_IN_NAMES = re.compile(r"[\s,()#]+|^:")


def applied_order(tokens: list[str] | str) -> str:
    """Our order string (composition order) for axes listed in the order they are applied."""
    return "".join(t[-1].upper() for t in tokens)[::-1]


def file_layout(tokens: list[str]) -> tuple[str, ...]:
    """Model channel layout for dof tokens: rotation tokens reversed in place (composition order)."""
    rotations = [t for t in tokens if t in ROTATION_CHANNELS][::-1]
    it = iter(rotations)
    return tuple(next(it) if t in ROTATION_CHANNELS else t for t in tokens)


@dataclass
class Bone:
    """One ``:bonedata`` block (the root is a bone with no direction)."""
    name: str
    line: int
    direction: np.ndarray = field(default_factory=lambda: np.zeros(3))
    length: float = 0.0
    axis_angles: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis_order: str = "XYZ"
    dof: list[str] = field(default_factory=list)
    limits: list[tuple[float, float]] = field(default_factory=list)
    extras: dict[str, str] = field(default_factory=dict)


@dataclass
class AsfSkeleton:
    """A parsed ASF: bones (root first), hierarchy and header values."""
    bones: list[Bone]
    parents: list[int]
    length_unit: float
    angle_in_degrees: bool
    header: dict[str, Any]
    path: str = "<data>"
    length_unit_line: int | None = None


def _text(raw: bytes) -> str:
    """A line's text with comments cut and separators turned into spaces."""
    return _SEPARATORS.sub(" ", decode_text(raw).split("#", 1)[0]).strip()


def _number(token: str, path: str, line: int, what: str, unbounded: bool = False) -> float:
    """A finite number; ``unbounded`` also takes ``inf`` and ``-inf`` (a limit that does not limit)."""
    if unbounded and token.lower() in ("inf", "+inf", "-inf"):
        return float(token)
    problem = number_problem(token)
    if problem:
        raise MocapFormatError(f"{what}: {problem}", path, line)
    return float(token)


def _numbers(tokens: list[str], count: int, path: str, line: int, what: str, unbounded: bool = False) -> np.ndarray:
    if len(tokens) < count:
        raise MocapFormatError(f"{what} needs {count} numbers, found {len(tokens)}", path, line)
    return np.array([_number(t, path, line, what, unbounded) for t in tokens[:count]])


def parse_asf(data: bytes, path: str = "<data>") -> AsfSkeleton:
    """Parse ASF bytes into bones and hierarchy (lengths and angles as written)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    data = unix_line_ends(data)
    lines = [(n, text) for n, raw in enumerate(data.split(b"\n"), start=1) if (text := _text(raw))]
    if not lines or not lines[0][1].startswith(":"):
        first = lines[0] if lines else (1, "(empty)")
        raise MocapFormatError("not an ASF file: expected ':version' or another keyword, "
                               f"found {quote(first[1].split(maxsplit=1)[0], 30)}", path, first[0])
    header: dict[str, Any] = {"documentation": []}
    length_unit, length_unit_line, degrees = 1.0, None, True
    root = Bone("root", 1)
    bones: list[Bone] = [root]
    bone_names = {root.name}
    hierarchy: list[tuple[int, list[str]]] = []
    section = ""
    current: Bone | None = None
    for number, text in lines:
        if section == ":documentation" and not text.startswith(":"):
            header["documentation"].append(text)  # free text, kept whole
            continue
        # Split no further than any ASF line goes, so a 50 MB line costs no more than reading it
        # (a hierarchy line names fewer bones than the file has lines).
        most = len(lines) if section == ":hierarchy" else _MOST_ASF_FIELDS
        tokens = text.split(maxsplit=most)
        if len(tokens) > most:
            raise MocapFormatError(f"{token_count(text.encode())} fields on one line, more than an ASF line "
                                   f"holds here ({most})", path, number)
        keyword = tokens[0].lower()
        if keyword.startswith(":"):
            section = keyword
            if section in (":version", ":name"):
                header[section[1:]] = " ".join(tokens[1:])
            elif section == ":skin":
                header.setdefault("skin", []).extend(tokens[1:])
            elif section == ":root":
                root.line = number
            if current is not None:
                raise MocapFormatError(f"bone {quote(current.name)} has no 'end'", path, current.line)
            continue
        if section == ":units":
            if len(tokens) != 2:
                raise MocapFormatError(f":units line needs a name and a value, found {len(tokens)} fields",
                                       path, number)
            if keyword == "angle":
                if tokens[1].lower() not in ("deg", "rad", "degrees", "radians"):
                    raise MocapFormatError(f"angle unit must be deg or rad, found {quote(tokens[1])}", path, number)
                degrees = tokens[1].lower().startswith("deg")
            else:
                value = _number(tokens[1], path, number, f"units {shorten(keyword)}")
                if keyword == "length":
                    if not value > 0:
                        raise MocapFormatError("length unit must be positive", path, number)
                    if not math.isfinite(0.0254 / value):
                        raise MocapFormatError(f"length unit {quote(tokens[1])} is too small", path, number)
                    length_unit, length_unit_line = value, number
                header.setdefault("units", {})[keyword] = value
        elif section == ":root":
            _read_root_line(root, keyword, tokens, path, number, header)
        elif section == ":bonedata":
            if keyword == "begin":
                if current is not None:
                    raise MocapFormatError(f"'begin' inside bone {quote(current.name)}", path, number)
                current = Bone("", number)
            elif keyword == "end":
                if current is None:
                    raise MocapFormatError("'end' without 'begin'", path, number)
                if not current.name:
                    raise MocapFormatError("bone without a name", path, current.line)
                if current.name in bone_names:
                    raise MocapFormatError(f"bone {quote(current.name)} defined twice", path, current.line)
                if len(current.limits) not in (0, len(current.dof)):
                    raise MocapFormatError(f"bone {quote(current.name)}: {len(current.limits)} limits for "
                                           f"{len(current.dof)} dofs", path, current.line)
                bones.append(current)
                bone_names.add(current.name)
                current = None
            elif current is None:
                raise MocapFormatError(f"{quote(tokens[0])} outside a begin/end block", path, number)
            else:
                _read_bone_line(current, keyword, tokens, path, number)
        elif section == ":hierarchy":
            if keyword in ("begin", "end") and len(tokens) == 1:
                continue  # a bone called "end" may still list its children
            hierarchy.append((number, tokens))
        elif section == "":
            raise MocapFormatError(f"unexpected {quote(tokens[0], 30)} before the first keyword", path, number)
    if current is not None:
        raise MocapFormatError(f"bone {quote(current.name)} has no 'end'", path, current.line)
    parents = _read_hierarchy(bones, hierarchy, path)
    return AsfSkeleton(bones, parents, length_unit, degrees, header, path, length_unit_line)


def _read_root_line(root: Bone, keyword: str, tokens: list[str], path: str, number: int,
                    header: dict[str, Any]) -> None:
    if keyword == "order":
        dof = [t.lower() for t in tokens[1:]]
        unknown = [t for t in dof if t not in DOF_TOKENS or t == "l"]
        if unknown or len(set(dof)) != len(dof):
            raise MocapFormatError(f"bad root order {quote(' '.join(tokens[1:]))}", path, number)
        root.dof = dof
    elif keyword == "axis":
        order = tokens[1].upper() if len(tokens) > 1 else ""
        if sorted(order) != ["X", "Y", "Z"]:
            raise MocapFormatError(f"root axis must be an order like XYZ, found {quote(order)}", path, number)
        root.axis_order = order
    elif keyword == "position":
        root.direction = _numbers(tokens[1:], 3, path, number, "root position")
    elif keyword == "orientation":
        root.axis_angles = _numbers(tokens[1:], 3, path, number, "root orientation")
    else:
        header.setdefault("root_extras", {})[keyword] = " ".join(tokens[1:])


def _read_bone_line(bone: Bone, keyword: str, tokens: list[str], path: str, number: int) -> None:
    if keyword == "name":
        if len(tokens) != 2:
            raise MocapFormatError("a bone name is one word", path, number)
        bone.name = tokens[1]
    elif keyword == "direction":
        bone.direction = _direction_and_length(_numbers(tokens[1:], 3, path, number, "direction"))[0]
    elif keyword == "length":
        bone.length = float(_numbers(tokens[1:], 1, path, number, "length")[0])
        if bone.length < 0 or not np.isfinite(bone.length):
            raise MocapFormatError(f"length must be a finite number >= 0, found {tokens[1]}", path, number)
    elif keyword == "axis":
        bone.axis_angles = _numbers(tokens[1:], 3, path, number, "axis")
        order = tokens[4].upper() if len(tokens) > 4 else "XYZ"
        if sorted(order) != ["X", "Y", "Z"]:
            raise MocapFormatError(f"axis order must be like XYZ, found {quote(order)}", path, number)
        bone.axis_order = order
    elif keyword == "dof":
        dof = [t.lower() for t in tokens[1:]]
        unknown = [t for t in dof if t not in DOF_TOKENS]
        if unknown:
            raise MocapFormatError(f"unknown dof {quote(unknown[0])}", path, number)
        if len(set(dof)) != len(dof):
            raise MocapFormatError("a dof appears twice", path, number)
        bone.dof = dof
    elif keyword == "limits":
        bone.limits.append(tuple(_numbers(tokens[1:], 2, path, number, "limits", True)))  # type: ignore[arg-type]
    elif keyword.replace(".", "").replace("-", "").isdigit() or (bone.limits and len(tokens) == 2):
        bone.limits.append(tuple(_numbers(tokens, 2, path, number, "limits", True)))  # type: ignore[arg-type]
    else:
        bone.extras[keyword] = " ".join(tokens[1:])


def _direction_and_length(vector: np.ndarray) -> tuple[np.ndarray, float]:
    """Unit vector and length of ``vector`` (zero stays zero), without overflow for huge components."""
    largest = float(np.abs(vector).max())
    if largest == 0:
        return vector, 0.0
    scaled = vector / largest  # first, so the norm cannot overflow
    size = float(np.linalg.norm(scaled))
    return scaled / size, largest * size


def _read_hierarchy(bones: list[Bone], hierarchy: list[tuple[int, list[str]]], path: str) -> list[int]:
    index = {b.name: n for n, b in enumerate(bones)}
    parent_of: dict[int, int] = {}
    for number, tokens in hierarchy:
        for name in tokens:
            if name not in index:
                raise MocapFormatError(f"hierarchy names unknown bone {quote(name)}", path, number)
        parent = index[tokens[0]]
        for name in tokens[1:]:
            child = index[name]
            if child == 0 or child in parent_of:
                raise MocapFormatError(f"bone {quote(name)} has two parents" if child else "root cannot be a child",
                                       path, number)
            parent_of[child] = parent
    missing = [b for n, b in enumerate(bones) if n and n not in parent_of]
    if missing:
        raise MocapFormatError(f"bone {quote(missing[0].name)} is not in the hierarchy", path, missing[0].line)
    reaches_root = {0}  # bones whose chain of parents is known to end at the root
    for start in parent_of:
        chain: dict[int, None] = {}  # insertion-ordered set
        node = start
        while node not in reaches_root:
            if node in chain:
                raise MocapFormatError(f"hierarchy cycle through {quote(bones[node].name)}", path, bones[node].line)
            chain[node] = None
            node = parent_of[node]
        reaches_root.update(chain)
    return [parent_of.get(n, -1) for n in range(len(bones))]


def read_asf(path: str | os.PathLike[str], *, length_reading: str = "cmu") -> Clip:
    """The ASF's skeleton in its rest pose, as a clip with no frames."""
    with open(path, "rb") as handle:
        asf = parse_asf(handle.read(), os.fspath(path))
    return _clip(asf, np.zeros((0, 0)), os.fspath(path), length_reading, start_frame=1, frame_time=1 / 120,
                 warnings_found=[], angle_degrees=True)


def _clip(asf: AsfSkeleton, values: np.ndarray, path: str, length_reading: str, start_frame: int,
          frame_time: float, warnings_found: list[str], angle_degrees: bool) -> Clip:
    """Build the model clip: joints in parent-before-child order, motion from dof values in file order."""
    if length_reading not in LENGTH_READINGS:
        raise ValueError(f"length_reading must be one of {LENGTH_READINGS}")
    factor = asf.length_unit if length_reading == "spec" else 1.0
    order = _parent_first(asf.parents)
    bones = [asf.bones[i] for i in order]
    position = {bone: n for n, bone in enumerate(order)}
    parents = [-1 if asf.parents[i] < 0 else position[asf.parents[i]] for i in order]
    to_radians = np.pi / 180 if asf.angle_in_degrees else 1.0
    # Axis angles are listed in the order they are applied; composition runs the other way.
    axes = np.empty((len(bones), 3, 3))
    by_order: dict[str, list[int]] = {}
    for joint, bone in enumerate(bones):
        by_order.setdefault(bone.axis_order, []).append(joint)
    for axis_order, joints in by_order.items():
        angles = np.array([bones[j].axis_angles[::-1] for j in joints]) * to_radians
        axes[joints] = euler_to_matrix(angles, applied_order(axis_order))
    # The root's frame is its orientation; it starts at its position.
    file_directions = np.array([b.direction for b in bones])
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported just below
        vectors = np.array([b.length for b in bones])[:, None] * file_directions * factor
        vectors[0] = 0.0
        motion = _arrange(values, bones, order, asf, factor, angle_degrees)
        root_position = file_directions[0] * factor
    if not (np.isfinite(vectors).all() and np.isfinite(motion).all() and np.isfinite(root_position).all()):
        # Only a length unit read as a factor ("spec") can take finite lengths past the largest float.
        raise MocapFormatError(f"lengths overflow once multiplied by the length unit {asf.length_unit:g}",
                               asf.path, asf.length_unit_line)
    into_own_frame = np.swapaxes(axes, 1, 2)  # world (bone axis frame) vectors -> the joint's own frame
    local_vectors = (into_own_frame @ vectors[..., None])[..., 0]
    parent_index = np.array(parents)
    rooted = parent_index < 0
    parent_frame = into_own_frame[np.maximum(parent_index, 0)]
    rest = np.where(rooted[:, None, None], axes, parent_frame @ axes)
    offsets = np.where(rooted[:, None], root_position,
                       (parent_frame @ vectors[np.maximum(parent_index, 0), :, None])[..., 0])
    has_child = np.zeros(len(bones), dtype=bool)
    has_child[parent_index[~rooted]] = True
    end_sites = [np.zeros((0, 3)) if has_child[j] or not vectors[j].any() else local_vectors[j][None]
                 for j in range(len(bones))]
    layouts = [file_layout(b.dof) for b in bones]
    directions = (into_own_frame @ file_directions[..., None])[..., 0]
    skeleton = Skeleton([b.name for b in bones], parents, offsets, layouts, end_sites, rest,
                        np.zeros(len(bones), dtype=bool), np.array([p >= 0 for p in parents]), directions)
    unit = 0.0254 / asf.length_unit if length_reading == "cmu" else None
    metadata = {
        "format": "amc", "source": path, "warnings": warnings_found, "length_reading": length_reading,
        "bone_vectors": local_vectors.tolist(),
        "asf": {"header": asf.header, "length_unit": asf.length_unit, "root_axis": bones[0].axis_order,
                "limits": {b.name: [list(bounds) for bounds in b.limits] for b in bones if b.limits},
                "dof": {b.name: b.dof for b in bones}, "ids": {b.name: b.extras.get("id") for b in bones}},
    }
    return Clip(skeleton, motion, frame_time, start_frame, unit, "Y", metadata)


def _parent_first(parents: list[int]) -> list[int]:
    """Bone indices ordered so each parent precedes its children (depth first, file order)."""
    children: list[list[int]] = [[] for _ in parents]
    for child, parent in enumerate(parents):
        if parent >= 0:
            children[parent].append(child)
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(children[node]))
    return order


def _arrange(values: np.ndarray, bones: list[Bone], order: list[int], asf: AsfSkeleton, factor: float,
             angle_degrees: bool) -> np.ndarray:
    """Motion columns in model layout from AMC values laid out per file bone order and dof order."""
    widths = [len(b.dof) for b in asf.bones]
    starts = np.concatenate([[0], np.cumsum(widths)])
    columns = []
    scale = []
    for index, bone in zip(order, bones):
        layout = file_layout(bone.dof)
        for token in layout:
            columns.append(int(starts[index]) + bone.dof.index(token))
            if token in ROTATION_CHANNELS:
                scale.append(1.0 if angle_degrees else 180 / np.pi)
            else:
                scale.append(factor)
    if values.size == 0:
        return np.zeros((values.shape[0], len(columns)))
    return values[:, columns] * np.array(scale)


def _is_frame_number(tokens: list[str]) -> bool:
    return len(tokens) == 1 and WHOLE_NUMBER.match(tokens[0]) is not None


def _frame_number(token: str, path: str, line: int) -> int:
    problem = whole_number_problem(token, signed=True)
    if problem:
        raise MocapFormatError(f"frame number {problem}", path, line)
    return int(token)


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
    if (not np.isfinite(values).all() or np.any(np.diff(numbers) != 1) or numbers[0] != np.round(numbers[0])
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
            continue
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
        if name in frames[-1]:
            raise MocapFormatError(f"bone {quote(name)} appears twice in frame {numbers[-1]}", path, number)
        values = []
        for match in list(re.finditer(r"\S+", text))[1:]:
            problem = number_problem(match.group())
            if problem:
                raise MocapFormatError(f"bone {quote(name)}: {problem}", path, number, match.start() + 1)
            values.append(float(match.group()))
        frames[-1][name] = values
    close_frame()
    table = np.array([[v for name in order for v in frame[name]] for frame in frames]).reshape(
        len(frames), sum(len(moving[n].dof) for n in order))
    notes = [f"bone {quote(name)} missing in {count} frame(s): previous values held" for name, count in held.items()]
    return table, numbers[0] if numbers else 1, notes


def find_skeleton(amc_path: str | os.PathLike[str]) -> str:
    """The .asf beside an .amc: same stem, or the stem up to its last '_' (CMU) or first '.'."""
    folder, name = os.path.split(os.fspath(amc_path))
    stem = os.path.splitext(name)[0]
    candidates = list(dict.fromkeys([stem, stem.rsplit("_", 1)[0], stem.split(".", 1)[0]]))
    entries = {entry.lower(): entry for entry in os.listdir(folder or ".")}
    for candidate in candidates:
        found = entries.get(f"{candidate}.asf".lower())
        if found:
            return os.path.join(folder, found)
    raise MocapFormatError(f"no skeleton (.asf) found beside it; tried {', '.join(c + '.asf' for c in candidates)}",
                           amc_path, None)


def read_amc(path: str | os.PathLike[str], skeleton: str | os.PathLike[str] | None = None, *,
             length_reading: str = "cmu", lenient: bool = False, fps: float = 120.0) -> Clip:
    """Read an AMC with its ASF (found beside it unless given).  AMC has no frame rate: ``fps``."""
    asf_path = os.fspath(skeleton) if skeleton is not None else find_skeleton(path)
    with open(asf_path, "rb") as handle:
        asf = parse_asf(handle.read(), asf_path)
    with open(path, "rb") as handle:
        values, first, degrees, notes = parse_amc(handle.read(), asf, os.fspath(path), lenient=lenient)
    clip = _clip(asf, values, os.fspath(path), length_reading, first, 1.0 / fps, notes, degrees)
    clip.metadata["skeleton_source"] = asf_path
    return clip


@dataclass
class _Plan:
    """An ASF/AMC layout for a clip: the model skeleton (dummy bones added) and per-bone ASF data."""
    clip: Clip
    axes: np.ndarray  # world rest orientation of each joint (J, 3, 3)
    vectors: np.ndarray  # world rest bone vector of each joint (J, 3)


def acclaim_form(clip: Clip) -> _Plan:
    """The clip as ASF/AMC holds it: each joint a bone from its origin to where its children
    start; a child elsewhere gets a dofless bone from there (as CMU's hip joints).
    Rest frames are kept as the bones' axes, so frame rotations stay as they are."""
    require_writable(clip, "ASF/AMC")
    skeleton = clip.skeleton
    root_names = [skeleton.names[j] for j, parent in enumerate(skeleton.parents) if parent < 0]
    if len(root_names) > 1:
        raise MocapWriteError(f"cannot write ASF/AMC: it holds one root, the clip has {len(root_names)}: "
                              + ", ".join(quote(n) for n in root_names[:3]) + (", ..." if len(root_names) > 3 else ""))
    rotations, heads = rest_pose(skeleton)
    stored = clip.metadata.get("bone_vectors")
    sites = [heads[j] + (rotations[j] @ e.T).T for j, e in enumerate(skeleton.end_sites)]
    tails = choose_tails(skeleton.parents, heads, sites, np.eye(3)[1])
    if stored is not None and len(stored) == skeleton.joint_count:
        given = (rotations @ np.asarray(stored, dtype=np.float64)[..., None])[..., 0]
        tails = np.where(np.linalg.norm(given, axis=1)[:, None] > 0, heads + given, tails)
    extent = max(float(np.ptp(heads, axis=0).max()), 1e-9)
    # Bone vectors: none for roots (their children start at the root), none for bones whose tail is a stub.
    vectors = np.where(np.array(skeleton.parents)[:, None] < 0, 0.0, tails - heads)
    leaf = np.ones(skeleton.joint_count, dtype=bool)
    leaf[[p for p in skeleton.parents if p >= 0]] = False
    no_site = np.array([len(e) == 0 for e in skeleton.end_sites])
    vectors[leaf & no_site & (stored is None)] = 0.0

    names, parents, source, dummy_of = [], [], [], []
    index_of: dict[int, int] = {}
    for joint, parent in enumerate(skeleton.parents):
        new_parent = -1 if parent < 0 else index_of[parent]
        if parent >= 0 and np.linalg.norm(heads[joint] - (heads[parent] + vectors[parent])) > 1e-9 * extent:
            names.append(f"{skeleton.names[parent]}_to_{skeleton.names[joint]}")
            parents.append(new_parent)
            source.append(parent)
            dummy_of.append(joint)
            new_parent = len(names) - 1
        names.append(skeleton.names[joint])
        parents.append(new_parent)
        source.append(joint)
        dummy_of.append(-1)
        index_of[joint] = len(names) - 1
    # Joint 0 is the root, which ASF calls "root": a later joint of that name is renamed.
    names = safe_names(["root", *names[1:]], _UNSAFE_IN_NAMES, fallback="bone")
    count = len(names)
    source_array = np.array(source)
    is_dummy = np.array(dummy_of) >= 0
    axes = rotations[source_array]
    new_vectors = np.where(is_dummy[:, None], heads[np.maximum(dummy_of, 0)] - (heads + vectors)[source_array],
                           vectors[source_array])
    # A dummy starts at its parent bone's end; the real joint after it starts at the dummy's end.
    rest = np.empty((count, 3, 3))
    offsets = np.empty((count, 3))
    for joint, parent in enumerate(parents):
        if parent < 0:
            rest[joint], offsets[joint] = axes[joint], heads[source[joint]]
        else:
            rest[joint] = axes[parent].T @ axes[joint]
            offsets[joint] = axes[parent].T @ new_vectors[parent]
    layouts: list[tuple[str, ...]] = []
    for joint in range(count):
        if is_dummy[joint]:
            layouts.append(())
            continue
        layout = skeleton.channels[source[joint]]
        moved = any(c in TRANSLATION_CHANNELS or c == "l" for c in layout)
        rotation_tokens = tuple(c for c in layout if c in ROTATION_CHANNELS)
        layouts.append((TRANSLATION_CHANNELS if moved else ()) + rotation_tokens)
    has_child = np.zeros(count, dtype=bool)
    has_child[[p for p in parents if p >= 0]] = True
    end_sites = [(axes[j].T @ new_vectors[j])[None] if not has_child[j] and new_vectors[j].any() else np.zeros((0, 3))
                 for j in range(count)]
    roots = np.array([p < 0 for p in parents])
    target = Skeleton(names, parents, offsets, layouts, end_sites, rest, np.zeros(count, dtype=bool), ~roots,
                      np.zeros((count, 3)))
    rotation, translation, scales = local_transforms(clip)
    dropped = [j for j, c in enumerate(skeleton.channels) if "s" in c]
    if np.any(np.abs(scales[:, dropped] - 1.0) > 1e-5):
        raise MocapWriteError("cannot write ASF/AMC: the clip scales joints, which ASF/AMC cannot hold")
    frames = clip.frame_count
    frame_rotation = np.broadcast_to(np.eye(3), (frames, count, 3, 3)).copy()
    channel_translation = np.zeros((frames, count, 3))
    for joint in np.flatnonzero(~is_dummy):
        old = source[joint]
        old_parent = skeleton.parents[old]
        # Same world rotation under the new rest rotation G0_p^T G0_j: frame = G0_j^T G0_p R_old.
        parent_axes = rotations[old_parent] if old_parent >= 0 else np.eye(3)
        frame_rotation[:, joint] = axes[joint].T @ parent_axes @ rotation[:, old]
        # Translations stay in the old parent's frame (a dummy turns with it) less the dummy's offset.
        dummy_parent = parents[joint] >= 0 and is_dummy[parents[joint]]
        step = translation[:, old] - (offsets[parents[joint]] if dummy_parent else 0.0)
        moved = step - offsets[joint]
        channel_translation[:, joint] = moved if parents[joint] < 0 else moved @ rest[joint]
    motion = encode_motion(target, frame_rotation, channel_translation)
    result = Clip(target, motion, clip.frame_time, clip.start_frame, clip.unit_in_metres, clip.up_axis,
                  dict(clip.metadata))
    require_writable(result, "ASF/AMC")
    if not (np.isfinite(axes).all() and np.isfinite(new_vectors).all()):
        raise MocapWriteError("cannot write ASF/AMC: bone axes or lengths overflow (the skeleton is too large)")
    return _Plan(result, axes, new_vectors)


def _listed_angles(matrices: np.ndarray, order: str = "XYZ") -> np.ndarray:
    """Angles in degrees listed in application ``order`` (as ASF writes them) for rotation matrices."""
    return np.degrees(matrix_to_euler(matrices, applied_order(order)))[..., ::-1]


def _number_text(values: np.ndarray, precision: int) -> str:
    return " ".join(number_text(v, precision) for v in values)


def length_unit(clip: Clip) -> float:
    """The ASF ``:units length`` that states the clip's unit as this module reads it (one unit is
    1/length inch); a clip that states no unit is taken as metres, as Blender takes it."""
    return 0.0254 / (clip.unit_in_metres or 1.0)


def format_asf(plan: _Plan, name: str, precision: int = 10) -> str:
    """ASF text for a planned clip (lengths in the clip's own unit, angles in degrees, ``precision``
    significant digits: the skeleton is small, so it is written finely)."""
    clip = plan.clip
    skeleton = clip.skeleton
    asf_meta = clip.metadata.get("asf", {}) if clip.metadata.get("format") == "amc" else {}
    limits = asf_meta.get("limits", {})
    unit = length_unit(clip)
    if not 0 < unit < math.inf:
        raise MocapWriteError(f"cannot write ASF: a unit of {clip.unit_in_metres} m has no length unit")
    lines = ["# Acclaim skeleton, written by Mocap I/O", ":version 1.10", f":name {name}", ":units",
             "  mass 1.0", f"  length {number_text(unit, 9)}", "  angle deg", ":documentation"]
    lines += [f"   {line}" for line in asf_meta.get("header", {}).get("documentation", [])] or ["   Mocap I/O"]
    root = 0
    axis_angles = _listed_angles(plan.axes)
    root_dof = file_layout(list(skeleton.channels[root]))
    lines += [":root", "   order " + " ".join(t.upper() for t in root_dof), "   axis XYZ",
              "   position " + _number_text(skeleton.offsets[root], precision),
              "   orientation " + _number_text(axis_angles[root], precision), ":bonedata"]
    for joint in range(1, skeleton.joint_count):
        direction, length = _direction_and_length(plan.vectors[joint])
        if not np.isfinite(length):
            raise MocapWriteError(f"cannot write ASF: bone {quote(skeleton.names[joint])} is too long for a float")
        if length == 0:
            direction = np.array([0.0, 1.0, 0.0])
        lines += ["  begin", f"     id {joint}", f"     name {skeleton.names[joint]}",
                  "     direction " + _number_text(direction, precision),
                  f"     length {number_text(length, precision)}",
                  "     axis " + _number_text(axis_angles[joint], precision) + "  XYZ"]
        dof = file_layout(list(skeleton.channels[joint]))
        if dof:
            lines.append("    dof " + " ".join(dof))
            bounds = limits.get(skeleton.names[joint])
            if bounds and len(bounds) == len(dof):
                lines += [("    limits " if n == 0 else "           ") + f"({lo:g} {hi:g})" for n, (lo, hi) in
                          enumerate(bounds)]
        lines.append("  end")
    lines += [":hierarchy", "  begin"]
    for joint, children in enumerate(skeleton.child_lists()):
        if children:
            names = " ".join(skeleton.names[c] for c in children)
            lines.append(f"    {'root' if joint == root else skeleton.names[joint]} {names}")
    lines += ["  end"]
    return "\n".join(lines) + "\n"


def format_amc(plan: _Plan, asf_name: str, precision: int = 6) -> str:
    """AMC text: every frame lists every bone with dofs, in skeleton order, in one formatting call."""
    clip = plan.clip
    skeleton = clip.skeleton
    starts = skeleton.channel_starts()
    columns, row = [], ["%d"]
    for joint, layout in enumerate(skeleton.channels):
        if not layout:
            continue
        dof = file_layout(list(layout))
        columns += [int(starts[joint]) + layout.index(token) for token in dof]
        name = "root" if joint == 0 else skeleton.names[joint].replace("%", "%%")  # the row is a % template
        row.append(name + f" %.{precision}f" * len(dof))
    header = f"#!OML:ASF {asf_name}\n# written by Mocap I/O\n:FULLY-SPECIFIED\n:DEGREES\n"
    numbers = np.arange(clip.start_frame, clip.start_frame + clip.frame_count)
    table = np.column_stack([numbers, printable(clip.motion[:, columns], precision)])
    return header + ("\n".join(row) + "\n") * clip.frame_count % tuple(table.ravel().tolist())


def write_amc(clip: Clip, path: str | os.PathLike[str], *, precision: int = 6) -> None:
    """Write ``clip`` as ``<stem>.amc`` and its skeleton as ``<stem>.asf`` (both atomically)."""
    target = os.fspath(path)
    stem = os.path.splitext(target)[0]
    plan = acclaim_form(clip)
    asf_path = stem + ".asf"
    atomic_write(asf_path, format_asf(plan, os.path.basename(stem)).encode("utf-8"))
    if os.path.splitext(target)[1].lower() == ".amc":
        atomic_write(target, format_amc(plan, os.path.basename(asf_path), precision).encode("utf-8"))
