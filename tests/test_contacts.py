"""Foot contacts: real walks, invariance to the file's floor, unit and up axis, the run cleaning."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mocap_addon.core import Clip, load
from mocap_addon.core.body.contacts import _without_short_runs, find_contacts, touching_floor
from mocap_addon.core.body.reference import AXIS_ROTATIONS
from tests.conftest import CORPUS, corpus_files

WALKS = ["bvh/ganim_Xia_normal.bvh", "bvh/bandai_dataset-1_walk_normal_001.bvh",
         "bvh/bandai_dataset-2_walk_elderly_004.bvh", "asf_amc/vicon_male.walk-speed 4.AMC",
         "htr/gpr450_xbot_walk_m_mixamo.com.htr"]
HUMAN = [f for f in corpus_files("bvh", "*.bvh") + corpus_files("htr", "*.htr", "*.HTR")
         + corpus_files("asf_amc", "*.amc", "*.AMC")
         if not any(w in f.name for w in ("Crab", "simple", "sinusoidal", "maya_export", "JSON_not_bvh"))]


def corpus(*names: str) -> list:
    return [pytest.param(CORPUS / n, id=n.split("/")[-1],
                         marks=[] if (CORPUS / n).is_file() else pytest.mark.skip(reason="no corpus")) for n in names]


def onsets(planted: np.ndarray) -> list[int]:
    """The side (0 left, 1 right) of each contact's first frame, in time order."""
    events = [(int(f), side) for side in (0, 1) for f in np.flatnonzero(planted[1:, side] & ~planted[:-1, side]) + 1]
    return [side for _, side in sorted(events)]


@pytest.mark.parametrize("path", corpus(*WALKS))
def test_walks_plant_each_foot_part_of_the_time_and_alternate(path):
    contacts = find_contacts(load(path))
    planted = contacts.planted
    assert planted.shape == (contacts.frame_count, 2) and planted.dtype == bool
    assert np.all((planted.mean(axis=0) >= 0.2) & (planted.mean(axis=0) <= 0.9)), planted.mean(axis=0)
    sides = onsets(planted)
    assert len(sides) >= 2 and all(a != b for a, b in itertools.pairwise(sides)), sides
    assert np.all(contacts.up == [0.0, 1.0, 0.0])
    # Planted ankles sit a little above the floor; planted feet barely slide (leg lengths per frame).
    assert 0.03 < contacts.planted_height() < 0.15
    assert contacts.slide() < 0.002


@pytest.mark.parametrize("path", [pytest.param(f, id=f.name) for f in HUMAN] or corpus("none"))
def test_every_human_file_gives_contacts(path):
    clip = load(path)
    contacts = find_contacts(clip)
    assert contacts.touching.shape == (clip.frame_count, 2, 2)
    heights = contacts.heights()
    assert np.percentile(heights.min(axis=(1, 2)), 2) == pytest.approx(0.0, abs=0.2)  # toes near the floor
    if clip.frame_count > 1:
        touching = heights[contacts.touching]
        assert touching.size == 0 or np.median(touching) < 0.2


def test_a_figure_lying_along_minus_z_reads_minus_z_as_up():
    path = CORPUS / "htr" / "gpr450_xbot_anim1.HTR"
    if not path.is_file():
        pytest.skip("no corpus")
    assert np.all(find_contacts(load(path)).up == [0.0, 0.0, -1.0])


def _walk(frames: int = 120) -> Clip:
    path = CORPUS / "bvh" / "bandai_dataset-1_walk_normal_001.bvh"
    if not path.is_file():
        pytest.skip("no corpus")
    clip = load(path)
    return Clip(clip.skeleton, clip.motion[:frames], clip.frame_time)


def _moved(clip: Clip, turn: np.ndarray, scale: float, lift: float) -> Clip:
    """``clip`` in other world axes (``turn``), another unit (lengths times ``scale``), floor ``lift`` higher."""
    moved = clip.copy()
    skeleton = moved.skeleton
    skeleton.offsets *= scale
    skeleton.end_sites = [e * scale for e in skeleton.end_sites]
    starts = skeleton.channel_starts()
    for joint, layout in enumerate(skeleton.channels):
        for k, channel in enumerate(layout):
            if channel in ("tx", "ty", "tz"):
                moved.motion[:, starts[joint] + k] *= scale
    root = 0
    moved.motion[:, starts[root] + skeleton.channels[root].index("ty")] += lift
    skeleton.rest_rotations[root] = turn @ skeleton.rest_rotations[root]
    skeleton.offsets[root] = turn @ skeleton.offsets[root]
    columns = [starts[root] + skeleton.channels[root].index(c) for c in ("tx", "ty", "tz")]
    moved.motion[:, columns] = moved.motion[:, columns] @ turn.T
    return Clip(skeleton, moved.motion, clip.frame_time)


@settings(max_examples=10, deadline=None)
@given(turn=st.integers(0, len(AXIS_ROTATIONS) - 1), scale=st.floats(0.001, 1000.0), lift=st.floats(-5.0, 5.0))
def test_contacts_do_not_depend_on_floor_unit_or_up_axis(turn, scale, lift):
    clip = _walk()
    one = find_contacts(clip)
    two = find_contacts(_moved(clip, AXIS_ROTATIONS[turn], scale, lift * one.leg))
    np.testing.assert_array_equal(two.touching, one.touching)
    np.testing.assert_allclose(two.up, AXIS_ROTATIONS[turn] @ one.up, atol=1e-12)
    np.testing.assert_allclose(two.heights(), one.heights(), atol=1e-9)
    assert two.leg == pytest.approx(scale * one.leg, rel=1e-9)
    assert two.slide() == pytest.approx(one.slide(), rel=1e-6)


def test_a_still_point_on_the_floor_touches_and_a_moving_or_raised_one_does_not():
    frames, frame_time = 90, 1 / 30
    up = np.array([0.0, 0.0, 1.0])
    points = np.zeros((frames, 3, 3))
    points[:, 1, 0] = np.arange(frames) * frame_time * 2.0  # 2 leg lengths per second along the floor
    points[:, 2, 2] = 0.5  # half a leg above the floor...
    points[:30, 2, 2] = 0.0  # ...after a third of the clip on it
    touching = touching_floor(points, up, 1.0, frame_time)
    assert touching[:, 0].all() and not touching[:, 1].any()
    assert touching[:28, 2].all() and not touching[31:, 2].any()


@settings(max_examples=60, deadline=None)
@given(flags=arrays(bool, st.tuples(st.integers(1, 60), st.integers(1, 3))), shortest=st.integers(1, 6))
def test_cleaned_runs_are_never_shorter_than_asked(flags, shortest):
    cleaned = _without_short_runs(flags, shortest)
    assert cleaned.shape == flags.shape
    for column in cleaned.T:
        padded = np.concatenate([[False], column, [False]]).astype(np.int8)
        edges = np.diff(padded)
        starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        assert np.all(stops - starts >= shortest)  # runs
        assert np.all(starts[1:] - stops[:-1] >= shortest)  # gaps between runs
