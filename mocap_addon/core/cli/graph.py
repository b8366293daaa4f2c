"""The ``graph`` command of ``python -m mocap_addon.core``: build, describe, walk and draw motion graphs.

    graph build FILES_OR_FOLDERS... -o graph.npz [--fps --sigma --nu --threshold --min-gap --no-contacts
                --scheduler local|ADDRESS ...]
    graph add graph.npz FILES... [-o bigger.npz]
    graph info graph.npz
    graph synth graph.npz FILES... -o out.bvh --frames N [--seed --blend --start --onto RIG_FILE --reduce TOL]
    graph follow graph.npz FILES... --path path.csv -o out.bvh [--seed --blend --min-interval --plot PNG
                 --onto RIG_FILE --reduce TOL]
    graph plot graph.npz out.png [--kind per_frame|between|matrix] [--clips NAME_OR_INDEX...]
    graph plot graph.npz out.png --kind path --path path.csv --files FILES... [--seed]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from ..batch.plan import takes_in
from ..formats import load, save
from ..model import Clip
from ..rotations import FloatArray
from ..transitions.graph import MotionGraph, build, load_graph
from ..transitions.graph_file import GraphFileError
from ..transitions.plots import PLOT_KINDS
from . import numbers
from .options import add_precision
from .reduce_option import add_reduce_option, reduced


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``graph`` and its subcommands to the main parser's ``commands``."""
    graph = commands.add_parser("graph", help="motion graphs: transitions between clips, new motion from them")
    actions = graph.add_subparsers(dest="graph_command", required=True)
    making = actions.add_parser("build", help="match FILES (any formats and skeletons; folders: every take in "
                                "them, recursively) and write the graph")
    making.add_argument("files", nargs="+")
    making.add_argument("-o", "--output", required=True, help="the graph file (.npz)")
    making.add_argument("--fps", type=numbers.positive_length,
                        help="frame rate of the graph (default: the first file's)")
    making.add_argument("--sigma", type=numbers.positive_length, default=3.0, help="P = exp(-D / sigma) (default 3)")
    making.add_argument("--nu", type=numbers.length, default=2.0, help="weight of velocities in D (default 2)")
    making.add_argument("--threshold", type=numbers.fraction, default=0.9, help="lowest P kept (default 0.9)")
    making.add_argument("--min-gap", type=numbers.length, default=0.5,
                        help="seconds between the two frames of a transition within one clip (default 0.5)")
    making.add_argument("--no-contacts", action="store_true", help="do not compare the feet's contacts")
    making.add_argument("--all-similar", action="store_true",
                        help="keep every transition, not only the best of similar ones")
    making.add_argument("--keep-dead-ends", action="store_true",
                        help="keep every frame, not only the largest strongly connected part")
    making.add_argument("--scheduler", metavar="local|ADDRESS",
                        help="match on Dask: a local cluster, or the scheduler at ADDRESS (needs SciPy and Dask)")
    adding = actions.add_parser("add", help="match more FILES into a graph (the same as building with them)")
    adding.add_argument("graph")
    adding.add_argument("files", nargs="+")
    adding.add_argument("-o", "--output", help="write here (default: over the graph)")
    info = actions.add_parser("info", help="clips, frames kept, transitions per clip pair, dead ends")
    info.add_argument("graph")
    synth = actions.add_parser("synth", help="new motion walking the graph, on the canonical skeleton")
    synth.add_argument("graph")
    synth.add_argument("files", nargs="+", help="the graph's files, in its order")
    synth.add_argument("-o", "--output", required=True, help="the motion file (format from the extension)")
    synth.add_argument("--frames", type=numbers.synth_frames, required=True,
                       help=f"frames written (1 to {numbers.MAX_SYNTH_FRAMES})")
    synth.add_argument("--seed", type=numbers.seed, help="the same seed gives the same motion")
    synth.add_argument("--blend", type=numbers.blend_frames, default=5,
                       help="frames each transition is blended over, at least 0.2 s (default 5)")
    synth.add_argument("--start", type=numbers.frame_index, default=0, help="global frame to start from (default 0)")
    synth.add_argument("--onto", metavar="RIG_FILE", help="retarget the result onto this file's skeleton")
    add_precision(synth)
    add_reduce_option(synth)
    along = actions.add_parser("follow", help="new motion walking a ground path, on the canonical skeleton")
    along.add_argument("graph")
    along.add_argument("files", nargs="+", help="the graph's files, in its order")
    along.add_argument("--path", required=True, help="CSV of x,z ground points in metres")
    along.add_argument("-o", "--output", required=True, help="the motion file (format from the extension)")
    add_follow_options(along)
    along.add_argument("--plot", metavar="PNG", help="also draw the followed path over the asked one")
    along.add_argument("--onto", metavar="RIG_FILE", help="retarget the result onto this file's skeleton")
    add_precision(along)
    add_reduce_option(along)
    drawing = actions.add_parser("plot", help="the thesis's graphs as a PNG (needs matplotlib)")
    drawing.add_argument("graph")
    drawing.add_argument("output")
    drawing.add_argument("--kind", choices=(*PLOT_KINDS, "path"), default="per_frame",
                         help="path: follow --path with --files and draw the followed path over it")
    drawing.add_argument("--clips", nargs="+", help="clips by name or index (default: all)")
    drawing.add_argument("--path", help="with --kind path: CSV of x,z ground points in metres")
    drawing.add_argument("--files", nargs="+", help="with --kind path: the graph's files, in its order")
    add_follow_options(drawing)


def add_follow_options(parser: argparse.ArgumentParser) -> None:
    """The settings of :func:`.transitions.follow`."""
    parser.add_argument("--seed", type=numbers.seed, default=0, help="picks among the best starting frames (default 0)")
    parser.add_argument("--blend", type=numbers.blend_frames, default=5,
                        help="frames each transition is blended over, at least 0.2 s (default 5)")
    parser.add_argument("--min-interval", type=numbers.length, default=1.0,
                        help="seconds between transitions at least (default 1)")


def run(args: argparse.Namespace) -> None:
    """Carry out a parsed ``graph`` command (errors propagate as ``ValueError``, ``OSError`` ...)."""
    if args.graph_command == "build":
        started = time.perf_counter()
        graph = build([load(path) for path in takes(args.files)], fps=args.fps, sigma=args.sigma, nu=args.nu,
                      threshold=args.threshold, min_gap=args.min_gap, contacts=not args.no_contacts,
                      local_maxima=not args.all_similar, strongly_connected=not args.keep_dead_ends,
                      scheduler=args.scheduler)
        graph.save(args.output)
        print(f"{args.output}: {len(graph.clip_names)} clips, {graph.frame_count} frames at {graph.fps:g} fps, "
              f"{len(graph.sources)} transitions, {graph.alive.mean():.1%} of frames kept "
              f"({time.perf_counter() - started:.1f} s)")
    elif args.graph_command == "add":
        graph = load_graph(args.graph)
        for path in args.files:
            graph.add(load(path))
        graph.save(args.output or args.graph)
        print(f"{args.output or args.graph}: {len(graph.clip_names)} clips, {graph.frame_count} frames, "
              f"{len(graph.sources)} transitions, {graph.alive.mean():.1%} of frames kept")
    elif args.graph_command == "info":
        print(describe(load_graph(args.graph), args.graph))
    elif args.graph_command == "synth":
        from ..retarget.transfer import retarget
        from ..transitions.synthesis import synthesize

        graph = load_graph(args.graph)
        clips = graph_clips(graph, args.graph, args.files)
        result = synthesize(graph, clips, frames=args.frames, start=args.start,
                            seed=args.seed, blend_frames=args.blend)
        transitions = result.metadata["transitions"]
        between = sum(int(graph.clip_of(a)) != int(graph.clip_of(b)) for _, a, b in transitions)
        if args.onto:
            result = retarget(result, load(args.onto))
        result, keys = reduced(result, args.reduce)
        save(result, args.output, precision=args.precision)
        print(f"{args.output}: {result.frame_count} frames, {len(transitions)} transitions ({between} between clips)"
              + (f", on {args.onto}'s skeleton" if args.onto else ", canonical skeleton") + keys)
    elif args.graph_command == "follow":
        from ..retarget.transfer import retarget

        graph = load_graph(args.graph)
        result, asked = followed(graph, args.files, args.path, args)
        if args.plot:
            from ..transitions.plots import plot_path

            plot_path(graph, result, asked, args.plot)
        distance = result.metadata["path_error"]
        transitions = len(result.metadata["transitions"])
        seconds = result.metadata["search_seconds"]
        if args.onto:
            result = retarget(result, load(args.onto))
        result, keys = reduced(result, args.reduce)
        save(result, args.output, precision=args.precision)
        print(f"{args.output}: {result.frame_count} frames, {transitions} transitions, hips from the path: mean "
              f"{distance['mean']:.3f} m, max {distance['max']:.3f} m, end {distance['end']:.3f} m "
              f"(search {seconds:.2f} s)"
              + (f", on {args.onto}'s skeleton" if args.onto else ", canonical skeleton") + keys)
    elif args.kind == "path":
        from ..transitions.plots import plot_path

        if not args.path or not args.files:
            raise ValueError("--kind path needs --path and --files")
        graph = load_graph(args.graph)
        result, asked = followed(graph, args.files, args.path, args)
        plot_path(graph, result, asked, args.output)
        print(f"{args.output}: path")
    else:
        from ..transitions.plots import plot

        plot(load_graph(args.graph), args.output, kind=args.kind, clips=args.clips)
        print(f"{args.output}: {args.kind}")


def takes(paths: list[str]) -> list[str]:
    """The files named, folders replaced by every take in them (recursive, sorted by path)."""
    found: list[str] = []
    for path in paths:
        found += [take for take, _ in takes_in(path)] if os.path.isdir(path) else [path]
    if not found:
        raise ValueError(f"no motion files in {', '.join(paths)}")
    return found


def graph_clips(graph: MotionGraph, graph_path: str, files: list[str]) -> list[Clip]:
    """The clips of ``files``, checked to be ``graph``'s own in its order (else a :class:`GraphFileError` on
    the graph file ``graph_path``: the CLI's exit status 2)."""
    clips = [load(path) for path in files]
    try:
        graph.check_clips(clips)
    except ValueError as error:
        raise GraphFileError(str(error), graph_path) from None
    return clips


def followed(graph: MotionGraph, files: list[str], path: str, args: argparse.Namespace) -> tuple[Clip, FloatArray]:
    """:func:`.transitions.follow` of the CSV ``path`` on ``graph`` and its ``files``, and the path read."""
    from ..transitions.path_following import follow, read_path

    asked = read_path(path)
    return follow(graph, graph_clips(graph, args.graph, files), asked, seed=args.seed, blend_frames=args.blend,
                  min_interval=args.min_interval), asked


def _setting(value: object) -> str:
    """A graph setting as typed (a threshold kept as float32 is 0.9, not 0.8999999761581421)."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def describe(graph: MotionGraph, path: str) -> str:
    """Clips, frames kept, transitions per clip pair and dead ends of a graph, as text."""
    settings = graph.params
    kept = graph.alive
    between = int(np.sum(graph.clip_of(graph.sources) != graph.clip_of(graph.targets)))
    lines = [f"file:        {path}",
             f"frames:      {graph.frame_count} at {graph.fps:g} fps in {len(graph.clip_names)} clips, "
             f"{int(kept.sum())} kept ({kept.mean():.1%})",
             f"transitions: {len(graph.sources)} ({between} between clips)",
             "settings:    " + ", ".join(f"{k} {_setting(settings[k])}" for k in (
                 "sigma", "nu", "threshold", "min_gap", "contacts", "local_maxima", "strongly_connected")),
             "clips:       frames, kept, feet planted (left, right)"]
    for index, (name, first, count) in enumerate(zip(graph.clip_names, graph.offsets, graph.clip_frames)):
        span = slice(int(first), int(first + count))
        planted = graph.contacts[span].mean(axis=0) if count else np.zeros(2)
        lines.append(f"  {index:3d} {name}: {count}, {kept[span].mean():.1%}, {planted[0]:.0%} {planted[1]:.0%}")
    lines.append("transitions per clip pair (from row to column):")
    counts = np.zeros((len(graph.clip_names),) * 2, dtype=np.int64)
    np.add.at(counts, (graph.clip_of(graph.sources), graph.clip_of(graph.targets)), 1)
    lines += [f"  {index:3d} " + " ".join(f"{n:5d}" for n in row) for index, row in enumerate(counts)]
    last = np.zeros(graph.frame_count, dtype=bool)
    last[graph.clip_ends - 1] = True
    plays_on = ~last & np.append(kept[1:], False)
    stuck = kept & ~plays_on & ~np.isin(np.arange(graph.frame_count), graph.sources)
    lines.append(f"dead ends:   {int(stuck.sum())} kept frames without a way on; {int((~kept).sum())} frames "
                 f"outside the kept part" + ("" if settings["strongly_connected"] else " (dead ends not pruned)"))
    return "\n".join(lines)
