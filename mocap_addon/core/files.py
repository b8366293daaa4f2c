"""Only regular files are read: a FIFO, a device, a socket or a folder given as a file is refused before
anything is read from it (reading one would block for ever, or never end)."""

from __future__ import annotations

import errno
import os
import stat

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class NotRegularFile(OSError):
    """A path that names something other than a regular file; ``strerror`` says what, in a few words."""

    def __init__(self, path: str | os.PathLike[str], mode: int) -> None:
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        super().__init__(code, f"not a regular file ({kind}): only regular files are read", os.fspath(path))


class FolderNotFile(NotRegularFile, IsADirectoryError):
    """A folder given where a file is read: also the :class:`IsADirectoryError` Python raises for one."""


def _refused(path: str | os.PathLike[str], mode: int) -> NotRegularFile:
    return (FolderNotFile if stat.S_ISDIR(mode) else NotRegularFile)(path, mode)


def require_regular_file(path: str | os.PathLike[str]) -> None:
    """Raise ``OSError`` unless ``path`` is a regular file (or a link to one); nothing is opened."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _refused(path, mode)


def read_regular_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path``; anything else is refused as :func:`require_regular_file`
    refuses it, checked on the opened file itself (opened without waiting for a FIFO's writer)."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise _refused(path, mode)
        return handle.read()
