"""Per-frame cost of the live blend in Blender: ``scene.frame_set`` over every frame with the live mix
enabled minus with it disabled (CPU time, alternated in one run), and the time to prepare it.

    .venv/bin/python scripts/bench_live.py [CLIP.bvh] [OFFSET]

The default clip is the corpus's 31-joint ``ganim_Xia_normal.bvh`` (the bundled walk without the corpus),
blended with itself ``OFFSET`` frames later (default 40), for each root and feet mode.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS_CLIP = ROOT.parent / "shared" / "corpus" / "bvh" / "ganim_Xia_normal.bvh"
ROUNDS = 4


def per_frame(bpy, target, frames: range) -> tuple[float, float]:
    """Milliseconds per ``frame_set`` with the live mix enabled and disabled (best of :data:`ROUNDS`)."""
    scene = bpy.context.scene
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(ROUNDS):
        for enabled in (True, False):
            target.mocap_live.enabled = enabled
            started = time.process_time()
            for frame in frames:
                scene.frame_set(frame)
            times[enabled].append(1e3 * (time.process_time() - started) / len(frames))
    return min(times[True]), min(times[False])


def main() -> None:
    clip = Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS_CLIP
    clip = clip if clip.is_file() else ROOT / "samples" / "walk_turn.bvh"
    offset = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    sys.path.insert(0, str(ROOT))
    import bpy

    import mocap_addon

    mocap_addon.register()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_anim.mocap_bvh(filepath=str(clip), update_scene_range=True)
    name = bpy.context.object.name
    joints = len(bpy.context.object.pose.bones)
    scene = bpy.context.scene
    frames = range(scene.frame_start, scene.frame_end + 1)
    print(f"{clip.name}: {joints} joints, {len(frames)} frames, B = A {offset} frames later")
    print(f"{'root':>8} {'feet':>8} {'prepare s':>10} {'live ms':>8} {'off ms':>8} {'cost ms':>8}")
    for root in ("BLEND", "HEADING"):
        for feet in ("FREE", "PLANTED"):
            started = time.process_time()
            bpy.ops.mocap.live_blend(clip_a=name, clip_b=name, target=f"{name}_live" if root != "BLEND" or
                                     feet != "FREE" else "", offset=offset, root=root, feet=feet, mix=0.37)
            prepared = time.process_time() - started
            live, off = per_frame(bpy, bpy.data.objects[f"{name}_live"], frames)
            print(f"{root:>8} {feet:>8} {prepared:10.2f} {live:8.3f} {off:8.3f} {live - off:8.3f}", flush=True)
    os._exit(0)  # bpy 4.5 can hang at exit


if __name__ == "__main__":
    main()
