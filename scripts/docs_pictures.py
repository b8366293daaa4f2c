"""Draw the documentation's pictures (docs/images/*.png) with the project's own code, from the bundled samples.

    .venv/bin/python scripts/docs_pictures.py          # contact sheets, a blend, a retarget, graph plots
    .venv/bin/python scripts/docs_pictures.py --blender  # also the pose Blender holds after a headless import

Contact sheets are ``core.batch.preview.contact_sheet``; graph plots ``core.transitions.plot``; the Blender
picture reads the bone heads and tails of an armature imported headless with the bpy wheel.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mocap_addon.core import load
from mocap_addon.core.batch.preview import contact_sheet
from mocap_addon.core.blend import blend
from mocap_addon.core.retarget import retarget, to_canonical
from mocap_addon.core.transitions import build, plot

IMAGES = ROOT / "docs" / "images"
WALK, JOG = ROOT / "samples" / "walk_turn.bvh", ROOT / "samples" / "jog_wave.bvh"


def core_pictures() -> None:
    walk, jog = load(WALK), load(JOG)
    contact_sheet(walk, IMAGES / "walk_turn.png", title="walk_turn.bvh")
    contact_sheet(jog, IMAGES / "jog_wave.png", title="jog_wave.bvh")
    contact_sheet(to_canonical(jog, feet="planted"), IMAGES / "jog_canonical.png",
                  title="jog_wave on the canonical skeleton")
    contact_sheet(retarget(jog, walk), IMAGES / "jog_on_walk.png", title="jog_wave retargeted onto walk_turn")
    contact_sheet(blend(walk, jog, 0.5, align="dtw", root="heading"), IMAGES / "blend_half.png",
                  title="walk_turn and jog_wave, mix 0.5, time-warped, heading paths")
    waving = blend(walk, jog, 1.0, mask="right_arm")  # the walk with the jog's waving arm, as the demo makes it
    waving.metadata["source"] = "walk_waving"
    graph = build([walk, jog, waving], threshold=0.7)
    plot(graph, IMAGES / "graph_matrix.png", kind="matrix")
    plot(graph, IMAGES / "graph_per_frame.png", kind="per_frame")


def blender_picture() -> None:
    """The walk as Blender holds it after a headless import: bone heads to tails at six frames."""
    import bpy
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    import mocap_addon

    mocap_addon.register()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_anim.mocap_bvh(filepath=str(WALK))
    obj = bpy.context.object
    first, last = (round(v) for v in obj.animation_data.action.frame_range)
    figure, axes = plt.subplots(figsize=(9, 3.2))
    frames = np.linspace(first, last, 6).round().astype(int)
    for place, frame in enumerate(frames):
        bpy.context.scene.frame_set(int(frame))
        ends = np.array([[obj.matrix_world @ bone.head, obj.matrix_world @ bone.tail] for bone in obj.pose.bones])
        height = float(np.ptp(ends[..., 2]))
        across = ends[..., 0] - ends[0, 0, 0] + place * 1.1 * height  # each figure at its hips, side by side
        axes.plot(across.T, ends[..., 2].T, color="tab:blue", lw=1.5)
        axes.text(place * 1.1 * height, ends[..., 2].min() - 0.12 * height, f"frame {frame}", ha="center",
                  fontsize=8)
    axes.set_aspect("equal")
    axes.set_axis_off()
    axes.set_title("walk_turn.bvh imported headless (bpy): bone heads to tails, seen along Blender's Y axis")
    figure.tight_layout()
    figure.savefig(IMAGES / "blender_walk.png", dpi=90)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--blender", action="store_true", help="also draw the headless Blender import")
    args = parser.parse_args()
    IMAGES.mkdir(parents=True, exist_ok=True)
    core_pictures()
    if args.blender:
        blender_picture()
    for path in sorted(IMAGES.glob("*.png")):
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
