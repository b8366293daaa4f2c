"""Contact sheets: a clip at six moments, from the side and from the front, as a stick figure
standing on its floor, with its name, frames and rate (a PNG drawn with matplotlib, an
optional dependency imported here only).

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
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import MissingDependency
from ..formats.textio import atomic_write
from ..kinematics import end_site_positions, forward_kinematics
from ..model import Clip
from ..rotations import FloatArray
from ..transforms import rest_pose

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


def contact_sheet(clip: Clip, path: str | os.PathLike[str], *, title: str | None = None) -> None:
    """Draw ``clip``'s contact sheet into the PNG file ``path`` (``title``: the source's name)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependency(f"previews need matplotlib: {PREVIEW_EXTRA}") from None
    body = stick_figures(clip)
    forward = np.cross(body.left, body.up)
    # (direction across the panel, direction away from the viewer, label) per view
    views = [(forward, body.left, "side"), (body.left, -forward, "front")]
    across = [(body.segments - body.hips[:, None, None]) @ axis for axis, _, _ in views]
    height = body.segments @ body.up - body.floor
    half = 1.1 * max(max(float(np.nanmax(np.abs(a), initial=0.0)) for a in across), 1e-9)
    tall = 1.08 * max(float(np.nanmax(height, initial=0.0)), half)
    step, lift = 2.2 * half, 1.25 * tall

    figure = Figure(figsize=(max(1.75 * len(body.frames) + 0.9, 6.0), 5.4), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_axes((0.06, 0.05, 0.93, 0.78))
    lines, colours, floors = [], [], []
    for view, (_, away, name) in enumerate(views):
        base = (len(views) - 1 - view) * lift
        for panel in range(len(body.frames)):
            centre = panel * step
            far_first = np.argsort(-(body.segments[panel].mean(axis=1) @ away), kind="stable")
            lines.append(np.stack([across[view][panel] + centre, height[panel] + base], axis=-1)[far_first])
            colours += [COLOURS[body.sides[s]] for s in far_first]
            floors.append([(centre - half, base), (centre + half, base)])
        axes.text(-0.62 * step, base + tall / 2, name, rotation=90, ha="center", va="center", fontsize=10,
                  color=FAINT)
    axes.add_collection(LineCollection(floors, colors=FLOOR, linewidths=1.0))
    axes.add_collection(LineCollection(np.concatenate(lines), colors=colours, linewidths=1.6, capstyle="round"))
    for panel, row in enumerate(body.frames):
        label = f"frame {clip.start_frame + int(row)}\n{row * clip.frame_time:.2f} s" if clip.frame_count else "rest"
        axes.text(panel * step, -0.05 * tall, label,
                  ha="center", va="top", fontsize=8, color=FAINT, linespacing=1.3)
    axes.set_xlim(-0.7 * step, (len(body.frames) - 0.5) * step)
    axes.set_ylim(-0.24 * tall, len(views) * lift - 0.1 * tall)
    axes.set_aspect("equal")
    axes.set_anchor("W")  # a narrow figure keeps to the left, under its title
    axes.axis("off")
    # Plain text: a file named "$\\foo$.bvh" is a name, not a formula (parse_math=False).
    figure.text(0.02, 0.95, title or "clip", fontsize=13, weight="bold", color=TEXT, va="top", parse_math=False)
    figure.text(0.02, 0.885, caption(clip), fontsize=10, color=FAINT, va="top", parse_math=False)
    figure.savefig(os.fspath(path), format="png", metadata={"Software": None}, bbox_inches="tight", pad_inches=0.2)


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
    from ..naming import canonical_side, map_skeleton

    skeleton = clip.skeleton
    mapping = map_skeleton(skeleton)
    named = {canonical: skeleton.names.index(name) for name, canonical in mapping.items() if canonical}
    frames, heads, ends, drawn, everywhere = _posed(clip, moments)
    hips = named.get("hips", 0)
    in_body = np.zeros(skeleton.joint_count, dtype=bool)
    sides: list[str | None] = []
    for joint, (name, parent) in enumerate(zip(skeleton.names, skeleton.parents)):
        in_body[joint] = joint == hips or (parent >= 0 and in_body[parent])
        canonical = mapping.get(name)
        side = canonical_side(canonical) if canonical else None
        sides.append(side or (sides[parent] if parent >= 0 else None))
    starts, stops, owners = [], [], []
    for joint in map(int, np.flatnonzero(in_body)):
        if joint != hips:
            starts.append(heads[drawn, skeleton.parents[joint]])
            stops.append(heads[drawn, joint])
            owners.append(joint)
        for site in range(ends[joint].shape[1]):
            starts.append(heads[drawn, joint])
            stops.append(ends[joint][drawn, site])
            owners.append(joint)
    if not starts:  # the hips alone: a dot
        starts, stops, owners = [heads[drawn, hips]], [heads[drawn, hips]], [hips]
    up = np.zeros(3)
    axis = clip.up_axis.upper()
    up["XYZ".index(axis.lstrip("+-"))] = -1.0 if axis.startswith("-") else 1.0
    points = [heads[everywhere][:, in_body]] + [ends[j][everywhere] for j in np.flatnonzero(in_body)]
    floor = min(float(np.nanmin(p @ up, initial=np.inf)) for p in points)
    return StickFigures(frames, np.stack([np.stack(starts, axis=1), np.stack(stops, axis=1)], axis=2), owners,
                        [sides[joint] for joint in owners],
                        heads[drawn, hips], up, _left(heads[drawn[0]], named, up), floor)


def _posed(clip: Clip, moments: int) -> tuple[np.ndarray, FloatArray, list[FloatArray], np.ndarray, np.ndarray]:
    """The frames drawn; joint origins ``(N, J, 3)`` and end sites (per joint ``(N, k, 3)``) at the
    frames needed, with the rows of the drawn frames and of a spread over the whole clip (for the floor)."""
    skeleton = clip.skeleton
    frames = clip.frame_count
    if not frames:
        turns, origins = rest_pose(skeleton)
        ends = [(origins[j] + sites @ turns[j].T)[None] for j, sites in enumerate(skeleton.end_sites)]
        first = np.zeros(1, dtype=np.int64)
        return first, origins[None], ends, first, first
    drawn = np.unique(np.linspace(0, frames - 1, min(moments, frames)).round().astype(np.int64))
    spread = np.linspace(0, frames - 1, min(FLOOR_SAMPLES, frames)).astype(np.int64)
    needed, rows = np.unique(np.concatenate([drawn, spread]), return_inverse=True)
    part = Clip(skeleton, clip.motion[needed], clip.frame_time, metadata=clip.metadata)
    pose = forward_kinematics(part)
    return drawn, pose.positions, end_site_positions(part, pose), rows[:len(drawn)], rows[len(drawn):]


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


def motion_sidecar(clip: Clip, path: str | os.PathLike[str]) -> None:
    """Write the take's small animation for the library page: its stick figure seen from the side (as
    on the contact sheet: centred on the hips, standing on its floor) at about ``SIDECAR_FPS`` frames a
    second (at most ``SIDECAR_FRAMES``), quantised to int16, as a script the page loads when the card
    comes into view (``file://`` pages may load scripts, not fetch data)."""
    seconds = clip.frame_count * clip.frame_time
    moments = int(np.clip(round(seconds * SIDECAR_FPS), 1, SIDECAR_FRAMES)) if clip.frame_count else 1
    body = stick_figures(clip, moments)
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
