"""Motion graphs over a library (core.transitions.nearest): the frames that match found by nearest-neighbour
search give the dense matching's transitions at the same costs; chunks on Dask; folders on the command line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mocap_addon.core import load
from mocap_addon.core.transitions import build, load_graph, nearest
from mocap_addon.core.transitions.frame_matching import Features, Rules, dense_matches, joint_weights
from tests.conftest import REPO, SAMPLES
from tests.test_transitions import WALKS, assert_same_graph, check_rules, needs_corpus

pytest.importorskip("scipy.spatial")


@pytest.fixture
def searching(monkeypatch):
    """The nearest-neighbour search whatever the library's density (never all against all)."""
    monkeypatch.setattr(nearest, "SEARCH_PAIR_COST", 0.0)


def dense_build(monkeypatch, clips, **options):
    with monkeypatch.context() as patch:
        patch.setattr(nearest, "tree_class", lambda: None)
        return build(clips, **options)


def transitions(graph) -> dict[tuple[int, int], float]:
    return {(int(s), int(t)): float(c) for s, t, c in zip(graph.sources, graph.targets, graph.costs)}


def assert_found_again(found, dense, share: float = 0.95) -> None:
    """At least ``share`` of the dense graph's transitions, at the same costs, and nothing it prunes."""
    wanted, got = transitions(dense), transitions(found)
    common = set(wanted) & set(got)
    assert len(common) >= share * len(wanted), (len(common), len(wanted))
    assert max(abs(wanted[k] - got[k]) for k in common) <= 1e-12
    extra = set(got) - set(wanted)
    assert len(extra) <= (1 - share) * len(wanted), len(extra)


def test_the_search_turns_a_frame_by_its_left_side(samples_pose_features):
    features, joints = samples_pose_features
    points = nearest.left_turned_points(features, joints)
    ground = points[:, :2 * len(joints)]  # the positions' x (then the velocities'), not velocities' z
    sides = np.array([1.0 if n.endswith("_l") else -1.0 if n.endswith("_r") else 0.0 for n in joints])
    across_x = ground[:, :len(joints)] @ sides
    across_z = points[:, 2 * len(joints):3 * len(joints)] @ sides
    assert np.all(across_x > 0) and np.abs(across_z).max() <= 1e-9 * np.abs(across_x).max()
    # a projection never lengthens a distance: the search's distances are at most the points'
    projected = nearest.search_points(features, joints)
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, features.frame_count, (2, 500))
    full = np.sum((points[a] - points[b]) ** 2, axis=1)
    assert np.all(np.sum((projected[a] - projected[b]) ** 2, axis=1) <= full + 1e-9)
    # and the points' distance is never less than D (D takes the best turn)
    assert np.all(features.costs(a, b) <= full + 1e-9)


@pytest.fixture(scope="module")
def samples_pose_features():
    from mocap_addon.core.transitions.frame_matching import frame_features
    from mocap_addon.core.transitions.graph import library_pose

    weights = joint_weights()
    pose = library_pose(load(SAMPLES / "walk_turn.bvh"), 30.0)
    return frame_features(pose, weights, 2.0), nearest.joint_names(weights)


def test_the_search_gives_the_dense_graph_on_the_samples(monkeypatch, searching):
    clips = [load(SAMPLES / "walk_turn.bvh"), load(SAMPLES / "jog_wave.bvh")]
    for options in ({}, {"local_maxima": False}, {"contacts": False, "threshold": 0.8}):
        found, dense = build(clips, **options), dense_build(monkeypatch, clips, **options)
        assert_same_graph(found, dense)


def test_without_scipy_the_dense_matching_runs(monkeypatch):
    monkeypatch.setattr(nearest, "tree_class", lambda: None)
    assert nearest.nearby_matcher(nearest.joint_names(joint_weights())) is None
    graph = build([load(SAMPLES / "walk_turn.bvh"), load(SAMPLES / "jog_wave.bvh")])
    check_rules(graph)


def test_a_dense_library_is_matched_all_against_all(monkeypatch):
    """Where the search would give a large share of all pairs as candidates, the dense matching is faster."""
    called = []
    monkeypatch.setattr(nearest, "SEARCH_PAIR_COST", 1e9)
    original = nearest.dense_matches
    monkeypatch.setattr(nearest, "dense_matches", lambda *args: called.append(1) or original(*args))
    build([load(SAMPLES / "walk_turn.bvh")])
    assert called


@needs_corpus
@pytest.mark.slow
def test_the_corpus_walks_graph_is_found_again(monkeypatch, searching):
    walks = [load(p) for p in WALKS]
    found, dense = build(walks), dense_build(monkeypatch, walks)
    check_rules(found)
    assert_found_again(found, dense)
    assert len(dense.sources) >= 1000


def test_chunks_on_dask_give_the_same_graph(monkeypatch, searching):
    distributed = pytest.importorskip("distributed")
    clips = [load(SAMPLES / "walk_turn.bvh"), load(SAMPLES / "jog_wave.bvh")]
    monkeypatch.setattr(nearest, "CHUNK_CELLS", 8)
    serial = build(clips)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        on_dask = build(clips, scheduler=client)
    assert_same_graph(on_dask, serial)


@pytest.mark.slow
def test_graph_build_takes_folders(tmp_path):
    folder = tmp_path / "library" / "subject"
    folder.mkdir(parents=True)
    for name in ("walk_turn.bvh", "jog_wave.bvh"):
        (folder / name).write_bytes((SAMPLES / name).read_bytes())
    (folder / "notes.txt").write_text("not a take")
    out = tmp_path / "graph.npz"
    result = subprocess.run([sys.executable, "-m", "mocap_addon.core", "graph", "build", str(tmp_path / "library"),
                             "-o", str(out)], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert load_graph(out).clip_names == ["jog_wave.bvh", "walk_turn.bvh"]
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run([sys.executable, "-m", "mocap_addon.core", "graph", "build", str(empty), "-o",
                             str(out)], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode != 0 and "no motion files" in result.stderr


@st.composite
def small_libraries(draw):
    """Features of a few short clips whose ``D`` is the squared distance of random smooth heights (then the
    search's points are exact and the search provably complete), some clips exact copies of others."""
    joints = draw(st.integers(1, 3))
    lengths = draw(st.lists(st.integers(2, 24), min_size=1, max_size=4))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    clips = [np.cumsum(rng.normal(0, 0.3, (n, 2 * joints)), axis=0) for n in lengths]  # positions, velocities
    for copied in draw(st.lists(st.integers(0, len(clips) - 1), max_size=2)):
        clips.append(clips[copied].copy())
    height = np.concatenate(clips)
    clip = np.repeat(np.arange(len(clips)), [len(c) for c in clips]).astype(np.int64)
    contact = rng.integers(0, 2, len(height)).astype(np.uint8) if draw(st.booleans()) else None
    rules = Rules(clip, draw(st.integers(1, 4)), contact, 1.0, draw(st.sampled_from([0.3, 0.6, 0.9])))
    return Features(np.zeros(height.shape, np.complex128), height), rules, [f"joint {k}" for k in range(joints)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(library=small_libraries(), stride=st.integers(1, 4), local_maxima=st.booleans())
def test_the_bounded_search_finds_the_dense_pairs(monkeypatch, library, stride, local_maxima):
    """Every pair the dense matching keeps with a frame in a cell the tree holds (a copy's cells are not in
    it: the first copy's are), at the same cost, and no other, where no frame has too many cells near."""
    features, rules, joints = library
    monkeypatch.setattr(nearest, "SEARCH_SLACK", 1.0 + 1e-9)  # exact points: the radius needs no room
    monkeypatch.setattr(nearest, "NEAREST_CELLS", 10 ** 6)
    monkeypatch.setattr(nearest, "SEARCH_PAIR_COST", 0.0)
    a, b, cost = nearest.nearby_pairs(features, rules, local_maxima, joints, stride=stride)
    dense_a, dense_b, dense_cost = dense_matches(features, rules, local_maxima)
    index = nearest.search_index(features, rules, joints, stride)
    in_tree = np.zeros(len(index.starts), dtype=bool)
    in_tree[index.in_tree] = True
    frame_in_tree = in_tree[np.searchsorted(index.starts, np.arange(features.frame_count), side="right") - 1]
    wanted = frame_in_tree[dense_a] | frame_in_tree[dense_b]
    assert list(zip(a.tolist(), b.tolist())) == list(zip(dense_a[wanted].tolist(), dense_b[wanted].tolist()))
    np.testing.assert_allclose(cost, dense_cost[wanted], rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(library=small_libraries(), nearest_cells=st.integers(1, 3))
def test_a_frame_is_matched_with_its_nearest_cells_only(monkeypatch, library, nearest_cells):
    """With few cells per frame, the candidates are bounded (cells x their frames per frame) and every pair
    kept is one the dense matching keeps, at the same cost."""
    features, rules, joints = library
    monkeypatch.setattr(nearest, "NEAREST_CELLS", nearest_cells)
    monkeypatch.setattr(nearest, "SEARCH_PAIR_COST", 0.0)
    index = nearest.search_index(features, rules, joints, 2)
    rows, _ = index.candidates(np.arange(len(index.starts)))
    assert np.bincount(rows, minlength=features.frame_count).max() <= nearest_cells * 2
    a, b, cost = nearest.nearby_pairs(features, rules, True, joints, stride=2)
    dense = dict(zip(zip(*dense_matches(features, rules, True)[:2]), dense_matches(features, rules, True)[2]))
    found = [(int(x), int(y)) for x, y in zip(a, b)]
    assert all(pair in dense for pair in found)
    assert all(abs(dense[pair] - c) <= 1e-12 for pair, c in zip(found, cost))


def test_copies_of_a_clip_add_no_cells(monkeypatch):
    """A take and two copies of it (turned and moved: the same features): the tree holds the first only; the
    copies are matched to it and to each other only through it."""
    clip = load(SAMPLES / "walk_turn.bvh")
    graph = build([clip, clip, clip], strongly_connected=False)
    features, rules = graph.features, graph._rules()
    joints = nearest.joint_names(joint_weights())
    index = nearest.search_index(features, rules, joints, 3)
    first = index.starts < clip.frame_count
    assert np.array_equal(np.sort(index.in_tree), np.flatnonzero(first))
    monkeypatch.setattr(nearest, "SEARCH_PAIR_COST", 0.0)
    a, b, _ = nearest.nearby_pairs(features, rules, True, joints, stride=3)
    assert np.all(a < clip.frame_count) and len(a)  # every pair has a frame in the first copy
    assert np.any(b >= 2 * clip.frame_count)
