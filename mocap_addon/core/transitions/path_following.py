"""New motion along a drawn ground path: the thesis's "sketching" (Lee et al. 2002), as Kovar et al. 2002's
path synthesis on a motion graph.

:func:`follow` searches the graph's walks for the one whose hips' ground path stays closest to the asked
path, measured as Kovar et al. do: the figure's point after it has walked ``s`` metres against the path's
point ``s`` metres along it.  The search looks a horizon ahead at every decision (every transition the
quality rules of :func:`.synthesis.allowed` let it take in the window after the minimum interval, each
followed by the frames it must then play, or playing on), keeps the best, and decides again from there.
Where the library turns less than the path (captured walks are mostly straight), each stretch between
decisions may also turn at a constant rate of at most :data:`STEER_LIMIT` beyond its source, about the
planted feet (:func:`.synthesis.integrate`), so the standing foot does not slide.  Heading and position are
integrated exactly as :func:`.synthesis.assemble` does, so the motion made is the motion searched.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import MocapFormatError
from ..model import Clip
from ..pose import Pose
from ..rotations import FloatArray
from .frame_matching import IntArray
from .graph import MotionGraph, Transition, run_ends
from .synthesis import MIN_INTERVAL, _Source, allowed, assemble, integrate, interval_frames, safe_landings

STEER_LIMIT = math.radians(40.0)  # radians per second the figure may turn beyond its source
STEER_CHOICES = 9  # steering rates tried per stretch, evenly from -STEER_LIMIT to +STEER_LIMIT
STEER_COST = 0.004  # square metres of path error a frame turning at the limit costs (natural turns first)
TIME_COST = 0.01  # square metres of path error a frame costs: scores are per metre walked, so walk on
WINDOW = 1.0  # seconds after the earliest allowed transition in which one is looked for
STEER_SMOOTHING = 0.3  # seconds over which the steering of consecutive stretches is averaged
START_CHOICES = 4  # the seed picks among this many of the best starting frames
SLOWEST = 0.2  # metres per second: a search still short of the end after length / SLOWEST seconds stops


@dataclass
class Route:
    """A ground path: ``points`` ``(N, 2)`` (x, z) in metres, repeated points dropped."""

    points: FloatArray

    def __post_init__(self) -> None:
        points = np.asarray(self.points, dtype=np.float64)
        if points.ndim != 2 or points.shape[1] != 2 or not np.all(np.isfinite(points)):
            raise ValueError(f"path must be an (N, 2) array of finite ground points (x, z), got shape "
                             f"{points.shape}")
        keep = np.concatenate([[True], np.linalg.norm(np.diff(points, axis=0), axis=1) > 1e-9])
        points = points[keep]
        if len(points) < 2:
            raise ValueError("path needs at least two distinct points")
        self.points = points
        self.complex = points[:, 0] + 1j * points[:, 1]
        self.lengths = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(self.complex)))])

    @property
    def length(self) -> float:
        return float(self.lengths[-1])

    def at(self, along: Any) -> Any:
        """The path's points ``along`` metres from its start (clamped to its ends), as ``x + iz``."""
        return np.interp(along, self.lengths, self.points[:, 0]) + 1j * np.interp(along, self.lengths,
                                                                                    self.points[:, 1])

    def project(self, points: Any, near: float, reach: float = 1.5) -> Any:
        """How far along the path the nearest point to each of ``points`` (``x + iz``) is, among the
        path's parts within ``reach`` metres (along it) of ``near``."""
        first = max(0, int(np.searchsorted(self.lengths, near - reach)) - 1)
        last = min(len(self.lengths) - 1, int(np.searchsorted(self.lengths, near + reach)) + 1)
        return self._nearest(np.atleast_1d(points), first, last)[1]

    def distance(self, points: Any) -> Any:
        """Each point's (``x + iz``) distance from the whole path."""
        return self._nearest(np.atleast_1d(points), 0, len(self.lengths) - 1)[0]

    def _nearest(self, points: Any, first: int, last: int) -> tuple[Any, Any]:
        starts, ends = self.complex[first:last], self.complex[first + 1:last + 1]
        span = ends - starts
        share = np.clip(((points[:, None] - starts) * np.conj(span)).real / np.abs(span) ** 2, 0, 1)
        gaps = np.abs(starts + share * span - points[:, None])
        best = np.argmin(gaps, axis=1)
        rows = np.arange(len(points))
        along = self.lengths[first + best] + share[rows, best] * np.abs(span[best])
        return gaps[rows, best], along


def read_path(path: str | os.PathLike[str]) -> FloatArray:
    """Ground points ``(N, 2)`` from a CSV file of ``x,z`` rows in metres (commas or blanks between; a
    first row of names and lines starting with ``#`` skipped); ``MocapFormatError`` names the bad line."""
    rows: list[tuple[float, float]] = []
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            fields = text.replace(",", " ").replace(";", " ").split()
            try:
                values = [float(field) for field in fields]
            except ValueError:
                if not rows and number == 1:
                    continue  # a header
                raise MocapFormatError(f"expected two numbers x,z, got {text[:60]!r}", path, number) from None
            if len(values) != 2 or not all(math.isfinite(v) for v in values):
                raise MocapFormatError(f"expected two finite numbers x,z, got {text[:60]!r}", path, number)
            rows.append((values[0], values[1]))
    if len(rows) < 2:
        raise MocapFormatError(f"a path needs at least two points, found {len(rows)}", path)
    return np.array(rows)


class _Library:
    """What the search needs of every library frame: its move from the frame before (steps, turns,
    pivots as :func:`.synthesis.integrate` takes them) and how far forward it walks."""

    def __init__(self, graph: MotionGraph, clips: Sequence[Clip | Pose]) -> None:
        source = _Source(graph, clips, np.arange(graph.frame_count))
        self.steps, self.turns, self.pivots = source.steps, source.turns, source.pivots
        self.forward = source.steps.imag  # the hips face +Z in their own heading
        self.ground, self.heading = source.ground, source.heading


@dataclass
class _State:
    """Where the search stands: the last frame played and where the figure is then."""

    frame: int
    made: int  # output frames so far
    position: complex
    heading: float
    along: float  # metres along the path
    free_from: int  # the first output frame a transition may land on
    first: int  # the first library frame of the stretch playing now


def follow(graph: MotionGraph, clips: Sequence[Clip | Pose], path: ArrayLike, *, seed: int = 0,
           blend_frames: int = 5, min_interval: float = MIN_INTERVAL) -> Clip:
    """Motion on the canonical skeleton (metres, Y up) walking ``path`` (``(N, 2)`` ground points ``(x, z)``
    in metres) from ``path[0]``, facing ``path[1]``, until it reaches the end (see the module notes).

    ``clips`` are the graph's clips in its order; ``seed`` picks among the best starting frames; transitions
    are blended over ``blend_frames`` frames with at least ``min_interval`` seconds between them.
    ``metadata``: ``"transitions"`` and ``"path"`` as :func:`.synthesis.synthesize` gives them,
    ``"path_error"`` ``{"mean", "max", "end"}`` (metres: the hips' ground path from the asked one, and the
    last frame from its end), ``"steer"`` (radians per frame beyond the sources) and ``"search_seconds"``
    (CPU time of the search).
    """
    route = Route(np.asarray(path, dtype=np.float64))
    library = _Library(graph, clips)
    started = time.process_time()
    frames, steer = _Search(graph, library, route, interval_frames(graph, min_interval), seed).run()
    steer = _smoothed(steer, max(1, round(STEER_SMOOTHING * graph.fps)))
    searched = time.process_time() - started
    direction = route.complex[1] - route.complex[0]
    facing = math.pi / 2 - math.atan2(direction.imag, direction.real)
    result = assemble(graph, clips, frames, blend_frames=blend_frames, steer=steer,
                      start=(float(route.points[0, 0]), float(route.points[0, 1]), facing))
    hips = result.joint_translations(0)
    ground = hips[:, 0] + 1j * hips[:, 2]
    gaps = route.distance(ground)
    result.metadata.update({
        "source": "motion graph along a path", "steer": steer.tolist(), "search_seconds": searched,
        "path_error": {"mean": float(gaps.mean()), "max": float(gaps.max()),
                       "end": float(abs(ground[-1] - route.complex[-1]))}})
    return result


def _smoothed(values: FloatArray, width: int) -> FloatArray:
    """``values`` averaged over ``width`` frames about each (ends held), so a change of steering between
    stretches is a ramp, not a jerk (never beyond the largest, and turning as far in all but a few frames)."""
    padded = np.concatenate([np.full(width, values[0]), values, np.full(width, values[-1])])
    return np.asarray(np.convolve(padded, np.ones(width) / width, mode="same")[width:-width])


class _Search:
    """The horizon search (see the module notes)."""

    def __init__(self, graph: MotionGraph, library: _Library, route: Route, gap: int, seed: int) -> None:
        self.graph, self.library, self.route, self.gap = graph, library, route, gap
        self.rng = np.random.default_rng(seed)
        self.ends = run_ends(graph.alive, graph.clip_ends)
        last_source = np.searchsorted(graph.sources, self.ends) - 1  # of each frame's run, at or after it
        exits = graph.sources[np.maximum(last_source, 0)]
        self.exits = np.where((last_source >= 0) & (exits >= np.arange(graph.frame_count)), exits, -1)
        self.safe = safe_landings(graph, gap, self.ends)
        self.window = max(1, round(WINDOW * graph.fps))
        self.rates = np.linspace(-STEER_LIMIT, STEER_LIMIT, STEER_CHOICES) / graph.fps

    def run(self) -> tuple[IntArray, FloatArray]:
        """The library frames to play and the steering of each output frame."""
        route = self.route
        direction = route.complex[1] - route.complex[0]
        facing = math.pi / 2 - math.atan2(direction.imag, direction.real)
        state = _State(self._start(facing), 1, complex(route.complex[0]), facing, 0.0, 0, 0)
        state.first = state.frame
        frames, steer = [np.array([state.frame])], [np.zeros(1)]
        played: list[tuple[int, int]] = []
        limit = math.ceil(route.length / SLOWEST * self.graph.fps)
        while state.made < limit:
            chosen = self._decide(state, played)
            stretch, rate = chosen[0], chosen[1]
            positions, headings = self._roll(state, stretch, rate)
            along = route.project(positions, state.along) if len(stretch) else np.zeros(0)
            reached = np.flatnonzero(along >= route.length - 0.02)
            if len(reached):
                stop = int(reached[0]) + 1
                frames.append(stretch[:stop])
                steer.append(np.full(stop, rate))
                break
            frames.append(stretch)
            steer.append(np.full(len(stretch), rate))
            if len(stretch):
                state.position, state.heading = complex(positions[-1]), float(headings[-1])
                state.along, state.frame = float(along[-1]), int(stretch[-1])
                state.made += len(stretch)
            if chosen[2] is not None:
                transition, landing_rate = chosen[2], chosen[3]
                played.append((state.first, state.frame))
                positions, headings = self._roll(state, np.array([transition.target]), landing_rate)
                frames.append(np.array([transition.target]))
                steer.append(np.array([landing_rate]))
                state = _State(transition.target, state.made + 1, complex(positions[-1]), float(headings[-1]),
                               float(route.project(positions, state.along)[-1]), state.made + self.gap,
                               transition.target)
        return np.concatenate(frames).astype(np.int64), np.concatenate(steer)

    def _roll(self, state: _State, stretch: IntArray, rate: Any) -> tuple[Any, Any]:
        """Ground positions and headings of playing ``stretch`` from ``state`` turning by ``rate`` per frame
        (an array of rates: one row each)."""
        library = self.library
        rate = np.asarray(rate, dtype=np.float64)[..., None]
        headings, positions = integrate(state.position, state.heading, library.steps[stretch],
                                        library.turns[stretch], library.pivots[stretch], rate)
        return positions[..., 1:], headings[..., 1:]

    def _errors(self, positions: Any, along: Any, rates: Any) -> Any:
        """Squared distances of ``positions`` from the path's points ``along`` it, with steering's cost."""
        return np.abs(positions - self.route.at(along)) ** 2 + STEER_COST * (rates / self.rates[-1]) ** 2

    def _score(self, errors: Any, frames: Any, walked: Any) -> Any:
        """A stretch's score: its summed errors and time per metre it walks along the path."""
        return (errors + TIME_COST * frames) / np.maximum(walked, 0.05 * frames / self.graph.fps)

    def _start(self, facing: float) -> int:
        """A library frame to start from: among the best at walking the path's first horizon (``seed``)."""
        graph, library = self.graph, self.library
        span = self.gap + self.window
        candidates = np.flatnonzero(graph.alive & (self.ends - np.arange(graph.frame_count) > span))
        if not len(candidates):
            raise ValueError("the graph has no stretch of frames long enough to start a path from")
        frames = candidates[:, None] + np.arange(1, span + 1)
        turned = np.exp(-1j * (facing - library.heading[candidates]))[:, None]
        positions = self.route.complex[0] + (library.ground[frames] - library.ground[candidates][:, None]) * turned
        along = np.cumsum(library.forward[frames], axis=1)
        cost = np.mean(np.abs(positions - self.route.at(along)) ** 2, axis=1)
        best = np.argsort(cost)[:START_CHOICES]
        return int(candidates[self.rng.choice(best)])

    def _decide(self, state: _State, played: list[tuple[int, int]]) -> tuple[IntArray, float,
                                                                                Transition | None, float]:
        """The next stretch to play (library frames after ``state.frame``), its steering and the transition
        at its end with the steering of the frame it lands on (``None``: play on and decide again)."""
        graph, library, gap = self.graph, self.library, self.gap
        frame = state.frame
        last, exit = int(self.ends[frame]) - 1, int(self.exits[frame])
        earliest = frame + max(0, state.free_from - state.made)
        forced = earliest > exit  # no transition left once the interval has passed: take the last there is
        if exit < frame:
            raise ValueError(f"frame {frame} ({graph.clip_names[int(graph.clip_of(frame))]}) is a dead end: build "
                             f"the graph with strongly_connected=True")
        earliest, latest = (exit, exit) if forced else (earliest, min(exit, earliest + self.window))
        horizon = latest - frame + gap
        ahead = np.arange(frame + 1, min(last, frame + horizon) + 1)
        positions, headings = self._roll(state, ahead, self.rates)  # (K, n)
        along = state.along + np.cumsum(library.forward[ahead])
        costs = np.cumsum(self._errors(positions, along, self.rates[:, None]), axis=1)
        best: tuple[float, tuple[IntArray, float, Transition | None, float]] = (math.inf, (ahead, 0.0, None, 0.0))
        step = max(1, self.window // 2)
        if last - frame >= horizon and exit >= max(earliest, frame + step):
            rate = int(np.argmin(costs[:, -1]))
            score = self._score(costs[rate, -1], horizon, along[-1] - state.along)
            best = (score, (ahead[:step], float(self.rates[rate]), None, 0.0))
        options = self._options(earliest, latest, played, state.first, forced or best[0] == math.inf)
        if not options and best[0] == math.inf:
            raise ValueError(f"frame {frame} ({graph.clip_names[int(graph.clip_of(frame))]}) leads nowhere: build "
                             f"the graph with strongly_connected=True")
        if options:
            best = min(best, self._best_transition(state, options, ahead, positions, headings, along, costs,
                                                   horizon), key=lambda pair: pair[0])
        return best[1]

    def _options(self, earliest: int, latest: int, played: list[tuple[int, int]], first: int,
                 forced: bool) -> list[Transition]:
        """The transitions leaving frames ``earliest`` to ``latest`` that the quality rules allow after the
        stretches ``played`` and the one playing from ``first`` up to each (all when ``forced`` and none is)."""
        graph = self.graph
        low, high = np.searchsorted(graph.sources, [earliest, latest + 1])
        every = [Transition(int(graph.sources[k]), int(graph.targets[k]), float(graph.costs[k]),
                            float(graph.probabilities[k])) for k in range(low, high)]
        kept = [t for source in sorted({t.source for t in every})
                for t in allowed([t for t in every if t.source == source], [*played, (first, source)], self.gap,
                                 self.ends)]
        safe = [t for t in kept if self.safe[t.target]]  # the interval can be kept for ever after it
        way_on = safe or [t for t in kept if self.exits[t.target] >= t.target + self.gap - 1]
        kept = way_on or [t for t in kept if self.exits[t.target] >= t.target]
        return kept if kept or not forced else every  # where the graph leaves no choice, the rules give way

    def _best_transition(self, state: _State, options: list[Transition], ahead: IntArray, positions: Any,
                         headings: Any, along: Any, costs: Any,
                         horizon: int) -> tuple[float, tuple[IntArray, float, Transition | None, float]]:
        """The best of ``options`` (each steered at every rate before and after it) and its mean cost."""
        library, frame = self.library, state.frame
        sources = np.array([t.source for t in options])
        targets = np.array([t.target for t in options])
        before = sources - frame  # frames played before the jump
        after = np.maximum(1, horizon - before)
        length = int(after.max())
        stretch = targets[:, None] + np.arange(length)
        inside = np.arange(length) < np.minimum(after, self.ends[targets] - targets)[:, None]
        stretch = np.where(inside, stretch, targets[:, None])
        index = np.maximum(before - 1, 0)
        start_position = np.where(before > 0, positions[:, index], state.position)  # (K, C)
        start_heading = np.where(before > 0, headings[:, index], state.heading)
        start_along = np.where(before > 0, along[index], state.along)
        start_cost = np.where(before > 0, costs[:, index], 0.0)
        rates = self.rates[None, :, None]  # (1, K, 1): the stretch after the jump
        turned = np.cumsum(library.turns[stretch][:, None] * inside[:, None] + rates * inside[:, None], axis=-1)
        turned = np.concatenate([np.zeros(turned.shape[:-1] + (1,)), turned[..., :-1]], axis=-1)  # (C, K, L)
        moves = ((library.steps[stretch] * inside)[:, None] + (library.pivots[stretch] * inside)[:, None]
                 * (1 - np.exp(-1j * rates))) * np.exp(-1j * turned)
        moved = start_position[:, :, None, None] + np.exp(-1j * start_heading)[:, :, None, None] * np.cumsum(
            moves, axis=-1)[None]  # (K, C, K, L)
        walked = start_along[:, None] + np.cumsum(library.forward[stretch] * inside, axis=-1)  # (C, L)
        errors = self._errors(moved, walked[None, :, None], rates[None]) * inside[None, :, None]
        walked_total = walked[np.arange(len(options)), inside.sum(axis=1) - 1] - state.along
        total = self._score(start_cost[:, :, None] + errors.sum(axis=-1),
                            (before + inside.sum(axis=1))[None, :, None], walked_total[None, :, None])
        first_rate, option, second_rate = np.unravel_index(int(np.argmin(total)), total.shape)
        chosen = options[int(option)]
        return float(total[first_rate, option, second_rate]), (
            ahead[:before[option]], float(self.rates[first_rate]), chosen, float(self.rates[second_rate]))
