"""Numeric command-line arguments, checked as they are parsed: a value that is not a finite number in
its range ends the command with argparse's one-line error and exit status 2."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from ..formats.textio import MAGNITUDE_LIMIT, WHOLE_NUMBER_LIMIT

MAX_PRECISION = 15  # decimals: a double holds 15 to 17 significant digits
MAX_SYNTH_FRAMES = 10_000_000  # frames one synthesis writes: 23 hours at 120 fps


def _shown(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def number(low: float, high: float, *, above: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number from ``low`` (excluded if ``above``) to ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(value) and (value > low if above else value >= low) and value <= high):
            raise argparse.ArgumentTypeError(f"must be a finite number {'above' if above else 'from'} "
                                             f"{_shown(low)}{'' if above else ' to'} "
                                             f"{'and at most ' if above else ''}{_shown(high)}, not {text}")
        return value
    return parse


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``."""
    def parse(text: str) -> int:
        stripped = text.strip()
        if not stripped.lstrip("+-").isascii() or not stripped.lstrip("+-").isdigit() or len(stripped) > 20:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number")
        value = int(stripped)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be a whole number from {low} to {high}, not {value}")
        return value
    return parse


tolerance = number(0.0, 1.0)  # a fraction of the figure's height
precision = whole_number(0, MAX_PRECISION)
positive_length = number(0.0, MAGNITUDE_LIMIT, above=True)  # a rate, a sigma: more than nothing
length = number(0.0, MAGNITUDE_LIMIT)
frame_offset = number(-WHOLE_NUMBER_LIMIT, WHOLE_NUMBER_LIMIT)
mix = number(-1.0, 2.0)  # 0 is A, 1 is B; a clip's distance beyond either extrapolates
fraction = number(0.0, 1.0)
synth_frames = whole_number(1, MAX_SYNTH_FRAMES)
frame_index = whole_number(0, WHOLE_NUMBER_LIMIT - 1)
blend_frames = whole_number(0, 10_000)
seed = whole_number(0, 2**63 - 1)
workers = whole_number(1, 1024)
