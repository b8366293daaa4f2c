"""The catch from the mixing study, as a Blender scene: a ball flies in and the mix is solved so the hand meets it.

Imports the bundled walk, blends it with itself 40 frames later (``<walk>_blend``),
throws a ball (an Empty) along a parabola through a point the right hand can
reach at the catch frame, solves and keys the mix there, draws the hand's
envelope, and saves the scene.  Play it in Blender: the hand meets the ball.

    python scripts/catch_demo.py [OUT.blend]          (the bpy wheel; default out/catch.blend)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "walk_turn.bvh"
CATCH_FRAME = 60
HAND = "RightHand"


def build_catch(bpy, sample: Path = SAMPLE, catch: int = CATCH_FRAME) -> tuple[object, object]:
    """Build the scene in the current file; returns the blend result and the ball."""
    scene = bpy.context.scene
    bpy.ops.import_anim.mocap_bvh(filepath=str(sample), update_scene_range=True)
    walk = bpy.context.object.name
    # Where the hand is at mix 0.65 on the catch frame: a point the blend can reach.
    bpy.ops.mocap.blend(clip_a=walk, clip_b=walk, mix=0.65, offset=40)
    result = bpy.context.object
    scene.frame_set(catch)
    reach = result.matrix_world @ result.pose.bones[HAND].head
    bpy.ops.mocap.blend(clip_a=walk, clip_b=walk, mix=0.2, offset=40)
    ball = bpy.data.objects.new("ball", None)
    ball.empty_display_type = "SPHERE"
    ball.empty_display_size = 0.05 * max(result.dimensions)
    scene.collection.objects.link(ball)
    height = result.dimensions.z
    for frame in range(catch - 30, catch + 1, 5):  # thrown from the side, falling onto the catch point
        t = (frame - catch) / 30.0
        ball.location = (reach.x - 2.0 * height * t, reach.y, reach.z - 0.5 * height * t * t)
        ball.keyframe_insert("location", frame=frame)
    bpy.context.view_layer.objects.active = result
    scene.frame_set(catch)
    bpy.ops.mocap.solve_mix(bone=HAND, target=ball.name)
    bpy.ops.mocap.envelope(bone=HAND, count=11)
    bpy.context.view_layer.objects.active = result
    return result, ball


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "out" / "catch.blend").resolve()
    sys.path.insert(0, str(ROOT))
    import bpy

    import mocap_addon

    mocap_addon.register()
    bpy.ops.wm.read_homefile(use_empty=True)
    result, _ = build_catch(bpy)
    out.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(out))
    print(f"{out}: {result.name}, mix {result.data.mocap_blend.mix:.4f} keyed at frame {CATCH_FRAME}", flush=True)
    os._exit(0)  # bpy 4.5 can hang at exit after saving


if __name__ == "__main__":
    main()
