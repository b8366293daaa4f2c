"""``python -m mocap_addon.core batch INPUT... -o OUT_DIR --to bvh|htr|amc [--canonical]
[--retarget-onto FILE] [--feet planted|free] [--reduce TOLERANCE] [--unit U] [--jobs N]
[--scheduler local|ADDRESS] [--report FILE] [--previews] [--force]``"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..batch.convert import DEFAULT_TIMEOUT, Settings
from ..batch.executors import machine_cores
from ..batch.plan import TARGETS
from ..batch.run import REPORT_NAME, BatchError, run_batch
from ..options import FEET
from . import numbers
from .options import add_choice, add_unit
from .reduce_option import add_reduce_option


def add_batch_command(commands: Any) -> None:
    """Add ``batch`` to the subcommands of ``python -m mocap_addon.core``."""
    batch = commands.add_parser(
        "batch", help="convert whole libraries in parallel; a rerun does only what is missing or changed",
        description="Convert every take of the INPUT files and folders (recursive) into OUT_DIR, mirroring "
                    "each take's path relative to its folder.  A manifest in OUT_DIR lets a rerun (after a "
                    "kill, say) do only what is missing or changed; the report has one JSON line per take.  "
                    "Exit status 1 if any take failed, 2 for bad arguments.")
    batch.add_argument("inputs", nargs="+", metavar="INPUT", help="motion files and folders of them")
    batch.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the folder written")
    batch.add_argument("--to", required=True, choices=TARGETS,
                       help="the format written (AMC takes with their ASF skeleton beside)")
    batch.add_argument("--canonical", action="store_true", help="put every take on the canonical skeleton")
    batch.add_argument("--retarget-onto", metavar="FILE", help="retarget every take onto FILE's skeleton")
    add_choice(batch, FEET, default=None, help="with --canonical or --retarget-onto (default: each one's own)")
    add_reduce_option(batch, help="write what an import with Reduce Keys at TOLERANCE (of the figure's height) "
                                  "plays back; the report gives the keys kept and the worst error")
    add_unit(batch, "length of one input unit, as convert --unit")
    batch.add_argument("--jobs", type=numbers.workers, default=None,
                       help=f"worker processes (default: the machine's cores, {machine_cores()} here)")
    batch.add_argument("--scheduler", metavar="local|ADDRESS",
                       help="run on Dask: a local cluster of --jobs workers, or the scheduler at ADDRESS "
                            "(tcp://host:8786; its workers must see the files)")
    batch.add_argument("--timeout", type=numbers.positive_length, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                       help=f"seconds a take may run before it is reported failed (default {DEFAULT_TIMEOUT:g})")
    batch.add_argument("--report", metavar="FILE", help=f"the JSONL report (default OUT_DIR/{REPORT_NAME})")
    batch.add_argument("--previews", action="store_true",
                       help="a PNG contact sheet per take (OUT_DIR/previews) and OUT_DIR/index.html")
    batch.add_argument("--force", action="store_true", help="redo every take, done or not")


def batch_command(args: argparse.Namespace) -> int:
    """Run ``batch``; the exit status."""
    problem = None
    if args.canonical and args.retarget_onto:
        problem = "--canonical and --retarget-onto: choose one"
    elif args.feet and not (args.canonical or args.retarget_onto):
        problem = "--feet applies to --canonical or --retarget-onto"
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    settings = Settings(to=args.to, canonical=args.canonical, retarget_onto=args.retarget_onto, feet=args.feet,
                        reduce=args.reduce, unit=args.unit)
    try:
        summary = run_batch(args.inputs, args.output, settings, jobs=args.jobs, scheduler=args.scheduler,
                            report=args.report, previews=args.previews, force=args.force, timeout=args.timeout)
    except BatchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: run again to finish (what is done stays done)", file=sys.stderr)
        return 130
    for line in summary.lines:
        if line["status"] == "error":
            print(f"failed: {line['input']}: {line['error']}", file=sys.stderr)  # the path: names repeat in folders
    print(summary)
    print(f"report: {args.report or os.path.join(args.output, REPORT_NAME)}")
    if args.previews:
        print(f"index:  {os.path.join(args.output, 'index.html')}")
    return 1 if summary.failed else 0
