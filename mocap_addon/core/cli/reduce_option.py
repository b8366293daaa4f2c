"""``--reduce TOLERANCE``, as every command that writes a motion offers it (canonical, retarget, blend,
graph synth, batch): the written motion is what the reduced keys play back."""

from __future__ import annotations

import argparse

from ..pose import Motion
from ..reduce import played_back, reduce_keys
from .numbers import tolerance

REDUCE_HELP = ("keep only the keys an import with Reduce Keys at TOLERANCE keeps (a fraction of the figure's "
               "height) and write what they play back: a file holds every frame, so the written motion is the "
               "reduced keys interpolated as Blender plays them (quaternions nlerped, positions lerped); "
               "off by default")


def add_reduce_option(parser: argparse.ArgumentParser, help: str = REDUCE_HELP) -> None:
    """Add ``--reduce TOLERANCE`` to a command's parser."""
    parser.add_argument("--reduce", type=tolerance, metavar="TOLERANCE", help=help)


def reduced(result: Motion, tolerance: float | None) -> tuple[Motion, str]:
    """``result`` as its keys reduced at ``tolerance`` play back (:func:`.reduce.played_back`), with the
    figures for the report line; ``result`` itself with no tolerance."""
    if tolerance is None:
        return result, ""
    reduction = reduce_keys(result, tolerance)
    return played_back(result, reduction.frames), f"; {reduction.summary()}"
