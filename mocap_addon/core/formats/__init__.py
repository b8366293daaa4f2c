"""The file formats (BVH, HTR, ASF/AMC) and their registry; ``load`` and ``save`` pick one from a file's
content and extension.

Each format module declares what others need to know about it as ``FORMAT``
(a :class:`FileFormat`) and is registered below, one line each; nothing outside
a format's own modules names its extensions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import MocapFormatError
from ..files import require_regular_file
from ..model import Clip
from ..units import UNITS_IN_METRES
from . import acclaim, bvh, htr
from .fileformat import FileFormat

FORMATS: dict[str, FileFormat] = {}
"""Every registered extension (``.bvh`` …) -> its format."""


def register(file_format: FileFormat) -> None:
    """Add a format: ``load``, ``save``, ``sniff``, unit notes and file selections then know it."""
    taken = [e for e in file_format.extensions if e in FORMATS]
    if taken:
        raise ValueError(f"{file_format.label}: {', '.join(taken)} already registered")
    FORMATS.update(dict.fromkeys(file_format.extensions, file_format))


register(bvh.FORMAT)
register(htr.FORMAT)
register(acclaim.FORMAT)


def file_formats() -> list[FileFormat]:
    """The registered formats, in the order they were registered."""
    return list(dict.fromkeys(FORMATS.values()))


def motion_extensions() -> tuple[str, ...]:
    """The extensions of files holding motion (every registered one but skeleton-only files)."""
    return tuple(e for f in file_formats() for e in f.motion_extensions)


def sniff(path: str | os.PathLike[str]) -> str | None:
    """The extension of the format the file's first lines belong to, if recognisable."""
    require_regular_file(path)
    with open(path, "rb") as handle:
        head = handle.read(8192).decode("utf-8", "replace").lstrip("\ufeff")
    signatures = [(prefix, extension) for f in file_formats() for extension, prefixes in f.signatures.items()
                  for prefix in prefixes]
    for raw in head.splitlines():
        text = raw.split("#", 1)[0].strip().upper()
        if not text:
            continue
        for prefix, extension in signatures:
            if text.startswith(prefix):
                return extension
        return None
    return None


def format_of(path: str | os.PathLike[str]) -> str:
    """The extension (``.bvh`` …) whose reader should read ``path``."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    detected = sniff(path) if os.path.isfile(path) else None
    if extension in FORMATS and (detected is None or FORMATS[detected] is FORMATS[extension]):
        return extension
    if detected is not None:
        return detected
    raise MocapFormatError(f"unknown motion capture format {extension or '(no extension)'!r}", path, None)


def load(path: str | os.PathLike[str], **options: Any) -> Clip:
    """Read a motion capture file (BVH, HTR, ASF/AMC) into a :class:`Clip`."""
    require_regular_file(path)
    extension = format_of(path)
    file_format = FORMATS[extension]
    return file_format.function(file_format.readers[extension])(path, **options)


def files_to_read(paths: Sequence[str]) -> list[tuple[str, str | None]]:
    """The files a selection asks to read, in its order, each motion file with the skeleton file chosen for it.

    A skeleton file (ASF's .asf) selected with its format's motion files is their skeleton rather
    than a clip of its own: each motion file takes the selected skeleton file it would find beside
    it, else the only one selected.  A skeleton file no selected motion file uses is read on its
    own (its rest skeleton); files of formats without skeleton files have none.
    """
    def key(path: str) -> str:
        return os.path.normcase(os.path.abspath(path))

    def extension(path: str) -> str:
        return os.path.splitext(path)[1].lower()

    chosen: dict[str, str | None] = {}
    for file_format in file_formats():
        if file_format.skeleton_extension is None or file_format.find_skeleton is None:
            continue
        find_skeleton = file_format.function(file_format.find_skeleton)
        skeletons = {key(p): p for p in paths if extension(p) == file_format.skeleton_extension}
        for path in paths:
            if extension(path) not in file_format.motion_extensions:
                continue
            try:
                beside: str | None = key(find_skeleton(path))
            except (MocapFormatError, OSError):
                beside = None
            if beside in skeletons:
                chosen[path] = skeletons[beside]
            elif len(skeletons) == 1:
                chosen[path] = next(iter(skeletons.values()))
            else:
                chosen[path] = None
    used = {key(s) for s in chosen.values() if s is not None}
    return [(path, chosen.get(path)) for path in paths if key(path) not in used]


def save(clip: Clip, path: str | os.PathLike[str], **options: Any) -> None:
    """Write ``clip`` in the format named by ``path``'s extension."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in FORMATS:
        raise ValueError(f"cannot write {extension or 'files without an extension'}: "
                         f"known are {', '.join(sorted(FORMATS))}")
    FORMATS[extension].function(FORMATS[extension].writer)(clip, path, **options)


def default_unit(extension: str, source_format: str | None, unit_in_metres: float | None) -> float | None:
    """The unit (metres) a file of ``extension`` is written in by default for motion read from a file of
    ``source_format`` (a format's key) in ``unit_in_metres``: the unit its readers expect where the format
    states none and the motion came from a file of another format that stated its unit (HTR or ASF/AMC to
    BVH: centimetres), else the motion's own."""
    file_format = FORMATS[extension]
    expected = file_format.expected_unit
    if expected is None or unit_in_metres is None or source_format in (None, file_format.key):
        return unit_in_metres
    return UNITS_IN_METRES[expected]


def unit_note(clip: Clip, extension: str) -> str | None:
    """What a file of ``extension`` written from ``clip`` says about its unit, where a report should tell."""
    file_format = FORMATS[extension]
    return file_format.function(file_format.unit_note)(clip)
