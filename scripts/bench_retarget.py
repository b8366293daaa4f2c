"""Benchmark canonical conversion and retargeting: core functions and the Blender operator.

The clip is the 31-joint skeleton of ``bench_core.py`` with CMU-style joint names
and the same generated motion.  Core: ``to_canonical`` (both methods) and
``retarget`` (onto the bundled sample's 23-joint skeleton with ``feet="free"``
and ``"planted"``, and onto itself),
each beside one ``forward_kinematics`` of the same clip in the same run (a
yardstick for the machine: ratio = time / FK time; the transfer itself needs
only the source's local rotations, not its world pose), against the goal of
0.3 s at 10,000 frames.  Blender (when the bpy wheel is installed, in a fresh process):
``bpy.ops.mocap.retarget`` from an imported armature onto the imported sample,
beside our import of the same file (which writes as many keys), against the
goal of 1 s, with the operator's Feet option Free and Planted.  Best of ``--repeat`` runs.  Not a test.

    python scripts/bench_retarget.py [--frames 1000 10000] [--repeat 3] [--no-blender]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_core import best, generated_clip

from mocap_addon.core import Clip, Skeleton, forward_kinematics, load, save
from mocap_addon.core.retarget.transfer import retarget, to_canonical

SAMPLE = ROOT / "samples" / "walk_turn.bvh"
# bench_core's 31 joints in order: hips, two legs of 5, a spine of 6 (arms on its 4th), two arms of 7.
LEG = ["HipJoint", "UpLeg", "Leg", "Foot", "ToeBase"]
ARM = ["Shoulder", "Arm", "ForeArm", "Hand", "HandIndex1", "HandIndex2", "HandIndex3"]
NAMES = (["Hips"] + ["LHipJoint"] + [f"Left{n}" for n in LEG[1:]] + ["RHipJoint"] + [f"Right{n}" for n in LEG[1:]]
         + ["LowerBack", "Spine", "Spine1", "Spine2", "Neck", "Head"]
         + [f"Left{n}" for n in ARM] + [f"Right{n}" for n in ARM])

BLENDER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import bpy
import mocap_addon
mocap_addon.register()
bpy.ops.wm.read_homefile(use_empty=True)
started = time.perf_counter()
bpy.ops.import_anim.mocap_bvh(filepath=sys.argv[2])
imported = time.perf_counter() - started
source = bpy.context.object
bpy.ops.import_anim.mocap_bvh(filepath=sys.argv[3])
target = bpy.context.object
started = time.perf_counter()
bpy.ops.mocap.retarget(source=source.name, target=target.name, feet=sys.argv[4])
print(json.dumps({"import": imported, "retarget": time.perf_counter() - started}), flush=True)
import os
os._exit(0)
"""


def named_clip(frames: int) -> Clip:
    """bench_core's generated clip with CMU-style names (so the mapping finds a humanoid)."""
    clip = generated_clip(frames)
    skeleton = clip.skeleton
    renamed = Skeleton(list(NAMES), skeleton.parents, skeleton.offsets, skeleton.channels,
                       position_replaces_offset=skeleton.position_replaces_offset)
    return Clip(renamed, clip.motion, clip.frame_time)


def blender_times(clip: Clip, repeat: int, feet: str) -> tuple[float, float]:
    """Best import and retarget-operator seconds (``feet`` as the operator's option), each run in a fresh
    Blender process."""
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "source.bvh"
        save(clip, path)
        for _ in range(repeat):
            result = subprocess.run([sys.executable, "-c", BLENDER, str(ROOT), str(path), str(SAMPLE), feet],
                                    capture_output=True, text=True, check=True)
            runs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return min(r["import"] for r in runs), min(r["retarget"] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-blender", action="store_true", help="core functions only")
    args = parser.parse_args()
    onto = load(SAMPLE).skeleton
    print("| frames | FK s | to_canonical rotations s | ratio | to_canonical lengths s | ratio "
          "| retarget onto sample, feet free s | ratio | feet planted s | ratio | retarget onto itself s | ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for frames in args.frames:
        clip = named_clip(frames)
        floor = best(args.repeat, lambda: forward_kinematics(clip))
        times = [best(args.repeat, lambda: to_canonical(clip)),
                 best(args.repeat, lambda: to_canonical(clip, method="lengths")),
                 best(args.repeat, lambda: retarget(clip, onto, feet="free")),
                 best(args.repeat, lambda: retarget(clip, onto, feet="planted")),
                 best(args.repeat, lambda: retarget(clip, clip.skeleton, feet="free"))]
        cells = " | ".join(f"{t:.3f} | {t / floor:.1f}" for t in times)
        print(f"| {frames} | {floor:.3f} | {cells} |", flush=True)
    if args.no_blender or importlib.util.find_spec("bpy") is None:
        return
    print("\n| frames | feet | our import s | mocap.retarget s | ratio to import |\n|---:|---|---:|---:|---:|")
    for frames in args.frames:
        for feet in ("free", "planted"):
            imported, retargeted = blender_times(named_clip(frames), args.repeat, feet)
            print(f"| {frames} | {feet} | {imported:.2f} | {retargeted:.2f} | {retargeted / imported:.2f} |",
                  flush=True)

if __name__ == "__main__":
    main()
