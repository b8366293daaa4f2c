"""A failed operation leaves ``bpy.data`` as it was."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import bpy


class Blocks(Protocol):
    """A collection of ``bpy.data`` (``bpy.data.objects``, …)."""

    def __iter__(self) -> Iterator[bpy.types.ID]: ...

    def remove(self, block: Any, /) -> None: ...


@contextmanager
def nothing_left_behind(*more: Blocks) -> Iterator[None]:
    """On any exception, remove the objects, armatures and actions created inside the block, and the
    blocks created in ``more`` collections of ``bpy.data`` (``bpy.data.curves``, …), in that order."""
    collections: tuple[Blocks, ...] = (bpy.data.objects, bpy.data.armatures, bpy.data.actions, *more)
    before = [set(c) for c in collections]
    try:
        yield
    except BaseException:
        if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        for collection, old in zip(collections, before):
            for block in [b for b in collection if b not in old]:
                collection.remove(block)
        raise
