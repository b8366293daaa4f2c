"""A small RGB canvas drawn with numpy: antialiased strokes with round caps, text from a TrueType
font, and the PNG file it makes (zlib + struct).  Cheap enough to draw a contact sheet per take in
a library batch (a few milliseconds where matplotlib's figure took a fifth of a second).

Text is rendered by matplotlib's FreeType wrapper (``matplotlib.ft2font``, the one optional
dependency, imported when text is first drawn) in the font matplotlib ships, each line once per
process and size (strings repeat across takes: labels, frame numbers).
"""

from __future__ import annotations

import functools
import os
import struct
import zlib
from typing import Any

import numpy as np

from ..formats.textio import atomic_write

DPI = 100  # pixels per inch: font sizes and stroke widths are given in points, as matplotlib's
WHITE = (255, 255, 255)

Colour = tuple[int, int, int]


def rgb(colour: str) -> Colour:
    """``"#rrggbb"`` as three bytes."""
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def points_to_pixels(points: float) -> float:
    return points * DPI / 72.0


class Canvas:
    """An RGB image of bytes (rows from the top), drawn on in painter's order; the blending is done in
    floating point on the pixels a stroke or a text touches only."""

    def __init__(self, width: int, height: int, background: Colour = WHITE) -> None:
        self.pixels = np.empty((height, width, 3), dtype=np.uint8)
        for channel, value in enumerate(background):  # a plain fill each (a broadcast colour copies slowly)
            self.pixels[..., channel].fill(value)
        self.inked = [width, height, 0, 0]  # the box drawn in: left, top, right, bottom (exclusive)

    def strokes(self, segments: np.ndarray, colours: np.ndarray, width: float) -> None:
        """Draw straight strokes ``segments`` ``(S, 2 ends, 2)`` (x right, y down, in pixels), ``width``
        pixels wide with round caps, each in its colour ``(S, 3)``, in order (later ones on top)."""
        segments = np.asarray(segments, dtype=np.float64).reshape(-1, 2, 2)
        colours = np.asarray(colours, dtype=np.float32).reshape(-1, 3)
        owner, pixel, cover = _stroke_pixels(segments, width / 2, self.pixels.shape[:2])
        if not len(pixel):
            return
        # Painter's order on each pixel, without a loop: each stroke's cover, dimmed by the strokes drawn
        # over it there (the product of their 1 - cover, summed as logarithms within the pixel's group).
        order = np.argsort(pixel, kind="stable")  # by pixel, then stroke order
        owner, pixel, cover = owner[order], pixel[order], np.minimum(cover[order], np.float32(1.0 - 1e-6))
        starts = np.flatnonzero(np.r_[True, pixel[1:] != pixel[:-1]])
        clear = np.log1p(-cover)
        running = np.cumsum(clear)
        total = np.add.reduceat(clear, starts)
        group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(pixel)]))
        before_group = (running[starts] - clear[starts])[group]
        over = total[group] - (running - before_group)  # the log of what the strokes after this one leave
        weight = (cover * np.exp(over))[:, None] * colours[owner]
        flat = self.pixels.reshape(-1, 3)
        shown = pixel[starts]
        blended = flat[shown] * np.exp(total)[:, None] + np.add.reduceat(weight, starts, axis=0)
        flat[shown] = np.clip(blended + 0.5, 0, 255).astype(np.uint8)
        columns, rows = shown % self.pixels.shape[1], shown // self.pixels.shape[1]
        self._grow(int(columns.min()), int(rows.min()), int(columns.max()) + 1, int(rows.max()) + 1)

    def text(self, x: float, y: float, line: str, size: float, colour: Colour, *, bold: bool = False,
             horizontal: str = "left", vertical: str = "top", upright: bool = False) -> None:
        """One line of text at ``(x, y)`` pixels, ``size`` points; ``horizontal`` left/center,
        ``vertical`` top/center (of the line's box); ``upright``: turned a quarter left (read bottom to top)."""
        ink = glyphs(line, size, bold)
        if upright:
            ink = np.rot90(ink)
        rows, columns = ink.shape
        left = round(x - (columns / 2 if horizontal == "center" else 0))
        top = round(y - (rows / 2 if vertical == "center" else 0))
        height, width = self.pixels.shape[:2]
        y0, y1, x0, x1 = max(top, 0), min(top + rows, height), max(left, 0), min(left + columns, width)
        if y0 >= y1 or x0 >= x1:
            return
        cover = ink[y0 - top:y1 - top, x0 - left:x1 - left, None] * np.float32(1 / 255)
        patch = self.pixels[y0:y1, x0:x1].astype(np.float32)
        patch += (np.asarray(colour, dtype=np.float32) - patch) * cover
        self.pixels[y0:y1, x0:x1] = (patch + 0.5).astype(np.uint8)
        self._grow(x0, y0, x1, y1)

    def _grow(self, left: int, top: int, right: int, bottom: int) -> None:
        box = self.inked
        box[:] = min(box[0], left), min(box[1], top), max(box[2], right), max(box[3], bottom)

    def cropped(self, margin: int) -> np.ndarray:
        """The part drawn in, with ``margin`` pixels around it (``(H, W, 3)`` bytes; all of it if blank)."""
        left, top, right, bottom = self.inked
        if left >= right:
            return self.pixels
        return self.pixels[max(top - margin, 0):bottom + margin, max(left - margin, 0):right + margin]


@functools.lru_cache(maxsize=4096)
def glyphs(line: str, size: float, bold: bool) -> np.ndarray:
    """``line`` rendered (coverage 0-255, rows from the top) in DejaVu Sans at ``size`` points."""
    font = _font(bold)
    font.set_size(size, DPI)
    font.set_text(line, 0.0)
    font.draw_glyphs_to_bitmap(antialiased=True)
    ink = np.array(font.get_image(), dtype=np.uint8)
    ink.setflags(write=False)
    return ink


@functools.lru_cache(maxsize=2)
def _font(bold: bool) -> Any:
    """matplotlib's DejaVu Sans (bold), as FreeType reads it."""
    import matplotlib
    from matplotlib.ft2font import FT2Font

    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return FT2Font(os.path.join(matplotlib.get_data_path(), "fonts", "ttf", name))


def _stroke_pixels(segments: np.ndarray, radius: float, shape: tuple[int, ...]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pixels each stroke touches, as (stroke, flat pixel index, cover 0-1) in stroke order: a band
    along each stroke's longer axis, a few pixels across, its cover from the pixel centre's distance
    to the segment (``radius`` + half a pixel of antialiasing; round caps)."""
    height, width = shape
    longer = np.abs(segments[:, 1, 1] - segments[:, 0, 1]) > np.abs(segments[:, 1, 0] - segments[:, 0, 0])
    along = np.where(longer[:, None, None], segments[..., ::-1], segments)  # (u along, v across)
    reach = radius + 1.0
    first = np.floor(along[:, :, 0].min(axis=1) - reach).astype(np.int64)
    count = np.ceil(along[:, :, 0].max(axis=1) + reach).astype(np.int64) - first
    owner = np.repeat(np.arange(len(segments)), count)  # one row per step along a stroke
    u = first[owner] + np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    start, span = along[owner, 0], along[owner, 1] - along[owner, 0]
    length2 = np.maximum((span ** 2).sum(axis=1), 1e-12)
    t = np.clip((u + 0.5 - start[:, 0]) / np.where(span[:, 0] == 0, 1.0, span[:, 0]), 0.0, 1.0)
    band = int(np.ceil((radius + 0.5) * np.sqrt(2.0))) + 1  # the pixels across a stroke at 45 degrees
    v = np.floor(start[:, 1] + t * span[:, 1]).astype(np.int64)[:, None] + np.arange(-band, band + 1)
    # each pixel centre's distance to its stroke, (steps, across), from the stroke's start
    off_u, off_v = (u + 0.5 - start[:, 0])[:, None], v + 0.5 - start[:, 1:2]
    t = np.clip((off_u * span[:, :1] + off_v * span[:, 1:]) / length2[:, None], 0.0, 1.0)
    cover = np.clip(radius + 0.5 - np.hypot(off_u - t * span[:, :1], off_v - t * span[:, 1:]), 0.0, 1.0)
    flip = longer[owner][:, None]
    x, y = np.where(flip, v, u[:, None]), np.where(flip, u[:, None], v)
    kept = (cover > 0) & (x >= 0) & (x < width) & (y >= 0) & (y < height)
    return np.broadcast_to(owner[:, None], v.shape)[kept], (y * width + x)[kept], cover[kept].astype(np.float32)


def png_bytes(image: np.ndarray) -> bytes:
    """An 8-bit RGB image ``(H, W, 3)`` as a PNG file's bytes (rows unfiltered: on thin lines over a
    flat ground they compress smaller than filtered by their left neighbours)."""
    image = np.ascontiguousarray(image, dtype=np.uint8)
    height, width, _ = image.shape
    rows = np.zeros((height, 1 + width * 3), dtype=np.uint8)  # each row: filter type 0, then its bytes
    rows[:, 1:] = image.reshape(height, -1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, truecolour, no interlace
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 3))
            + chunk(b"IEND", b""))


def write_png(path: str | os.PathLike[str], image: np.ndarray) -> None:
    """Write ``image`` as a PNG file (atomically: a temporary file renamed)."""
    atomic_write(os.fspath(path), png_bytes(image))
