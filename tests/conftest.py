"""Shared test fixtures: the corpus beside the checkout and a fresh Blender scene."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
SAMPLES = REPO / "samples"


def expect_format_error(parse, text: str, path: str, line: int, words: str):
    """Assert ``parse(bytes, path)`` raises MocapFormatError at ``line`` with ``words`` in its message."""
    from mocap_addon.core import MocapFormatError

    with pytest.raises(MocapFormatError) as caught:
        parse(text.encode(), path)
    error = caught.value
    assert isinstance(error, ValueError) and error.path == path
    assert error.line == line, str(error)
    assert words in str(error)
    assert str(error).startswith(f"{path}:{line}")
    return error


def corpus_files(folder: str, *patterns: str) -> list[Path]:
    """Real files from ``../shared/corpus/<folder>`` (empty when the corpus is absent)."""
    base = CORPUS / folder
    if not base.is_dir():
        return []
    found: set[Path] = set()
    for pattern in patterns:
        found.update(base.glob(pattern))
    return sorted(found)


def corpus_params(folder: str, *patterns: str, slow: tuple[str, ...] = ()) -> list:
    """``pytest.param`` per corpus file (marked ``slow`` where named in ``slow``), or one skipped param when the
    corpus is absent."""
    files = corpus_files(folder, *patterns)
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason="../shared/corpus is absent"))]
    return [pytest.param(f, id=f.name, marks=pytest.mark.slow if f.name in slow else ()) for f in files]


BVH_CORPUS = [f for f in corpus_files("bvh", "*.bvh") if "JSON_not_bvh" not in f.name]


def bvh_corpus_params(slow: tuple[str, ...] = ()) -> list:
    if not BVH_CORPUS:
        return [pytest.param(None, marks=pytest.mark.skip(reason="../shared/corpus is absent"))]
    return [pytest.param(f, id=f.name, marks=pytest.mark.slow if f.name in slow else ()) for f in BVH_CORPUS]


@pytest.fixture
def blender():
    """``bpy`` with an empty scene; skips when the bpy wheel is not installed."""
    bpy = pytest.importorskip("bpy")
    bpy.ops.wm.read_homefile(use_empty=True)
    yield bpy
    bpy.ops.wm.read_homefile(use_empty=True)


@pytest.fixture
def addon(blender):
    """``bpy`` with this add-on registered (and unregistered afterwards)."""
    import mocap_addon

    mocap_addon.register()
    yield blender
    mocap_addon.unregister()


def through_format(path, extension: str, folder):
    """Read ``path``, write it as ``extension``, read that, write BVH, read that: (clip, middle, back)."""
    from mocap_addon.core import load, save

    clip = load(path)
    save(clip, folder / f"middle{extension}")
    middle = load(folder / f"middle{extension}")
    save(middle, folder / "back.bvh")
    return clip, middle, load(folder / "back.bvh")


def pytest_report_header(config):
    return f"corpus: {CORPUS if CORPUS.is_dir() else 'absent'}; cwd {os.getcwd()}"


_EXIT_STATUS = pytest.StashKey[int]()


def pytest_sessionfinish(session, exitstatus):
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """bpy 4.x's module can fail in its own teardown at interpreter exit after every test passed: 4.2 crashes
    (a segmentation fault once the live tool's property group has been registered), 4.5 can wait for ever
    (seen after the Blender tier's 407 tests, 0 % CPU). On 4.x the run ends here, after pytest's summary, with
    pytest's own exit status; 5.0 exits cleanly and keeps the normal exit."""
    import sys

    bpy = sys.modules.get("bpy")
    if bpy is not None and tuple(bpy.app.version) < (5, 0, 0) and _EXIT_STATUS in config.stash:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(config.stash[_EXIT_STATUS])
