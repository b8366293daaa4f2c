"""The numpy canvas of the contact sheets (``core.batch.raster``): PNG files another reader reads back
exactly, strokes covering what their geometry covers, painter's order, text, the crop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core.batch.raster import Canvas, png_bytes, write_png

PIL = pytest.importorskip("PIL.Image")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_png_files_read_back_byte_for_byte_by_pillow(height, width, seed):
    image = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    image[: height // 2] = image[: height // 2, :1]  # flat runs as well as noise
    import io

    read = np.asarray(PIL.open(io.BytesIO(png_bytes(image))).convert("RGB"))
    np.testing.assert_array_equal(read, image)


def test_write_png_writes_the_file(tmp_path):
    image = np.zeros((3, 5, 3), dtype=np.uint8)
    image[1, 2] = (10, 200, 30)
    write_png(tmp_path / "dot.png", image)
    np.testing.assert_array_equal(np.asarray(PIL.open(tmp_path / "dot.png").convert("RGB")), image)
    assert not [p for p in tmp_path.iterdir() if p.name != "dot.png"]  # no temporary file left


def test_a_stroke_covers_its_length_times_width_plus_round_caps():
    canvas = Canvas(100, 60, background=(0, 0, 0))
    canvas.strokes(np.array([[[20.0, 30.0], [80.0, 30.0]]]), np.array([[255, 255, 255]]), 4.0)
    ink = canvas.pixels[..., 0] / 255.0
    assert ink.sum() == pytest.approx(60 * 4 + np.pi * 2**2, rel=0.03)
    assert ink[30, 50] == 1.0 and ink[30, 15] == 0.0 and ink[25, 50] == 0.0  # inside; past the cap; above
    rows = np.flatnonzero(ink[:, 50] > 0.5)
    assert rows.tolist() == [28, 29, 30, 31]  # 4 pixels wide, centred on y = 30
    # the same length along a diagonal covers as much
    slanted = Canvas(100, 100, background=(0, 0, 0))
    ends = np.array([[[30.0, 30.0], [30.0 + 60 / np.sqrt(2), 30.0 + 60 / np.sqrt(2)]]])
    slanted.strokes(ends, np.array([[255, 255, 255]]), 4.0)
    assert (slanted.pixels[..., 0] / 255.0).sum() == pytest.approx(ink.sum(), rel=0.03)


def test_later_strokes_lie_on_top_and_colours_blend_at_edges():
    canvas = Canvas(40, 40)
    across = np.array([[[5.0, 20.0], [35.0, 20.0]], [[20.0, 5.0], [20.0, 35.0]]])
    canvas.strokes(across, np.array([[0, 0, 255], [255, 0, 0]]), 3.0)
    assert canvas.pixels[20, 20].tolist() == [255, 0, 0]  # the red one, drawn last, at the crossing
    assert canvas.pixels[20, 10].tolist() == [0, 0, 255]
    canvas.strokes(across[:1], np.array([[0, 0, 255]]), 3.0)  # blue again, over the red
    assert canvas.pixels[20, 20].tolist() == [0, 0, 255]
    edge = canvas.pixels[18, 10]  # half covered: between white and blue
    assert 0 < edge[0] < 255 and edge[2] == 255


def test_text_is_drawn_in_its_colour_where_it_is_placed_and_the_crop_keeps_a_margin():
    pytest.importorskip("matplotlib")
    canvas = Canvas(300, 100)
    canvas.text(50, 40, "frame 120", 10, (200, 0, 0))
    inked = np.argwhere((canvas.pixels != 255).any(axis=2))
    (top, left), (bottom, right) = inked.min(axis=0), inked.max(axis=0)
    assert 40 <= top < 45 and 50 <= left < 53 and bottom < 60 and 100 < right < 130
    darkest = canvas.pixels[tuple(inked[np.argmin(canvas.pixels[tuple(inked.T)].sum(axis=1))])]
    assert darkest.tolist() == [200, 0, 0]
    cropped = canvas.cropped(5)  # the text's box (its ink and a pixel around it) and 5 pixels more
    ink_rows, ink_columns = bottom - top + 1, right - left + 1
    assert ink_rows + 10 <= cropped.shape[0] <= ink_rows + 12
    assert ink_columns + 10 <= cropped.shape[1] <= ink_columns + 12
    assert (cropped[:5] == 255).all() and (cropped[-5:] == 255).all() and (cropped[:, :5] == 255).all()
    upright = Canvas(100, 300)
    upright.text(50, 150, "frame 120", 10, (0, 0, 0), horizontal="center", vertical="center", upright=True)
    rows, columns = np.nonzero((upright.pixels != 255).any(axis=2))
    assert rows.ptp() > 3 * columns.ptp()  # read bottom to top
    assert abs((rows.min() + rows.max()) / 2 - 150) < 3 and abs((columns.min() + columns.max()) / 2 - 50) < 3
