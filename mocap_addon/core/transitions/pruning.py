"""Cutting a stretch out of motion made from a motion graph (the thesis's requirement that the user can cut a
synthesized motion before saving it): :func:`prune` removes the frames between two of its transitions and
joins what remains through the graph, by the walk that plays the fewest new frames (Dijkstra over the
graph's transitions: from a landing a walk plays on to any transition of its run, or on to the frame it
must reach)."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..model import Clip
from ..pose import Pose
from .frame_matching import IntArray
from .graph import MotionGraph, run_ends
from .synthesis import MIN_INTERVAL, assemble, interval_frames


def prune(graph: MotionGraph, clips: Sequence[Clip | Pose], made: Clip | Pose | Mapping[str, Any], first: int,
          last: int, *, blend_frames: int = 5, min_interval: float = MIN_INTERVAL) -> Clip:
    """Motion ``made`` from ``graph`` (:func:`.synthesis.synthesize`'s or :func:`.path_following.follow`'s
    result, or its ``metadata``) without the frames from its transition number ``first`` up to its
    transition number ``last`` (indices into ``metadata["transitions"]``, ``first < last``), the frame
    before the cut joined to the frame after it through the graph (:func:`join`, its transitions at least
    ``min_interval`` seconds apart where the graph has such a walk, else the shortest) and the whole assembled
    again from where ``made`` started (its ``"steer"``, if any, kept on the frames kept).
    ``metadata["pruned"]``: ``(first output frame removed, frames removed, frames the join added)``.
    """
    metadata = made if isinstance(made, Mapping) else made.metadata
    transitions = metadata["transitions"]
    if not 0 <= first < last < len(transitions):
        raise ValueError(f"choose two of the motion's {len(transitions)} transitions, the first before the last "
                         f"(got {first} and {last})")
    path = np.asarray(metadata["path"], dtype=np.int64)
    start, stop = int(transitions[first][0]), int(transitions[last][0])
    source, target = int(path[start - 1]), int(path[stop])
    try:
        bridge = join(graph, source, target, gap=interval_frames(graph, min_interval))
    except ValueError:
        bridge = join(graph, source, target)
    frames = np.concatenate([path[:start], bridge, path[stop:]])
    steer = np.asarray(metadata.get("steer", np.zeros(len(path))), dtype=np.float64)
    kept_steer = np.concatenate([steer[:start], np.zeros(len(bridge)), steer[stop:]])
    x, z, facing = metadata["start"]
    out = assemble(graph, clips, frames, blend_frames=blend_frames, steer=kept_steer, start=(x, z, facing))
    out.metadata["steer"] = kept_steer.tolist()
    out.metadata["pruned"] = (start, stop - start, len(bridge))
    return out


def join(graph: MotionGraph, source: int, target: int, *, gap: int = 0) -> IntArray:
    """The fewest frames to play after global frame ``source`` so that ``target`` comes next (empty when
    ``target`` follows ``source`` in its clip), with at least ``gap`` frames between its transitions;
    ``ValueError`` when the graph has no way."""
    ends = run_ends(graph.alive, graph.clip_ends)
    if not (graph.alive[source] and graph.alive[target]):
        raise ValueError("both ends of the cut must be in the graph's kept part")
    arrived = -2  # the node of reaching target
    reached = {-1: (0, -1)}  # transition index (-1: source) -> (frames played, the node before)
    queue = [(0, -1)]
    done: set[int] = set()
    while queue:
        cost, node = heapq.heappop(queue)
        if node == arrived:
            return _frames(graph, reached, reached[arrived][1], source, target)
        if node in done:
            continue
        done.add(node)
        here = source + 1 if node < 0 else int(graph.targets[node])  # the first frame this node plays
        end = int(ends[source if node < 0 else here])
        if here <= target < end and target + 1 - here + cost < reached.get(arrived, (np.inf, 0))[0]:
            reached[arrived] = (cost + target - here, node)
            heapq.heappush(queue, (cost + target - here, arrived))
        low, high = np.searchsorted(graph.sources, [source if node < 0 else here + max(gap - 1, 0), end])
        for edge in range(int(low), int(high)):
            total = cost + int(graph.sources[edge]) - here + 1
            if edge not in done and total < reached.get(edge, (np.inf, 0))[0]:
                reached[edge] = (total, node)
                heapq.heappush(queue, (total, edge))
    raise ValueError(f"no walk in the graph leads from frame {source} to frame {target}")


def _frames(graph: MotionGraph, reached: dict[int, tuple[int, int]], node: int, source: int,
            target: int) -> IntArray:
    """The frames of the walk that ends at landing ``node`` and plays on up to (not including) ``target``."""
    pieces = []
    end = target
    while node >= 0:
        landing = int(graph.targets[node])
        pieces.append(np.arange(landing, end))
        end = int(graph.sources[node]) + 1
        node = reached[node][1]
    pieces.append(np.arange(source + 1, end))
    return np.concatenate(pieces[::-1]).astype(np.int64)
