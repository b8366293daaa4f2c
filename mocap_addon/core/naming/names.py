"""What a joint's name says: its side, the body parts it may be, or that it folds away.

The vocabulary is data (``core/data/joint_names.json``); this module only applies it.
A name is read case-blind and separator-blind: ``mixamorig:LeftForeArm``,
``DEF-forearm.L.001``, ``lowerarm_l`` and ``Bip01 L Forearm`` all read as a
left lower arm.  Which of several parts an ambiguous name is (``LeftShoulder``:
clavicle or upper arm) is for the skeleton's topology to settle.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).parents[1] / "data"
_SEPARATORS = re.compile(r"[\s_\-.:|]+")
_DUPLICATE_SUFFIX = re.compile(r"\.\d{3}$")
_SIDE_WORDS = ("left", "right")


@dataclass(frozen=True)
class NameReading:
    """A joint name read: ``core`` is the lower-case name without namespace, prefixes and side."""

    core: str
    side: str | None  # "l" or "r" when the name says
    roles: tuple[str, ...]  # body parts the name allows, e.g. ("clavicle", "upper_arm")
    fold: str | None  # why the joint takes no canonical name (twist, end bone, ...), else None
    metacarpal: bool = False  # a finger name for the bone inside the palm
    finger_number: int | None = None  # N of a numbered finger (``Finger2``, ``finger2-1``)


@dataclass(frozen=True)
class _Vocabulary:
    prefix_words: re.Pattern[str]
    side_words: dict[str, str]
    glued_prefixes: tuple[str, ...]
    numbered_finger: re.Pattern[str]
    fold: tuple[tuple[re.Pattern[str], str], ...]
    roles: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]


@cache
def _vocabulary() -> _Vocabulary:
    data: dict[str, Any] = json.loads((DATA / "joint_names.json").read_text(encoding="utf-8"))
    return _Vocabulary(
        prefix_words=re.compile("|".join(f"(?:{p})" for p in data["prefix_words"])),
        side_words=dict(data["side_words"]),
        glued_prefixes=tuple(data["glued_prefixes"]),
        numbered_finger=re.compile(data["numbered_finger"]),
        fold=tuple((re.compile(p), reason) for p, reason in data["fold"]),
        roles=tuple((re.compile(p), tuple(parts)) for p, parts in data["roles"]),
    )


FINGERS = ("thumb", "index", "middle", "ring", "pinky")


def _classify(core: str) -> tuple[str | None, tuple[str, ...]] | None:
    """(fold reason, roles) for a core the vocabulary knows, else ``None``.

    A numbered finger reads with the 3ds Max Biped numbering (0 the thumb);
    :func:`finger_roles` renumbers a hand whose fingers start at 1.
    """
    if not core:
        return None
    vocabulary = _vocabulary()
    for pattern, reason in vocabulary.fold:
        if pattern.fullmatch(core):
            return reason, ()
    numbered = vocabulary.numbered_finger.fullmatch(core)
    if numbered:
        number = int(numbered.group(1))
        return None, (FINGERS[number],) if number < len(FINGERS) else ()
    for pattern, roles in vocabulary.roles:
        if pattern.fullmatch(core):
            return None, roles
    return None


def words_of(name: str) -> list[str]:
    """The lower-case words of a name: namespace, duplicate suffix and prefix words dropped."""
    name = re.split(r"[:|]", name)[-1]
    name = _DUPLICATE_SUFFIX.sub("", name)
    words = [w.lower() for w in _SEPARATORS.split(name) if w]
    prefixes = _vocabulary().prefix_words
    while len(words) > 1 and prefixes.fullmatch(words[0]):
        words.pop(0)
    return words


@lru_cache(maxsize=4096)
def read_name(name: str) -> NameReading:
    """Read a joint name (see the module docstring)."""
    vocabulary = _vocabulary()
    words = words_of(name)
    sides = {vocabulary.side_words[w] for w in words if w in vocabulary.side_words}
    side = sides.pop() if len(sides) == 1 else None
    core = re.sub(r"[^a-z0-9]", "", "".join(w for w in words if w not in vocabulary.side_words))
    if side is None:
        for word in _SIDE_WORDS:
            if core != word and core.startswith(word):
                side, core = word[0], core[len(word):]
                break
            if core != word and core.endswith(word):
                side, core = word[0], core[: -len(word)]
                break
    known = _classify(core)
    if known is None:
        known, core, side = _glued(core, side)
    fold, roles = known if known is not None else (None, ())
    metacarpal = bool(roles) and roles[0] in FINGERS and "meta" in core
    numbered = _vocabulary().numbered_finger.fullmatch(core) if fold is None else None
    return NameReading(core, side, roles, fold, metacarpal, int(numbered.group(1)) if numbered else None)


def finger_roles(readings: list[NameReading]) -> list[tuple[str, ...]]:
    """The roles of one hand's joints, numbered fingers read 1-based (1 the thumb, MakeHuman)
    when no finger of the hand is numbered 0, as 3ds Max Biped's thumb is."""
    numbers = {r.finger_number for r in readings if r.finger_number is not None}
    if not numbers or 0 in numbers:
        return [r.roles for r in readings]
    return [r.roles if r.finger_number is None else
            ((FINGERS[r.finger_number - 1],) if r.finger_number <= len(FINGERS) else ()) for r in readings]


def _glued(core: str, side: str | None) -> tuple[tuple[str | None, tuple[str, ...]] | None, str, str | None]:
    """A side letter or prefix letter glued to a known word: ``lhumerus``, ``LThumb``, ``mChest``."""
    if side is None:
        for letter in ("l", "r"):
            for rest in (core[1:] if core.startswith(letter) else "", core[:-1] if core.endswith(letter) else ""):
                known = _classify(rest)
                if known is not None:
                    return known, rest, letter
    for prefix in _vocabulary().glued_prefixes:
        if core.startswith(prefix):
            known = _classify(core[len(prefix):])
            if known is not None:
                return known, core[len(prefix):], side
    return None, core, side
