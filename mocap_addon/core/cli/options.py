"""Command-line options built from the core's declarations (:mod:`..options`, :mod:`..units`), and the two
every writing command shares (``--precision``, ``--reduce``: :mod:`.reduce_option`)."""

from __future__ import annotations

import argparse

from ..options import Choice
from ..units import UNIT_CHOICES
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
    """``--unit`` offering the core's unit choices, no default (the file's own unit)."""
    parser.add_argument("--unit", choices=tuple(UNIT_CHOICES), help=help)
