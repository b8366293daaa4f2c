"""Which files a batch reads and where each result goes.

INPUTs are files and folders.  A folder is searched recursively for takes (the
registered formats' motion files, ``.bvh``, ``.htr``, ``.amc`` in any case;
hidden folders and the output folder are left out); each take's result mirrors
its path relative to that folder.  A file given by name lands at the top of the
output folder.  A take whose format keeps its skeleton in a file of its own (an
``.amc``) is read with the one its reader finds beside it (or, among files given
by name, the ``.asf`` given with it); an ``.asf`` given alone is a take of its
own (its rest skeleton).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .. import formats
from ..errors import MocapFormatError
from ..files import require_regular_file
from ..formats import file_formats, files_to_read, motion_extensions

TARGETS = tuple(f.key for f in file_formats())  # what --to names: bvh, htr, amc


@dataclass(frozen=True)
class Job:
    """One take: the file read, the file written and where it sits in its library."""

    source: str  # the file read, as found under its INPUT
    name: str  # its path relative to its INPUT folder, with '/' between folders (its name for a file INPUT)
    relative: str  # the result's path inside the output folder, the same but for the extension
    output: str  # the file written: ``relative`` inside the output folder
    skeleton: str | None = None  # the .asf an .amc is read with
    refused: str | None = None  # why the take is not converted (its output is another take's)

    @property
    def outputs(self) -> tuple[str, ...]:
        """Every file the job writes: the skeleton file first where its format has one (.asf beside .amc)."""
        stem, extension = os.path.splitext(self.output)
        skeleton = formats.FORMATS[extension].skeleton_extension
        return (stem + skeleton, self.output) if skeleton else (self.output,)


def plan(inputs: Sequence[str], out_dir: str, to: str) -> list[Job]:
    """The jobs for ``inputs`` written as ``to`` files in ``out_dir``, in input order (a folder's
    takes sorted); a take whose output another take already writes is ``refused``.

    Raises ``FileNotFoundError`` for an INPUT that does not exist.
    """
    if to not in TARGETS:
        raise ValueError(f"cannot write {to!r}: the batch writes {', '.join(TARGETS)}")
    missing = [name for name in inputs if not os.path.exists(name)]
    if missing:
        raise FileNotFoundError(f"no such file or folder: {', '.join(missing)}")
    found: list[tuple[str, str, str | None]] = []  # source, relative path, skeleton
    named = dict(files_to_read([name for name in inputs if not os.path.isdir(name)]))
    for name in inputs:
        if os.path.isdir(name):
            found += [(source, relative, _skeleton_beside(source)) for source, relative in takes_in(name, out_dir)]
        elif name in named:  # not an .asf given as the skeleton of an .amc
            found.append((name, os.path.basename(name), named[name] or _skeleton_beside(name)))
    jobs: list[Job] = []
    claimed: dict[str, str] = {}
    written = next(f.extensions[0] for f in file_formats() if f.key == to)
    for source, relative, skeleton in found:
        name = relative.replace(os.sep, "/")
        result = os.path.splitext(name)[0] + written
        job = Job(source, name, result, os.path.join(out_dir, *result.split("/")), skeleton)
        keys = [os.path.normcase(os.path.abspath(path)) for path in job.outputs]
        taken = next((claimed[key] for key in keys if key in claimed), None)
        unreadable = _not_regular(source)
        if unreadable:
            job = replace(job, refused=unreadable)
        elif taken is None:
            claimed.update(dict.fromkeys(keys, source))
        else:
            job = replace(job, refused=f"{source}: its output {job.output} is already written for {taken}")
        jobs.append(job)
    return jobs


def takes_in(folder: str, out_dir: str | None = None) -> list[tuple[str, str]]:
    """Every take under ``folder`` (recursive, sorted by path, hidden folders and ``out_dir`` left out) with
    its path relative to ``folder``."""
    skip = os.path.realpath(out_dir) if out_dir else None
    extensions = motion_extensions()
    takes = []
    for here, folders, files in os.walk(folder):
        folders[:] = [f for f in folders if not f.startswith(".") and os.path.realpath(os.path.join(here, f)) != skip]
        for name in files:
            if os.path.splitext(name)[1].lower() in extensions:
                path = os.path.join(here, name)
                takes.append((path, os.path.relpath(path, folder)))
    return sorted(takes, key=lambda take: take[1].split(os.sep))


def _not_regular(source: str) -> str | None:
    """Why ``source`` is not read (a FIFO, a device: reading would never end), or ``None``."""
    try:
        require_regular_file(source)
    except OSError as error:
        return f"{source}: {error.strerror}"
    return None


def _skeleton_beside(source: str) -> str | None:
    """The skeleton file a take's reader would find beside it (an .amc's .asf); ``None`` for formats
    without one, or where there is none (reading will say so)."""
    file_format = formats.FORMATS.get(os.path.splitext(source)[1].lower())
    if file_format is None or file_format.find_skeleton is None:
        return None
    try:
        return file_format.function(file_format.find_skeleton)(source)
    except (MocapFormatError, OSError):
        return None
