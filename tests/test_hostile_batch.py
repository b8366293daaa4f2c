"""Batch faults (issue 26): a damaged manifest, FIFOs and devices, SIGTERM and SIGHUP, names of 243-255 bytes,
symbolic links out of the output folder, a take that runs too long, Dask workers without the package,
bad arguments.  Each ends in one clear line, within seconds, with nothing lost and nothing left running."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mocap_addon.core.batch import convert, executors
from mocap_addon.core.batch.convert import Settings, convert_job
from mocap_addon.core.batch.manifest import MANIFEST_NAME, SET_ASIDE_NAME
from mocap_addon.core.batch.plan import plan
from mocap_addon.core.batch.run import BatchError, run_batch
from tests.conftest import REPO, SAMPLES

WALK, JOG = SAMPLES / "walk_turn.bvh", SAMPLES / "jog_wave.bvh"


def two_takes(tmp_path: Path) -> Path:
    library = tmp_path / "library"
    library.mkdir()
    shutil.copy(WALK, library / "walk.bvh")
    shutil.copy(JOG, library / "jog.bvh")
    return library


def report(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "report.jsonl").read_text().splitlines()]


def cli(*args: str, **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mocap_addon.core", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300, **options)



@pytest.mark.parametrize("damage", ["truncated", "garbage", "nul bytes", "missing key", "renamed key",
                                    "wrong types", "a folder"])
def test_a_damaged_manifest_is_set_aside_and_its_takes_redone(tmp_path, damage):
    library, out = two_takes(tmp_path), tmp_path / "out"
    settings = Settings(to="htr")
    first = run_batch([str(library)], str(out), settings, jobs=1, progress=False)
    assert first.converted == 2
    manifest = out / MANIFEST_NAME
    records = manifest.read_bytes().splitlines(keepends=True)
    record = json.loads(records[0])
    if damage == "a folder":
        manifest.unlink()
        manifest.mkdir()
    else:
        broken = {"truncated": records[0][:len(records[0]) // 2],
                  "garbage": bytes(range(256)) + b"\n",
                  "nul bytes": b"\x00" * 40 + b"\n",
                  "missing key": json.dumps({k: v for k, v in record.items() if k != "options"}).encode() + b"\n",
                  "renamed key": json.dumps({("outputz" if k == "outputs" else k): v
                                             for k, v in record.items()}).encode() + b"\n",
                  "wrong types": json.dumps({**record, "source": "not a fingerprint",
                                             "outputs": {"x": "big"}}).encode() + b"\n"}[damage]
        manifest.write_bytes(broken + b"".join(records[1:]))
    again = run_batch([str(library)], str(out), settings, jobs=1, progress=False)
    assert again.failed == 0 and again.converted + again.skipped == 2 and again.converted >= 1
    assert again.set_aside >= 1 and "set aside" in str(again)
    assert len(report(out)) == 2  # never emptied
    side = list(out.glob(f"{SET_ASIDE_NAME}*"))
    assert side, "the damaged record is kept for inspection"
    third = run_batch([str(library)], str(out), settings, jobs=1, progress=False)
    assert third.skipped == 2 and third.set_aside == 0  # the manifest is whole again


def test_fifos_devices_and_folders_named_as_takes_are_refused_up_front(tmp_path):
    library = two_takes(tmp_path)
    os.mkfifo(library / "fifo.bvh")
    out = tmp_path / "out"
    started = time.monotonic()
    summary = run_batch([str(library), "/dev/zero"], str(out), Settings(to="bvh"), jobs=1, progress=False)
    assert time.monotonic() - started < 60
    assert summary.converted == 2 and summary.failed == 2
    errors = sorted(line["error"] for line in report(out) if line["status"] == "error")
    assert "not a regular file (a FIFO)" in errors[1] and "not a regular file (a character device)" in errors[0]
    assert all("\n" not in error for error in errors)


def test_an_existing_fifo_is_reported_as_what_it_is(tmp_path):
    os.mkfifo(tmp_path / "fifo.bvh")
    for args in (["info", str(tmp_path / "fifo.bvh")], ["graph", "info", str(tmp_path / "fifo.bvh")],
                 ["graph", "plot", str(tmp_path / "fifo.bvh"), str(tmp_path / "p.png")],
                 ["map", str(tmp_path / "fifo.bvh"), "--preset", str(tmp_path / "fifo.bvh")]):
        done = cli(*args)
        assert done.returncode == 1, done.stderr
        assert "not a regular file (a FIFO)" in done.stderr and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("length", [243, 250, 255])
def test_names_as_long_as_the_file_system_takes_convert(tmp_path, length):
    library = tmp_path / "library"
    library.mkdir()
    name = "é" * ((length - 4) // 2) + "x" * ((length - 4) % 2) + ".bvh"
    assert len(os.fsencode(name)) == length
    shutil.copy(WALK, library / name)
    out = tmp_path / "out"
    for target in ("bvh", "htr", "amc"):
        summary = run_batch([str(library)], str(out / target), Settings(to=target), jobs=1, progress=False)
        assert summary.converted == 1, summary.lines


def test_nothing_is_written_through_a_link_out_of_the_output_folder(tmp_path):
    library = tmp_path / "library"
    (library / "sub").mkdir(parents=True)
    shutil.copy(WALK, library / "sub" / "walk.bvh")
    shutil.copy(JOG, library / "jog.bvh")
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "sub").symlink_to(outside, target_is_directory=True)
    summary = run_batch([str(library)], str(out), Settings(to="htr"), jobs=1, progress=False, previews=False)
    assert summary.converted == 1 and summary.failed == 1
    failed = next(line for line in report(out) if line["status"] == "error")
    assert "leads outside the output folder" in failed["error"]
    assert list(outside.iterdir()) == []


def walk_job(tmp_path):
    """The conversion job of a walk in a two-take library, and the staging folder it writes through."""
    library = two_takes(tmp_path)
    staging = tmp_path / "out" / ".staging"
    staging.mkdir(parents=True)
    return plan([str(library / "walk.bvh")], str(tmp_path / "out"), "bvh")[0], staging


def test_a_take_past_its_time_limit_fails_alone(tmp_path, monkeypatch):
    job, staging = walk_job(tmp_path)

    def endless(*args, **kwargs):
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(convert, "load", endless)
    started = time.monotonic()
    outcome = convert_job(job, Settings(to="bvh"), str(staging), timeout=0.3)
    assert time.monotonic() - started < 5
    assert outcome.status == "error" and outcome.error == "walk.bvh: took longer than 0.3 s (--timeout)"
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_the_time_limit_is_an_argument_with_a_default(tmp_path):
    done = cli("batch", str(SAMPLES), "-o", str(tmp_path / "o"), "--to", "bvh", "--timeout", "nan")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--timeout" in done.stderr
    done = cli("batch", "--help")
    assert "--timeout SECONDS" in done.stdout and "default 900" in done.stdout


def _session_processes(session: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session and fields[0] != "Z":
                found.append(int(entry))
    return found


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_the_workers_and_clean_staging(tmp_path, stop):
    library = tmp_path / "library"
    library.mkdir()
    for number in range(60):
        shutil.copy(WALK if number % 2 else JOG, library / f"take{number:02d}.bvh")
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "mocap_addon.core", "batch", str(library), "-o", str(out),
                                "--to", "amc", "--canonical", "--jobs", "2"], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (
            (out / "report.jsonl").exists() and (out / "report.jsonl").read_text().strip()):
        time.sleep(0.1)
    assert process.poll() is None, "finished before it could be stopped"
    process.send_signal(stop)
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 130, errors
    assert "interrupted" in errors and "Traceback" not in errors
    time.sleep(0.5)
    assert _session_processes(process.pid) == []  # no worker outlives the batch
    assert not (out / ".staging").exists()
    assert report(out)  # what was done is reported


def test_dask_workers_without_the_package_give_one_line(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(executors, "WORKER_PACKAGE", "no_such_package_anywhere")
    with pytest.raises(BatchError) as caught:
        run_batch([str(WALK)], str(tmp_path / "out"), Settings(to="bvh"), jobs=1, scheduler="local",
                  progress=False)
    message = str(caught.value)
    assert "\n" not in message and "cannot import no_such_package_anywhere" in message


def test_a_scheduler_that_is_no_address_gives_one_line(tmp_path):
    pytest.importorskip("distributed")
    done = cli("batch", str(WALK), "-o", str(tmp_path / "o"), "--to", "bvh", "--scheduler", "nonsense")
    assert done.returncode == 2 and done.stderr.startswith("error: --scheduler nonsense")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_a_take_past_its_time_limit_fails_alone_off_the_main_thread(tmp_path, monkeypatch):
    """Dask runs takes on worker threads, where no timer signal reaches: the limit holds there too."""
    job, staging = walk_job(tmp_path)

    def endless(*args, **kwargs):
        while True:
            with contextlib.suppress(Exception):  # a take's own broad handler must not swallow the limit
                time.sleep(0.01)

    monkeypatch.setattr(convert, "load", endless)
    outcomes = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: outcomes.append(
        convert_job(job, Settings(to="bvh"), str(staging), timeout=0.3)))
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - started < 5
    assert outcomes[0].status == "error" and outcomes[0].error == "walk.bvh: took longer than 0.3 s (--timeout)"
    monkeypatch.undo()
    quick = job  # the first try left nothing behind
    worker = threading.Thread(target=lambda: outcomes.append(
        convert_job(quick, Settings(to="bvh"), str(staging), timeout=0.5)))
    worker.start()
    worker.join(10)
    time.sleep(0.7)  # past the limit: a take that ended in time is not interrupted afterwards
    assert (outcomes[1].status, outcomes[1].error) == ("ok", None) and worker.is_alive() is False
