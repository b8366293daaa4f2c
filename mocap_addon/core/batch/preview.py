"""Contact sheets: a clip at six moments, from the side and from the front, as a stick figure
standing on its floor, with its name, frames and rate (a PNG drawn with numpy, its text in
matplotlib's font by matplotlib's FreeType renderer, an optional dependency imported when drawing).

The views follow the body as it stands in the first frame (its left from the right
leg to the left, up the file's up axis): the side view looks from the figure's right,
so it walks to the right; the front view looks at its face.  Each panel is centred
on the hips at that moment, all at one scale, and the floor is the lowest point the
body reaches in the clip.  Left limbs are blue, right limbs red, the rest grey, the
far side drawn first (sides from the bone-name mapping; all grey where nothing maps).
Joints above the hips (a ground node, say) are not drawn.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import MissingDependency
from ..formats.textio import atomic_write
from ..kinematics import end_site_positions, forward_kinematics
from ..model import Clip
from ..rotations import FloatArray
from ..transforms import rest_pose
from .raster import DPI, Canvas, glyphs, points_to_pixels, rgb, write_png

PREVIEW_EXTRA = 'pip install "mocap-addon[previews]" (or pip install matplotlib)'
MOMENTS = 6
FLOOR_SAMPLES = 600  # frames, spread over the clip, on which the floor is found
SIDECAR_FPS = 15  # frames a second of the library page's animations
SIDECAR_FRAMES = 240  # at most, spread over a long take
COLOURS = {"l": "#2b6cb0", "r": "#c53030", None: "#4a5568"}
TEXT, FAINT, FLOOR = "#1a202c", "#4a5568", "#a0aec0"


@dataclass
class StickFigures:
    """A clip's body at the drawn frames: bones as segments ``(P, S, 2, 3)`` with the joint each
    ends at (or whose end site it reaches) and its side, the hips ``(P, 3)``, and the lowest point
    over the clip along ``up``."""

    frames: np.ndarray  # indices of the drawn frames
    segments: FloatArray
    joints: list[int]
    sides: list[str | None]
    hips: FloatArray
    up: FloatArray
    left: FloatArray  # the body's left in the first drawn frame
    floor: float


def contact_sheet(clip: Clip, path: str | os.PathLike[str], *, title: str | None = None,
                  body: StickFigures | None = None) -> None:
    """Draw ``clip``'s contact sheet into the PNG file ``path`` (``title``: the source's name; ``body``:
    its :func:`stick_figures` if already posed)."""
    try:
        import matplotlib.ft2font  # noqa: F401  (its font renderer draws the text)
    except ImportError:
        raise MissingDependency(f"previews need matplotlib: {PREVIEW_EXTRA}") from None
    write_png(path, sheet_image(clip, title, body))


def sheet_image(clip: Clip, title: str | None = None, body: StickFigures | None = None) -> np.ndarray:
    """The contact sheet as RGB bytes ``(H, W, 3)``: six moments in two rows (side, front) of
    panels on one scale, each centred on the hips above its floor line, named and timed below."""
    body = body or stick_figures(clip)
    forward = np.cross(body.left, body.up)
    # (direction across the panel, direction away from the viewer, label) per view
    views = [(forward, body.left, "side"), (body.left, -forward, "front")]
    across = [(body.segments - body.hips[:, None, None]) @ axis for axis, _, _ in views]
    height = body.segments @ body.up - body.floor
    half = 1.1 * max(max(float(np.nanmax(np.abs(a), initial=0.0)) for a in across), 1e-9)
    tall = 1.08 * max(float(np.nanmax(height, initial=0.0)), half)
    step, lift = 2.2 * half, 1.25 * tall
    panels = len(body.frames)

    # The drawing's box: as wide as six panels need, a fixed height; the drawing keeps its proportions.
    width, tallness = round(max(1.75 * panels + 0.9, 6.0) * DPI), round(5.4 * DPI)
    box_left, box_width, box_bottom, box_height = 0.06 * width, 0.93 * width, 0.05 * tallness, 0.78 * tallness
    x_low, x_high = -0.7 * step, (panels - 0.5) * step
    y_low, y_high = -0.24 * tall, len(views) * lift - 0.1 * tall
    scale = min(box_width / (x_high - x_low), box_height / (y_high - y_low))
    bottom = tallness - box_bottom - (box_height - (y_high - y_low) * scale) / 2

    def pixels(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return box_left + (x - x_low) * scale, bottom - (y - y_low) * scale

    def pixel(x: float, y: float) -> tuple[float, float]:
        across, down = pixels(np.asarray(x), np.asarray(y))
        return float(across), float(down)

    headings = [(title or "clip", 13, rgb(TEXT), True, 0.05), (caption(clip), 10, rgb(FAINT), False, 0.115)]
    widest = max(glyphs(text, size, bold).shape[1] for text, size, _, bold, _ in headings)
    canvas = Canvas(max(width, round(0.02 * width) + widest + 1), tallness)  # a long name widens the sheet
    floors, lines, colours = [], [], []
    for view, (_, away, name) in enumerate(views):
        base = (len(views) - 1 - view) * lift
        centres = np.arange(panels) * step
        floors.append(np.stack([np.stack([centres - half, centres + half], axis=-1),
                                np.full((panels, 2), base)], axis=-1))
        # each panel's bones, the far side first
        order = np.argsort(-(body.segments.mean(axis=2) @ away), axis=1, kind="stable")
        shown_across = np.take_along_axis(across[view], order[..., None], axis=1) + centres[:, None, None]
        shown_height = np.take_along_axis(height, order[..., None], axis=1) + base
        lines.append(np.stack([shown_across, shown_height], axis=-1).reshape(-1, 2, 2))
        colours.append(_colours(body.sides)[order.ravel()])
        canvas.text(*pixel(-0.62 * step, base + tall / 2), name, 10, rgb(FAINT), horizontal="center",
                    vertical="center", upright=True)
    floor = np.concatenate(floors)
    canvas.strokes(np.stack(pixels(floor[..., 0], floor[..., 1]), axis=-1), np.full((len(floor), 3), rgb(FLOOR)),
                   points_to_pixels(1.0))
    bones = np.concatenate(lines)
    canvas.strokes(np.stack(pixels(bones[..., 0], bones[..., 1]), axis=-1), np.concatenate(colours),
                   points_to_pixels(1.6))
    line_step = 1.3 * points_to_pixels(8)
    for panel, row in enumerate(body.frames):
        label = ((f"frame {clip.start_frame + int(row)}", f"{row * clip.frame_time:.2f} s") if clip.frame_count
                 else ("rest",))
        x, y = pixel(panel * step, -0.05 * tall)
        for number, text in enumerate(label):
            canvas.text(x, y + number * line_step, text, 8, rgb(FAINT), horizontal="center")
    for text, size, colour, bold, top in headings:
        canvas.text(0.02 * width, top * tallness, text, size, colour, bold=bold)
    return canvas.cropped(round(0.2 * DPI))


def _colours(sides: list[str | None]) -> np.ndarray:
    """Each bone's colour by its side."""
    by_side = {side: rgb(colour) for side, colour in COLOURS.items()}
    return np.array([by_side[side] for side in sides], dtype=np.float32).reshape(-1, 3)


def caption(clip: Clip) -> str:
    """Frames, rate, duration and joints, in one line."""
    frames = clip.frame_count
    if not frames:
        return f"rest pose only (no frames)  ·  {clip.skeleton.joint_count} joints"
    return (f"{frames} frames at {clip.fps:.6g} fps  ·  {frames * clip.frame_time:.2f} s  ·  "
            f"{clip.skeleton.joint_count} joints")


def stick_figures(clip: Clip, moments: int = MOMENTS) -> StickFigures:
    """The body at ``moments`` frames spread from the first to the last (the rest pose for a clip
    without frames): bones from each joint's parent and to its end sites, from the hips down."""
    return stick_figures_at(clip, [moments])[0]


def stick_figures_at(clip: Clip, moments: Sequence[int]) -> list[StickFigures]:
    """:func:`stick_figures` for each count of ``moments``, the clip posed once for all of them."""
    from ..naming import canonical_side, map_skeleton

    skeleton = clip.skeleton
    mapping = map_skeleton(skeleton)
    named = {canonical: skeleton.names.index(name) for name, canonical in mapping.items() if canonical}
    heads, ends, everywhere, shown = _posed(clip, moments)
    hips = named.get("hips", 0)
    in_body = np.zeros(skeleton.joint_count, dtype=bool)
    sides: list[str | None] = []
    for joint, (name, parent) in enumerate(zip(skeleton.names, skeleton.parents)):
        in_body[joint] = joint == hips or (parent >= 0 and in_body[parent])
        canonical = mapping.get(name)
        side = canonical_side(canonical) if canonical else None
        sides.append(side or (sides[parent] if parent >= 0 else None))
    # every bone as (start, stop): joint origins and end sites side by side, indexed per bone
    points = np.concatenate([heads] + [ends[joint] for joint in range(skeleton.joint_count)], axis=1)
    site_columns = np.cumsum([skeleton.joint_count] + [ends[joint].shape[1] for joint in range(skeleton.joint_count)])
    starts, stops, owners = [], [], []
    for joint in map(int, np.flatnonzero(in_body)):
        if joint != hips:
            starts.append(skeleton.parents[joint])
            stops.append(joint)
            owners.append(joint)
        for site in range(ends[joint].shape[1]):
            starts.append(joint)
            stops.append(int(site_columns[joint]) + site)
            owners.append(joint)
    if not starts:  # the hips alone: a dot
        starts, stops, owners = [hips], [hips], [hips]
    up = np.zeros(3)
    axis = clip.up_axis.upper()
    up["XYZ".index(axis.lstrip("+-"))] = -1.0 if axis.startswith("-") else 1.0
    body_points = [heads[everywhere][:, in_body]] + [ends[j][everywhere] for j in np.flatnonzero(in_body)]
    floor = min(float(np.nanmin(p @ up, initial=np.inf)) for p in body_points)
    bones = np.stack([starts, stops], axis=-1)
    return [StickFigures(frames, points[drawn][:, bones], owners, [sides[joint] for joint in owners],
                         heads[drawn, hips], up, _left(heads[drawn[0]], named, up), floor)
            for frames, drawn in shown]


def _posed(clip: Clip, moments: Sequence[int]
           ) -> tuple[FloatArray, list[FloatArray], np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Joint origins ``(N, J, 3)`` and end sites (per joint ``(N, k, 3)``) at the frames needed, the rows
    of a spread over the whole clip (for the floor), and per count of ``moments`` the frames drawn with
    their rows."""
    skeleton = clip.skeleton
    frames = clip.frame_count
    if not frames:
        turns, origins = rest_pose(skeleton)
        ends = [(origins[j] + sites @ turns[j].T)[None] for j, sites in enumerate(skeleton.end_sites)]
        first = np.zeros(1, dtype=np.int64)
        return origins[None], ends, first, [(first, first) for _ in moments]
    drawn = [np.unique(np.linspace(0, frames - 1, min(count, frames)).round().astype(np.int64)) for count in moments]
    spread = np.linspace(0, frames - 1, min(FLOOR_SAMPLES, frames)).astype(np.int64)
    needed, rows = np.unique(np.concatenate([spread, *drawn]), return_inverse=True)
    part = Clip(skeleton, clip.motion[needed], clip.frame_time, metadata=clip.metadata)
    pose = forward_kinematics(part)
    cuts = np.cumsum([len(spread)] + [len(d) for d in drawn])
    return (pose.positions, end_site_positions(part, pose), rows[:len(spread)],
            [(d, rows[start:stop]) for d, start, stop in zip(drawn, cuts[:-1], cuts[1:])])


def _left(heads: FloatArray, named: Mapping[str, int], up: FloatArray) -> FloatArray:
    """The body's left in one frame: from its right leg to its left (arms, feet if need be), else the
    file axis that is left of a figure facing +Z (Y up) or -Y (Z up)."""
    for pair in (("upper_leg_l", "upper_leg_r"), ("upper_arm_l", "upper_arm_r"), ("foot_l", "foot_r")):
        if all(joint in named for joint in pair):
            left = heads[named[pair[0]]] - heads[named[pair[1]]]
            left = left - (left @ up) * up
            if np.linalg.norm(left) > 1e-9:
                return left / np.linalg.norm(left)
    return np.array([0.0, 1.0, 0.0]) if up[0] else np.array([1.0, 0.0, 0.0])


def sidecar_moments(clip: Clip) -> int:
    """The frames of the take's animation: ``SIDECAR_FPS`` a second, at most ``SIDECAR_FRAMES``."""
    seconds = clip.frame_count * clip.frame_time
    return int(np.clip(round(seconds * SIDECAR_FPS), 1, SIDECAR_FRAMES)) if clip.frame_count else 1


def motion_sidecar(clip: Clip, path: str | os.PathLike[str], body: StickFigures | None = None) -> None:
    """Write the take's small animation for the library page: its stick figure seen from the side (as
    on the contact sheet: centred on the hips, standing on its floor) at about ``SIDECAR_FPS`` frames a
    second (at most ``SIDECAR_FRAMES``), quantised to int16, as a script the page loads when the card
    comes into view (``file://`` pages may load scripts, not fetch data); ``body``: its
    :func:`stick_figures` at :func:`sidecar_moments` if already posed."""
    seconds = clip.frame_count * clip.frame_time
    body = body or stick_figures(clip, sidecar_moments(clip))
    forward = np.cross(body.left, body.up)
    across = (body.segments - body.hips[:, None, None]) @ forward
    height = body.segments @ body.up - body.floor
    points = np.nan_to_num(np.stack([across, height], axis=-1))  # (frames, segments, 2 ends, 2)
    reach = max(float(np.abs(points).max(initial=0.0)), 1e-9)
    quantised = np.round(points / reach * 32767).astype("<i2")
    shown = len(body.frames)
    sidecar = {"frames": shown, "segments": points.shape[1],
               "fps": (shown - 1) / seconds if shown > 1 and seconds > 0 else 0.0,
               "sides": "".join(side or "c" for side in body.sides),
               "across": float(np.abs(across).max(initial=0.0)) / reach, "tall": float(height.max(initial=0.0)) / reach,
               "data": base64.b64encode(quantised.tobytes()).decode("ascii")}
    text = f"mocapMotion(document.currentScript, {json.dumps(sidecar, separators=(',', ':'))});\n"
    atomic_write(os.fspath(path), text.encode("ascii"))
