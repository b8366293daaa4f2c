"""Naming presets: a convention's joint names as data, read from JSON, and how they override detection.

A preset's entries change what a listed name says before detection (the joint
is read as the canonical part it names) and then win over whatever detection
decided (:func:`.labels.apply_preset`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from ..files import require_regular_file
from ..formats.textio import atomic_write
from .canonical import CANONICAL_PARENTS, canonical_side
from .names import DATA, FINGERS, NameReading, read_name

MAX_PRESET_BYTES = 1 << 20
PRESETS = DATA / "presets"


@dataclass(frozen=True)
class Preset:
    """A naming convention as data: explicit source joint -> canonical entries (``None`` folds).

    Source names are matched without their namespace (``ns:``), without the
    listed literal prefixes and suffixes, and case-blind.  Several source names
    may give the same canonical joint (spellings of one convention's versions);
    in one skeleton the first of them takes it.
    """

    name: str
    joints: Mapping[str, str | None]
    strip_prefixes: tuple[str, ...] = ()
    strip_suffixes: tuple[str, ...] = ()
    description: str = ""
    _table: dict[str, str | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_table", {self.key(k): v for k, v in self.joints.items()})

    def key(self, name: str) -> str:
        """How a source name is compared: no namespace, no listed prefix or suffix, case-blind."""
        text = name.replace("|", ":").rsplit(":", 1)[-1].casefold()
        for prefix in self.strip_prefixes:
            if prefix and text.startswith(prefix.casefold()):
                text = text[len(prefix):]
                break
        for suffix in self.strip_suffixes:
            if suffix and text.endswith(suffix.casefold()):
                text = text[: -len(suffix)]
                break
        return text

    def lookup(self, name: str) -> tuple[bool, str | None]:
        """(whether the preset names this joint, its canonical joint or ``None``)."""
        key = self.key(name)
        return (key in self._table, self._table.get(key))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "strip_prefixes": list(self.strip_prefixes),
                "strip_suffixes": list(self.strip_suffixes), "joints": dict(self.joints)}


PresetLike = Preset | str | os.PathLike[str] | None


def preset_from_dict(data: Any, source: str = "preset") -> Preset:
    """Check a preset's content (plain data only) and build it; ``ValueError`` names what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: a preset is a JSON object")
    joints = data.get("joints")
    if not isinstance(joints, dict):
        raise ValueError(f"{source}: 'joints' must map source joint names to canonical names")
    for joint, canonical in joints.items():
        if not isinstance(joint, str) or not joint:
            raise ValueError(f"{source}: joint names must be non-empty strings")
        if canonical is not None and not (isinstance(canonical, str) and canonical in CANONICAL_PARENTS):
            raise ValueError(f"{source}: {joint[:40]!r} -> {repr(canonical)[:40]} is not a canonical joint name "
                             "(or null)")
    lists = {}
    for key in ("strip_prefixes", "strip_suffixes"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{source}: {key!r} must be a list of strings")
        lists[key] = tuple(value)
    name, description = data.get("name", source), data.get("description", "")
    if not isinstance(name, str) or not isinstance(description, str):
        raise ValueError(f"{source}: 'name' and 'description' must be strings")
    return Preset(name, dict(joints), lists["strip_prefixes"], lists["strip_suffixes"], description)


def load_preset(path: str | os.PathLike[str]) -> Preset:
    """Read a preset JSON file.  Its content is only data: nothing in it is run or opened."""
    require_regular_file(path)
    with open(path, "rb") as handle:
        raw = handle.read(MAX_PRESET_BYTES + 1)
    if len(raw) > MAX_PRESET_BYTES:
        raise ValueError(f"{path}: larger than {MAX_PRESET_BYTES} bytes, not a preset")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a JSON preset ({error})") from None
    except RecursionError:
        raise ValueError(f"{path}: not a preset (nested too deeply)") from None
    return preset_from_dict(data, os.fspath(path))


def save_preset(preset: Preset, path: str | os.PathLike[str]) -> None:
    """Write a preset as JSON (a temporary file beside it, then renamed into place)."""
    atomic_write(path, (json.dumps(preset.to_dict(), indent=2) + "\n").encode("utf-8"))


@cache
def builtin_presets() -> dict[str, Preset]:
    """The conventions shipped with the add-on, by file stem (``mixamo``, ``rigify``, ...)."""
    return {path.stem: load_preset(path) for path in sorted(PRESETS.glob("*.json"))}


def find_preset(name_or_path: str | os.PathLike[str]) -> Preset:
    """A built-in preset by name, else a preset JSON file."""
    builtin = builtin_presets().get(os.fspath(name_or_path).casefold())
    if builtin is not None:
        return builtin
    if not os.path.exists(name_or_path):
        raise ValueError(f"no preset {os.fspath(name_or_path)!r}: built-in ones are {', '.join(builtin_presets())}")
    return load_preset(name_or_path)


def as_preset(preset: PresetLike) -> Preset | None:
    """A preset given as itself, a built-in name or a file."""
    return preset if preset is None or isinstance(preset, Preset) else find_preset(preset)


def read_joint(name: str, preset: Preset | None) -> NameReading:
    """What a joint's name says, a preset's entry for it replacing the name's own reading."""
    reading = read_name(name)
    if preset is None:
        return reading
    listed, canonical = preset.lookup(name)
    if not listed:
        return reading
    if canonical is None:
        return replace(reading, roles=(), fold=f"preset {preset.name}")
    side = canonical_side(canonical)
    part = canonical[:-2] if side else canonical
    family = part.split("_")[0] if part.startswith((*FINGERS, "spine_", "neck_")) else part
    return replace(reading, roles=(family,), side=side or reading.side, fold=None, metacarpal=False)
