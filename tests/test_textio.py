"""Numbers written as text: the numpy formatter against Python's own ``%`` formatting."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core.formats.textio import format_rows


def percent_formatted(values: np.ndarray, precision: int) -> str:
    # Rounded first (no "-0.000") only where that is exact: np.round would move 1e20 by an ulp.
    exact = np.abs(values) < 2.0 ** 52 / 10 ** precision
    rounded = np.where(exact, np.round(values, precision), values) + 0.0
    row = " ".join([f"%.{precision}f"] * values.shape[1]) + "\n"
    return (row * values.shape[0]) % tuple(rounded.ravel().tolist())


@pytest.mark.parametrize("precision", range(13))
def test_same_text_as_percent_formatting(precision):
    rng = np.random.default_rng(precision)
    step = 10.0 ** -precision
    values = np.concatenate([rng.uniform(-1000, 1000, (300, 7)), rng.normal(0, 1e-5, (50, 7)), np.zeros((5, 7)),
                             -np.zeros((5, 7)), rng.uniform(-0.5, 0.5, (40, 7)) * step,  # round to (-)0
                             np.full((3, 7), 0.5 * step), np.full((3, 7), -9.5 * step),  # halves
                             rng.uniform(-9.99, 9.99, (20, 7))])
    values[0, 0], values[1, 1], values[2, 2] = 99999.5, -123456.789, 999.9999999
    for part in (values, values[:, :1], values[:1], values[:0]):
        assert format_rows(part, precision) == percent_formatted(part, precision)
    huge = values.copy()
    huge[3, 3] = 1e20  # beyond exact integers: formatted by % instead
    assert format_rows(huge, precision) == percent_formatted(huge, precision)
