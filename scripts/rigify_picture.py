"""Draw a retarget onto a generated Rigify rig: the source's bones and the rig's deform bones as Blender
evaluates them through the rig's controls, side by side at a few frames, with the worst cosine per segment.

    .venv/bin/python scripts/rigify_picture.py [out.png]   # any of the bpy venvs
"""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import mocap_addon
from tests.test_blender_rigify import SEGMENTS, rigify_rig, segment_cosines

FRAMES = (1, 30, 60, 90, 120)


def bone_lines(obj, names: list[str] | None = None) -> np.ndarray:
    """(bones, 2, 3) world head and tail of the named pose bones (all when None) at the current frame."""
    world = np.array(obj.matrix_world)
    bones = [obj.pose.bones[n] for n in names] if names else list(obj.pose.bones)
    points = np.array([[b.head, b.tail] for b in bones]).reshape(-1, 2, 3)
    return points @ world[:3, :3].T + world[:3, 3]


def main(out: Path) -> None:
    mocap_addon.register()
    bpy.ops.import_anim.mocap_bvh(filepath=str(REPO / "samples" / "walk_turn.bvh"))
    source = bpy.context.object
    rig = rigify_rig(bpy)
    bpy.ops.mocap.retarget(source=source.name, target=rig.name, feet="FREE")
    deform = [b.name for b in rig.data.bones if b.use_deform and not b.name.startswith(("DEF-f_", "DEF-thumb",
                                                                                         "DEF-palm"))]
    figure, axes = plt.subplots(1, len(FRAMES), figsize=(4 * len(FRAMES), 5), sharey=True)
    for ax, frame in zip(axes, FRAMES):
        bpy.context.scene.frame_set(frame)
        drawn = {"source (walk_turn.bvh)": (bone_lines(source), "tab:blue", 0.0),
                 "Rigify DEF bones (keys on FK controls)": (bone_lines(rig, deform), "tab:red", 1.0)}
        for label, (lines, colour, shift) in drawn.items():
            # Each figure about its own first bone (hips), in its own heights: the sizes differ.
            size = np.ptp(lines[..., 2])
            for head, tail in (lines - lines[0, 0]) / size + [shift, 0, 0]:
                ax.plot([head[0], tail[0]], [head[2], tail[2]], color=colour, lw=2, label=label)
                label = "_"
        ax.set_title(f"frame {frame}")
        ax.set_aspect("equal")
        ax.set_xlabel("x (figure heights), the rig drawn 1 right")
    axes[0].set_ylabel("z (figure heights, from the hips)")
    axes[0].legend(loc="lower left", fontsize=8)
    worst = {segment: float(values.min()) for segment, values in segment_cosines(bpy, source, rig).items()}
    figure.suptitle("Retarget onto a generated Rigify rig, front view; worst cosine over 120 frames: "
                    + ", ".join(f"{s} {worst[s]:.6f}" for s in list(SEGMENTS)[:6]) + " ...; all "
                    + f"{min(worst.values()):.6f}", fontsize=9)
    figure.tight_layout()
    figure.savefig(out, dpi=80)
    print(f"worst cosine {min(worst.values()):.9f} ({min(worst, key=worst.get)}); wrote {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("rigify_retarget.png"))
