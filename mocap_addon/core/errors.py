"""The one exception every reader raises for a malformed file."""

from __future__ import annotations

import os


class MocapFormatError(ValueError):
    """A file that cannot be read, with the place where reading stopped.

    ``path`` is the file, ``line`` is 1-based (``None`` when the problem is not
    tied to one line) and ``column`` is 1-based where it helps.
    """

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None,
                 line: int | None = None, column: int | None = None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.line = line
        self.column = column
        self.reason = message
        where = os.path.basename(self.path) if self.path else "<data>"
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {message}")


class MocapWriteError(ValueError):
    """A clip that cannot be written in the asked format (non-finite values, scales the format cannot hold…).

    Writers raise it before anything is written, so a file on disk is never one its reader would refuse.
    """


class MissingDependency(ImportError):
    """An optional dependency (Dask, matplotlib) that a feature needs is not installed; the message
    says what to install, in one line."""
