"""Crafted and damaged motion-graph files (issue 26): one ``GraphFileError`` line naming the file, read with
bounded memory, within seconds; clips given in the wrong order are refused; a failed save leaves nothing."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

from mocap_addon.core import load
from mocap_addon.core.transitions import build, load_graph, synthesize
from mocap_addon.core.transitions.graph_file import GraphFileError
from tests.conftest import REPO, SAMPLES


@pytest.fixture(scope="module")
def clips():
    return [load(SAMPLES / "walk_turn.bvh"), load(SAMPLES / "jog_wave.bvh")]


@pytest.fixture(scope="module")
def graph_file(clips, tmp_path_factory):
    path = tmp_path_factory.mktemp("graph") / "g.npz"
    build(clips).save(path)
    return path


def members(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def npy(array: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.save(stream, array)
    return stream.getvalue()


def meta_of(path) -> dict:
    return json.loads(str(np.load(io.BytesIO(members(path)["meta.npy"]))))


def rewritten(source, target, compression=zipfile.ZIP_STORED, **changes) -> str:
    """``source`` with members replaced (``name=bytes``, ``name=None`` drops it)."""
    contents = members(source)
    for name, data in changes.items():
        if data is None:
            contents.pop(f"{name}.npy")
        else:
            contents[f"{name}.npy"] = data
    with zipfile.ZipFile(target, "w", compression) as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
    return os.fspath(target)


def with_meta(source, target, **fields) -> str:
    meta = meta_of(source)
    for key, value in fields.items():
        if key in ("sigma", "nu", "threshold", "min_gap"):
            meta["params"][key] = value
        elif value is ...:
            del meta[key]
        else:
            meta[key] = value
    return rewritten(source, target, meta=npy(np.array(json.dumps(meta))))


def refused(path, words: str) -> GraphFileError:
    started = time.process_time()
    with pytest.raises(GraphFileError) as caught:
        load_graph(path)
    assert time.process_time() - started < 5
    message = str(caught.value)
    assert message.startswith(f"{os.path.basename(path)}: ") and "\n" not in message and words in message, message
    return caught.value


def test_a_graph_saved_and_loaded_keeps_its_fingerprints(graph_file, clips):
    graph = load_graph(graph_file)
    assert len(graph.fingerprints) == 2
    synthesize(graph, clips, frames=20, start=int(np.flatnonzero(graph.alive)[0]), seed=1)


def test_clips_given_swapped_are_refused(graph_file, clips):
    graph = load_graph(graph_file)
    with pytest.raises(ValueError, match=r"clip 0 \(jog_wave.bvh\) is not the clip it was built from"):
        synthesize(graph, clips[::-1], frames=20, start=int(np.flatnonzero(graph.alive)[0]))


def test_a_small_file_that_would_expand_to_gigabytes_is_refused_before_decompressing(graph_file, tmp_path):
    meta = meta_of(graph_file)
    meta["clip_names"] = ["a"]
    huge = 3 * 10**9 // 8
    bomb = rewritten(graph_file, tmp_path / "bomb.npz", zipfile.ZIP_DEFLATED,
                     meta=npy(np.array(json.dumps(meta))), clip_frames=npy(np.array([huge])),
                     offsets=npy(np.array([0])), source_frames=npy(np.array([huge])),
                     contacts=npy(np.zeros((huge // 64, 2), dtype=bool)))
    assert os.path.getsize(bomb) < 20 << 20
    refused(bomb, "would expand to")


def test_a_header_declaring_a_trillion_elements_is_refused(graph_file, tmp_path):
    header = npy(np.zeros(3, dtype=np.int64)).replace(b"(3,)", b"(1000000000000,)")
    refused(rewritten(graph_file, tmp_path / "big.npz", sources=header), "declares 8000000000000 bytes")


def test_damaged_files_are_refused(graph_file, tmp_path):
    data = graph_file.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[:len(data) // 2])
    refused(tmp_path / "cut.npz", "not a motion graph")
    position = data.index(b"\x93NUMPY", data.index(b"costs.npy")) + 200  # inside the costs' values
    (tmp_path / "crc.npz").write_bytes(data[:position] + bytes([data[position] ^ 0xFF]) + data[position + 1:])
    refused(tmp_path / "crc.npz", "damaged")
    (tmp_path / "text.npz").write_bytes(b"not a graph")
    refused(tmp_path / "text.npz", "not a motion graph")


@pytest.mark.parametrize(("fields", "words"), [
    ({"sigma": ...}, "sigma"),
    ({"sigma": "3"}, "sigma"),
    ({"threshold": 2.0}, "threshold"),
    ({"fps": 0}, "fps must be a positive number"),
    ({"fps": "thirty"}, "fps must be a positive number"),
    ({"clip_names": "ab"}, "clip_names"),
    ({"references": ...}, "references"),
    ({"fingerprints": [[1.0]]}, "fingerprints"),
    ({"format": 99}, "format 99"),
])
def test_wrong_metadata_is_refused(graph_file, tmp_path, fields, words):
    if "sigma" in fields and fields["sigma"] is ...:
        meta = meta_of(graph_file)
        del meta["params"]["sigma"]
        path = rewritten(graph_file, tmp_path / "g.npz", meta=npy(np.array(json.dumps(meta))))
    else:
        path = with_meta(graph_file, tmp_path / "g.npz", **fields)
    refused(path, words)


@pytest.mark.parametrize(("member", "value", "words"), [
    ("sources", None, "no 'sources' array"),
    ("targets", np.array([5], dtype=np.int64), "'targets' is int64 (1,)"),
    ("costs", lambda n: np.full(n, "x"), "'costs' is <U1"),
    ("sources", lambda n: np.full(n, 10**6, dtype=np.int64), "outside the graph's"),
    ("costs", lambda n: np.full(n, np.nan), "not finite"),
    ("offsets", np.array([0, 7], dtype=np.int64), "offsets do not follow"),
    ("contacts", np.zeros((3, 2), dtype=bool), "'contacts' is bool (3, 2)"),
    ("clip_frames", np.array([-5, 10], dtype=np.int64), "negative frame counts"),
])
def test_inconsistent_arrays_are_refused(graph_file, tmp_path, member, value, words):
    count = len(load_graph(graph_file).sources)
    if callable(value):
        value = value(count)
    path = rewritten(graph_file, tmp_path / "g.npz", **{member: None if value is None else npy(value)})
    refused(path, words)


def test_fifos_and_folders_are_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo.npz")
    with pytest.raises(OSError, match="a FIFO"):
        load_graph(tmp_path / "fifo.npz")
    with pytest.raises(OSError, match="a folder"):
        load_graph(tmp_path)


def test_a_failed_save_leaves_nothing_behind(graph_file, tmp_path, monkeypatch):
    graph = load_graph(graph_file)

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", full_disk)
    with pytest.raises(OSError, match="No space left"):
        graph.save(tmp_path / "g.npz")
    assert list(tmp_path.iterdir()) == []


def test_the_command_line_gives_one_line_and_exit_2(graph_file, clips, tmp_path):
    bad = with_meta(graph_file, tmp_path / "bad.npz", fps=0)
    swapped = [os.fspath(SAMPLES / "jog_wave.bvh"), os.fspath(SAMPLES / "walk_turn.bvh")]
    for argv in (["info", bad], ["plot", bad, os.fspath(tmp_path / "p.png")],
                 ["synth", os.fspath(graph_file), *swapped, "-o", os.fspath(tmp_path / "o.bvh"), "--frames", "9"]):
        done = subprocess.run([sys.executable, "-m", "mocap_addon.core", "graph", *argv], cwd=REPO,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "o.bvh").exists() and not (tmp_path / "p.png").exists()


def test_the_bomb_stays_far_below_a_gigabyte_in_a_fresh_process(graph_file, tmp_path):
    test_a_small_file_that_would_expand_to_gigabytes_is_refused_before_decompressing(graph_file, tmp_path)
    # The child's own peak (VmHWM, in KiB): ru_maxrss would also count the pytest process it was forked from.
    script = ("import sys\nfrom mocap_addon.core.transitions import load_graph\n"
              "try:\n    load_graph(sys.argv[1])\nexcept ValueError:\n    pass\n"
              "status = open('/proc/self/status').read()\n"
              "print(next(line.split()[1] for line in status.splitlines() if line.startswith('VmHWM:')))")
    done = subprocess.run([sys.executable, "-c", script, os.fspath(tmp_path / "bomb.npz")], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=True)
    assert int(done.stdout) * 1024 < 400 << 20
