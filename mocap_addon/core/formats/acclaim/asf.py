"""ASF, the skeleton file: its text read into bones, axes, dofs, limits and the hierarchy (values as written).

Also what reading and writing share: how ASF lists rotations (in the order they
are applied, where the model composes them) and bone vectors as direction and length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import MocapFormatError
from ...model import ROTATION_CHANNELS
from ..textio import MAGNITUDE_LIMIT, decode_text, number_problem, quote, shorten, token_count, unix_line_ends

DOF_TOKENS = {"rx": "rx", "ry": "ry", "rz": "rz", "tx": "tx", "ty": "ty", "tz": "tz", "l": "l"}
_SEPARATORS = re.compile(r"[,()]")
_MOST_ASF_FIELDS = 64  # on an ASF line outside :hierarchy (a dof line has eight)


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
    reader = _AsfReader(path, len(lines))
    for number, text in lines:
        reader.feed(number, text)
    return reader.finish()


class _AsfReader:
    """Reads an ASF's meaningful lines one at a time, section by section."""

    def __init__(self, path: str, line_count: int) -> None:
        self.path = path
        self.line_count = line_count
        self.header: dict[str, Any] = {"documentation": []}
        self.length_unit, self.degrees = 1.0, True
        self.length_unit_line: int | None = None
        self.bones: list[Bone] = [Bone("root", 1)]
        self.bone_names = {"root"}
        self.hierarchy: list[tuple[int, list[str]]] = []
        self.section = ""
        self.current: Bone | None = None  # the bone between 'begin' and 'end'

    def error(self, message: str, line: int) -> MocapFormatError:
        return MocapFormatError(message, self.path, line)

    def feed(self, number: int, text: str) -> None:
        if self.section == ":documentation" and not text.startswith(":"):
            self.header["documentation"].append(text)  # free text, kept whole
            return
        # Split no further than any ASF line goes, so a 50 MB line costs no more than reading it
        # (a hierarchy line names fewer bones than the file has lines).
        most = self.line_count if self.section == ":hierarchy" else _MOST_ASF_FIELDS
        tokens = text.split(maxsplit=most)
        if len(tokens) > most:
            raise self.error(f"{token_count(text.encode())} fields on one line, more than an ASF line "
                             f"holds here ({most})", number)
        keyword = tokens[0].lower()
        if keyword.startswith(":"):
            self._start_section(number, keyword, tokens)
        elif self.section == ":units":
            self._units_line(number, keyword, tokens)
        elif self.section == ":root":
            _read_root_line(self.bones[0], keyword, tokens, self.path, number, self.header)
        elif self.section == ":bonedata":
            self._bonedata_line(number, keyword, tokens)
        elif self.section == ":hierarchy":
            if keyword not in ("begin", "end") or len(tokens) != 1:  # a bone called "end" may still list children
                self.hierarchy.append((number, tokens))
        elif self.section == "":
            raise self.error(f"unexpected {quote(tokens[0], 30)} before the first keyword", number)

    def finish(self) -> AsfSkeleton:
        if self.current is not None:
            raise self.error(f"bone {quote(self.current.name)} has no 'end'", self.current.line)
        parents = _read_hierarchy(self.bones, self.hierarchy, self.path)
        return AsfSkeleton(self.bones, parents, self.length_unit, self.degrees, self.header, self.path,
                           self.length_unit_line)

    def _start_section(self, number: int, keyword: str, tokens: list[str]) -> None:
        self.section = keyword
        if keyword in (":version", ":name"):
            self.header[keyword[1:]] = " ".join(tokens[1:])
        elif keyword == ":skin":
            self.header.setdefault("skin", []).extend(tokens[1:])
        elif keyword == ":root":
            self.bones[0].line = number
        if self.current is not None:
            raise self.error(f"bone {quote(self.current.name)} has no 'end'", self.current.line)

    def _units_line(self, number: int, keyword: str, tokens: list[str]) -> None:
        if len(tokens) != 2:
            raise self.error(f":units line needs a name and a value, found {len(tokens)} fields", number)
        if keyword == "angle":
            if tokens[1].lower() not in ("deg", "rad", "degrees", "radians"):
                raise self.error(f"angle unit must be deg or rad, found {quote(tokens[1])}", number)
            self.degrees = tokens[1].lower().startswith("deg")
            return
        value = _number(tokens[1], self.path, number, f"units {shorten(keyword)}")
        if keyword == "length":
            if not value > 0:
                raise self.error("length unit must be positive", number)
            if not 0.0254 / value <= MAGNITUDE_LIMIT:
                raise self.error(f"length unit {quote(tokens[1])} is too small", number)
            self.length_unit, self.length_unit_line = value, number
        self.header.setdefault("units", {})[keyword] = value

    def _bonedata_line(self, number: int, keyword: str, tokens: list[str]) -> None:
        if keyword == "begin":
            if self.current is not None:
                raise self.error(f"'begin' inside bone {quote(self.current.name)}", number)
            self.current = Bone("", number)
        elif keyword == "end":
            self._end_bone(number)
        elif self.current is None:
            raise self.error(f"{quote(tokens[0])} outside a begin/end block", number)
        else:
            _read_bone_line(self.current, keyword, tokens, self.path, number)

    def _end_bone(self, number: int) -> None:
        bone = self.current
        if bone is None:
            raise self.error("'end' without 'begin'", number)
        if not bone.name:
            raise self.error("bone without a name", bone.line)
        if bone.name in self.bone_names:
            raise self.error(f"bone {quote(bone.name)} defined twice", bone.line)
        if len(bone.limits) not in (0, len(bone.dof)):
            raise self.error(f"bone {quote(bone.name)}: {len(bone.limits)} limits for {len(bone.dof)} dofs",
                             bone.line)
        self.bones.append(bone)
        self.bone_names.add(bone.name)
        self.current = None


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
        bone.direction = direction_and_length(_numbers(tokens[1:], 3, path, number, "direction"))[0]
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
        bone.limits.append(tuple(_numbers(tokens[1:], 2, path, number, "limits", True)))
    elif keyword.replace(".", "").replace("-", "").isdigit() or (bone.limits and len(tokens) == 2):
        bone.limits.append(tuple(_numbers(tokens, 2, path, number, "limits", True)))
    else:
        bone.extras[keyword] = " ".join(tokens[1:])


def direction_and_length(vector: np.ndarray) -> tuple[np.ndarray, float]:
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
