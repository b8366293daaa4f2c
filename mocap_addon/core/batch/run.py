"""A whole library: find the takes, skip what the manifest says is done, convert the rest in
parallel, and report each take (and index the previews)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ..errors import MissingDependency
from ..formats.textio import atomic_write
from ..threads import limit_threads
from .convert import DEFAULT_TIMEOUT, Outcome, Settings, convert_job, describe
from .executors import DASK_EXTRA, DaskPool, Pool, machine_cores
from .manifest import SET_ASIDE_NAME, Manifest, ManifestBusy, Record
from .plan import Job, plan
from .preview import PREVIEW_EXTRA

STAGING = ".staging"  # in the output folder: files of takes being written (cleared by every run)
PREVIEWS = "previews"  # in the output folder: one contact sheet per take
REPORT_NAME = "report.jsonl"
_CORE = __package__.rpartition(".")[0]
PREVIEW_MODULES = (f"{_CORE}.batch.preview", f"{_CORE}.naming",
                   "matplotlib.ft2font")  # imported once, before the workers start (the font renderer)

Line = dict[str, Any]


class BatchError(RuntimeError):
    """A batch that cannot start: an INPUT that does not exist, a missing extra, a busy output folder."""


@dataclass
class Summary:
    """What a run did: counts, wall time, and the report's lines (one per take, in input order)."""

    converted: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0
    lines: list[Line] = field(default_factory=list)
    set_aside: int = 0  # damaged manifest lines moved to SET_ASIDE_NAME (their takes were done again)

    def __str__(self) -> str:
        rate = f" ({self.converted / self.seconds:.1f} files/s)" if self.converted and self.seconds else ""
        damaged = (f"; {self.set_aside} damaged manifest record(s) set aside in {SET_ASIDE_NAME}, their takes "
                   "done again" if self.set_aside else "")
        return (f"converted {self.converted}, skipped {self.skipped}, failed {self.failed} "
                f"in {self.seconds:.1f} s{rate}{damaged}")


def run_batch(inputs: Sequence[str], out_dir: str, settings: Settings, *, jobs: int | None = None,
              scheduler: str | None = None, report: str | None = None, previews: bool = False,
              force: bool = False, progress: bool = True, timeout: float | None = DEFAULT_TIMEOUT,
              on_line: Callable[[Line], None] | None = None) -> Summary:
    """Convert every take of ``inputs`` (files, and folders searched recursively) into ``out_dir``.

    ``jobs`` worker processes (default: the machine's cores), or the Dask cluster ``scheduler``
    (``"local"``: a local cluster of ``jobs`` processes, else its address); ``report``: the JSONL report
    (default ``out_dir/report.jsonl``; lines are appended as takes finish, then put in input
    order); ``previews``: a contact sheet per take and ``out_dir/index.html``; ``force``: redo
    everything.  ``progress`` shows progress on stderr; ``timeout``: seconds a take may run (then it
    is reported failed); ``on_line`` gets each report line as it comes.  Raises :class:`BatchError`
    when the batch cannot start.  SIGTERM and SIGHUP stop it as Ctrl-C does (``KeyboardInterrupt``:
    the workers end, staging is cleared, what is done stays done).
    """
    started = time.perf_counter()
    try:
        found = plan(inputs, out_dir, settings.to)
        options = _checked(settings, scheduler, previews)
    except (FileNotFoundError, MissingDependency) as error:
        raise BatchError(str(error)) from None
    try:
        with _stopped_as_by_ctrl_c(), Manifest(out_dir) as manifest, \
                _Run(out_dir, report or os.path.join(out_dir, REPORT_NAME), on_line) as run:
            run.summary.set_aside = manifest.set_aside
            _convert(found, settings, options, manifest, run, jobs=jobs, scheduler=scheduler, previews=previews,
                     force=force, progress=progress, timeout=timeout)
    except ManifestBusy as error:
        raise BatchError(str(error)) from None
    except OSError as error:  # the output folder or the report cannot be written
        raise BatchError(f"{error.filename}: {error.strerror}") from None
    if previews:
        from .index import write_index

        write_index(out_dir, [(found[number], line) for number, line in sorted(run.lines.items())], preview_name)
    run.summary.seconds = time.perf_counter() - started
    return run.summary


@contextlib.contextmanager
def _stopped_as_by_ctrl_c() -> Iterator[None]:
    """SIGTERM (a service manager's stop, ``kill PID``) and SIGHUP (a closed terminal) raise
    ``KeyboardInterrupt`` in the block, as Ctrl-C does (only in the main thread, where signals arrive)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    stops = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    previous = {stop: signal.signal(stop, interrupt) for stop in stops}
    try:
        yield
    finally:
        for stop, handler in previous.items():
            signal.signal(stop, handler)


def _convert(found: list[Job], settings: Settings, options: dict[str, Any], manifest: Manifest, run: _Run, *,
             jobs: int | None, scheduler: str | None, previews: bool, force: bool, progress: bool,
             timeout: float | None) -> None:
    """Report what is refused or up to date, and convert the rest."""
    todo = []
    for number, job in enumerate(found):
        record = None if force or job.refused else manifest.current(job, options, previews)
        if job.refused:
            run.emit(number, _line(job, "error", error=job.refused))
        elif record is not None:
            run.emit(number, _line(job, "skipped", **_shown(record)))
        else:
            todo.append(number)
    out_dir = manifest.out_dir
    if todo:
        tasks = [(found[number], settings, run.staging) for number in todo]
        workers = jobs or machine_cores()
        # A local pool shares the machine's cores among its workers; a cluster's workers have a core each.
        threads = max(1, machine_cores() // workers) if not scheduler else 1
        task = _ConvertTask(force, out_dir if previews else None, timeout, threads)
        with _pool(scheduler, workers, previews) as pool, _Progress(len(todo), progress) as shown:
            for index, result in pool.run(task, tasks):
                number = todo[index]
                line = _finished(found[number], result, out_dir, options, manifest)
                shown.advance(line["status"] != "ok")
                run.emit(number, line)


def _pool(scheduler: str | None, workers: int, previews: bool) -> Pool:
    """The workers: a Dask cluster's (connected, or a local one started) or a process pool's."""
    if not scheduler:
        return Pool(workers, PREVIEW_MODULES if previews else ())
    try:
        return DaskPool(scheduler, workers)
    except (OSError, TimeoutError, ValueError, MissingDependency) as error:
        reason = (str(error).splitlines() or [type(error).__name__])[0]
        raise BatchError(f"--scheduler {scheduler}: {reason}") from None


def preview_name(job: Job) -> str:
    """Where a take's contact sheet goes, relative to the output folder."""
    return f"{PREVIEWS}/{os.path.splitext(job.relative)[0]}.png"


class _Run:
    """One run's report (streamed, then rewritten in input order), counts and staging folder."""

    def __init__(self, out_dir: str, report: str, on_line: Callable[[Line], None] | None) -> None:
        self.summary = Summary()
        self.lines: dict[int, Line] = {}
        self.report = report
        self.on_line = on_line
        self.staging = os.path.join(out_dir, STAGING)
        shutil.rmtree(self.staging, ignore_errors=True)  # what a killed run left unfinished
        os.makedirs(self.staging)
        os.makedirs(os.path.dirname(os.path.abspath(report)), exist_ok=True)
        self.stream = open(report, "w", encoding="utf-8")  # noqa: SIM115 (closed by __exit__)

    def __enter__(self) -> _Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.close()
        shutil.rmtree(self.staging, ignore_errors=True)
        self.summary.lines = [self.lines[number] for number in sorted(self.lines)]
        atomic_write(self.report, "".join(json.dumps(line) + "\n" for line in self.summary.lines).encode("utf-8"))

    def emit(self, number: int, line: Line) -> None:
        """Count and report the take ``number`` (its place in the plan)."""
        self.lines[number] = line
        status = line["status"]
        self.summary.converted += status == "ok"
        self.summary.skipped += status == "skipped"
        self.summary.failed += status == "error"
        self.stream.write(json.dumps(line) + "\n")
        self.stream.flush()
        if self.on_line is not None:
            self.on_line(line)


def _checked(settings: Settings, scheduler: str | None, previews: bool) -> dict[str, Any]:
    """The settings' identity, once what they need is known to be there."""
    if scheduler and importlib.util.find_spec("distributed") is None:
        raise MissingDependency(f"--scheduler needs Dask: {DASK_EXTRA}")
    if previews and importlib.util.find_spec("matplotlib") is None:
        raise MissingDependency(f"--previews needs matplotlib: {PREVIEW_EXTRA}")
    if settings.retarget_onto is not None:
        from ..formats import load

        try:
            load(settings.retarget_onto)
        except (ValueError, OSError) as error:
            raise FileNotFoundError(f"--retarget-onto {describe(error, settings.retarget_onto)}") from None
    return settings.identity()


class _ConvertTask:
    """``convert_job`` with the run's flags, each take's preview path when previews are drawn into
    ``previews_in``, and the threads a worker's numpy work may use (a plain class: tasks are pickled to
    the workers)."""

    def __init__(self, force: bool, previews_in: str | None, timeout: float | None, threads: int) -> None:
        self.force, self.previews_in, self.timeout, self.threads = force, previews_in, timeout, threads

    def __call__(self, job: Job, settings: Settings, staging: str) -> Outcome:
        limit_threads(self.threads)
        preview = None if self.previews_in is None else os.path.join(self.previews_in, *preview_name(job).split("/"))
        return convert_job(job, settings, staging, replace=self.force, preview=preview, timeout=self.timeout)


def _line(job: Job, status: str, **details: Any) -> Line:
    """A report line: the take, its output, its status and what is known of it."""
    return {"input": job.source, "output": job.output, "status": status, "error": None, "frames": None,
            "joints": None, "fps": None, "seconds": 0.0, "warnings": [], **details}


_SHOWN = ("frames", "joints", "fps", "warnings", "written_joints", "mapped", "reduction")


def _shown(record: Record | Outcome) -> dict[str, Any]:
    """What the report and the index show of a take, from its record or its outcome."""
    values = record if isinstance(record, dict) else vars(record)
    return {key: values[key] for key in _SHOWN if values.get(key) is not None}


def _finished(job: Job, result: Outcome | BaseException, out_dir: str, options: dict[str, Any],
              manifest: Manifest) -> Line:
    """The report line of a take that ran (recorded in the manifest when it succeeded)."""
    if not isinstance(result, Outcome):  # its worker died twice, or the call itself failed
        return _line(job, "error", error=describe(result, job.source))
    line = _line(job, result.status, error=result.error, seconds=round(result.seconds, 4), **_shown(result))
    if result.status == "ok":
        def inside(path: str) -> str:
            return os.path.relpath(path, out_dir).replace(os.sep, "/")

        preview = None if result.preview is None else inside(result.preview)
        manifest.add({"output": job.relative, "input": os.path.abspath(job.source), "source": result.source,
                      "skeleton": result.skeleton, "options": options, "preview": preview,
                      "outputs": {inside(path): size for path, size in result.outputs.items()},
                      **_shown(result)})
    return line


class _Progress:
    """Takes done out of the total, on stderr: tqdm's bar on a terminal where tqdm is installed,
    else a plain line at most once a second (and one at the end)."""

    def __init__(self, total: int, shown: bool, stream: IO[str] | None = None) -> None:
        self.total, self.done, self.failed, self.printed = total, 0, 0, 0
        self.stream = stream or sys.stderr
        self.started = self.last = time.monotonic()
        self.shown = shown and total > 0
        self.bar: Any = None
        if self.shown and self.stream.isatty() and importlib.util.find_spec("tqdm") is not None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="file", file=self.stream, dynamic_ncols=True)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.shown and self.done > self.printed:
            self._line(time.monotonic())

    def advance(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        if self.bar is not None:
            self.bar.update(1)
            if failed:
                self.bar.set_postfix(failed=self.failed)
        elif self.shown:
            now = time.monotonic()
            if now - self.last >= 1.0:
                self._line(now)

    def _line(self, now: float) -> None:
        self.last, self.printed = now, self.done
        rate = self.done / max(now - self.started, 1e-9)
        print(f"{self.done}/{self.total} done, {self.failed} failed, {rate:.1f} files/s, "
              f"{(self.total - self.done) / rate:.0f} s left", file=self.stream, flush=True)
