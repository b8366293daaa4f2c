"""Motion graphs (core.transitions): the distance, the pruning rules, the graph file, synthesis and plots."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core import Clip, load, world_positions
from mocap_addon.core.body.contacts import find_contacts
from mocap_addon.core.kinematics import place_translation, translation_channels
from mocap_addon.core.model import encode_joint
from mocap_addon.core.pose import Pose
from mocap_addon.core.retarget.transfer import retarget
from mocap_addon.core.rotations import axis_matrices, quaternion_to_matrix
from mocap_addon.core.transitions import (
    MotionGraph,
    Transition,
    assemble,
    build,
    load_graph,
    plot,
    synthesize,
    transition_steps,
    walk,
)
from mocap_addon.core.transitions.frame_matching import frame_features, joint_weights
from mocap_addon.core.transitions.graph import _largest_cycle_part, gap_frames, library_pose, run_ends
from mocap_addon.core.transitions.synthesis import blend_length
from tests.conftest import CORPUS, SAMPLES

WALKS = [CORPUS / "bvh" / "ganim_Xia_normal.bvh", CORPUS / "asf_amc" / "vicon_male.walk-speed 4.AMC",
         CORPUS / "htr" / "gpr450_xbot_walk_m_mixamo.com.htr", CORPUS / "bvh" / "bandai_dataset-1_walk_normal_001.bvh",
         CORPUS / "bvh" / "bandai_dataset-2_walk_elderly_004.bvh"]
DANCE = CORPUS / "bvh" / "bandai_dataset-1_dance-short_normal_001.bvh"
needs_corpus = pytest.mark.skipif(not all(p.is_file() for p in [*WALKS, DANCE]), reason="../shared/corpus is absent")


def part(clip: Clip, start: int, stop: int | None = None) -> Clip:
    out = clip.copy()
    out.motion = clip.motion[start:stop].copy()
    return out


def turned(clip: Clip, degrees: float, shift: tuple[float, float, float]) -> Clip:
    """``clip`` turned about its (Y) up axis by ``degrees`` and moved by ``shift`` (file units), at the root."""
    out = clip.copy()
    skeleton = clip.skeleton
    turn = axis_matrices("Y", np.radians(degrees))
    rest = skeleton.rest_rotations[0]
    rotations = rest.T @ turn @ rest @ clip.joint_rotations(0)
    positions = place_translation(skeleton, 0, clip.joint_translations(0)) @ turn.T + np.asarray(shift)
    start = skeleton.channel_starts()[0]
    layout = skeleton.channels[0]
    out.motion[:, start:start + len(layout)] = encode_joint(layout, rotations,
                                                            translation_channels(skeleton, 0, positions))
    return out


def turns(pose: Pose, joint: int) -> np.ndarray:
    """A pose joint's local rotation matrices (the canonical rest is the identity, as in a clip's channels)."""
    return quaternion_to_matrix(pose.rotations[:, joint])


def check_rules(graph: MotionGraph, contacts: bool = True) -> None:
    """Every kept transition obeys the rules; every alive frame has a way on."""
    settings = graph.params
    sources, targets = graph.sources, graph.targets
    assert np.all(graph.probabilities >= settings["threshold"])
    np.testing.assert_allclose(graph.probabilities, np.exp(-graph.costs / settings["sigma"]))
    clip_of = graph.clip_of
    assert np.all(clip_of(targets - 1) == clip_of(targets)), "j - 1 is in j's clip"
    same = clip_of(sources) == clip_of(targets)
    assert np.all(np.abs(sources[same] - (targets[same] - 1)) >= settings["min_gap"] * graph.fps - 1e-9)
    if contacts:
        assert np.array_equal(graph.contacts[sources], graph.contacts[targets - 1])
    np.testing.assert_allclose(graph.costs, graph.features.costs(sources, targets - 1), atol=1e-12)
    assert np.all(np.diff(sources) >= 0) and len(graph.transitions_from(int(sources[0]))) >= 1
    if settings["strongly_connected"]:
        alive = graph.alive
        assert alive[sources].all() and alive[targets].all()
        last = np.append(clip_of(np.arange(1, graph.frame_count)) != clip_of(np.arange(graph.frame_count - 1)), True)
        plays_on = ~last & np.append(alive[1:], False)
        has_way = plays_on | np.isin(np.arange(graph.frame_count), sources)
        assert has_way[alive].all(), "a dead end in the kept part"
        ends = run_ends(alive, graph.clip_ends)
        assert np.all(ends[targets] - targets >= gap_frames(settings["min_gap"], graph.fps))


@pytest.fixture(scope="module")
def samples() -> list[Clip]:
    return [load(SAMPLES / "walk_turn.bvh"), load(SAMPLES / "jog_wave.bvh")]


@pytest.fixture(scope="module")
def sample_graph(samples) -> MotionGraph:
    return build(samples)


# --- the distance ------------------------------------------------------------------------------------------


def test_distance_is_zero_for_equal_frames_symmetric_and_the_best_turn(samples):
    features = frame_features(library_pose(samples[1], 30.0), joint_weights(), 2.0)
    frames = np.arange(features.frame_count)
    assert features.costs(frames, frames).max() <= 1e-20
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, features.frame_count, (2, 40))
    np.testing.assert_allclose(features.costs(a, b), features.costs(b, a), rtol=1e-12)
    # the closed form against a search over turns about the vertical
    turns = np.exp(1j * np.linspace(-np.pi, np.pi, 20001))
    for first, second in zip(a, b):
        ground = features.ground[first][None] - turns[:, None] * features.ground[second][None]
        searched = (np.abs(ground) ** 2).sum(axis=1) + ((features.height[first] - features.height[second]) ** 2).sum()
        assert features.costs(np.array([first]), np.array([second]))[0] == pytest.approx(searched.min(), rel=1e-6)


@settings(max_examples=12, deadline=None)
@given(degrees=st.floats(-180, 180), dx=st.floats(-500, 500), dy=st.floats(-30, 30), dz=st.floats(-500, 500))
def test_distance_ignores_turns_about_the_vertical_and_moves(samples, degrees, dx, dy, dz):
    jog = samples[1]
    weights = joint_weights()
    base = frame_features(library_pose(jog, 30.0), weights, 2.0)
    moved = frame_features(library_pose(turned(jog, degrees, (dx, dy, dz)), 30.0), weights, 2.0)
    a, b = np.triu_indices(jog.frame_count, 1)
    np.testing.assert_allclose(moved.costs(a, b), base.costs(a, b), atol=1e-9)
    np.testing.assert_allclose(base.costs(a, b[::-1]), frame_features(
        library_pose(jog, 30.0), weights, 2.0).costs(a, b[::-1]))


def test_weights_and_settings_are_checked(samples):
    with pytest.raises(ValueError, match="threshold"):
        build(samples, threshold=0)
    with pytest.raises(ValueError, match="sigma"):
        build(samples, sigma=0)
    with pytest.raises(ValueError, match="canonical skeleton lacks: elbow"):
        build(samples, weights={"elbow": 1.0})
    with pytest.raises(ValueError, match="not all zero"):
        build(samples, weights=[0.0] * 54)
    with pytest.raises(ValueError, match="at least one clip"):
        build([])
    with pytest.raises(ValueError, match="contact states of shape"):
        build(samples, contacts=[np.zeros((3, 2), bool), np.zeros((120, 2), bool)])


# --- the rules ---------------------------------------------------------------------------------------------


def test_sample_graph_obeys_the_rules(sample_graph):
    graph = sample_graph
    assert len(graph.sources) > 10
    check_rules(graph)
    assert graph.clip_names == ["walk_turn.bvh", "jog_wave.bvh"]
    np.testing.assert_array_equal(graph.clip_frames, [120, 120])
    np.testing.assert_array_equal(graph.offsets, [0, 120])
    assert graph.params["sigma"] == 3.0 and graph.params["threshold"] == 0.9 and graph.fps == 30.0
    best = graph.transitions_from(int(graph.sources[0]))
    assert all(isinstance(t, Transition) for t in best) and best == sorted(best, key=lambda t: t.cost)
    assert graph.transitions_from(-5) == []


def test_contact_states_must_agree(samples):
    # the jog with made-up contacts: its left foot "planted" in alternate runs of 7 frames
    planted = np.zeros((120, 2), dtype=bool)
    planted[:, 0] = (np.arange(120) // 7) % 2 == 0
    states = [np.zeros((120, 2), dtype=bool), planted]
    ruled = build(samples, contacts=states)
    check_rules(ruled)
    np.testing.assert_array_equal(ruled.contacts[120:], planted)
    assert ruled.params["contacts"] == "given"
    detected = build(samples)
    check_rules(detected)
    for clip, first in zip(samples, detected.offsets):
        expected = find_contacts(library_pose(clip, 30.0)).planted
        np.testing.assert_array_equal(detected.contacts[first:first + len(expected)], expected)
    free = build(samples, contacts=False)
    np.testing.assert_array_equal(free.contacts, detected.contacts)  # recorded, not compared
    unruled = build(samples, contacts=False, strongly_connected=False, local_maxima=False)
    mismatched = planted[unruled.sources - 120, 0] != planted[unruled.targets - 121, 0]
    assert mismatched[unruled.sources >= 120].any(), "the rule prunes something"


def test_local_maxima_keep_the_best_of_similar_transitions(samples):
    every = build(samples, contacts=False, local_maxima=False, strongly_connected=False)
    best = build(samples, contacts=False, strongly_connected=False)
    assert 0 < len(best.pairs) < len(every.pairs) / 3
    assert {tuple(p) for p in best.pairs} <= {tuple(p) for p in every.pairs}
    # no kept pair has a better pair of the full set among its 8 neighbours
    costs = {tuple(p): c for p, c in zip(every.pairs, every.pair_costs)}
    for (a, b), cost in zip(best.pairs, best.pair_costs):
        near = [costs.get((a + s, b + t)) for s, t in itertools.product((-1, 0, 1), repeat=2)]
        assert min(c for c in near if c is not None) >= cost - 1e-5


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_largest_cycle_part_matches_reachability(data):
    clips = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    frames = sum(clips)
    starts = np.concatenate([[0], np.cumsum(clips)[:-1]]).astype(np.int64)
    edges = data.draw(st.lists(st.tuples(st.integers(0, frames - 1), st.integers(0, frames - 1)), max_size=8))
    sources = np.array([a for a, _ in edges], dtype=np.int64)
    targets = np.array([b for _, b in edges], dtype=np.int64)
    alive = _largest_cycle_part(frames, starts, sources, targets)
    # brute force: frame graph closure
    step = np.zeros((frames, frames), dtype=bool)
    for f in range(frames - 1):
        step[f, f + 1] = f + 1 not in starts
    step[sources, targets] = True
    reach = step.copy()
    for _ in range(frames):
        reach = reach | (reach.astype(np.int64) @ reach.astype(np.int64) > 0)
    mutual = reach & reach.T
    parts = {tuple(np.flatnonzero(mutual[f])) for f in range(frames) if mutual[f, f]}
    sizes = sorted((len(p), p) for p in parts)
    if not sizes:
        assert not alive.any()
        return
    largest = max(len(p) for p in parts)
    assert alive.sum() == largest
    assert tuple(np.flatnonzero(alive)) in parts


# --- the graph file and adding clips ---------------------------------------------------------------------


def graph_arrays(graph: MotionGraph) -> dict[str, object]:
    return {"fps": graph.fps, "clip_names": graph.clip_names, "params": graph.params,
            **{name: getattr(graph, name) for name in ("clip_frames", "offsets", "sources", "targets", "costs",
                                                       "probabilities", "contacts", "alive", "pairs", "pair_costs",
                                                       "source_frames")},
            "ground": graph.features.ground, "height": graph.features.height}


def assert_same_graph(first: MotionGraph, second: MotionGraph) -> None:
    a, b = graph_arrays(first), graph_arrays(second)
    assert a.keys() == b.keys()
    assert first.references.keys() == second.references.keys()
    for key, reference in first.references.items():
        np.testing.assert_array_equal(reference, second.references[key])
    for name in a:
        if isinstance(a[name], np.ndarray):
            assert a[name].dtype == b[name].dtype, name
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)
        else:
            assert a[name] == b[name], name


def test_save_and_load_keep_every_array(sample_graph, tmp_path):
    path = tmp_path / "graph.npz"
    sample_graph.save(path)
    assert_same_graph(load_graph(path), sample_graph)
    assert not list(tmp_path.glob("*.part*"))
    (tmp_path / "bad.npz").write_bytes(b"not a graph")
    with pytest.raises(ValueError, match="not a motion graph"):
        load_graph(tmp_path / "bad.npz")


def test_graphs_do_not_depend_on_how_rows_fall_into_blocks(samples, monkeypatch):
    import mocap_addon.core.transitions.frame_matching as frame_matching

    clips = [samples[1], part(samples[1], 30, 110), turned(part(samples[1], 10), 40.0, (50.0, 0.0, -20.0))]
    whole = build(clips, contacts=False)
    monkeypatch.setattr(frame_matching, "BLOCK_ELEMENTS", 1 << 10)  # 16-row blocks
    assert_same_graph(build(clips, contacts=False), whole)


def test_adding_a_clip_is_building_with_it(samples):
    jog = samples[1]
    clips = [samples[0], part(jog, 0, 80), part(jog, 40)]
    grown = build(clips[:2], contacts=False)
    grown.add(clips[2])
    assert_same_graph(grown, build(clips, contacts=False))
    with pytest.raises(ValueError, match="contact states"):
        grown.add(jog, contacts=np.zeros((120, 2), bool))


# --- synthesis ---------------------------------------------------------------------------------------------


def test_walk_keeps_the_gap_and_the_seed(sample_graph):
    graph = sample_graph
    path = walk(graph, 600, start=130, seed=3)
    assert len(path) == 600 and path[0] == 130
    assert np.array_equal(path, walk(graph, 600, start=130, seed=3))
    jumps = np.flatnonzero(path[1:] != path[:-1] + 1) + 1
    assert len(jumps) >= 5
    assert np.all(np.diff(jumps) >= gap_frames(graph.params["min_gap"], graph.fps))
    pairs = set(zip(graph.sources.tolist(), graph.targets.tolist()))
    assert all((path[t - 1], path[t]) in pairs for t in jumps)
    assert graph.alive[path].all()


def test_a_walk_within_some_frames_uses_only_those(sample_graph):
    """Frames 20-99 of each clip: the restricted graph keeps the rules, and a walk on it plays only those
    frames (the whole graph's walk goes beyond them)."""
    graph = sample_graph
    local = np.arange(graph.frame_count) - graph.offsets[graph.clip_of(np.arange(graph.frame_count))]
    usable = (local >= 20) & (local <= 99)
    assert not usable[walk(graph, 600, start=int(np.flatnonzero(graph.alive & usable)[0]), seed=3)].all()
    part = graph.within(usable)
    check_rules(part)
    assert part.alive.any() and not part.alive[~usable].any()
    assert usable[part.sources].all() and usable[part.targets].all() and len(part.sources) > 0
    for seed in range(4):
        path = walk(part, 600, start=int(np.argmax(part.alive)), seed=seed)
        assert usable[path].all() and part.alive[path].all()
        assert len(np.flatnonzero(path[1:] != path[:-1] + 1)) >= 3
    with pytest.raises(ValueError, match="no frame of the graph's kept part is usable"):
        graph.within(np.zeros(graph.frame_count, dtype=bool))
    with pytest.raises(ValueError, match="one per graph frame"):
        graph.within(usable[:-1])


def test_walk_lets_the_caller_choose(sample_graph):
    graph = sample_graph
    offered = []

    def best(frame, options):
        offered.append((frame, options))
        return options[0]

    path = walk(graph, 300, start=125, choose=best)
    jumps = np.flatnonzero(path[1:] != path[:-1] + 1) + 1
    assert offered and len(jumps) == len(offered)
    assert all(path[t] == options[0].target for t, (_, options) in zip(jumps, offered))
    # playing on wherever the clip goes on: jumps only where the kept part of a clip ends
    lazy = walk(graph, 300, start=125, choose=lambda frame, options: None)
    ends = run_ends(graph.alive, graph.clip_ends)
    assert all(ends[lazy[t - 1]] == lazy[t - 1] + 1 for t in np.flatnonzero(lazy[1:] != lazy[:-1] + 1) + 1)
    with pytest.raises(ValueError, match="not one of the transitions"):
        walk(graph, 300, start=125, choose=lambda frame, options: Transition(0, 1, 0.0, 1.0))


def test_walk_starts_outside_the_kept_part_only_if_it_leads_in(sample_graph):
    graph = sample_graph
    assert not graph.alive[120]
    assert walk(graph, 200, start=120, seed=1)[0] == 120
    assert not graph.alive[:120].any()  # the turning walk matches nothing
    with pytest.raises(ValueError, match="does not lead into"):
        walk(graph, 200, start=0)
    with pytest.raises(ValueError, match="outside"):
        walk(graph, 10, start=240)


def test_synthesis_plays_the_sources_between_transitions(samples, sample_graph):
    graph = sample_graph
    result = synthesize(graph, samples, frames=400, start=130, seed=5, blend_frames=4)
    path = np.array(result.metadata["path"])
    assert result.frame_count == 400 and result.fps == graph.fps and result.unit_in_metres == 1.0
    assert [t for t, _, _ in result.metadata["transitions"]] == (np.flatnonzero(path[1:] != path[:-1] + 1) + 1).tolist()
    jog = library_pose(samples[1], graph.fps)
    # away from blends every joint's local rotation is the source's and the figure moves as the source does
    settled = np.ones(400, dtype=bool)
    for landing, _, _ in result.metadata["transitions"]:
        settled[landing:landing + blend_length(4, graph.fps)] = False
    frames = path[settled] - 120
    for joint in range(1, result.skeleton.joint_count):
        np.testing.assert_allclose(result.joint_rotations(joint)[settled], turns(jog, joint)[frames], atol=1e-9)
    ours, theirs = world_positions(result), world_positions(jog)
    relative = ours - ours[:, :1]
    source = theirs[frames] - theirs[frames, :1]
    np.testing.assert_allclose(np.linalg.norm(relative[settled], axis=-1), np.linalg.norm(source, axis=-1), atol=1e-9)
    step = np.linalg.norm(np.diff(ours[:, 0], axis=0), axis=-1)
    source_step = np.linalg.norm(np.diff(theirs[:, 0], axis=0), axis=-1)
    assert step.max() <= source_step.max() * 1.5  # the hips never jump


def test_blending_ends_on_the_target_and_zero_blend_frames_jump(samples, sample_graph):
    graph = sample_graph
    path = walk(graph, 200, start=130, seed=2)
    landing = int(np.flatnonzero(path[1:] != path[:-1] + 1)[0] + 1)
    jog = library_pose(samples[1], graph.fps)
    target = path[landing] - 120
    sharp = assemble(graph, samples, path, blend_frames=0)
    soft = assemble(graph, samples, path, blend_frames=6)
    for joint in (5, 12, 20):  # not the hips, whose heading is integrated
        np.testing.assert_allclose(sharp.joint_rotations(joint)[landing], turns(jog, joint)[target], atol=1e-9)
        np.testing.assert_allclose(soft.joint_rotations(joint)[landing + 6], turns(jog, joint)[target + 6], atol=1e-9)
    jumps = np.linalg.norm(np.diff(world_positions(sharp), axis=0), axis=-1)[landing - 1]
    blended = np.linalg.norm(np.diff(world_positions(soft), axis=0), axis=-1)[landing - 1]
    assert blended.max() < jumps.max()
    sharp_steps, soft_steps = transition_steps(graph, samples, sharp), transition_steps(graph, samples, soft)
    rows = sum(min(6, 200 - t) for t, _, _ in sharp.metadata["transitions"])  # the last may be cut short
    assert sharp_steps.shape == soft_steps.shape == (rows, 54)
    assert soft_steps.max() < sharp_steps.max()
    assert transition_steps(graph, samples, assemble(graph, samples, range(130, 160))).shape == (0, 54)
    with pytest.raises(ValueError, match="first frame of a clip"):
        assemble(graph, samples, [5, 6, 120, 121])


def test_synthesis_refuses_other_clips_and_retargets(samples, sample_graph):
    with pytest.raises(ValueError, match="not the clip it was built from"):
        synthesize(sample_graph, [samples[0], part(samples[1], 0, 100)], frames=50, start=130)
    with pytest.raises(ValueError, match="the graph has 2 clips, 1 given"):
        synthesize(sample_graph, samples[:1], frames=50, start=130)
    result = synthesize(sample_graph, samples, frames=90, start=130, seed=0)
    onto = retarget(result, samples[0])
    assert onto.frame_count == 90 and onto.skeleton.names == samples[0].skeleton.names


# --- plots -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [pytest.param("per_frame", marks=pytest.mark.slow), "between", "matrix"])
def test_plots_write_png(sample_graph, tmp_path, kind):
    pytest.importorskip("matplotlib")
    path = tmp_path / f"{kind}.png"
    plot(sample_graph, path, kind=kind)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plot(sample_graph, tmp_path / "two.png", kind=kind, clips=["jog_wave.bvh", 0])
    with pytest.raises(ValueError, match="no clip named"):
        plot(sample_graph, path, clips=["nothing"])


def test_plots_say_when_matplotlib_is_missing(sample_graph, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with pytest.raises(ImportError, match="plots need matplotlib"):
        plot(sample_graph, tmp_path / "x.png")


# --- the corpus --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def walks() -> list[Clip]:
    return [load(p) for p in WALKS]


@pytest.fixture(scope="module")
def walk_graph(walks) -> MotionGraph:
    return build(walks, contacts=True)


@needs_corpus
def test_a_capture_cut_in_two_joins_where_the_parts_overlap():
    dance = load(DANCE)
    first, second = part(dance, 0, 1000), part(dance, 900)
    graph = build([first, second], contacts=True)
    across = (graph.clip_of(graph.sources) == 0) & (graph.clip_of(graph.targets) == 1)
    overlap = across & (graph.targets - 1 - 1000 == graph.sources - 900)
    assert overlap.any()
    assert graph.costs[overlap].max() <= 1e-9
    # turned by 90 degrees and moved 3 m and 2 m on the ground (centimetres): the same transitions
    moved = build([first, turned(second, 90.0, (300.0, 0.0, 200.0))], contacts=True)
    np.testing.assert_array_equal(moved.sources, graph.sources)
    np.testing.assert_array_equal(moved.targets, graph.targets)
    np.testing.assert_allclose(moved.costs, graph.costs, rtol=0, atol=1e-6)


@needs_corpus
@pytest.mark.slow
def test_walks_from_five_sources_connect(walk_graph):
    graph = walk_graph
    check_rules(graph, contacts=True)
    clip_of = graph.clip_of
    between = clip_of(graph.sources) != clip_of(graph.targets)
    assert between.sum() >= 10
    assert len({(a, b) for a, b in zip(clip_of(graph.sources[between]), clip_of(graph.targets[between]))}) >= 5
    assert graph.alive.mean() >= 0.6
    for first, count in zip(graph.offsets, graph.clip_frames):
        assert graph.alive[first:first + count].mean() >= 0.6
        planted = graph.contacts[first:first + count].mean(axis=0)
        assert np.all((planted >= 0.2) & (planted <= 0.9)), planted


@needs_corpus
@pytest.mark.slow
def test_motion_synthesised_from_the_walks_is_continuous(walks, walk_graph, tmp_path):
    graph = walk_graph
    result = synthesize(graph, walks, frames=3000, seed=7, blend_frames=5)
    assert result.frame_count == 3000
    transitions = result.metadata["transitions"]
    assert len(transitions) >= 10
    assert sum(graph.clip_of(a) != graph.clip_of(b) for _, a, b in transitions) >= 3
    excess = transition_steps(graph, walks, result)
    assert excess.shape == (sum(min(6, 3000 - t) for t, _, _ in transitions), 54)
    assert excess.max() <= 0.1
    assert np.mean(excess <= 0.04) >= 0.95
    again = synthesize(graph, walks, frames=3000, seed=7, blend_frames=5)
    np.testing.assert_array_equal(again.motion, result.motion)
    assert again.metadata == result.metadata
    path = tmp_path / "walks.npz"
    graph.save(path)
    loaded = load_graph(path)
    assert_same_graph(loaded, graph)
    np.testing.assert_array_equal(synthesize(loaded, walks, frames=3000, seed=7, blend_frames=5).motion, result.motion)


@needs_corpus
@pytest.mark.slow
def test_adding_a_walk_is_building_with_it(walks, walk_graph):
    grown = build(walks[:4], contacts=True)
    grown.add(walks[4])
    assert_same_graph(grown, walk_graph)


@needs_corpus
def test_the_same_take_in_two_formats_matches_frame_by_frame():
    """CMU 01_01 as BVH and as ASF/AMC: BVH frame k + 1 is AMC frame k, so each is the other's best match."""
    bvh, amc = load(CORPUS / "bvh" / "fm_cmu_01_01.bvh"), load(CORPUS / "asf_amc" / "fm_01_01.amc")
    weights = joint_weights()
    first = frame_features(library_pose(part(bvh, 1, 601), bvh.fps), weights, 2.0)
    second = frame_features(library_pose(part(amc, 0, 600), bvh.fps), weights, 2.0)
    frames = np.arange(1, 599)
    same = first.costs(frames, frames)  # within one feature set: zero
    assert same.max() <= 1e-20
    both = type(first).join([first, second])
    across = both.costs(frames, frames + 600)
    assert across.max() < 1e-3, "the same poses from two formats"
    assert math.isfinite(float(across.mean()))


# --- along a path ------------------------------------------------------------------------------------------

LOCOMOTION = [*WALKS[:2], *WALKS[3:], CORPUS / "bvh" / "fm_cmu_01_01.bvh", SAMPLES / "walk_turn.bvh"]


def arc(centre: complex, radius: float, start: float, turn: float, step: float = 0.05) -> np.ndarray:
    """Points ``x + iz`` on a circle about ``centre`` from angle ``start`` turning by ``turn`` radians."""
    angles = start + np.linspace(0, turn, max(2, math.ceil(abs(turn) * radius / step)))
    return centre + radius * np.exp(1j * angles)


def s_curve() -> np.ndarray:
    """8 m: two arcs of radius 3 m, turning one way then the other."""
    first = arc(3, 3, math.pi, -4 / 3)
    end = first[-1]
    second = arc(2 * end - 3, 3, math.pi - 4 / 3 - math.pi, 4 / 3)
    return np.concatenate([first, second[1:]])


def circle() -> np.ndarray:
    return arc(2.5, 2.5, math.pi, -2 * math.pi)


def corner() -> np.ndarray:
    """6 m straight, a 90-degree turn of radius 1.5 m, 4 m straight."""
    straight = 1j * np.linspace(0, 6, 121)
    bend = arc(1.5 + 6j, 1.5, math.pi, -math.pi / 2)
    return np.concatenate([straight, bend[1:], 1.5 + 7.5j + np.linspace(0, 4, 81)[1:]])


def as_points(path: np.ndarray) -> np.ndarray:
    return np.stack([path.real, path.imag], axis=1)


def test_the_test_paths_are_the_asked_ones():
    for path, length in ((s_curve(), 8.0), (circle(), 2 * math.pi * 2.5), (corner(), 6 + math.pi * 0.75 + 4)):
        assert np.abs(np.diff(path)).sum() == pytest.approx(length, rel=2e-3)
        assert path[0] == pytest.approx(0) and np.angle(path[1] - path[0]) == pytest.approx(math.pi / 2, abs=0.02)
    assert np.abs(s_curve() - (s_curve()[0] + s_curve()[-1]) / 2).max() <= 4.1  # an S, not a loop


@pytest.fixture(scope="module")
def locomotion() -> tuple[list[Clip], MotionGraph]:
    clips = [load(p) for p in LOCOMOTION]
    return clips, build(clips, fps=30)


def hips_ground(result: Clip) -> np.ndarray:
    hips = world_positions(result)[:, 0]
    return hips[:, 0] + 1j * hips[:, 2]


@needs_corpus
@pytest.mark.parametrize("shape", [s_curve, circle, corner])
@pytest.mark.parametrize("seed", [0, 1])
def test_follow_walks_the_path(locomotion, shape, seed):
    from mocap_addon.core.transitions import follow
    from mocap_addon.core.transitions.path_following import Route
    from mocap_addon.core.transitions.quality import most_repeats, planted_heights

    clips, graph = locomotion
    path = shape()
    result = follow(graph, clips, as_points(path), seed=seed)
    error = result.metadata["path_error"]
    assert error["mean"] <= 0.15 and error["max"] <= 0.5 and error["end"] <= 0.5
    ground = hips_ground(result)
    gaps = Route(as_points(path)).distance(ground)  # measured again: the hips as the skeleton places them
    assert gaps.mean() == pytest.approx(error["mean"], abs=1e-9) and gaps.max() <= 0.5
    assert abs(ground[0] - path[0]) <= 1e-9 and abs(ground[-1] - path[-1]) <= 0.5
    first_second = ground[int(graph.fps)] - ground[0]
    assert abs(np.angle(first_second / (path[1] - path[0]))) <= math.radians(30)  # facing path[1]
    duration = result.frame_count / graph.fps
    assert result.metadata["search_seconds"] <= duration / 10
    assert np.abs(np.diff(path)).sum() / duration >= 0.5  # it walks on, not shuffles
    landings = [t for t, _, _ in result.metadata["transitions"]]
    assert np.all(np.diff(landings) >= graph.fps - 1e-9)
    assert most_repeats(result.metadata["path"]) <= 2
    assert all(abs(height) <= 0.02 for height in planted_heights(graph, result).values())
    steer = np.abs(result.metadata["steer"]) * graph.fps
    assert steer.max() <= math.radians(40) + 1e-9


def test_follow_on_the_samples_and_refuses_bad_paths(samples, sample_graph, tmp_path):
    from mocap_addon.core.errors import MocapFormatError
    from mocap_addon.core.transitions import follow
    from mocap_addon.core.transitions.path_following import read_path

    path = np.concatenate([1j * np.linspace(-6, 0, 61), arc(6, 6, math.pi, -math.pi / 2)[1:]])
    result = follow(sample_graph, samples, as_points(path), blend_frames=4)
    assert result.unit_in_metres == 1.0 and result.fps == sample_graph.fps
    error = result.metadata["path_error"]
    assert error["mean"] <= 0.15 and error["max"] <= 0.5 and error["end"] <= 0.5
    again = follow(sample_graph, samples, as_points(path), blend_frames=4)
    np.testing.assert_array_equal(again.motion, result.motion)
    for bad in (np.zeros((5, 3)), np.zeros((1, 2)), np.array([[0, 0], [0, np.nan]]), np.zeros((4, 2))):
        with pytest.raises(ValueError, match="path"):
            follow(sample_graph, samples, bad)
    csv = tmp_path / "path.csv"
    csv.write_text("x,z\n0,0\n0, 1\n# a note\n1 2\n")
    np.testing.assert_array_equal(read_path(csv), [[0, 0], [0, 1], [1, 2]])
    csv.write_text("x,z\n0,0\n0,1,2\n")
    with pytest.raises(MocapFormatError, match=r"path.csv:3: expected two"):
        read_path(csv)
    csv.write_text("0,0\nnorth,1\n")
    with pytest.raises(MocapFormatError, match=r"path.csv:2: expected two"):
        read_path(csv)


def test_prune_cuts_between_transitions_and_joins_through_the_graph(samples, sample_graph):
    from mocap_addon.core.transitions import follow, prune

    graph = sample_graph
    path = 1j * np.linspace(0, 25, 501)
    made = follow(graph, samples, as_points(path))
    transitions = made.metadata["transitions"]
    assert len(transitions) >= 4
    cut = prune(graph, samples, made, 1, 3)
    start, removed, added = cut.metadata["pruned"]
    assert start == transitions[1][0] and removed == transitions[3][0] - transitions[1][0]
    assert cut.frame_count == made.frame_count - removed + added
    np.testing.assert_allclose(world_positions(cut)[:start - 1], world_positions(made)[:start - 1], atol=1e-9)
    frames = np.array(cut.metadata["path"])
    jumps = np.flatnonzero(frames[1:] != frames[:-1] + 1) + 1
    pairs = set(zip(graph.sources.tolist(), graph.targets.tolist()))
    assert all((frames[t - 1], frames[t]) in pairs for t in jumps)
    np.testing.assert_array_equal(frames[start + added:], made.metadata["path"][start + removed:])
    with pytest.raises(ValueError, match="first before the last"):
        prune(graph, samples, made, 3, 1)


@needs_corpus
@pytest.mark.slow
def test_synthesis_keeps_one_floor_no_loops_and_calm_transitions(walks):
    """The issue's library: walks of five sources and a dance; 2,400 frames, two seeds."""
    from mocap_addon.core.transitions.quality import most_repeats, planted_heights, transition_accelerations

    clips = [*walks, part(load(DANCE), 0, 1000)]
    graph = build(clips)
    for seed in (1, 2):
        result = synthesize(graph, clips, frames=2400, seed=seed)
        landings = [t for t, _, _ in result.metadata["transitions"]]
        assert len(landings) >= 10 and np.all(np.diff(landings) >= graph.fps - 1e-9)
        assert most_repeats(result.metadata["path"]) <= 2
        heights = planted_heights(graph, result)
        assert len(heights) >= 3 and all(abs(h) <= 0.01 for h in heights.values()), heights
        around, library = transition_accelerations(graph, clips, result)
        assert np.percentile(around, 95) <= np.percentile(library, 95)
    assert most_repeats([5, 6, 7, 5, 6, 7, 5, 6]) == 3 and most_repeats([1, 2, 3, 9, 10]) == 1


@needs_corpus
@pytest.mark.slow
def test_synthesis_keeps_the_minimum_interval_where_a_run_ends_in_a_trap(walks):
    """The issue's library at 30 fps: the dance's last kept run ends where its only way on jumps 15 frames
    back into itself, so a walk that lands there and plays on used to loop on 15-frame transitions (seeds
    2-4).  Every transition now lands where the interval can be kept for ever."""
    from mocap_addon.core.transitions.quality import most_repeats
    from mocap_addon.core.transitions.synthesis import interval_frames, safe_landings

    clips = [*walks, part(load(DANCE), 0, 1000)]
    graph = build(clips, fps=30.0)
    gap = interval_frames(graph, 1.0)
    ends = run_ends(graph.alive, graph.clip_ends)
    safe = safe_landings(graph, gap, ends)
    lasting = graph.alive & (ends - np.arange(graph.frame_count) >= gap)
    assert (safe <= lasting).all() and (lasting & ~safe).any()  # some long runs lead only into traps
    for seed in (1, 2, 3, 4):
        result = synthesize(graph, clips, frames=2400, seed=seed)
        landings = [t for t, _, _ in result.metadata["transitions"]]
        assert len(landings) >= 10 and np.all(np.diff(landings) >= gap), (seed, np.diff(landings).min())
        assert all(safe[target] for _, _, target in result.metadata["transitions"])
        assert most_repeats(result.metadata["path"]) <= 2
    assert gap == 30
    # prune's join keeps the interval between its own transitions where the graph has such a walk
    from mocap_addon.core.transitions import prune
    from mocap_addon.core.transitions.pruning import join

    def closest_jumps(source: int, target: int, least: int) -> int:
        frames = np.concatenate([[source], join(graph, source, target, gap=least), [target]])
        return int(np.diff(np.flatnonzero(frames[1:] != frames[:-1] + 1), prepend=-gap, append=10**9).min())

    path = np.asarray(result.metadata["path"])
    pairs = [(int(path[k]), int(path[(7 * k) % 2300])) for k in range(100, 2300, 100)]
    assert all(closest_jumps(source, target, gap) >= gap for source, target in pairs)
    assert sum(closest_jumps(source, target, 0) < gap for source, target in pairs) >= 5  # the shortest joins do not
    start, removed, added = prune(graph, clips, result, 2, 6).metadata["pruned"]
    assert added == len(join(graph, int(path[start - 1]), int(path[start + removed]), gap=gap))


@needs_corpus
@pytest.mark.slow
@pytest.mark.parametrize("fps", [30.0, 120.0])
def test_transitions_along_a_path_are_no_rougher_than_synthesized_ones_nor_the_clips(fps):
    """One graph of locomotion (scripts/graph_report.py's) at 30 and 120 fps: the 95th percentile of the
    peak joint acceleration around follow()'s transitions (the issue's three paths, two seeds) is at most
    synthesize()'s (three seeds of 20 s), and both are at most the clips' own windows' of the same length."""
    from mocap_addon.core.transitions import follow
    from mocap_addon.core.transitions.quality import transition_accelerations
    from scripts.graph_report import LOCOMOTION, test_paths

    clips = [load(CORPUS / name) for name in LOCOMOTION] + [load(SAMPLES / "walk_turn.bvh")]
    graph = build(clips, fps=fps)
    made = [synthesize(graph, clips, frames=round(20 * fps), seed=seed) for seed in (1, 2, 3)]
    synthesized = np.concatenate([transition_accelerations(graph, clips, result)[0] for result in made])
    followed = np.concatenate([transition_accelerations(graph, clips, follow(graph, clips, path, seed=seed))[0]
                               for path in test_paths().values() for seed in (0, 1)])
    library = transition_accelerations(graph, clips, made[0])[1]
    assert len(synthesized) >= 40 and len(followed) >= 40
    assert np.percentile(followed, 95) <= np.percentile(synthesized, 95) <= np.percentile(library, 95)
