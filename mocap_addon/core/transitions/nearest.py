"""Frame pairs found by nearest-neighbour search rather than all against all (a library of any size).

The dense matching (:mod:`.frame_matching`) compares every frame with every other: its time grows with the
square of the frames.  Here each frame becomes a point whose Euclidean distance to another frame's is never
less than ``D`` between them: its features turned about the vertical so that its left side (the left
joints' positions minus the right ones') points along +X, one turn per frame, so that two similar frames are
turned alike (``D``'s best turn is then close to none).  A principal-component projection of those points
shortens no distance, so a search in it (SciPy's ``cKDTree``, on a few dimensions) finds the frames whose
turned points lie within the radius; the radius is ``SEARCH_SLACK`` times the largest ``D`` allowed, which
leaves room for the turn that ``D`` optimises (on the corpus library every pair the dense matching keeps
lies within ``1.6`` times that ``D``).

The search is bounded so that a library that repeats itself stays linear in its frames:

- the tree holds *cells*, runs of ``CELL_SECONDS`` of a clip (a single frame where a cell's points spread
  more than ``CELL_REACH`` of the radius), each with its reach (how far its frames lie from its first);
  a frame within the radius of a cell's frame lies within the radius plus the reach of the cell's first;
- cells whose frames' features are equal (to within ``QUANTUM``: copies of a take, however placed) are one
  cell in the tree, the first of them: copies add no cells, and a copy's frames are matched to the first
  copy's (every pair with a frame in a first cell is found, those between two later copies are not);
- each frame is matched with its ``NEAREST_CELLS`` nearest cells at most, frame by frame within them.

The candidates then go through the same rules and exact costs as the dense matching: the rules,
``exp(-D / sigma) >= threshold`` in float64, and with local maxima, no allowed close enough neighbour of
the 8 that is closer (costs computed for the neighbours not among the candidates), so every pair kept is one
the dense matching keeps, and where no frame has more than ``NEAREST_CELLS`` cells within reach, the search
finds them all.  Where all against all would cost less than the search (a small or a very redundant library,
estimated on a few cells), it runs instead.  SciPy is optional: without it (inside Blender)
:func:`nearby_matcher` gives ``None`` and the dense matching runs.  Frames are matched in chunks, each alone
(on a Dask cluster with ``scheduler``), so the memory stays bounded by a chunk's candidates.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..naming import CANONICAL_JOINTS
from ..rotations import FloatArray
from .frame_matching import BoolArray, Features, IntArray, Rules, beats, dense_matches, neighbours

SEARCH_SLACK = 2.0  # the search radius squared, in largest allowed D
SEARCH_DIMENSIONS = 16  # principal components the candidates are compared in
TREE_DIMENSIONS = 8  # the first of them, which the tree searches in (a tree of few dimensions is fast)
CHUNK_CELLS = 128  # cells whose frames are matched per chunk (and per Dask task)
CELL_SECONDS = 0.1  # a cell of the tree: this long a run of a clip's frames
CELL_REACH = 0.25  # a cell whose frames lie farther than this share of the radius from its first is split
NEAREST_CELLS = 512  # cells each frame is matched with, at most: the nearest
QUANTUM = 1e-7  # features equal when rounded to this many units of D's scale: copies

SAMPLE_ROWS = 256  # cells whose searches estimate what the search would cost
# A candidate of the search costs about this many pairs of the dense matching (the dense matching's float32
# Gram products against the search's gathers and float64 costs): all against all runs where it costs less.
SEARCH_PAIR_COST = 8.0

Matches = tuple[IntArray, IntArray, FloatArray]
Matcher = Callable[[Features, Rules, bool, int], Matches]


def tree_class() -> Any | None:
    """SciPy's ``cKDTree``, or ``None`` where SciPy is not installed (Blender's Python)."""
    try:
        return importlib.import_module("scipy.spatial").cKDTree
    except ImportError:
        return None


def nearby_matcher(joints: list[str], scheduler: Any = None, fps: float = 30.0) -> Matcher | None:
    """The nearest-neighbour matching of features of the weighted ``joints`` (canonical names, in order)
    of frames at ``fps`` (chunks on the Dask cluster ``scheduler`` when given: ``"local"``, an address or a
    ``distributed.Client``), or ``None`` without SciPy (then the dense matching runs)."""
    if tree_class() is None:
        return None
    stride = max(1, round(CELL_SECONDS * fps))

    def match(features: Features, rules: Rules, local_maxima: bool, first_column: int) -> Matches:
        return nearby_pairs(features, rules, local_maxima, joints, first_column, scheduler, stride)

    return match


def left_turned_points(features: Features, weights_joints: list[str]) -> FloatArray:
    """Each frame's features as real points ``(N, 3 * 2K)``, turned so the left joints' positions minus the
    right ones' point along +X (``weights_joints``: the canonical names of the weighted joints, in order)."""
    sides = np.array([1.0 if n.endswith("_l") else -1.0 if n.endswith("_r") else 0.0 for n in weights_joints])
    template = np.concatenate([sides, np.zeros(len(sides))])  # positions only, not velocities
    across = features.ground @ template
    size = np.abs(across)
    turn = np.where(size > 0, np.conj(across) / np.where(size > 0, size, 1.0), 1.0)
    turned = features.ground * turn[:, None]
    return np.hstack([turned.real, turned.imag, features.height])


def search_points(features: Features, joints: list[str]) -> FloatArray:
    """The left-turned points projected onto their first ``SEARCH_DIMENSIONS`` principal components."""
    points = left_turned_points(features, joints)
    centred = points - points.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)
    return np.ascontiguousarray(centred @ vectors[:, ::-1][:, :SEARCH_DIMENSIONS])


@dataclass
class SearchIndex:
    """The tree of a library's cells: ``points`` per frame, cells ``starts:stops`` with their ``reach``,
    ``in_tree`` the cells the tree holds (in its order), ``radius`` of the search."""

    points: FloatArray
    starts: IntArray
    stops: IntArray
    reach: FloatArray
    in_tree: IntArray
    tree: Any
    radius: float

    def nearest(self, cells: IntArray) -> tuple[IntArray, IntArray]:
        """``(cell, other)`` for each of ``cells``' nearest ``NEAREST_CELLS`` cells (by their first frames)
        whose frames may lie within the radius of the cell's (given both cells' reach)."""
        wanted = min(NEAREST_CELLS, len(self.in_tree))
        bound = self.radius + self.reach[cells] + float(self.reach.max())
        distance, found = self.tree.query(self.points[self.starts[cells], :TREE_DIMENSIONS], k=wanted,
                                          distance_upper_bound=float(bound.max()) if len(cells) else 0.0)
        distance, found = distance.reshape(len(cells), wanted), found.reshape(len(cells), wanted)
        row, column = np.nonzero(found < len(self.in_tree))
        other = self.in_tree[found[row, column]]
        cell = cells[row]
        keep = distance[row, column] <= self.radius + self.reach[cell] + self.reach[other]
        return cell[keep], other[keep]

    def candidates(self, cells: IntArray) -> tuple[IntArray, IntArray]:
        """Frame pairs ``(frame, other)`` of the frames of ``cells`` and those of their nearest cells, within
        the radius."""
        cell, other = self.nearest(cells)
        a, b = _expand(self.starts[cell], self.stops[cell] - self.starts[cell], self.starts[other],
                       self.stops[other] - self.starts[other])
        keep = (a != b) & (np.sum((self.points[a] - self.points[b]) ** 2, axis=1) <= self.radius ** 2)
        return a[keep], b[keep]


def _expand(first: IntArray, length: IntArray, other_first: IntArray, other_length: IntArray
            ) -> tuple[IntArray, IntArray]:
    """Every frame pair of the runs ``first + range(length)`` and ``other_first + range(other_length)``,
    run pair by run pair."""
    sizes = length * other_length
    within = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    across = np.repeat(other_length, sizes)
    return np.repeat(first, sizes) + within // across, np.repeat(other_first, sizes) + within % across


def search_index(features: Features, rules: Rules, joints: list[str], stride: int) -> SearchIndex:
    """The cells of ``stride`` frames (see the module notes), equal ones once, in a tree."""
    points = search_points(features, joints)
    radius = float(np.sqrt(SEARCH_SLACK * rules.largest))
    count = len(points)
    clip_start = np.flatnonzero(np.append(True, rules.clip[1:] != rules.clip[:-1]))
    position = np.arange(count) - np.repeat(clip_start, np.diff(np.append(clip_start, count)))
    starts = np.flatnonzero(position % stride == 0)
    reach = _reach(points, starts)
    spread = np.repeat(reach > CELL_REACH * radius, np.diff(np.append(starts, count)))
    starts = np.union1d(starts, np.flatnonzero(spread))
    reach = _reach(points, starts)
    stops = np.append(starts[1:], count)
    in_tree = np.sort(np.unique(_cell_keys(features, starts), return_index=True)[1])
    tree = tree_class()(points[starts[in_tree], :TREE_DIMENSIONS])  # type: ignore[misc]
    return SearchIndex(points, starts, stops, reach, in_tree, tree, radius)


def _reach(points: FloatArray, starts: IntArray) -> FloatArray:
    """How far each cell's frames lie from its first (cells begin at ``starts``)."""
    first = np.repeat(starts, np.diff(np.append(starts, len(points))))
    return np.asarray(np.maximum.reduceat(np.linalg.norm(points - points[first], axis=1), starts))


def _cell_keys(features: Features, starts: IntArray) -> IntArray:
    """A 64-bit hash of each cell's features rounded to ``QUANTUM`` (equal cells, equal keys)."""
    values = np.hstack([features.ground.real, features.ground.imag, features.height])
    rounded = np.round(values / QUANTUM).astype(np.int64).view(np.uint64)
    mixers = np.random.default_rng(32).integers(1, 2 ** 63, size=values.shape[1] + 1, dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        frame = (rounded * mixers[:-1]).sum(axis=1, dtype=np.uint64)
        lengths = np.diff(np.append(starts, len(values)))
        place = np.arange(len(values)) - np.repeat(starts, lengths)
        frame = frame * (mixers[-1] ** (place.astype(np.uint64) + np.uint64(1)))
        keys = np.add.reduceat(frame, starts, dtype=np.uint64) + lengths.astype(np.uint64)
    return np.asarray(keys.view(np.int64))


def nearby_pairs(features: Features, rules: Rules, local_maxima: bool, joints: list[str], first_column: int = 0,
                 scheduler: Any = None, stride: int = 3) -> Matches:
    """Matched pairs ``a < b`` (``b >= first_column``) as :func:`.frame_matching.matched_pairs` finds them
    before the best of similar ones is chosen, from the candidates of the bounded search."""
    count = features.frame_count
    if count < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    index = search_index(features, rules, joints, stride)
    if dense_is_cheaper(index, count):
        return dense_matches(features, rules, local_maxima, first_column)
    cells = len(index.starts)
    chunks = [(start, min(cells, start + CHUNK_CELLS)) for start in range(0, cells, CHUNK_CELLS)]
    results = list(_run(chunks, features, rules, local_maxima, index, first_column, scheduler))
    a = np.concatenate([r[0] for r in results])
    b = np.concatenate([r[1] for r in results])
    cost = np.concatenate([r[2] for r in results])
    _, first = np.unique(a * count + b, return_index=True)  # a pair found from both its frames
    return a[first], b[first], cost[first]


def dense_is_cheaper(index: SearchIndex, count: int) -> bool:
    """Whether all against all costs less than the search's candidates, estimated on evenly spread cells."""
    cells = np.unique(np.linspace(0, len(index.starts) - 1, SAMPLE_ROWS).astype(np.int64))
    cell, other = index.nearest(cells)
    pairs = np.sum((index.stops[cell] - index.starts[cell]) * (index.stops[other] - index.starts[other]))
    per_row = float(pairs) / np.sum(index.stops[cells] - index.starts[cells])
    return count / 2 <= SEARCH_PAIR_COST * per_row


def _run(chunks: list[tuple[int, int]], features: Features, rules: Rules, local_maxima: bool, index: SearchIndex,
         first_column: int, scheduler: Any) -> Iterator[Matches]:
    if scheduler is None:
        for start, stop in chunks:
            yield match_cells(features, rules, local_maxima, index, first_column, start, stop)
        return
    client, owned = _client(scheduler)
    try:
        shared = client.scatter([features, rules, index], broadcast=True)
        futures = [client.submit(match_cells, *shared[:2], local_maxima, shared[2], first_column, start, stop,
                                 pure=False) for start, stop in chunks]
        yield from client.gather(futures)
    finally:
        if owned:
            client.close()
            client.cluster.close()


def _client(scheduler: Any) -> tuple[Any, bool]:
    """A Dask client for ``scheduler`` and whether it was made here (to be closed after)."""
    if not isinstance(scheduler, str):
        return scheduler, False
    from ..errors import MissingDependency

    try:
        distributed = importlib.import_module("distributed")
    except ImportError:
        raise MissingDependency('scheduler needs Dask: pip install "dask[distributed]"') from None
    if scheduler == "local":
        cluster = distributed.LocalCluster(threads_per_worker=1, processes=True, dashboard_address=None,
                                           silence_logs=40)
        return distributed.Client(cluster), True
    return distributed.Client(scheduler, timeout="30s"), False


def match_cells(features: Features, rules: Rules, local_maxima: bool, index: SearchIndex, first_column: int,
               start: int, stop: int) -> Matches:
    """The matched pairs ``a < b`` (``b >= first_column``) found from the frames of cells ``start:stop``."""
    count = features.frame_count
    row, frame = index.candidates(np.arange(start, stop))
    keys = np.unique(np.minimum(row, frame) * count + np.maximum(row, frame))
    a, b = keys // count, keys % count
    keep = (b >= first_column) & rules.allow(a, b)
    a, b = a[keep], b[keep]
    cost = features.costs(a, b)
    keep = rules.close(cost)
    a, b, cost = a[keep], b[keep], cost[keep]
    if local_maxima:
        keep = ~beaten_by_a_neighbour(features, rules, a, b, cost)
        a, b, cost = a[keep], b[keep], cost[keep]
    return a, b, cost


def beaten_by_a_neighbour(features: Features, rules: Rules, a: IntArray, b: IntArray, cost: FloatArray) -> BoolArray:
    """Whether one of each pair's 8 neighbours that the rules allow is close enough and closer (ties within
    ``TIE``: the pair first in frame order).  Neighbours among the pairs ``(a, b, cost)`` are looked up first
    (sorted ``a < b``); the costs of the others are computed for the pairs not beaten yet."""
    count = features.frame_count
    keys = a * count + b
    beaten = np.zeros(len(a), dtype=bool)
    looked_up = []
    for step_a, step_b, valid in neighbours(rules, a, b):
        near_a, near_b = a + step_a, b + step_b
        wanted = np.minimum(near_a, near_b) * count + np.maximum(near_a, near_b)
        at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        found = valid & (keys[at] == wanted) if len(keys) else np.zeros(len(a), dtype=bool)
        index = np.flatnonzero(found & ~beaten)
        theirs = cost[at[index]]
        beaten[index[beats(rules, (near_a[index], near_b[index], theirs), (a[index], b[index], cost[index]))]] = True
        looked_up.append((step_a, step_b, valid & ~found))
    for step_a, step_b, unknown in looked_up:
        index = np.flatnonzero(unknown & ~beaten)
        near_a, near_b = a[index] + step_a, b[index] + step_b
        theirs = features.costs(near_a, near_b)
        beaten[index[beats(rules, (near_a, near_b, theirs), (a[index], b[index], cost[index]))]] = True
    return beaten


def joint_names(weights: FloatArray) -> list[str]:
    """The canonical names of the weighted joints (the order of :func:`.frame_matching.frame_features`)."""
    return [CANONICAL_JOINTS[j] for j in np.flatnonzero(weights > 0)]
