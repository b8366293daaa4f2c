"""The file formats (BVH, HTR, ASF/AMC); ``load`` and ``save`` pick one from a file's content and extension."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
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
        raise FileNotFoundError(path)
    return _function(format_of(path), 1)(path, **options)  # type: ignore[no-any-return]


def save(clip: Clip, path: str | os.PathLike[str], **options: Any) -> None:
    """Write ``clip`` in the format named by ``path``'s extension."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in FORMATS:
        raise ValueError(f"cannot write {extension or 'files without an extension'}: "
                         f"known are {', '.join(sorted(FORMATS))}")
    _function(extension, 2)(clip, path, **options)
