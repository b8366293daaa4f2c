"""Blender's progress indicator (``window_manager.progress_begin/update/end``) around a long operation.

Blender shows it in the status bar (the cursor's progress counter) while an
operator runs.  An operator that runs in ``execute`` blocks the interface, so
it cannot be cancelled while it runs (Esc is read only when it returns); undo
takes the whole operation back.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

import bpy


class Progress:
    """``with Progress(context, total) as progress:`` shows progress from 0 to ``total`` (reached when the
    block ends without an error); always ended."""

    def __init__(self, context: bpy.types.Context, total: float = 1.0) -> None:
        self.window_manager = context.window_manager
        self.total = total

    def __enter__(self) -> Progress:
        if self.window_manager is not None:
            self.window_manager.progress_begin(0.0, self.total)
        return self

    def update(self, value: float) -> None:
        """Show ``value`` (between 0 and the total)."""
        if self.window_manager is not None:
            self.window_manager.progress_update(value)

    def part(self, start: float, end: float) -> Callable[[float], None]:
        """A callback taking a share (0 to 1) of the steps from ``start`` to ``end``."""
        return lambda share: self.update(start + (end - start) * share)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if kind is None:
            self.update(self.total)
        if self.window_manager is not None:
            self.window_manager.progress_end()
