"""The fast decimal-table reader: bit for bit what float() gives, or None so the strict reader decides."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core.formats import table
from mocap_addon.core.formats.table import read_table


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


numbers = st.floats(min_value=-1e7, max_value=1e7, allow_nan=False)
separators = st.sampled_from([" ", "  ", "\t", " \t "])


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.lists(numbers, min_size=3, max_size=3), min_size=1, max_size=20),
       decimals=st.integers(0, 8), separator=separators, line_end=st.sampled_from(["\n", "\r\n"]),
       blank=st.booleans(), signs=st.booleans())
def test_every_value_is_what_float_reads(rows, decimals, separator, line_end, blank, signs):
    texts = [[f"{v:.{decimals}f}" for v in row] for row in rows]
    lines = [separator.join(("+" if signs and not t.startswith("-") else "") + t for t in row) for row in texts]
    if blank:
        lines.insert(len(lines) // 2, "")
    text = (line_end.join(lines) + line_end).encode()
    expected = np.array([[float(token) for token in line.split()] for line in lines if line.strip()])
    found = read_table(text, 0, 3)
    if found is None:  # only for mantissas the fast path does not take
        assert any(len(token.replace("-", "").replace("+", "").replace(".", "")) > 15
                   for line in lines for token in line.split())
        return
    assert same_bits(found, expected)


def test_large_tables_are_read_in_blocks_on_several_threads_exactly():
    values = np.random.default_rng(3).normal(scale=60.0, size=(20000, 24))
    values[::7, 3] = -0.0
    text = b"MOTION\n" + "\n".join(" ".join(f"{v:.6f}" for v in row) for row in values).encode() + b"\n"
    assert len(text) > 4 * table._BLOCK_BYTES
    found = read_table(text, len(b"MOTION\n"), 24)
    assert same_bits(found, np.loadtxt(io.BytesIO(text[len(b"MOTION\n"):])))


@pytest.mark.parametrize("text", [
    b"1 2\n3\n",  # short row
    b"1 2\n3 4 5\n",  # long row
    b"1.2.3 4\n",  # two points
    b"1e5 2\n",  # exponent
    b"nan 1\n", b"inf 1\n",
    b"- 2\n", b". 2\n",  # no digit
    b"1- 2\n", b"+-1 2\n",  # sign inside a number
    b"1\x0b2\n", b"1\x002\n",  # control characters np.loadtxt does not split on
    b"1234567890123456 1\n",  # 16 digits: not exact in the fast path
    b"1 2\r3 4\r",  # CR-only line ends
])
def test_anything_else_is_left_to_the_strict_reader(text):
    assert read_table(text, 0, 2) is None


def test_one_overlong_line_is_left_to_the_strict_reader():
    text = b"1 " * (table._LONGEST_BLOCK // 2 + 10) + b"\n"
    assert read_table(text, 0, 2) is None


def test_signs_points_and_blank_lines():
    found = read_table(b"\n\n-0.0 +.5\n\n12. -3\n7 -.25", 0, 2)
    assert same_bits(found, np.array([[-0.0, 0.5], [12.0, -3.0], [7.0, -0.25]]))


@pytest.mark.parametrize("rows", [None, 20000, 19000, 21000, 10**9])
def test_a_row_count_guess_changes_nothing(rows):
    """The count a header announces is only a hint: right, short, long or absurd, the values are the same."""
    values = np.random.default_rng(5).normal(scale=9.0, size=(20000, 6))
    text = "\n".join(" ".join(f"{v:.5f}" for v in row) for row in values).encode() + b"\n"
    assert same_bits(read_table(text, 0, 6, rows), np.loadtxt(io.BytesIO(text)))
