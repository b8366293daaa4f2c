"""The file formats (BVH, HTR, ASF/AMC); ``load`` and ``save`` pick one from a file's content and extension."""

from __future__ import annotations

import errno
import importlib
import os
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import MocapFormatError
from ..model import Clip

# extension -> (module, reader, writer); modules are imported on first use.
FORMATS: dict[str, tuple[str, str, str]] = {
    ".bvh": ("bvh", "read_bvh", "write_bvh"),
    ".htr": ("htr", "read_htr", "write_htr"),
    ".amc": ("acclaim", "read_amc", "write_amc"),
    ".asf": ("acclaim", "read_asf", "write_amc"),
}

# What a file's first meaningful text looks like, per format.
_SIGNATURES = (
    ("HIERARCHY", ".bvh"),
    ("[HEADER]", ".htr"),
    (":VERSION", ".asf"),
    (":NAME", ".asf"),
    (":FULLY-SPECIFIED", ".amc"),
    (":DEGREES", ".amc"),
    (":RADIANS", ".amc"),
)


def sniff(path: str | os.PathLike[str]) -> str | None:
    """The extension of the format the file's first lines belong to, if recognisable."""
    with open(path, "rb") as handle:
        head = handle.read(8192).decode("utf-8", "replace").lstrip("\ufeff")
    for raw in head.splitlines():
        text = raw.split("#", 1)[0].strip().upper()
        if not text:
            continue
        for prefix, extension in _SIGNATURES:
            if text.startswith(prefix):
                return extension
        return None
    return None


def _function(extension: str, slot: int) -> Callable[..., Any]:
    module_name = FORMATS[extension][0]
    module = importlib.import_module(f"{__package__}.{module_name}")
    return getattr(module, FORMATS[extension][slot])  # type: ignore[no-any-return]


def format_of(path: str | os.PathLike[str]) -> str:
    """The extension (``.bvh`` …) whose reader should read ``path``."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    detected = sniff(path) if os.path.isfile(path) else None
    if extension in FORMATS and (detected in (None, extension) or {detected, extension} == {".asf", ".amc"}):
        return extension
    if detected is not None:
        return detected
    raise MocapFormatError(f"unknown motion capture format {extension or '(no extension)'!r}", path, None)


def load(path: str | os.PathLike[str], **options: Any) -> Clip:
    """Read a motion capture file (BVH, HTR, ASF/AMC) into a :class:`Clip`."""
    if not os.path.isfile(path):
        code = errno.EISDIR if os.path.isdir(path) else errno.ENOENT
        raise OSError(code, os.strerror(code), os.fspath(path))
    return _function(format_of(path), 1)(path, **options)  # type: ignore[no-any-return]


def files_to_read(paths: Sequence[str]) -> list[tuple[str, str | None]]:
    """The files a selection asks to read, in its order, each .amc with the .asf chosen for it.

    An .asf selected with .amc files is their skeleton rather than a clip of its own: each .amc
    takes the selected .asf it would find beside it, else the only one selected.  An .asf no
    selected .amc uses is read on its own (its rest skeleton); other files have no skeleton.
    """
    from .acclaim import find_skeleton

    def key(path: str) -> str:
        return os.path.normcase(os.path.abspath(path))

    skeletons = {key(p): p for p in paths if os.path.splitext(p)[1].lower() == ".asf"}
    chosen: dict[str, str | None] = {}
    for path in paths:
        if os.path.splitext(path)[1].lower() != ".amc":
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
    _function(extension, 2)(clip, path, **options)
