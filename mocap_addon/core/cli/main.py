"""Command line: ``python -m mocap_addon.core info FILE``, ``convert IN OUT``, ``map FILE``,
``canonical IN OUT``, ``retarget IN --onto SKELETON_FILE OUT``, ``blend A B OUT``, ``reduce FILE``,
``graph build|info|synth|plot`` (:mod:`.graph_commands`), ``batch INPUT... -o OUT_DIR --to FORMAT``
(:mod:`.batch`) and ``preview FILE OUT.png``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from ..errors import MissingDependency, MocapFormatError
from ..formats import format_of, load, save, unit_note
from ..model import Clip, rotation_order
from ..reduce import DEFAULT_TOLERANCE, reduce_keys
from ..retarget.root_motion import ROOT_MOTION
from ..transitions.graph_file import GraphFileError
from ..units import UNIT_CHOICES, UNITS_IN_METRES
from . import graph as graph_commands
from . import numbers
from .batch import add_batch_command, batch_command
from .reduce_option import add_reduce_option, reduced


def describe(clip: Clip, path: str) -> str:
    """A human-readable summary: hierarchy, channel layouts, frames, fps, duration."""
    skeleton = clip.skeleton
    depth: list[int] = []
    lines = [f"file:      {path}",
             f"format:    {format_of(path).lstrip('.').upper()}",
             f"joints:    {skeleton.joint_count} ({sum(p < 0 for p in skeleton.parents)} root(s), "
             f"{sum(len(e) for e in skeleton.end_sites)} end site(s))",
             f"frames:    {clip.frame_count} (first numbered {clip.start_frame})",
             f"fps:       {clip.fps:.6g} (frame time {clip.frame_time:.9g} s)",
             f"duration:  {clip.frame_count * clip.frame_time:.3f} s",
             f"channels:  {int(skeleton.channel_starts()[-1])}"]
    if clip.unit_in_metres is not None:
        lines.append(f"unit:      {clip.unit_in_metres:.9g} m")
    lines.append("hierarchy:")
    for joint, (name, parent) in enumerate(zip(skeleton.names, skeleton.parents)):
        depth.append(0 if parent < 0 else depth[parent] + 1)
        layout = skeleton.channels[joint]
        order = rotation_order(layout)
        detail = " ".join(layout) or "no channels"
        lines.append(f"  {'  ' * depth[joint]}{name}  [{detail}]" + (f" order {order}" if order else ""))
    lines += [f"warning:   {w}" for w in clip.metadata.get("warnings", [])]
    lines += [f"note:      {n}" for n in clip.metadata.get("notes", [])]
    return "\n".join(lines)


def reduction_report(clip: Clip, path: str, tolerance: float) -> str:
    """Keys before and after reduction (quaternion keys, as imported by default) and the worst error."""
    result = reduce_keys(clip, tolerance)
    height = result.height
    return "\n".join([
        f"{path}: {clip.skeleton.joint_count} joints, {clip.frame_count} frames, "
        f"figure height {height:.6g} file units",
        f"keys:      {result.keys_before} -> {result.keys_after} ({100 * result.kept_fraction:.1f} %)",
        f"bound:     {result.tolerance:.6g} ({tolerance:g} of the height)",
        f"worst:     {result.worst_error:.6g} ({result.worst_error / height:.3g} of the height), "
        f"bone heads and tails at every frame"])


class OneLineErrors(argparse.ArgumentParser):
    """A parser (and, through ``add_subparsers``, its commands' parsers) whose argument errors are one line
    on stderr, ``PROG: error: ... (see --help)``, and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrors(prog="python -m mocap_addon.core",
                                     description="Inspect and convert motion capture files.")
    commands = parser.add_subparsers(dest="command", required=True)
    info = commands.add_parser("info", help="print joints, hierarchy, frames, fps and channel layouts")
    info.add_argument("file")
    convert = commands.add_parser("convert", help="read IN and write OUT (format from OUT's extension)")
    convert.add_argument("input")
    convert.add_argument("output")
    convert.add_argument("--precision", type=numbers.precision, default=6, help="decimals written (default 6)")
    convert.add_argument("--unit", choices=tuple(UNIT_CHOICES),
                         help="length of one input unit, for files that state none (BVH) or state it wrongly")
    reduce = commands.add_parser("reduce", help="how many keys an import keeps with key reduction, "
                                                "and the worst error measured")
    reduce.add_argument("file")
    reduce.add_argument("--tolerance", type=numbers.tolerance, default=DEFAULT_TOLERANCE,
                        help=f"bound on every bone's head and tail, as a fraction of the figure's "
                             f"height (default {DEFAULT_TOLERANCE})")
    mapping = commands.add_parser("map", help="print each joint's canonical joint and the rule that chose it")
    mapping.add_argument("file")
    mapping.add_argument("--preset", help="a built-in convention (e.g. mixamo, rigify) or a preset JSON file")
    canonical = commands.add_parser("canonical", help="put IN on the canonical skeleton (metres, Y up) as OUT")
    canonical.add_argument("input")
    canonical.add_argument("output")
    canonical.add_argument("--method", choices=("rotations", "lengths"), default="rotations",
                           help="rotations: T-pose rest, joint rotations re-expressed (default); "
                                "lengths: the source's rest and rotations, canonical bone lengths")
    canonical.add_argument("--lengths", choices=("reference", "source"), default="reference",
                           help="bone lengths of the reference body (default) or of the source")
    canonical.add_argument("--feet", choices=("planted", "free"), default="free",
                           help="free: exact limb directions (default); planted: feet on the floor, held "
                                "while the source's are planted")
    canonical.add_argument("--precision", type=numbers.precision, default=6, help="decimals written (default 6)")
    add_reduce_option(canonical)
    onto = commands.add_parser("retarget", help="IN's motion on the skeleton of SKELETON_FILE, written as OUT")
    onto.add_argument("input")
    onto.add_argument("--onto", required=True, metavar="SKELETON_FILE",
                      help="any motion file (its first frame gives bone vectors its offsets lack)")
    onto.add_argument("output")
    onto.add_argument("--root", choices=("scale", "keep", *ROOT_MOTION), default="scale",
                      help="hips travel scaled by the leg-length ratio (default), kept, removed over the ground "
                           "(in_place) or carried by the bone above the hips (to_root_bone)")
    onto.add_argument("--feet", choices=("planted", "free"), default="planted",
                      help="planted: feet on the target's floor, held while the source's are planted "
                           "(default); free: exact limb directions")
    onto.add_argument("--precision", type=numbers.precision, default=6, help="decimals written (default 6)")
    add_reduce_option(onto)
    mixing = commands.add_parser("blend", help="the motion between clips A and B (on A's skeleton) as OUT")
    mixing.add_argument("a")
    mixing.add_argument("b", help="on A's skeleton or another (then retargeted onto A's first)")
    mixing.add_argument("output")
    mixing.add_argument("--mix", type=numbers.mix, default=0.5,
                        help="0 is A, 1 is B (default 0.5; -1 to 2 extrapolates)")
    mixing.add_argument("--offset", type=numbers.frame_offset, default=0,
                        help="B's frame f + OFFSET pairs with A's frame f")
    mixing.add_argument("--align", choices=("none", "scale", "dtw"), default="none",
                        help="frame by frame (default), B stretched to A's length, or dynamic time warping")
    mixing.add_argument("--root", choices=("blend", "a", "b", "heading"), default="heading",
                        help="the two paths mixed in their own heading frames from A's start (default), the "
                             "root blended like any joint, A's path or B's")
    mixing.add_argument("--feet", choices=("planted", "free"), default="planted",
                        help="planted: feet held where the clips' are planted, on A's floor (default); "
                             "free: joints mixed alone")
    mixing.add_argument("--mask", help="only these joints take the mix: upper_body, lower_body, left_arm, "
                                       "right_arm or spine_head")
    mixing.add_argument("--precision", type=numbers.precision, default=6, help="decimals written (default 6)")
    add_reduce_option(mixing)
    graph_commands.add_parser(commands)
    add_batch_command(commands)
    look = commands.add_parser("preview", help="a PNG contact sheet of FILE: six frames from the side and the "
                                               "front, on its floor (needs matplotlib)")
    look.add_argument("file")
    look.add_argument("output", metavar="OUT.png")
    args = parser.parse_args(argv)
    if args.command == "batch":
        return batch_command(args)
    try:
        if args.command == "info":
            print(describe(load(args.file), args.file))
        elif args.command == "reduce":
            print(reduction_report(load(args.file), args.file, args.tolerance))
        elif args.command == "map":
            from ..naming import mapping_report

            print(mapping_report(load(args.file).skeleton, preset=args.preset))
        elif args.command in ("canonical", "retarget"):
            from ..retarget.transfer import retarget, to_canonical

            clip = load(args.input)
            if args.command == "canonical":
                result = to_canonical(clip, method=args.method, lengths=args.lengths, feet=args.feet)
            else:
                result = retarget(clip, load(args.onto), root=args.root, feet=args.feet)
            result, keys = reduced(result, args.reduce)
            save(result, args.output, precision=args.precision)
            print(f"{args.input} -> {args.output}: {result.skeleton.joint_count} joints, "
                  f"{result.frame_count} frames{keys}")
            for warning in result.metadata.get("warnings", []):
                print(f"warning: {warning}")
        elif args.command == "graph":
            graph_commands.run(args)
        elif args.command == "preview":
            from ..batch.preview import contact_sheet

            contact_sheet(load(args.file), args.output, title=os.path.basename(args.file))
            print(f"{args.file} -> {args.output}")
        elif args.command == "blend":
            from ..blend.mixing import blend

            result = blend(load(args.a), load(args.b), args.mix, offset=args.offset, align=args.align,
                           root=args.root, mask=args.mask, feet=args.feet)
            result, keys = reduced(result, args.reduce)
            save(result, args.output, precision=args.precision)
            print(f"{args.a} + {args.b} ({args.mix:g}) -> {args.output}: {result.skeleton.joint_count} joints, "
                  f"{result.frame_count} frames{keys}")
            for warning in result.metadata.get("warnings", []):
                print(f"warning: {warning}")
        else:
            clip = load(args.input)
            if args.unit:
                clip.unit_in_metres = UNITS_IN_METRES[args.unit]
            save(clip, args.output, precision=args.precision)
            print(f"{args.input} -> {args.output}: {clip.skeleton.joint_count} joints, {clip.frame_count} frames")
            note = unit_note(clip, format_of(args.output))
            if note:
                print(f"unit: {note}")
    except (MissingDependency, GraphFileError) as error:  # before ImportError and ValueError, their bases
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # before OSError, its base: the reader stopped (`... | head`); __main__ ends quietly
        raise
    except (MocapFormatError, OSError, ValueError, ImportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0

