"""The README's pictures of the live mix, drawn with matplotlib from what headless Blender shows.

Builds :func:`catch_demo.build_live_catch`'s scene (the bundled walk live-mixed with itself 40 frames
later, the right hand's envelope, a ball thrown the catch game's way), then reads the live target's pose
bones after ``scene.frame_set`` (the frame handler's work) and the envelope curve's splines, and draws
them from the side: the figure at several mixes at one frame over the envelope (the current mix's path
highlighted), and the keyed mix taking the hand to the ball.

    .venv/bin/python scripts/live_pictures.py [OUT_DIR]      (default docs/images)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bones(obj) -> list[tuple[object, object]]:
    """World heads and tails of every bone of ``obj``'s current pose."""
    world = obj.matrix_world
    return [(world @ b.head, world @ b.tail) for b in obj.pose.bones]


def draw_figure(axes, segments, colour, width=1.5, alpha=1.0) -> None:
    for head, tail in segments:
        axes.plot([head.y, tail.y], [head.z, tail.z], color=colour, linewidth=width, alpha=alpha)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs" / "images").resolve()
    sys.path.insert(0, str(ROOT))
    import bpy
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    import mocap_addon
    from scripts.catch_demo import build_live_catch

    mocap_addon.register()
    bpy.ops.wm.read_homefile(use_empty=True)
    live, ball, flight = build_live_catch(bpy)
    scene, settings = bpy.context.scene, live.mocap_live
    first = scene.frame_start
    out.mkdir(parents=True, exist_ok=True)

    # 1. One frame at five mixes, over the hand's envelope (the current mix highlighted).
    action = live.animation_data.action
    live.animation_data.action = None  # the keyed mix aside: the slider alone
    frame = first + flight.arrival
    figure, axes = plt.subplots(figsize=(9, 5.5))
    for mix, colour in zip((0.0, 0.25, 0.5, 0.75, 1.0), plt.cm.viridis(np.linspace(0, 0.9, 5))):
        settings.mix = mix
        scene.frame_set(frame)
        draw_figure(axes, bones(live), colour, alpha=0.9)
        axes.plot([], [], color=colour, label=f"live mix {mix:.2f}")
    settings.mix = 0.5  # the envelope is redrawn, this mix's path highlighted
    for spline in settings.envelope.data.splines:
        points = np.array([p.co[:3] for p in spline.points])
        current = spline.material_index == 1
        axes.plot(points[:, 1], points[:, 2], color="tab:orange" if current else "tab:blue",
                  linewidth=2.5 if current else 0.7, alpha=1.0 if current else 0.6, zorder=3 if current else 1)
    axes.plot([], [], color="tab:blue", label="right hand's envelope, mixes 0..1")
    axes.plot([], [], color="tab:orange", linewidth=2.5, label="its path at the current mix (0.50)")
    axes.set_aspect("equal")
    axes.set_xlabel("Blender Y (Blender units: the file's centimetres)")
    axes.set_ylabel("Blender Z")
    axes.set_title(f"Live mix of the walk and itself 40 frames later, frame {frame}: pose bones after frame_set")
    axes.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "live_mix_envelope.png", dpi=110)
    plt.close(figure)

    # 2. The keyed mix taking the hand to the ball: every 6th frame of the flight.
    live.animation_data.action = action
    figure, axes = plt.subplots(figsize=(9, 5))
    frames = list(range(first + flight.start, first + flight.arrival + 1, 6)) + [first + flight.arrival]
    for index, frame in enumerate(frames):
        scene.frame_set(frame)
        last = frame == frames[-1]
        draw_figure(axes, bones(live), "black" if last else plt.cm.Greys(0.3 + 0.5 * index / len(frames)),
                    width=2.0 if last else 1.0)
        place = ball.matrix_world.translation
        axes.plot(place.y, place.z, "o", color="tab:red", markersize=9 if last else 4, alpha=1.0 if last else 0.5)
    hand = live.matrix_world @ live.pose.bones["RightHand"].head
    axes.plot(hand.y, hand.z, "x", color="tab:green", markersize=12, mew=2, label="right hand at the arrival")
    axes.plot([], [], "o", color="tab:red", label="ball (the catch game's throw)")
    axes.set_aspect("equal")
    axes.set_xlabel("Blender Y (Blender units: the file's centimetres)")
    axes.set_ylabel("Blender Z")
    axes.set_title(f"Mix keyed from 0.20 to {flight.mix:.2f}: the live hand meets the ball (frames {frames[0]}"
                   f"-{frames[-1]})")
    axes.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "live_catch.png", dpi=110)
    plt.close(figure)
    print(f"wrote {out / 'live_mix_envelope.png'} and {out / 'live_catch.png'}", flush=True)
    os._exit(0)  # bpy 4.5 can hang at exit


if __name__ == "__main__":
    main()
