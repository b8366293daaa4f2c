"""``python -m mocap_addon.core batch`` on a library of 300 renamed copies of the corpus's takes in
nested folders, with six broken files (issue 22's "Measured by a check"): what it writes is what
``convert`` writes, broken files are reported with their line, a run killed part-way and run
again rewrites nothing it had finished and leaves no partial file, the Dask scheduler writes the
same bytes, and previews give a picture per take and an index naming every take."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from mocap_addon.core import MocapFormatError, load
from mocap_addon.core.cli.main import main
from tests.batch_library import Library, build_library
from tests.conftest import CORPUS, REPO

pytestmark = [pytest.mark.corpus, pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")]
TAKES = 300
BOOKKEEPING = {"manifest.jsonl", "report.jsonl"}


def batch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mocap_addon.core", "batch", *args], cwd=REPO, capture_output=True,
                          text=True, check=False, timeout=900)


def files_in(folder: Path) -> dict[str, Path]:
    """Every file under ``folder`` by its path relative to it (hidden folders included)."""
    return {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}


def report(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "report.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Library:
    return build_library(tmp_path_factory.mktemp("library"), TAKES)


@pytest.fixture(scope="module")
def expected(library, tmp_path_factory) -> dict[str, bytes]:
    """What ``convert`` writes for each good take, by the output's path in the output folder (the copies of
    one corpus file hold the same bytes, so one convert each)."""
    folder = tmp_path_factory.mktemp("convert")
    written: dict[Path, bytes] = {}
    out = {}
    for take in library.takes:
        origin = library.origin[take]
        if origin not in written:
            target = folder / f"{len(written)}.bvh"
            assert main(["convert", str(take), str(target)]) == 0
            written[origin] = target.read_bytes()
        out[take.relative_to(library.root).with_suffix(".bvh").as_posix()] = written[origin]
    return out


@pytest.fixture(scope="module")
def converted(library, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("converted") / "out"
    return out, batch(str(library.root), "-o", str(out), "--to", "bvh", "--jobs", "2")


def test_every_good_take_is_what_convert_writes(converted, expected):
    out, result = converted
    assert result.returncode == 1, result.stderr  # the broken files
    assert f"converted {TAKES}, skipped 0, failed 6 in" in result.stdout
    written = files_in(out)
    assert set(written) == set(expected) | BOOKKEEPING  # nothing else: no partial file, none for a broken take
    differing = [name for name, data in expected.items() if written[name].read_bytes() != data]
    assert not differing


def test_every_broken_take_is_reported_with_its_line(library, converted):
    out, result = converted
    lines = report(out)
    takes = sorted(library.takes + library.broken, key=lambda p: p.relative_to(library.root).parts)
    assert [Path(line["input"]) for line in lines] == takes  # one line each, in the order of the folders
    by_input = {Path(line["input"]): line for line in lines}
    for take in library.broken:
        with pytest.raises(MocapFormatError) as caught:
            load(take)
        assert caught.value.line is not None
        line = by_input[take]
        assert line["status"] == "error" and line["error"] == str(caught.value)
        assert re.match(rf"[^:]+\.(bvh|htr|asf|amc):{caught.value.line}[:\s]", line["error"])
        assert f"failed: {line['input']}: {line['error']}" in result.stderr  # the take's path: names repeat
    seen = set()
    for take in library.takes:
        line = by_input[take]
        assert line["status"] == "ok" and line["error"] is None and line["seconds"] > 0
        assert line["output"] == str(out / take.relative_to(library.root).with_suffix(".bvh"))
        if library.origin[take] not in seen:  # frames, joints and rate as the take reads
            seen.add(library.origin[take])
            clip = load(take)
            assert (line["frames"], line["joints"], line["fps"]) == (clip.frame_count, clip.skeleton.joint_count,
                                                                    clip.fps)


@pytest.mark.slow
def test_a_killed_run_resumes_without_rewriting_what_it_finished(library, expected, tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "mocap_addon.core", "batch", str(library.root), "-o", str(out), "--to", "bvh",
               "--jobs", "2"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # its own process group: the workers die with it
    deadline = time.monotonic() + 600
    while process.poll() is None and time.monotonic() < deadline:
        # os.walk, not rglob: the staging folders come and go while it looks
        done = sum(name.endswith(".bvh") for here, _, names in os.walk(out) if ".staging" not in here
                   for name in names)
        if done >= TAKES // 3:
            break
        time.sleep(0.05)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the batch ended before it could be killed"
    present = files_in(out)
    finished = {name: path.stat().st_mtime_ns for name, path in present.items() if name in expected}
    assert TAKES // 3 <= len(finished) < TAKES
    assert all(present[name].read_bytes() == expected[name] for name in finished)  # none of them partial
    assert all(name in expected or name in BOOKKEEPING or name.startswith(".staging/") for name in present)

    result = batch(str(library.root), "-o", str(out), "--to", "bvh", "--jobs", "2")
    assert result.returncode == 1, result.stderr
    written = files_in(out)
    assert set(written) == set(expected) | BOOKKEEPING  # the staging folder is gone
    assert all(written[name].read_bytes() == data for name, data in expected.items())
    touched = [name for name, mtime in finished.items() if written[name].stat().st_mtime_ns != mtime]
    assert not touched
    statuses = [line["status"] for line in report(out)]
    assert statuses.count("error") == 6 and statuses.count("skipped") >= len(finished) - 4  # 2 workers x 2 in flight
    assert statuses.count("ok") + statuses.count("skipped") == TAKES


@pytest.mark.slow
def test_the_dask_scheduler_writes_the_same_bytes(library, converted, tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "dask"
    part = library.root / "studio_0"  # a third of the library (a Dask cluster takes longer to start and run)
    result = batch(str(part), str(library.root / "broken"), "-o", str(out), "--to", "bvh", "--jobs", "2",
                   "--scheduler", "local")
    assert result.returncode == 1, result.stderr
    pool, _ = converted
    ours = files_in(out)
    theirs = files_in(pool / "studio_0")  # the broken takes have no output
    assert set(ours) - BOOKKEEPING == set(theirs) and len(theirs) > TAKES // 4
    assert all(ours[n].read_bytes() == theirs[n].read_bytes() for n in theirs)
    statuses = [line["status"] for line in report(out)]
    assert statuses.count("ok") == len(theirs) and statuses.count("error") == 6


@pytest.mark.slow
def test_previews_draw_every_take_and_the_index_names_them(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    small = build_library(tmp_path / "library", 30)
    out = tmp_path / "out"
    result = batch(str(small.root), "-o", str(out), "--to", "bvh", "--jobs", "2", "--previews")
    assert result.returncode == 1, result.stderr
    drawn = [p.relative_to(out / "previews").as_posix() for p in (out / "previews").rglob("*") if p.is_file()]
    stems = {t.relative_to(small.root).with_suffix("").as_posix() for t in small.takes}
    assert sorted(drawn) == sorted([f"{s}.png" for s in stems] + [f"{s}.motion.js" for s in stems])
    for take in small.takes[:5]:
        image = imread(out / "previews" / take.relative_to(small.root).with_suffix(".png"))
        assert image.shape[0] > 400 and image.shape[1] > 400 and image.std() > 0.05  # a drawn sheet
    page = (out / "index.html").read_text()
    for take in small.takes + small.broken:
        assert html.escape(take.relative_to(small.root).as_posix()) in page
    for line in report(out):
        if line["status"] == "error":
            assert html.escape(line["error"]) in page
    for source in re.findall(r'href="(previews/[^"]+)"', page) + re.findall(r'data-motion="([^"]+)"', page):
        assert (out / unquote(html.unescape(source))).is_file()
    assert page.count("<canvas ") == page.count('>contact sheet</a>') == len(small.takes)
    assert len(re.findall(r'data-motion="previews/[^"]+\.motion\.js"', page)) == len(small.takes)
