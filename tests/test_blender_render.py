"""scripts/render_live.py renders the live mix headless: the figure and the highlighted envelope path show."""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

pytestmark = pytest.mark.blender

WIDTH, HEIGHT = 320, 180


def rgb(bpy, path) -> np.ndarray:
    """The PNG's pixels as (rows top-down, columns, rgb) floats in 0..1."""
    image = bpy.data.images.load(str(path))
    try:
        pixels = np.empty(image.size[0] * image.size[1] * 4, dtype=np.float32)
        image.pixels.foreach_get(pixels)
        return pixels.reshape(image.size[1], image.size[0], 4)[::-1, :, :3]
    finally:
        bpy.data.images.remove(image)


def hue_saturation(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    flat = pixels.reshape(-1, 3)
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in flat]).reshape(pixels.shape)
    return hsv[..., 0], hsv[..., 1]


def figure_box(bpy) -> tuple[tuple[int, int], tuple[int, int]]:
    """The pixel box (top-left, bottom-right) around the live rig's bones as the scene's camera sees them."""
    from bpy_extras.object_utils import world_to_camera_view

    scene, live = bpy.context.scene, bpy.data.objects["walk_turn_live"]
    ends = [live.matrix_world @ point for bone in live.pose.bones for point in (bone.head, bone.tail)]
    seen = np.array([world_to_camera_view(scene, scene.camera, point)[:2] for point in ends])
    pixels = seen * (WIDTH, HEIGHT)
    margin = 0.03 * HEIGHT  # the body's thickness around its bones
    (left, low), (right, high) = pixels.min(axis=0) - margin, pixels.max(axis=0) + margin
    return (int(left), int(HEIGHT - high)), (int(np.ceil(right)), int(np.ceil(HEIGHT - low)))


def share(mask: np.ndarray) -> float:
    return float(mask.mean())


def test_the_render_shows_the_figure_and_the_highlighted_path(addon, tmp_path):
    from mocap_addon.blender.tools.live import ENVELOPE_COLOURS
    from scripts.render_live import BODY_COLOUR, render_live

    bpy = addon
    try:
        (path,) = render_live(bpy, tmp_path, WIDTH, HEIGHT, mixes=(0.8,), frames=(40,))
    except RuntimeError as failure:  # no GPU context of any kind: nothing can be drawn here
        pytest.skip(f"Blender cannot render here: {failure}")
    pixels = rgb(bpy, path)
    assert pixels.shape == (HEIGHT, WIDTH, 3)
    hue, saturation = hue_saturation(pixels)
    body_hue = colorsys.rgb_to_hsv(*BODY_COLOUR[:3])[0] + 0.07  # the studio light turns the sage teal
    orange_hue, blue_hue = (colorsys.rgb_to_hsv(*colour[:3])[0] for colour in reversed(ENVELOPE_COLOURS))
    bright = pixels.max(axis=2) > 0.15
    skin = bright & (np.abs(hue - body_hue) < 0.09) & (saturation > 0.15)
    orange = bright & (np.abs(hue - orange_hue) < 0.05) & (saturation > 0.4)
    blue = bright & (np.abs(hue - blue_hue) < 0.05) & (saturation > 0.25)
    (left, top), (right, bottom) = figure_box(bpy)
    assert 0 <= left < right <= WIDTH and 0 <= top < bottom <= HEIGHT, "the camera sees the whole figure"
    inside = skin[top:bottom, left:right]
    assert share(inside) > 0.01, "the figure's body shows where its bones are"
    assert inside.sum() > 0.8 * skin.sum()  # and nowhere else
    assert share(orange) > 0.002, "the current mix's path shows"
    assert share(blue) > share(orange) / 4, "the other mixes' paths show"
    assert share(bright & ~skin & ~orange & ~blue) > 0.1  # floor and sky around them
