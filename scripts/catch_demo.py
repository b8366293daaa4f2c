"""The catch from the mixing study, as a Blender scene: a ball flies in and the mix takes the hand to it.

Live (the default): imports the bundled walk, puts a live mix of it and itself
40 frames later on ``<walk>_live`` (``mocap.live_blend``), draws the right hand's
envelope (``mocap.draw_envelope``), throws a ball (an Empty) the way the catch
game does (``core.blend.catch``: along a parabola onto a point of the envelope),
and keys the live mix so the hand is there when the ball arrives.  Play it, or
run *Catch Game* on ``<walk>_live`` and steer the mix yourself.

Baked (``--baked``): blends the walk into ``<walk>_blend``, throws the ball
through a point the hand can reach, solves and keys the mix there with
``mocap.solve_mix``, and draws the envelope as curves.

    python scripts/catch_demo.py [OUT.blend] [--baked]   (the bpy wheel; default out/catch.blend)
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


def build_live_catch(bpy, sample: Path = SAMPLE, seed: int = 2) -> tuple[object, object, object]:
    """Build the live scene in the current file; returns the live target, the ball and the game's ball
    (its flight and the mix that catches it)."""
    import numpy as np

    from mocap_addon.core.blend.catch import CatchGame

    scene = bpy.context.scene
    bpy.ops.import_anim.mocap_bvh(filepath=str(sample), update_scene_range=True)
    walk = bpy.context.object.name
    bpy.ops.mocap.live_blend(clip_a=walk, clip_b=walk, offset=40, mix=0.2)
    live = bpy.context.object
    bpy.ops.mocap.draw_envelope(joint="hand_r", mixes=11)
    paths = np.array([[p.co[:3] for p in spline.points] for spline in live.mocap_live.envelope.data.splines][:11])
    game = CatchGame(paths, np.linspace(0.0, 1.0, 11), 1.0 / scene.render.fps, float(live.dimensions.z), seed=seed)
    flight = game.throw(10)
    assert flight is not None, "the walk is long enough for a throw"
    ball = bpy.data.objects.new("ball", None)
    ball.empty_display_type = "SPHERE"
    ball.empty_display_size = 0.04 * float(live.dimensions.z)
    scene.collection.objects.link(ball)
    first = scene.frame_start
    for frame in range(flight.start, flight.arrival + 1):
        ball.location = flight.position(frame)
        ball.keyframe_insert("location", frame=first + frame)
    for frame, mix in ((first, 0.2), (first + flight.start, 0.2), (first + flight.arrival, flight.mix)):
        live.mocap_live.mix = mix
        live.keyframe_insert("mocap_live.mix", frame=frame)
    scene.frame_set(first + flight.arrival)
    return live, ball, flight


def main() -> None:
    arguments = [a for a in sys.argv[1:] if a != "--baked"]
    out = Path(arguments[0] if arguments else ROOT / "out" / "catch.blend").resolve()
    sys.path.insert(0, str(ROOT))
    import bpy

    import mocap_addon

    mocap_addon.register()
    bpy.ops.wm.read_homefile(use_empty=True)
    if "--baked" in sys.argv:
        result, _ = build_catch(bpy)
        said = f"{result.name}, mix {result.data.mocap_blend.mix:.4f} keyed at frame {CATCH_FRAME}"
    else:
        live, _, flight = build_live_catch(bpy)
        said = f"{live.name}: live mix keyed to {flight.mix:.2f} as the ball arrives at frame {flight.arrival + 1}"
    out.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(out))
    print(f"{out}: {said}", flush=True)
    os._exit(0)  # bpy 4.5 can hang at exit after saving


if __name__ == "__main__":
    main()
