"""Command line: ``python -m mocap_addon.core info FILE``, ``convert IN OUT``, ``map FILE``,
``canonical IN OUT``, ``retarget IN --onto SKELETON_FILE OUT``, ``blend A B OUT``, ``reduce FILE``,
``graph build|info|synth|plot`` (:mod:`.graph`), ``batch INPUT... -o OUT_DIR --to FORMAT``
(:mod:`.batch`) and ``preview FILE OUT.png``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from ..body.stature import in_unit
from ..errors import MissingDependency, MocapFormatError
from ..formats import format_of, load, save, unit_note
from ..model import Clip, rotation_order
from ..options import ALIGNMENT, BONE_LENGTHS, CANONICAL_FEET, CANONICAL_METHOD, FEET, HIPS_TRAVEL, ROOT_PATH
from ..pose import Motion
from ..reduce import DEFAULT_TOLERANCE, reduce_keys
from ..transitions.graph_file import GraphFileError
from . import graph as graph_commands
from . import numbers
from .batch import add_batch_command, batch_command
from .options import add_choice, add_precision, add_unit
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


Commands = argparse._SubParsersAction


def _add_info(commands: Commands) -> None:
    info = commands.add_parser("info", help="print joints, hierarchy, frames, fps and channel layouts")
    info.add_argument("file")
    info.set_defaults(run=lambda args: print(describe(load(args.file), args.file)))


def _add_convert(commands: Commands) -> None:
    convert = commands.add_parser("convert", help="read IN and write OUT (format from OUT's extension)")
    convert.add_argument("input")
    convert.add_argument("output")
    add_precision(convert)
    add_unit(convert, "length of one input unit")
    convert.set_defaults(run=_convert)


def _convert(args: argparse.Namespace) -> None:
    clip = in_unit(load(args.input), args.unit)
    save(clip, args.output, precision=args.precision)
    print(f"{args.input} -> {args.output}: {clip.skeleton.joint_count} joints, {clip.frame_count} frames")
    for warning in clip.metadata.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)
    for said in clip.metadata.get("notes", []):
        print(f"note: {said}")
    note = unit_note(clip, format_of(args.output))
    if note:
        print(f"unit: {note}")


def _add_reduce(commands: Commands) -> None:
    reduce = commands.add_parser("reduce", help="how many keys an import keeps with key reduction, "
                                                "and the worst error measured")
    reduce.add_argument("file")
    reduce.add_argument("--tolerance", type=numbers.tolerance, default=DEFAULT_TOLERANCE,
                        help=f"bound on every bone's head and tail, as a fraction of the figure's "
                             f"height (default {DEFAULT_TOLERANCE})")
    reduce.set_defaults(run=lambda args: print(reduction_report(load(args.file), args.file, args.tolerance)))


def _add_map(commands: Commands) -> None:
    mapping = commands.add_parser("map", help="print each joint's canonical joint and the rule that chose it")
    mapping.add_argument("file")
    mapping.add_argument("--preset", help="a built-in convention (e.g. mixamo, rigify) or a preset JSON file")
    mapping.set_defaults(run=_map)


def _map(args: argparse.Namespace) -> None:
    from ..naming import mapping_report

    print(mapping_report(load(args.file).skeleton, preset=args.preset))


def _add_canonical(commands: Commands) -> None:
    canonical = commands.add_parser("canonical", help="put IN on the canonical skeleton (metres, Y up) as OUT")
    canonical.add_argument("input")
    canonical.add_argument("output")
    for choice in (CANONICAL_METHOD, BONE_LENGTHS, CANONICAL_FEET):
        add_choice(canonical, choice)
    add_precision(canonical)
    add_reduce_option(canonical)
    canonical.set_defaults(run=_canonical)


def _canonical(args: argparse.Namespace) -> None:
    from ..retarget.transfer import to_canonical

    result = to_canonical(load(args.input), method=args.method, lengths=args.lengths, feet=args.feet)
    _write(result, args, args.input)


def _add_retarget(commands: Commands) -> None:
    onto = commands.add_parser("retarget", help="IN's motion on the skeleton of SKELETON_FILE, written as OUT")
    onto.add_argument("input")
    onto.add_argument("--onto", required=True, metavar="SKELETON_FILE",
                      help="any motion file (its first frame gives bone vectors its offsets lack)")
    onto.add_argument("output")
    for choice in (HIPS_TRAVEL, FEET):
        add_choice(onto, choice)
    add_precision(onto)
    add_reduce_option(onto)
    onto.set_defaults(run=_retarget)


def _retarget(args: argparse.Namespace) -> None:
    from ..retarget.transfer import retarget

    result = retarget(load(args.input), load(args.onto), root=args.root, feet=args.feet)
    _write(result, args, args.input)


def _add_blend(commands: Commands) -> None:
    mixing = commands.add_parser("blend", help="the motion between clips A and B (on A's skeleton) as OUT")
    mixing.add_argument("a")
    mixing.add_argument("b", help="on A's skeleton or another (then retargeted onto A's first)")
    mixing.add_argument("output")
    mixing.add_argument("--mix", type=numbers.mix, default=0.5,
                        help="0 is A, 1 is B (default 0.5; -1 to 2 extrapolates)")
    mixing.add_argument("--offset", type=numbers.frame_offset, default=0,
                        help="B's frame f + OFFSET pairs with A's frame f")
    for choice in (ALIGNMENT, ROOT_PATH, FEET):
        add_choice(mixing, choice)
    mixing.add_argument("--mask", help="only these joints take the mix: upper_body, lower_body, left_arm, "
                                       "right_arm or spine_head")
    add_precision(mixing)
    add_reduce_option(mixing)
    mixing.set_defaults(run=_blend)


def _blend(args: argparse.Namespace) -> None:
    from ..blend.mixing import blend

    result = blend(load(args.a), load(args.b), args.mix, offset=args.offset, align=args.align,
                   root=args.root, mask=args.mask, feet=args.feet)
    _write(result, args, f"{args.a} + {args.b} ({args.mix:g})")


def _write(result: Motion, args: argparse.Namespace, made_from: str) -> None:
    """Save a command's result (its keys reduced if asked) and print what was written and any warnings."""
    motion, keys = reduced(result, args.reduce)
    clip = motion if isinstance(motion, Clip) else motion.to_clip()
    save(clip, args.output, precision=args.precision)
    print(f"{made_from} -> {args.output}: {clip.skeleton.joint_count} joints, {clip.frame_count} frames{keys}")
    for warning in clip.metadata.get("warnings", []):
        print(f"warning: {warning}")


def _add_preview(commands: Commands) -> None:
    look = commands.add_parser("preview", help="a PNG contact sheet of FILE: six frames from the side and the "
                                               "front, on its floor (needs matplotlib)")
    look.add_argument("file")
    look.add_argument("output", metavar="OUT.png")
    look.set_defaults(run=_preview)


def _preview(args: argparse.Namespace) -> None:
    from ..batch.preview import contact_sheet

    contact_sheet(load(args.file), args.output, title=os.path.basename(args.file))
    print(f"{args.file} -> {args.output}")


def _add_graph(commands: Commands) -> None:
    graph_commands.add_parser(commands)
    commands.choices["graph"].set_defaults(run=graph_commands.run)


COMMANDS = (_add_info, _add_convert, _add_reduce, _add_map, _add_canonical, _add_retarget, _add_blend, _add_graph,
            add_batch_command, _add_preview)


class OneLineErrors(argparse.ArgumentParser):
    """A parser (and, through ``add_subparsers``, its commands' parsers) whose argument errors are one line
    on stderr, ``PROG: error: ... (see --help)``, and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parser() -> argparse.ArgumentParser:
    """The command line: each command's parser added by its own function (:data:`COMMANDS`)."""
    made = OneLineErrors(prog="python -m mocap_addon.core", description="Inspect and convert motion capture files.")
    commands = made.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(commands)
    return made


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "batch":
        return batch_command(args)
    try:
        args.run(args)
    except (MissingDependency, GraphFileError) as error:  # before ImportError and ValueError, their bases
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # before OSError, its base: the reader stopped (`... | head`); __main__ ends quietly
        raise
    except (MocapFormatError, OSError, ValueError, ImportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
