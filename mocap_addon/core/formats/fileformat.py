"""What the rest of the add-on knows about a file format: each format module declares it as ``FORMAT``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, eq=False)
class FileFormat:
    """A file format's names, extensions and functions, as the registry (``core.formats``) reads them;
    each is one object, equal only to itself.

    Functions are given by name and found on ``module`` when called, as any call
    through the module would find them.
    """

    key: str  # the format's name in clips' ``metadata["format"]`` and on command lines ("bvh")
    label: str  # for people ("ASF/AMC")
    module: str  # the module (its ``__name__``) that holds the functions named below
    readers: Mapping[str, str]  # extension -> reader ``(path, **options) -> Clip``; the first is the one written
    writer: str  # ``(clip, path, **options) -> None`` for any of the extensions
    signatures: Mapping[str, tuple[str, ...]]  # extension -> how its files' first meaningful line starts (upper case)
    unit_note: str  # ``(clip) -> str | None``: what a written file says about the clip's unit, where a report should
    up_axis_known: bool  # clips read carry their file's up axis (else an importer's own Up setting applies)
    # A format that cannot state its unit: the unit its readers expect (a ``units.UNIT_CHOICES`` key), in which
    # motion from a file of another format that stated its unit is written by default (``formats.default_unit``).
    expected_unit: str | None = None
    skeleton_extension: str | None = None  # a skeleton-only file, read with the motion as the reader's ``skeleton``
    find_skeleton: str | None = None  # ``(motion_path) -> str``: the skeleton file beside a motion file

    @property
    def extensions(self) -> tuple[str, ...]:
        """Every extension the format reads, the written one first."""
        return tuple(self.readers)

    @property
    def motion_extensions(self) -> tuple[str, ...]:
        """The extensions of files that hold motion (not skeleton-only files)."""
        return tuple(e for e in self.readers if e != self.skeleton_extension)

    def function(self, name: str) -> Callable[..., Any]:
        """The module's function ``name``."""
        return getattr(importlib.import_module(self.module), name)
