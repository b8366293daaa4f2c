"""What a batch has finished in its output folder, so a rerun does only what is missing or changed.

``manifest.jsonl`` in the output folder holds one record per finished take,
appended the moment its files are in place: the input's (and its .asf's)
size, modification time and SHA-256, the options that made it, the files
written with their sizes, and what the report and the index show of it.  A
killed run loses at most the records of takes whose files were being moved
into place; those are converted again and, their bytes being the same, left
untouched.  At the end of a run the journal is rewritten with one record per
output.  A run holds an exclusive lock on the file, so two runs never share
an output folder.

A damaged manifest never stops a run: a line that is not a whole record
(cut short, garbage, a missing key, a wrong type) is set aside in
``manifest.damaged.jsonl`` for inspection and its take is simply done again;
something other than a file in the manifest's place is moved aside the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from typing import IO, Any

from ..files import require_regular_file
from ..formats.textio import atomic_write
from .plan import Job

MANIFEST_NAME = "manifest.jsonl"
SET_ASIDE_NAME = "manifest.damaged.jsonl"
VERSION = 1

Record = dict[str, Any]


class ManifestBusy(RuntimeError):
    """Another batch holds the output folder."""


def fingerprint(path: str) -> dict[str, Any]:
    """A file's size, modification time (ns) and SHA-256; the time is read before the content."""
    require_regular_file(path)
    status = os.stat(path)
    with open(path, "rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    return {"size": status.st_size, "mtime_ns": status.st_mtime_ns, "sha256": digest}


def unchanged(recorded: dict[str, Any], path: str) -> dict[str, Any] | None:
    """``recorded`` (refreshed if only the time moved) when ``path`` still holds what it did, else ``None``.

    Size and time alike: the same file.  Same size, other time: the content decides.
    """
    try:
        status = os.stat(path)
        if status.st_size != recorded["size"]:
            return None
        if status.st_mtime_ns == recorded["mtime_ns"]:
            return recorded
        now = fingerprint(path)
    except OSError:
        return None
    return now if now["sha256"] == recorded["sha256"] else None


class Manifest:
    """The records of one output folder, which it holds locked until closed (a context manager)."""

    def __init__(self, out_dir: str) -> None:
        """Open (and lock) ``out_dir``'s manifest, made with the folder if missing; raises
        :class:`ManifestBusy` if another batch holds it."""
        self.out_dir = out_dir
        self.path = os.path.join(out_dir, MANIFEST_NAME)
        self.records: dict[str, Record] = {}
        self.set_aside = 0  # damaged lines (or a folder in the manifest's place) moved to SET_ASIDE_NAME
        os.makedirs(out_dir, exist_ok=True)
        if os.path.lexists(self.path) and not os.path.isfile(self.path):
            self._move_aside()
        self._journal = open(self.path, "a+b")  # noqa: SIM115 (held until close)
        try:
            _lock(self._journal)
        except OSError:
            self._journal.close()
            raise ManifestBusy(f"{out_dir}: another batch is writing this folder") from None
        self._journal.seek(0)
        damaged = []
        for line in self._journal.read().splitlines(keepends=True):
            record = _record(line)
            if record is None:
                damaged.append(line if line.endswith(b"\n") else line + b"\n")
            elif record["version"] == VERSION:
                self.records[record["output"]] = record
        if damaged:
            with open(os.path.join(out_dir, SET_ASIDE_NAME), "ab") as side:
                side.writelines(damaged)
            self.set_aside += len(damaged)

    def _move_aside(self) -> None:
        """Something other than a file holds the manifest's name (a folder, say): move it aside."""
        aside = os.path.join(self.out_dir, f"{SET_ASIDE_NAME}.{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        os.rename(self.path, aside)
        self.set_aside += 1

    def __enter__(self) -> Manifest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Rewrite the journal with one record per output (sorted), then release the folder."""
        if self._journal.closed:
            return
        text = "".join(json.dumps(self.records[key], sort_keys=True) + "\n" for key in sorted(self.records))
        try:
            atomic_write(self.path, text.encode("utf-8"))
        finally:
            self._journal.close()

    def current(self, job: Job, options: dict[str, Any], previews: bool) -> Record | None:
        """The record of ``job`` if its outputs are in place and were made from its inputs as they are
        now with these options (and with a preview when one is wanted), else ``None``."""
        record = self.records.get(job.relative)
        if record is None or record["options"] != options:
            return None
        for name, size in record["outputs"].items():
            try:
                if os.path.getsize(os.path.join(self.out_dir, name)) != size:
                    return None
            except OSError:
                return None
        if previews and not (record.get("preview") and os.path.isfile(os.path.join(self.out_dir, record["preview"]))):
            return None
        if (record["skeleton"] is None) != (job.skeleton is None):
            return None
        source = unchanged(record["source"], job.source)
        skeleton = None if job.skeleton is None else unchanged(record["skeleton"], job.skeleton)
        if source is None or (job.skeleton is not None and skeleton is None):
            return None
        if (source, skeleton) != (record["source"], record["skeleton"]):
            self.add({**record, "source": source, "skeleton": skeleton})  # touched, not changed
        return self.records[job.relative]

    def add(self, record: Record) -> None:
        """Record a finished take (appended at once, so a kill a moment later keeps it)."""
        record = {**record, "version": VERSION}
        self.records[record["output"]] = record
        self._journal.write((json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))
        self._journal.flush()


def _record(line: bytes) -> Record | None:
    """The record a manifest line holds, or ``None`` if it is not one (damaged, cut short, other keys or types)."""
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not (isinstance(record, dict) and isinstance(record.get("version"), int)):
        return None
    if record["version"] != VERSION:
        return record  # another version's: not read, not set aside
    fingerprints = [record.get("source"), *([record["skeleton"]] if record.get("skeleton") is not None else [])]
    shaped = (isinstance(record.get("output"), str) and isinstance(record.get("options"), dict)
              and isinstance(record.get("outputs"), dict)
              and all(isinstance(k, str) and type(v) is int for k, v in record["outputs"].items())
              and "skeleton" in record and isinstance(record.get("preview"), str | None)
              and all(isinstance(f, dict) and type(f.get("size")) is int and type(f.get("mtime_ns")) is int
                      and isinstance(f.get("sha256"), str) for f in fingerprints))
    return record if shaped else None


def _lock(handle: IO[bytes]) -> None:
    """An exclusive lock on the open file, refused at once if held (no locking where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: runs are not guarded against each other
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
