"""The thesis's graphs of a motion graph, written as PNG files (matplotlib, imported only when drawing).

- ``per_frame``: how many transitions leave each frame, one panel per clip (one clip or two: those
  chosen with ``clips``; two clips: only the transitions between them);
- ``between``: the same for transitions to other clips only, coloured by the clip they go to;
- ``matrix``: every transition as a point (from frame, to frame) over the whole library, clips
  separated by lines, frames outside the kept part shaded;
- :func:`plot_path`: motion made along a path (:func:`.path_following.follow`): the hips' ground path over
  the asked one, coloured by the clip each stretch comes from, transitions marked.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import MissingDependency
from ..kinematics import world_positions
from ..model import Clip
from ..pose import Pose
from ..rotations import FloatArray
from .frame_matching import IntArray
from .graph import MotionGraph

PLOT_KINDS = ("per_frame", "between", "matrix")
PLOTS_EXTRA = 'pip install "mocap-addon[plots]" (or pip install matplotlib)'


def plot(graph: MotionGraph, path: str | os.PathLike[str], kind: str = "per_frame",
         clips: Sequence[int | str] | None = None) -> None:
    """Write the graph's ``kind`` graph (see the module notes) to ``path`` as PNG.

    ``clips`` chooses clips by index or name (default: all; ``matrix`` ignores it).  ``MissingDependency``
    (an ``ImportError``) with a one-line message when matplotlib is missing.
    """
    if kind not in PLOT_KINDS:
        raise ValueError(f"kind must be one of {', '.join(PLOT_KINDS)}, got {kind!r}")
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependency(f"plots need matplotlib: {PLOTS_EXTRA}") from None
    chosen = _chosen(graph, clips)
    if kind == "matrix":
        figure = Figure(figsize=(7, 6.5), dpi=110)
        _matrix(graph, figure.add_subplot())
    else:
        figure = Figure(figsize=(9, 1.9 * len(chosen) + 0.8), dpi=110)
        axes = figure.subplots(len(chosen), 1, squeeze=False)[:, 0]
        for ax, clip in zip(axes, chosen):
            _per_frame(graph, ax, clip, chosen, kind == "between")
        axes[-1].set_xlabel("seconds into the clip")
        scope = (" to other clips" if kind == "between" else
                 " between the two clips" if len(chosen) == 2 else "")
        figure.suptitle(f"transitions per frame{scope} ({len(graph.sources)} in the graph, {graph.fps:g} fps)")
    figure.tight_layout()
    FigureCanvasAgg(figure).print_png(os.fspath(path))


def plot_path(graph: MotionGraph, result: Clip | Pose, asked: ArrayLike, path: str | os.PathLike[str]) -> None:
    """Write a PNG of ``result``'s hips' ground path (from :func:`.path_following.follow` on ``graph``) over
    the ``asked`` ``(N, 2)`` path (x, z), each stretch in its clip's colour, transitions marked."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependency(f"plots need matplotlib: {PLOTS_EXTRA}") from None
    points = np.asarray(asked, dtype=np.float64)
    hips = world_positions(result)[:, 0]
    frames = np.asarray(result.metadata["path"], dtype=np.int64)
    owner = graph.clip_of(frames)
    figure = Figure(figsize=(7, 6.5), dpi=110)
    ax = figure.add_subplot()
    ax.plot(points[:, 0], points[:, 1], color="0.75", lw=6, solid_capstyle="round", label="asked path", zorder=1)
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(owner)) + 1, [len(owner)]])
    shown: set[int] = set()
    for start, stop in itertools.pairwise(cuts):
        clip = int(owner[start])
        ax.plot(hips[start:stop + 1, 0], hips[start:stop + 1, 2], color=_colour(clip), lw=1.6, zorder=2,
                label=None if clip in shown else graph.clip_names[clip][:30])
        shown.add(clip)
    landings = [landing for landing, _, _ in result.metadata["transitions"]]
    ax.scatter(hips[landings, 0], hips[landings, 2], marker="x", color="k", s=30, zorder=3,
               label=f"{len(landings)} transitions")
    ax.plot(*points[0], "o", color="tab:green", zorder=4)
    ax.plot(*points[-1], "s", color="tab:red", zorder=4)
    error = result.metadata.get("path_error", {})
    ax.set_title(f"{result.frame_count / graph.fps:.1f} s along {_length(points):.1f} m: hips from the path "
                 f"mean {error.get('mean', float('nan')):.3f} m, max {error.get('max', float('nan')):.3f} m, "
                 f"end {error.get('end', float('nan')):.3f} m", fontsize=8)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")
    ax.legend(fontsize=6, loc="best")
    figure.tight_layout()
    FigureCanvasAgg(figure).print_png(os.fspath(path))


def _length(points: FloatArray) -> float:
    return float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())


def _chosen(graph: MotionGraph, clips: Sequence[int | str] | None) -> list[int]:
    if clips is None:
        return list(range(len(graph.clip_frames)))
    out = []
    for clip in clips:
        if isinstance(clip, str) and not clip.isdigit():
            if clip not in graph.clip_names:
                raise ValueError(f"no clip named {clip!r} in the graph ({', '.join(graph.clip_names)})")
            out.append(graph.clip_names.index(clip))
        elif 0 <= int(clip) < len(graph.clip_frames):
            out.append(int(clip))
        else:
            raise ValueError(f"clip {clip} is outside the graph's {len(graph.clip_frames)} clips")
    return out


def _per_frame(graph: MotionGraph, ax: Any, clip: int, chosen: list[int], between: bool) -> None:
    """Transitions leaving each frame of ``clip``: to any clip, to the other chosen clip when two are
    chosen, or (``between``) to each other clip in its own colour."""
    first, count = int(graph.offsets[clip]), int(graph.clip_frames[clip])
    mine = (graph.sources >= first) & (graph.sources < first + count)
    to = graph.clip_of(graph.targets)
    seconds = np.arange(count) / graph.fps
    if between:
        stacked = np.zeros(count)
        for other in range(len(graph.clip_frames)):
            picked = mine & (to == other)
            if other != clip and picked.any():
                counts = _counts(graph.sources[picked] - first, count)
                ax.bar(seconds, counts, width=1 / graph.fps, bottom=stacked, color=_colour(other),
                       label=plain(graph.clip_names[other]))
                stacked += counts
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6, loc="upper right", title="to", title_fontsize=6)
    else:
        if len(chosen) == 2:
            mine &= to == chosen[1 - chosen.index(clip)]
        ax.bar(seconds, _counts(graph.sources[mine] - first, count), width=1 / graph.fps, color="tab:blue")
    dead = ~graph.alive[first:first + count]
    if dead.any():
        ax.fill_between(seconds, 0, 1, where=dead, transform=ax.get_xaxis_transform(), color="0.85", step="mid")
    ax.set_xlim(0, count / graph.fps)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_ylabel("count", fontsize=8)
    ax.set_title(graph.clip_names[clip], fontsize=8, loc="left", parse_math=False)


def plain(text: str) -> str:
    """``text`` shown as it is where matplotlib would read ``$...$`` as a formula (legends, tick labels)."""
    return text.replace("$", r"\$")


def _colour(clip: int) -> str:
    """One colour per clip, the same in every panel."""
    return f"C{clip % 10}"


def _counts(frames: IntArray, count: int) -> IntArray:
    return np.bincount(frames, minlength=count)


def _matrix(graph: MotionGraph, ax: Any) -> None:
    """Every transition as (from, to) over the global frames; clip bounds as lines, dead frames shaded."""
    total = graph.frame_count
    seconds = 1 / graph.fps
    colours = ax.scatter(graph.sources * seconds, graph.targets * seconds, c=graph.costs, s=4, cmap="viridis_r",
                         vmin=0, vmax=max(float(graph.costs.max(initial=0)), 1e-9))
    ax.figure.colorbar(colours, ax=ax, label="cost D(i, j-1)", shrink=0.8)
    for offset in graph.offsets[1:]:
        ax.axvline(offset * seconds, color="0.6", lw=0.6)
        ax.axhline(offset * seconds, color="0.6", lw=0.6)
    dead = ~graph.alive
    if dead.any():
        ax.fill_between(np.arange(total) * seconds, 0, 1, where=dead, transform=ax.get_xaxis_transform(),
                        color="0.9", step="mid", zorder=0)
    middles = (graph.offsets + graph.clip_frames / 2) * seconds
    names = [plain(name[:18]) for name in graph.clip_names]
    ax.set_xticks(middles, names, rotation=60, ha="right", fontsize=6)
    ax.set_yticks(middles, names, fontsize=6)
    ax.set_xlim(0, total * seconds)
    ax.set_ylim(0, total * seconds)
    ax.set_xlabel("from frame i")
    ax.set_ylabel("to frame j")
    ax.set_title(f"{len(graph.sources)} transitions, {graph.alive.mean():.1%} of frames kept", fontsize=9)
