"""One take, in a worker process: read it, transform it, write it atomically, draw its preview.

Everything here runs where the work is (a local process or a Dask worker) and
reports back in an :class:`Outcome`; nothing raises, so one broken file never
stops a batch.  The files are first written in a folder of their own under the
output folder's staging area, then renamed into place, so an output is either
absent, the old file or the whole new one, even when the run is killed.  A new
file whose bytes equal the one in place is dropped and the old one kept (its
time untouched) unless the batch was asked to redo everything.
"""

from __future__ import annotations

import contextlib
import ctypes
import filecmp
import functools
import os
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from ..body.stature import in_unit
from ..errors import MocapFormatError
from ..formats import load, save
from ..model import Clip
from ..options import AUTO_UNIT
from ..reduce import played_back, reduce_keys
from .manifest import fingerprint
from .plan import Job


@dataclass(frozen=True)
class Settings:
    """What every take of a batch becomes: the options that decide an output's bytes."""

    to: str  # the format written, by its key in the format registry
    canonical: bool = False
    method: str = "rotations"  # of the canonical conversion
    retarget_onto: str | None = None  # a file whose skeleton every take is retargeted onto
    feet: str | None = None  # "planted" or "free", for the canonical conversion and retargeting
    reduce: float | None = None  # key reduction tolerance (a fraction of the figure's height)
    unit: str = AUTO_UNIT  # the input's unit (``options.READ_UNIT``, as ``convert --unit``)
    precision: int = 6  # decimals written

    def identity(self) -> dict[str, Any]:
        """The settings as the manifest compares them (the retarget target by its content too)."""
        identity = asdict(self)
        if self.retarget_onto is not None:
            identity["retarget_onto"] = {"path": os.path.abspath(self.retarget_onto),
                                         "sha256": fingerprint(self.retarget_onto)["sha256"]}
        return identity


@dataclass
class Outcome:
    """What happened to one take; ``status`` is ``ok`` or ``error`` (then ``error`` says why, in one line)."""

    status: str = "error"
    error: str | None = None
    seconds: float = 0.0
    frames: int | None = None
    joints: int | None = None
    fps: float | None = None
    written_joints: int | None = None  # joints of the skeleton written (canonical, retargeted: not the take's)
    mapped: int | None = None  # canonical joints the take's skeleton maps (with previews)
    warnings: list[str] = field(default_factory=list)
    reduction: dict[str, float] | None = None
    source: dict[str, Any] | None = None  # fingerprints read before the files were
    skeleton: dict[str, Any] | None = None
    outputs: dict[str, int] = field(default_factory=dict)  # file written -> size
    preview: str | None = None


DEFAULT_TIMEOUT = 900.0  # seconds one take may take (a 200 MB take converts in about a minute)


class TakeTimedOut(Exception):
    """A take that ran past its time limit."""


def convert_job(job: Job, settings: Settings, staging: str, *, replace: bool = False,
                preview: str | None = None, timeout: float | None = DEFAULT_TIMEOUT) -> Outcome:
    """Convert one take; ``staging`` is a folder on the output's file system for unfinished files (inside
    the output folder, which nothing is written outside of), ``replace`` rewrites outputs even when
    unchanged, ``preview`` is where its contact sheet goes, ``timeout`` the seconds it may take (where
    the take runs in a process's main thread, as in the process pool; ``None``: no limit)."""
    started = time.perf_counter()
    outcome = Outcome()
    try:
        with _time_limit(timeout):
            _convert_into(outcome, job, settings, staging, replace, preview)
        outcome.status = "ok"
    except Exception as error:  # every failure becomes the take's one line; the batch goes on
        outcome.error = describe(error, job.source)
    outcome.seconds = time.perf_counter() - started
    return outcome


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`TakeTimedOut` in the block once ``seconds`` have passed: a real-time timer's signal on the
    main thread, else (a Dask worker's thread) the exception set on the thread from a watching timer, which
    Python raises at the thread's next bytecode (a long numpy call finishes first)."""
    if seconds is None:
        yield
        return
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        with _thread_time_limit(seconds):
            yield
        return

    def expired(signum: int, frame: object) -> None:
        raise TakeTimedOut(_timed_out(seconds))

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _thread_time_limit(seconds: float) -> Iterator[None]:
    """:func:`_time_limit` off the main thread: a timer thread raises :class:`TakeTimedOut` in this one."""
    thread_id = threading.get_ident()
    state = threading.Lock()  # held while the block runs; the timer raises only while it can take it from us
    inside = [True]

    def expire() -> None:
        with state:
            if inside[0]:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(_Expired))

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        try:
            yield
        finally:
            with state:
                inside[0] = False
            timer.cancel()
    except _Expired:  # in the block, or delivered just as it ended: the take reached its limit
        raise TakeTimedOut(_timed_out(seconds)) from None


class _Expired(BaseException):
    """Raised asynchronously in a worker thread whose take ran out of time (a BaseException, so that no
    ``except Exception`` in the take's code swallows it)."""


def _timed_out(seconds: float) -> str:
    return f"took longer than {seconds:g} s (--timeout)"


def _convert_into(outcome: Outcome, job: Job, settings: Settings, staging: str, replace: bool,
                  preview: str | None) -> None:
    """Convert one take, filling ``outcome`` as it goes (raises on failure)."""
    outcome.source = fingerprint(job.source)
    outcome.skeleton = fingerprint(job.skeleton) if job.skeleton else None
    clip = in_unit(load(job.source, skeleton=job.skeleton) if job.skeleton else load(job.source), settings.unit)
    outcome.frames, outcome.joints, outcome.fps = clip.frame_count, clip.skeleton.joint_count, clip.fps
    outcome.warnings = [str(w) for w in clip.metadata.get("warnings", [])]
    result, outcome.reduction = transform(clip, settings)
    outcome.written_joints = result.skeleton.joint_count
    outcome.warnings += [str(w) for w in result.metadata.get("warnings", []) if w not in outcome.warnings]
    out_dir = os.path.dirname(os.path.abspath(staging))
    with tempfile.TemporaryDirectory(dir=staging) as folder:
        outcome.outputs = _place(result, job, folder, settings.precision, replace, out_dir)
        if preview is not None:
            outcome.mapped = mapped_joints(clip)
            outcome.preview = _draw(result, job, preview, folder, outcome.warnings, out_dir)


def transform(clip: Clip, settings: Settings) -> tuple[Clip, dict[str, float] | None]:
    """The clip a take's output holds (``clip`` read in the settings' unit), and what key reduction kept and
    measured (if asked)."""
    feet: dict[str, Any] = {"feet": settings.feet} if settings.feet else {}  # only when asked for
    if settings.canonical or settings.retarget_onto:
        from ..retarget.transfer import retarget, to_canonical

        if settings.canonical:
            clip = to_canonical(clip, method=settings.method, **feet)
        else:
            assert settings.retarget_onto is not None
            clip = retarget(clip, _target(settings.retarget_onto, *_stamp(settings.retarget_onto)), **feet)
    if settings.reduce is None:
        return clip, None
    reduction = reduce_keys(clip, settings.reduce)
    measured = {"tolerance": settings.reduce, "keys_before": reduction.keys_before,
                "keys_after": reduction.keys_after, "kept": reduction.kept_fraction,
                "worst_error": reduction.worst_error / reduction.height if reduction.height else 0.0}
    return played_back(clip, reduction.frames), measured


def describe(error: BaseException, source: str) -> str:
    """One line for a failed take: ``file:line: reason`` for a malformed file, else ``file: reason``."""
    if isinstance(error, MocapFormatError):
        return str(error)
    if isinstance(error, TakeTimedOut | OutsideOutput):
        return f"{os.path.basename(source)}: {error}"
    name = os.path.basename(source)
    if isinstance(error, OSError) and error.strerror:
        return f"{os.path.basename(str(error.filename)) if error.filename else name}: {error.strerror}"
    if isinstance(error, ValueError):  # a clip a writer refuses, a skeleton a retarget cannot use
        return f"{name}: {error}"
    return f"{name}: {type(error).__name__}: {error}"


def _stamp(path: str) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns


@functools.lru_cache(maxsize=4)
def _target(path: str, size: int, mtime_ns: int) -> Clip:
    """The retarget target, read once per worker (and again if the file changes)."""
    return load(path)


class OutsideOutput(Exception):
    """An output whose folder is a symbolic link leading out of the output folder."""


def require_inside(path: str, out_dir: str) -> None:
    """Raise :class:`OutsideOutput` unless writing ``path`` (making its missing folders) stays inside
    ``out_dir``: no folder on the way is a link leading elsewhere."""
    existing = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    real_out = os.path.realpath(out_dir)
    if os.path.commonpath([os.path.realpath(existing), real_out]) != real_out:
        raise OutsideOutput(f"not written: {os.path.relpath(existing, out_dir)} leads outside the output folder "
                            f"(a symbolic link to {os.path.realpath(existing)})")


def _place(clip: Clip, job: Job, folder: str, precision: int, replace: bool, out_dir: str) -> dict[str, int]:
    """Write the take's files in ``folder`` under their own names (a writer may name them inside),
    then move each into place inside ``out_dir``; returns every output with its size."""
    save(clip, os.path.join(folder, os.path.basename(job.output)), precision=precision)
    placed = {}
    for target in job.outputs:  # an .amc's .asf first: a take is never newer than its skeleton
        written = os.path.join(folder, os.path.basename(target))
        require_inside(target, out_dir)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        if not replace and os.path.isfile(target) and filecmp.cmp(written, target, shallow=False):
            os.unlink(written)
        else:
            os.replace(written, target)
        placed[target] = os.path.getsize(target)
    return placed


def mapped_joints(clip: Clip) -> int:
    """How many canonical joints the clip's skeleton maps."""
    from ..naming import map_skeleton

    return len({joint for joint in map_skeleton(clip.skeleton).values() if joint})


def motion_name(preview: str) -> str:
    """The animation beside a contact sheet (:func:`.preview.motion_sidecar`)."""
    return os.path.splitext(preview)[0] + ".motion.js"


def _draw(clip: Clip, job: Job, preview: str, folder: str, warnings: list[str], out_dir: str) -> str | None:
    """The take's contact sheet and its animation, drawn in ``folder`` and moved beside ``preview``
    (``None``, with a warning, if they could not be drawn: the take itself is converted)."""
    from .preview import MOMENTS, contact_sheet, motion_sidecar, sidecar_moments, stick_figures_at

    drawn, moving = os.path.join(folder, "preview.png"), os.path.join(folder, "motion.js")
    try:
        still, animated = stick_figures_at(clip, [MOMENTS, sidecar_moments(clip)])  # the clip posed once
        contact_sheet(clip, drawn, title=job.name, body=still)
        motion_sidecar(clip, moving, body=animated)
        require_inside(preview, out_dir)
        os.makedirs(os.path.dirname(preview) or ".", exist_ok=True)
        os.replace(moving, motion_name(preview))
        os.replace(drawn, preview)
    except Exception as error:
        warnings.append(f"preview not drawn: {describe(error, job.source)}")
        return None
    return preview
