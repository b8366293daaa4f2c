"""Motion graphs: where the frames of a library of clips can jump to other frames (:func:`build`).

The third part of the motion-synthesis thesis, after Lee et al. 2002 and Schödl
et al. 2000: a first-order Markov process over the frames of every clip.  The
probability of playing frame ``j`` after frame ``i`` is ``P = exp(-D(i, j-1) /
sigma)``: high when frame ``i`` looks like the frame before ``j``
(:mod:`.frame_matching`: the distance ``D`` and the pairs of frames that match).

Pruning (Lee et al.): ``P`` below the threshold; within one clip, frames closer
than ``min_gap`` seconds (so playing on is never a transition); different foot
contacts at ``i`` and ``j-1``; only the best of similar ones (``local_maxima``);
and dead ends (``strongly_connected``: only the largest strongly connected part
is kept, on a graph whose nodes are runs of frames between transitions, and a
transition must land at least ``min_gap`` before the kept part of its clip ends,
so motion made from the graph can always keep ``min_gap`` between transitions).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..body.contacts import find_contacts
from ..model import Clip, Skeleton
from ..naming import CANONICAL_JOINTS, CANONICAL_PARENTS, map_skeleton
from ..pose import Pose, as_pose
from ..retarget.transfer import figure, to_canonical
from ..rotations import FloatArray
from ..timing import resample
from .frame_matching import BoolArray, Features, IntArray, Rules, frame_features, joint_weights, matched_pairs
from .graph_file import GraphFileError, read_graph_file, write_graph_file
from .nearest import joint_names, nearby_matcher

FORMAT_VERSION = 1
CANONICAL_MAPPING = {name: name for name in CANONICAL_JOINTS}
CANONICAL_PARENT_INDICES = [CANONICAL_JOINTS.index(CANONICAL_PARENTS[n] or n) if CANONICAL_PARENTS[n] else -1
                            for n in CANONICAL_JOINTS]


class Transition(NamedTuple):
    """After frame ``source`` play frame ``target`` (global frame numbers)."""

    source: int
    target: int
    cost: float
    probability: float


def library_pose(motion: Clip | Pose, fps: float, mapping: Mapping[str, str | None] | None = None,
                 reference: FloatArray | None = None) -> Pose:
    """A clip or pose resampled to ``fps`` and put on the canonical skeleton (``mapping`` as
    :func:`.naming.map_skeleton` gives and ``reference`` as :func:`.retarget.to_canonical` takes; a motion
    on the canonical skeleton's joints already is only resampled)."""
    pose = resample(as_pose(motion), 1.0 / fps)
    if is_canonical(pose.skeleton):
        return pose
    return to_canonical(pose, mapping=mapping, reference=reference)


def reference_pose(pose: Pose, mapping: Mapping[str, str | None] | None = None) -> FloatArray:
    """The reference pose (world joint rotations) :func:`.retarget.to_canonical` measures on ``pose``."""
    return figure(pose, map_skeleton(pose.skeleton) if mapping is None else mapping, "source").reference


def is_canonical(skeleton: Skeleton) -> bool:
    """Whether ``skeleton`` is the canonical skeleton's joints (a motion on it needs no conversion)."""
    return skeleton.names == list(CANONICAL_JOINTS) and skeleton.parents == CANONICAL_PARENT_INDICES


def skeleton_key(skeleton: Skeleton) -> str:
    """A fingerprint of a skeleton: its joints, parents, offsets and rest rotations."""
    digest = hashlib.sha1(json.dumps([skeleton.names, skeleton.parents]).encode("utf-8"))
    digest.update(np.ascontiguousarray(skeleton.offsets).tobytes())
    digest.update(np.ascontiguousarray(skeleton.rest_rotations).tobytes())
    return digest.hexdigest()[:16]


def clip_name(clip: Clip | Pose, index: int) -> str:
    """The name a graph gives a clip: ``metadata["name"]``, else its file's name, else ``clip <index>``."""
    name = clip.metadata.get("name") or clip.metadata.get("source")
    return os.path.basename(str(name)) if name else f"clip {index}"


# --- dead ends ---------------------------------------------------------------------------------------------


def _strong_components(count: int, heads: IntArray, tails: IntArray) -> IntArray:
    """A component label per node of the directed graph with edges ``heads -> tails`` (Tarjan, without
    recursion; labels in reverse topological order)."""
    order = np.argsort(heads, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(heads, minlength=count))]).tolist()
    following = tails[order].tolist()
    index = [-1] * count
    low = [0] * count
    on_stack = [False] * count
    label = [-1] * count
    stack: list[int] = []
    counter = components = 0
    for root in range(count):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [[root, starts[root]]]
        while work:
            node, position = work[-1]
            if position < starts[node + 1]:
                work[-1][1] = position + 1
                after = following[position]
                if index[after] < 0:
                    index[after] = low[after] = counter
                    counter += 1
                    stack.append(after)
                    on_stack[after] = True
                    work.append([after, starts[after]])
                elif on_stack[after] and index[after] < low[node]:
                    low[node] = index[after]
                continue
            work.pop()
            if work and low[node] < low[work[-1][0]]:
                low[work[-1][0]] = low[node]
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    label[member] = components
                    if member == node:
                        break
                components += 1
    return np.array(label, dtype=np.int64)


def _largest_cycle_part(frames: int, clip_starts: IntArray, sources: IntArray, targets: IntArray) -> BoolArray:
    """Frames of the largest strongly connected part (by frames) of the graph whose edges are ``f -> f + 1``
    within each clip and ``sources -> targets``, found on runs of frames between transition ends."""
    cuts = np.unique(np.concatenate([clip_starts, targets, sources + 1, [frames]]))
    cuts = cuts[cuts <= frames]
    starts, ends = cuts[:-1], cuts[1:]
    runs = len(starts)
    continues = ~np.isin(ends, clip_starts) & (ends < frames)
    run_of = np.searchsorted(starts, np.arange(frames), side="right") - 1
    heads = np.concatenate([np.flatnonzero(continues), run_of[sources]])
    tails = np.concatenate([np.flatnonzero(continues) + 1, run_of[targets]])
    label = _strong_components(runs, heads, tails)
    # a run alone is a part only if it has an edge to itself
    looped = np.zeros(runs, dtype=bool)
    looped[heads[heads == tails]] = True
    members = np.bincount(label)
    cyclic = (members[label] > 1) | looped
    sizes = np.bincount(label[cyclic], weights=(ends - starts)[cyclic], minlength=len(members))
    if not np.any(sizes > 0):
        return np.zeros(frames, dtype=bool)
    return np.asarray(label[run_of] == int(np.argmax(sizes)))


def run_ends(alive: BoolArray, clip_ends: IntArray) -> IntArray:
    """For every frame, the first frame at or after it that is not alive or starts another clip (exclusive
    end of the alive run it is in; the frame itself where it is not alive)."""
    stops = np.unique(np.concatenate([np.flatnonzero(~alive), clip_ends]))
    return np.asarray(stops[np.searchsorted(stops, np.arange(len(alive)))], dtype=np.int64)


def _directed(first: IntArray, second: IntArray, costs: FloatArray,
              clip_ends: IntArray, clip: IntArray) -> tuple[IntArray, IntArray, FloatArray]:
    """Transitions from matched pairs ``D(a, b)``: ``a -> b + 1`` and ``b -> a + 1`` where that frame exists."""
    ahead = second + 1 < clip_ends[clip[second]]
    back = first + 1 < clip_ends[clip[first]]
    sources = np.concatenate([first[ahead], second[back]])
    targets = np.concatenate([second[ahead] + 1, first[back] + 1])
    return sources, targets, np.concatenate([costs[ahead], costs[back]])


def _prune_dead_ends(frames: int, offsets: IntArray, clip_ends: IntArray, sources: IntArray, targets: IntArray,
                     gap: int) -> tuple[BoolArray, BoolArray]:
    """``alive`` frames and the transitions kept: the largest strongly connected part, whose transitions
    land at least ``gap`` frames before their alive run ends (repeated until nothing changes)."""
    kept = np.ones(len(sources), dtype=bool)
    while True:
        alive = _largest_cycle_part(frames, offsets, sources[kept], targets[kept])
        ends = run_ends(alive, clip_ends)
        keep = kept & alive[sources] & alive[targets] & (ends[targets] - targets >= gap)
        if np.array_equal(keep, kept):
            return alive, kept
        kept = keep


# --- the graph ---------------------------------------------------------------------------------------------


@dataclass
class MotionGraph:
    """Transitions over the frames of a library of clips, numbered one after another from 0.

    ``clip_frames`` and ``offsets``: each clip's frame count (after resampling to ``fps``) and first
    global frame; ``clip_names`` their names and ``source_frames`` their frame counts as given.
    ``sources``, ``targets``: after frame ``sources[k]`` play ``targets[k]`` (sorted by source, then
    cost, costs within 1e-9 by target); ``costs`` ``D(source, target - 1)``; ``probabilities``
    ``exp(-costs / sigma)``.  ``contacts`` ``(frames, 2)``: left and right foot planted; ``alive``: the
    frame is in the kept strongly connected part.  ``params``: the build settings.  ``features``,
    ``pairs`` and ``pair_costs`` (the matched frame pairs ``a < b`` before dead ends were pruned) let
    :meth:`add` match a new clip against the library without matching the rest again.
    """

    fps: float
    clip_names: list[str]
    clip_frames: IntArray
    offsets: IntArray
    sources: IntArray
    targets: IntArray
    costs: FloatArray
    probabilities: FloatArray
    contacts: BoolArray
    alive: BoolArray
    params: dict[str, Any]
    features: Features = field(repr=False)
    pairs: IntArray = field(repr=False)
    pair_costs: FloatArray = field(repr=False)
    source_frames: IntArray = field(repr=False)
    references: dict[str, FloatArray] = field(default_factory=dict, repr=False)
    fingerprints: list[list[float]] = field(default_factory=list, repr=False)  # clip_fingerprint per clip

    @property
    def frame_count(self) -> int:
        return int(self.clip_frames.sum())

    @property
    def clip_ends(self) -> IntArray:
        return np.asarray(self.offsets + self.clip_frames, dtype=np.int64)

    def clip_of(self, frames: ArrayLike) -> IntArray:
        """The clip index of global frame numbers."""
        return np.asarray(np.searchsorted(self.offsets, frames, side="right") - 1, dtype=np.int64)

    def local_frame(self, frame: int) -> tuple[int, int]:
        """``(clip index, frame within the clip)`` of a global frame number."""
        if not 0 <= frame < self.frame_count:
            raise ValueError(f"frame {frame} is outside the graph's {self.frame_count} frames")
        clip = int(self.clip_of(frame))
        return clip, int(frame - self.offsets[clip])

    def transitions_from(self, frame: int) -> list[Transition]:
        """The transitions leaving global ``frame``, best (lowest cost) first."""
        first, last = np.searchsorted(self.sources, [frame, frame + 1])
        return [Transition(int(self.sources[k]), int(self.targets[k]), float(self.costs[k]),
                           float(self.probabilities[k])) for k in range(first, last)]

    def transition_counts(self) -> IntArray:
        """Transitions leaving each frame."""
        return np.bincount(self.sources, minlength=self.frame_count).astype(np.int64)

    def add(self, clip: Clip | Pose, contacts: ArrayLike | None = None) -> None:
        """Add ``clip`` to the library: the graph becomes the one :func:`build` makes with it at the end.

        Only the new clip's frames are matched (against every frame, its own included); ``contacts`` gives
        its feet's states ``(F, 2)`` at its own frames when the graph was built from given states.
        """
        if (contacts is None) == (self.params["contacts"] == "given"):
            raise ValueError("give the new clip's contact states exactly when the graph was built from given ones")
        first = self.frame_count
        self._append([clip], [contacts])
        self._match(first)
        self._prune()

    def canonical(self, clip: Clip | Pose, mapping: Mapping[str, str | None] | None = None,
                  index: int | None = None) -> Pose:
        """One of the graph's clips as the graph holds it: resampled to ``fps`` and on the canonical skeleton.

        Every clip of one skeleton is converted with one reference pose (:func:`.retarget.figure`'s,
        measured on the first of them the graph saw and kept in ``references``), so equal frames of two
        takes stay equal.  ``mapping`` as :func:`.naming.map_skeleton` gives (detected when ``None``);
        ``index`` names the clip in errors.
        """
        number = len(self.clip_names) if index is None else index
        key = skeleton_key(clip.skeleton)
        if not is_canonical(clip.skeleton) and key not in self.references:
            raise ValueError(f"clip {number} ({clip_name(clip, number)}): its skeleton is none of the graph's")
        try:
            return library_pose(clip, self.fps, mapping, self.references.get(key))
        except ValueError as error:
            raise ValueError(f"clip {number} ({clip_name(clip, number)}): {error}") from error

    def _append(self, clips: Sequence[Clip | Pose], contacts: Sequence[ArrayLike | None],
                mappings: Sequence[Mapping[str, str | None] | None] | None = None,
                progress: Callable[[float], None] | None = None) -> None:
        """Append the frames of ``clips``: their features and contacts (not matched yet), joined once."""
        settings = self.params
        weights = joint_weights(dict(settings["weights"]))
        features, planted, frames = [self.features], [self.contacts], []
        for number, (clip, given) in enumerate(zip(clips, contacts)):
            index = len(self.clip_names) + number
            mapping = None if mappings is None else mappings[number]
            key = skeleton_key(clip.skeleton)
            if not is_canonical(clip.skeleton) and key not in self.references:
                try:
                    self.references[key] = reference_pose(resample(as_pose(clip), 1.0 / self.fps), mapping)
                except ValueError as error:
                    raise ValueError(f"clip {index} ({clip_name(clip, index)}): {error}") from error
            prepared = self.canonical(clip, mapping, index)
            features.append(frame_features(prepared, weights, settings["nu"]))
            planted.append(_planted(clip, prepared, given))
            frames.append(prepared.frame_count)
            if progress is not None:
                progress((number + 1) / len(clips))
        first = self.frame_count
        named = len(self.clip_names)
        self.clip_names = [*self.clip_names, *(clip_name(clip, named + k) for k, clip in enumerate(clips))]
        self.offsets = np.append(self.offsets, first + np.cumsum([0, *frames[:-1]])).astype(np.int64)
        self.clip_frames = np.append(self.clip_frames, frames).astype(np.int64)
        self.source_frames = np.append(self.source_frames, [clip.frame_count for clip in clips]).astype(np.int64)
        self.fingerprints = [*self.fingerprints, *(clip_fingerprint(clip) for clip in clips)]
        self.features = Features.join(features)
        self.contacts = np.concatenate(planted)

    def _match(self, first: int, scheduler: Any = None) -> None:
        """Add the matched pairs whose later frame is ``first`` or after (the frames appended since then;
        matching never depends on how the frames are split, so this equals matching them all at once):
        candidates by nearest-neighbour search where SciPy is installed (:mod:`.nearest`, its chunks on the
        Dask cluster ``scheduler`` when given), else all against all."""
        matcher = nearby_matcher(joint_names(joint_weights(dict(self.params["weights"]))), scheduler, self.fps)
        a, b, costs = matched_pairs(self.features, self._rules(), self.params["local_maxima"], self.fps, first,
                                    matcher)
        pairs = np.concatenate([self.pairs, np.stack([a, b], axis=1)])
        order = np.lexsort((pairs[:, 1], pairs[:, 0]))
        self.pairs, self.pair_costs = pairs[order], np.concatenate([self.pair_costs, costs])[order]

    def _rules(self) -> Rules:
        settings = self.params
        clip = np.repeat(np.arange(len(self.clip_frames)), self.clip_frames).astype(np.int64)
        contact = (self.contacts[:, 0] * 2 + self.contacts[:, 1]).astype(np.uint8) if settings["contacts"] else None
        return Rules(clip, gap_frames(settings["min_gap"], self.fps), contact, settings["sigma"],
                      settings["threshold"])

    def _prune(self) -> None:
        """``sources`` ... ``alive`` from the matched pairs (dead ends pruned when asked)."""
        settings = self.params
        clip = np.repeat(np.arange(len(self.clip_frames)), self.clip_frames).astype(np.int64)
        sources, targets, costs = _directed(self.pairs[:, 0], self.pairs[:, 1], self.pair_costs,
                                            self.clip_ends, clip)
        frames = self.frame_count
        if settings["strongly_connected"]:
            alive, kept = _prune_dead_ends(frames, self.offsets, self.clip_ends, sources, targets,
                                           gap_frames(settings["min_gap"], self.fps))
            sources, targets, costs = sources[kept], targets[kept], costs[kept]
        else:
            alive = np.ones(frames, dtype=bool)
        order = np.lexsort((targets, np.round(costs, 9), sources))  # costs equal to 1e-9: by target
        self.sources, self.targets, self.costs = sources[order], targets[order], costs[order]
        self.probabilities = np.exp(-self.costs / settings["sigma"])
        self.alive = alive

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the graph (every array, the clips' names and frame counts, the settings) as ``.npz``."""
        keys = sorted(self.references)
        meta = {"format": FORMAT_VERSION, "fps": self.fps, "clip_names": self.clip_names, "params": self.params,
                "references": keys, "fingerprints": self.fingerprints}
        references = {f"reference_{k}": self.references[key] for k, key in enumerate(keys)}
        write_graph_file(path, meta, {**{name: getattr(self, name) for name in ARRAYS},
                                      "ground": self.features.ground, "height": self.features.height,
                                      **references})

    def within(self, usable: ArrayLike) -> MotionGraph:
        """The graph over the ``usable`` frames only (a bool per global frame; a walk uses just them): its
        transitions leave and land on usable kept frames, and its kept part is the largest strongly
        connected part of those (runs of unusable frames cut the clips), as :func:`build` prunes
        (``ValueError`` when no usable frame is kept)."""
        usable = np.asarray(usable, dtype=bool)
        if usable.shape != self.alive.shape:
            raise ValueError(f"usable frames: one per graph frame ({self.frame_count}), got {usable.shape}")
        usable = usable & self.alive
        keep = usable[self.sources] & usable[self.targets]
        sources, targets = self.sources[keep], self.targets[keep]
        alive = usable
        if self.params["strongly_connected"]:
            changes = np.flatnonzero(usable[1:] != usable[:-1]) + 1
            runs = np.unique(np.concatenate([self.offsets, changes]))  # each run of (un)usable frames its own clip
            alive, kept = _prune_dead_ends(self.frame_count, runs, self.clip_ends, sources, targets,
                                           gap_frames(self.params["min_gap"], self.fps))
            alive &= usable
            keep[keep] = kept
        if not alive.any():
            raise ValueError("no frame of the graph's kept part is usable: choose more frames")
        return replace(self, sources=self.sources[keep], targets=self.targets[keep], costs=self.costs[keep],
                       probabilities=self.probabilities[keep], alive=alive)

    def check_clips(self, clips: Sequence[Clip | Pose]) -> None:
        """Raise ``ValueError`` unless ``clips`` are the graph's clips, in its order: as many, and each
        matching the fingerprint taken when it was added (graphs saved before fingerprints: counts only)."""
        if len(clips) != len(self.clip_frames):
            raise ValueError(f"the graph has {len(self.clip_frames)} clips, {len(clips)} given")
        if len(self.fingerprints) != len(clips):
            return
        for index, (clip, kept) in enumerate(zip(clips, self.fingerprints)):
            if not same_fingerprint(clip_fingerprint(clip), kept):
                raise ValueError(f"clip {index} ({clip_name(clip, index)}) is not the clip it was built from "
                                 f"(the graph's {self.clip_names[index]}): give the graph's clips in its order")


ARRAYS = ("clip_frames", "offsets", "sources", "targets", "costs", "probabilities", "contacts", "alive",
          "pairs", "pair_costs", "source_frames")


def load_graph(path: str | os.PathLike[str]) -> MotionGraph:
    """A graph written by :meth:`MotionGraph.save`; anything else (damaged, crafted, not a graph) raises
    :class:`.graph_file.GraphFileError` (a ``ValueError``) naming the file, with bounded memory."""
    meta, arrays = read_graph_file(path)
    if meta.get("format") != FORMAT_VERSION:
        raise GraphFileError(f"motion graph format {str(meta.get('format'))[:20]}, expected {FORMAT_VERSION}", path)
    features = Features(arrays.pop("ground"), arrays.pop("height"))
    references = {key: arrays.pop(f"reference_{k}") for k, key in enumerate(meta["references"])}
    return MotionGraph(fps=float(meta["fps"]), clip_names=list(meta["clip_names"]), params=dict(meta["params"]),
                       features=features, references=references, fingerprints=list(meta.get("fingerprints", [])),
                       **arrays)


def clip_fingerprint(motion: Clip | Pose) -> list[float]:
    """A few numbers that tell one clip's motion from another's (kept with each clip of a graph): its frame
    count and rate, its root's mean position and spread, and its rotations' mean squared components."""
    pose = as_pose(motion)
    root = pose.translations[:, 0] if pose.frame_count else np.zeros((1, 3))
    squares = (pose.rotations ** 2).mean(axis=(0, 1)) if pose.frame_count else np.zeros(4)
    return [float(pose.frame_count), float(pose.fps), *root.mean(axis=0).tolist(), *root.std(axis=0).tolist(),
            *squares.tolist()]


def same_fingerprint(found: Sequence[float], kept: Sequence[float]) -> bool:
    """Whether two fingerprints are of one clip (to float32 precision: a clip read back from Blender's keys)."""
    if len(found) != len(kept) or found[:1] != kept[:1]:
        return False
    scale = max(1.0, *(abs(v) for v in kept[2:]))
    return bool(np.allclose(found[1:], kept[1:], rtol=1e-4, atol=1e-4 * scale))


def gap_frames(min_gap: float, fps: float) -> int:
    """``min_gap`` seconds in frames (at least 1: a frame is never its own transition)."""
    return max(1, math.ceil(min_gap * fps - 1e-9))


def _planted(clip: Clip | Pose, prepared: Pose, given: ArrayLike | None) -> BoolArray:
    """The feet's contact states ``(F, 2)`` at ``prepared``'s frames: ``given`` at ``clip``'s own frames
    (nearest in time), else detected on ``prepared``."""
    if given is None:
        return detected_contacts(prepared)
    states = np.asarray(given, dtype=bool)
    if states.shape != (clip.frame_count, 2):
        raise ValueError(f"contact states of shape {states.shape} for a clip of {clip.frame_count} frames "
                         f"(expected ({clip.frame_count}, 2))")
    times = np.arange(prepared.frame_count) * prepared.frame_time
    nearest = np.clip(np.rint(times / clip.frame_time).astype(np.int64), 0, clip.frame_count - 1)
    return np.asarray(states[nearest])


def detected_contacts(pose: Pose) -> BoolArray:
    """Left and right foot planted per frame ``(F, 2)`` of a canonical pose (:func:`.contacts.find_contacts`)."""
    return find_contacts(pose, CANONICAL_MAPPING).planted


def build(clips: Sequence[Clip | Pose], *, fps: float | None = None, sigma: float = 3.0, nu: float = 2.0,
          threshold: float = 0.9, min_gap: float = 0.5, contacts: bool | Sequence[ArrayLike] = True,
          local_maxima: bool = True, strongly_connected: bool = True,
          weights: Mapping[str, float] | Sequence[float] | None = None,
          progress: Callable[[float], None] | None = None, scheduler: Any = None) -> MotionGraph:
    """The motion graph of ``clips`` (clips or poses of any files and skeletons; see the module notes).

    Each clip is resampled to ``fps`` (default: the first clip's rate) and put on the canonical skeleton.
    ``sigma``, ``nu`` and ``threshold`` as in the thesis (``P = exp(-D / sigma) >= threshold``);
    ``min_gap`` seconds between the two frames of a transition within one clip; ``contacts``: compare the
    feet's contact states (``True``: detected, :mod:`..body.contacts`; a sequence: one ``(F, 2)`` bool array per
    clip at its own frames, left and right foot planted; ``False``: detected for ``graph.contacts`` but
    not compared); ``local_maxima``: keep only the best of
    similar transitions; ``strongly_connected``: keep only the largest strongly connected part; ``weights``:
    per canonical joint (a mapping of names, others 0, or one value per joint; default
    ``data/motion_graph.json``).  ``progress`` is called with the share of the work done (half for
    reading the clips, half for matching them).  The frames that match are found by nearest-neighbour
    search where SciPy is installed (:mod:`.nearest`: a library of any size in bounded memory), else all
    against all (Blender's Python); ``scheduler`` (``"local"``, a Dask scheduler's address or a
    ``distributed.Client``) runs the search's chunks on a Dask cluster.
    """
    if not clips:
        raise ValueError("a motion graph needs at least one clip")
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    for name, value in (("sigma", sigma), ("nu", nu), ("min_gap", min_gap)):
        if not (math.isfinite(value) and value >= 0) or (name == "sigma" and value == 0):
            raise ValueError(f"{name} must be {'positive' if name == 'sigma' else 'non-negative'}, got {value}")
    rate = float(fps) if fps is not None else clips[0].fps
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError(f"fps must be positive, got {fps}")
    given = None if isinstance(contacts, bool) else list(contacts)
    if given is not None and len(given) != len(clips):
        raise ValueError(f"{len(given)} contact arrays for {len(clips)} clips")
    params = {"fps": rate, "sigma": float(sigma), "nu": float(nu), "threshold": float(threshold),
              "min_gap": float(min_gap), "contacts": "given" if given is not None else bool(contacts),
              "local_maxima": bool(local_maxima), "strongly_connected": bool(strongly_connected),
              "weights": {n: float(w) for n, w in zip(CANONICAL_JOINTS, joint_weights(weights)) if w > 0}}
    none = np.zeros(0, dtype=np.int64)
    graph = MotionGraph(rate, [], none, none, none, none, np.zeros(0), np.zeros(0), np.zeros((0, 2), dtype=bool),
                        np.zeros(0, dtype=bool), params, Features(np.zeros((0, 0), np.complex128), np.zeros((0, 0))),
                        np.zeros((0, 2), dtype=np.int64), np.zeros(0), none)
    mappings: dict[str, dict[str, str | None]] = {}  # takes of one skeleton are mapped once
    for clip in clips:
        key = skeleton_key(clip.skeleton)
        if key not in mappings:
            mappings[key] = map_skeleton(clip.skeleton)
    graph._append(clips, [None] * len(clips) if given is None else given,
                  [mappings[skeleton_key(clip.skeleton)] for clip in clips],
                  None if progress is None else lambda share: progress(0.5 * share))
    graph._match(0, scheduler)
    if progress is not None:
        progress(1.0)
    graph._prune()
    return graph
