"""Command-line options built from the core's declarations (:mod:`..options`, :mod:`..units`), and the two
every writing command shares (``--precision``, ``--reduce``: :mod:`.reduce_option`)."""

from __future__ import annotations

import argparse

from ..options import READ_UNIT, Choice
from . import numbers

PRECISION = 6  # decimals a written file keeps unless told


def add_choice(parser: argparse.ArgumentParser, choice: Choice, default: str | None = "",
               help: str | None = None) -> None:
    """``--keyword`` offering ``choice``'s ids; ``default`` the choice's own unless given (``None``: no
    default, the tool decides); ``help`` before the ids' descriptions."""
    value = choice.default if default == "" else default
    text = choice.help(value)
    parser.add_argument("--" + choice.keyword.replace("_", "-"), choices=choice.ids, default=value,
                        help=f"{help}: {text}" if help else text)


def add_precision(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--precision", type=numbers.precision, default=PRECISION,
                        help=f"decimals written (default {PRECISION})")


def add_unit(parser: argparse.ArgumentParser, help: str) -> None:
    """``--unit`` offering the core's unit choices (:data:`..options.READ_UNIT`, default auto)."""
    add_choice(parser, READ_UNIT, help=help)
