"""Frame pairs found by nearest-neighbour search rather than all against all (a library of any size).

The dense matching (:mod:`.frame_matching`) compares every frame with every other: its time grows with the
square of the frames.  Here each frame becomes a point whose Euclidean distance to another frame's is never
less than ``D`` between them: its features turned about the vertical so that its left side (the left
joints' positions minus the right ones') points along +X, one turn per frame, so that two similar frames are
turned alike (``D``'s best turn is then close to none).  A principal-component projection of those points
shortens no distance, so a radius search in it (SciPy's ``cKDTree``, on a few dimensions) finds every pair
whose turned points lie within the radius; the radius is ``SEARCH_SLACK`` times the largest ``D`` allowed,
which leaves room for the turn that ``D`` optimises (on the corpus library every pair the dense matching
keeps lies within ``1.6`` times that ``D``).  The candidates then go through the same rules and exact costs
as the dense matching: the rules, ``exp(-D / sigma) >= threshold`` in float64, and with local maxima, no
allowed close enough neighbour of the 8 that is closer (looked up among the close pairs found, the rows
either side of a chunk included).

Where the library is so redundant that the search would give more than ``DENSE_BELOW`` of all frame pairs
as candidates (estimated on a few rows), all against all is faster and runs instead: the search pays off as
a library grows more varied, not when it repeats the same motion.  SciPy is optional: without it (inside
Blender) :func:`nearby_matcher` gives ``None`` and the dense matching runs.  Rows are matched in chunks,
each alone (on a Dask cluster with ``scheduler``), so the memory stays bounded by a chunk's candidates.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..naming import CANONICAL_JOINTS
from ..rotations import FloatArray
from .frame_matching import BoolArray, Features, IntArray, Rules, beats, dense_matches, neighbours

SEARCH_SLACK = 2.0  # the search radius squared, in largest allowed D
SEARCH_DIMENSIONS = 16  # principal components the tree searches in
CHUNK_ROWS = 2048  # frames matched per chunk (and per Dask task)

SAMPLE_ROWS = 256  # frames whose neighbours estimate how many candidates the search would give
# The search's candidates cost about 7 times what a pair of the dense matching costs (measured on the corpus
# library at 30,000 frames: 340 ns against 51 ns): above this share of all frame pairs, all against all is faster.
DENSE_BELOW = 0.07

Matches = tuple[IntArray, IntArray, FloatArray]
Matcher = Callable[[Features, Rules, bool, int], Matches]


def tree_class() -> Any | None:
    """SciPy's ``cKDTree``, or ``None`` where SciPy is not installed (Blender's Python)."""
    try:
        return importlib.import_module("scipy.spatial").cKDTree
    except ImportError:
        return None


def nearby_matcher(joints: list[str], scheduler: Any = None) -> Matcher | None:
    """The nearest-neighbour matching of features of the weighted ``joints`` (canonical names, in order;
    chunks on the Dask cluster ``scheduler`` when given: ``"local"``, an address or a ``distributed.Client``),
    or ``None`` without SciPy (then the dense matching runs)."""
    if tree_class() is None:
        return None

    def match(features: Features, rules: Rules, local_maxima: bool, first_column: int) -> Matches:
        return nearby_pairs(features, rules, local_maxima, joints, first_column, scheduler)

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


def nearby_pairs(features: Features, rules: Rules, local_maxima: bool, joints: list[str], first_column: int = 0,
                 scheduler: Any = None) -> Matches:
    """Matched pairs ``a < b`` (``b >= first_column``) as :func:`.frame_matching.matched_pairs` finds them
    before the best of similar ones is chosen, from the candidates of a radius search."""
    count = features.frame_count
    if count < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    points = search_points(features, joints)
    tree = tree_class()(points)  # type: ignore[misc]
    radius = float(np.sqrt(SEARCH_SLACK * rules.largest))
    if candidate_share(points, tree, radius) > DENSE_BELOW:
        return dense_matches(features, rules, local_maxima, first_column)
    chunks = [(start, min(count, start + CHUNK_ROWS)) for start in range(first_column, count, CHUNK_ROWS)]
    results = list(_run(chunks, features, rules, local_maxima, points, tree, radius, scheduler))
    a = np.concatenate([r[0] for r in results])
    b = np.concatenate([r[1] for r in results])
    cost = np.concatenate([r[2] for r in results])
    order = np.lexsort((b, a))
    return a[order], b[order], cost[order]


def candidate_share(points: FloatArray, tree: Any, radius: float) -> float:
    """The share of all frame pairs the search would give as candidates, estimated on evenly spread rows."""
    rows = np.linspace(0, len(points) - 1, min(SAMPLE_ROWS, len(points))).astype(np.int64)
    found = tree.query_ball_point(points[rows], radius, return_length=True)
    return float(np.mean(found)) / len(points)


def _run(chunks: list[tuple[int, int]], features: Features, rules: Rules, local_maxima: bool, points: FloatArray,
         tree: Any, radius: float, scheduler: Any) -> Iterator[Matches]:
    if scheduler is None:
        for start, stop in chunks:
            yield match_rows(features, rules, local_maxima, points, tree, radius, start, stop)
        return
    client, owned = _client(scheduler)
    try:
        shared = client.scatter([features, rules, points, tree], broadcast=True)
        futures = [client.submit(match_rows, *shared[:2], local_maxima, shared[2], shared[3], radius, start, stop,
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


def match_rows(features: Features, rules: Rules, local_maxima: bool, points: FloatArray, tree: Any, radius: float,
               start: int, stop: int) -> Matches:
    """The matched pairs whose later frame is in ``start:stop`` (the rows either side are searched too, for
    the neighbours of the local maxima rule)."""
    count = features.frame_count
    low, high = max(0, start - 1), min(count, stop + 1)
    near = tree_class()(points[low:high]).sparse_distance_matrix(tree, radius, output_type="ndarray")  # type: ignore[misc]
    b = near["i"].astype(np.int64) + low
    a = near["j"].astype(np.int64)
    keep = a < b
    a, b = a[keep], b[keep]
    keep = rules.allow(a, b)
    a, b = a[keep], b[keep]
    cost = features.costs(a, b)
    keep = rules.close(cost)
    a, b, cost = a[keep], b[keep], cost[keep]
    if local_maxima:
        keep = ~beaten_by_a_neighbour(rules, a, b, cost, count)
        a, b, cost = a[keep], b[keep], cost[keep]
    keep = (b >= start) & (b < stop)
    return a[keep], b[keep], cost[keep]


def beaten_by_a_neighbour(rules: Rules, a: IntArray, b: IntArray, cost: FloatArray, count: int) -> BoolArray:
    """Whether one of each pair's 8 neighbours that the rules allow is among the close enough pairs
    ``(a, b, cost)`` and closer (ties within ``TIE``: the pair first in frame order).  A neighbour that is not
    among them is not close enough: the search finds every close pair (up to its slack)."""
    keys = a * count + b
    order = np.argsort(keys)
    known = keys[order]
    beaten = np.zeros(len(a), dtype=bool)
    for step_a, step_b, valid in neighbours(rules, a, b):
        index = np.flatnonzero(valid & ~beaten)
        near_a, near_b = a[index] + step_a, b[index] + step_b
        wanted = np.minimum(near_a, near_b) * count + np.maximum(near_a, near_b)
        at = np.minimum(np.searchsorted(known, wanted), max(len(known) - 1, 0))
        found = known[at] == wanted if len(known) else np.zeros(len(index), dtype=bool)
        index, near_a, near_b = index[found], near_a[found], near_b[found]
        theirs = cost[order[at[found]]]
        beaten[index[beats(rules, (near_a, near_b, theirs), (a[index], b[index], cost[index]))]] = True
    return beaten


def joint_names(weights: FloatArray) -> list[str]:
    """The canonical names of the weighted joints (the order of :func:`.frame_matching.frame_features`)."""
    return [CANONICAL_JOINTS[j] for j in np.flatnonzero(weights > 0)]
