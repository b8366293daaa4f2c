"""``python -m mocap_addon.core graph build|info|synth|plot``."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from mocap_addon.core import load
from mocap_addon.core.transitions import load_graph
from tests.conftest import REPO, SAMPLES

FILES = [str(SAMPLES / "walk_turn.bvh"), str(SAMPLES / "jog_wave.bvh")]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mocap_addon.core", "graph", *args], cwd=REPO,
                          capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("graph") / "samples.npz"
    result = run("build", *FILES, "-o", str(path), "--threshold", "0.85")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{path}: 2 clips, 240 frames at 30 fps, ")
    return path


def test_build_writes_the_settings_asked_for(graph_file):
    graph = load_graph(graph_file)
    assert graph.params["threshold"] == 0.85 and graph.clip_names == ["walk_turn.bvh", "jog_wave.bvh"]
    assert np.all(graph.probabilities >= 0.85)


def test_add_is_building_with_the_files(graph_file, tmp_path):
    smaller, bigger = tmp_path / "one.npz", tmp_path / "two.npz"
    assert run("build", FILES[1], "-o", str(smaller), "--threshold", "0.85").returncode == 0
    result = run("add", str(smaller), FILES[0], "-o", str(bigger))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{bigger}: 2 clips, 240 frames, ")
    built, added = load_graph(graph_file), load_graph(bigger)
    assert added.clip_names == built.clip_names[::-1]
    assert len(added.sources) == len(built.sources)


def test_info_lists_clips_pairs_and_dead_ends(graph_file):
    result = run("info", str(graph_file))
    assert result.returncode == 0, result.stderr
    graph = load_graph(graph_file)
    out = result.stdout
    assert f"transitions: {len(graph.sources)} (0 between clips)" in out
    assert "    1 jog_wave.bvh: 120, " in out and "    0 walk_turn.bvh: 120, 0.0%, " in out
    assert "dead ends:   0 kept frames without a way on; " in out
    counts = [line.split()[1:] for line in out.splitlines() if line.startswith(("    0 ", "    1 "))][-2:]
    assert counts == [["0", "0"], ["0", str(len(graph.sources))]]


def test_synth_writes_motion_and_retargets(graph_file, tmp_path):
    out = tmp_path / "walked.bvh"
    result = run("synth", str(graph_file), *FILES, "-o", str(out), "--frames", "150", "--seed", "4",
                 "--start", "125")
    assert result.returncode == 0, result.stderr
    clip = load(out)
    assert clip.frame_count == 150 and clip.skeleton.joint_count == 54
    assert "canonical skeleton" in result.stdout
    onto = tmp_path / "onto.bvh"
    result = run("synth", str(graph_file), *FILES, "-o", str(onto), "--frames", "150", "--seed", "4",
                 "--start", "125", "--onto", FILES[0])
    assert result.returncode == 0, result.stderr
    assert load(onto).skeleton.names == load(FILES[0]).skeleton.names


def test_synth_reduce_writes_what_the_reduced_keys_play_back(graph_file, tmp_path):
    """Issue 21, item 8: --reduce on synthesis, as on retarget and blend."""
    from mocap_addon.core import world_positions
    from mocap_addon.core.reduce import figure_height, reduce_keys

    whole, reduced = tmp_path / "whole.bvh", tmp_path / "reduced.bvh"
    common = ("synth", str(graph_file), *FILES, "--frames", "150", "--seed", "4", "--start", "125", "--precision", "9")
    assert run(*common, "-o", str(whole)).returncode == 0
    result = run(*common, "-o", str(reduced), "--reduce", "0.002")
    assert result.returncode == 0, result.stderr
    full = load(whole)
    reduction = reduce_keys(full, 0.002)
    before, after = map(int, re.search(r"; keys (\d+) -> (\d+) \(", result.stdout).groups())
    assert before == reduction.keys_before and after == pytest.approx(reduction.keys_after, rel=0.01)  # as read back
    assert after < 0.6 * before
    error = np.linalg.norm(world_positions(load(reduced)) - world_positions(full), axis=-1).max()
    assert 0.2 * reduction.worst_error < error <= 0.002 * figure_height(full) + 1e-6
    assert run(*common, "-o", str(reduced), "--reduce", "-1").returncode == 2


def test_plot_and_errors_give_one_line(graph_file, tmp_path):
    pytest.importorskip("matplotlib")
    result = run("plot", str(graph_file), str(tmp_path / "m.png"), "--kind", "matrix")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"
    for args, words, status in (
            (("info", str(tmp_path / "m.png")), "not a motion graph", 2),  # a wrong graph file: exit 2
            (("synth", str(graph_file), FILES[0], "-o", str(tmp_path / "x.bvh"), "--frames", "5"),
             "the graph has 2 clips, 1 given", 2),
            (("synth", str(graph_file), *FILES, "-o", str(tmp_path / "x.bvh"), "--frames", "5"),
             "does not lead into the graph's kept part", 1)):
        result = run(*args)
        assert result.returncode == status
        assert result.stderr.startswith("error: ") and words in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_plot_without_matplotlib_says_so(graph_file, tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.figure'] = None; "
            "sys.modules['matplotlib.backends.backend_agg'] = None; from mocap_addon.core.cli.main import main; "
            f"sys.exit(main(['graph', 'plot', {str(graph_file)!r}, {str(tmp_path / 'p.png')!r}]))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == ('error: plots need matplotlib: pip install "mocap-addon[plots]" '
                                     "(or pip install matplotlib)")
