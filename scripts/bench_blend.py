"""Blending speed: core blend, envelope, solve_mix and DTW alignment, and the Blender blend operator.

Clips are the generated 31-joint clips of ``bench_core.py`` (two different
ones of the same length).  Each figure stands beside a peer measured in the
same run, so the ratios hold across machines:

* blend: beside ``timing.resample`` of clip A (the same slerp and Euler
  encoding for every joint and frame) and ``world_positions`` (FK);
* envelope of 11 mixes: beside 11 blends each followed by FK (the naive way);
* solve_mix: beside one blend followed by FK (one naive evaluation);
* blend with DTW alignment: beside the plain blend;
* the Blender operator ``mocap.blend`` (fresh process, both clips imported
  before the clock starts): beside our import of clip A.

Each with ``feet="free"`` and ``"planted"`` (the default: the generated
skeleton maps onto the canonical one, so its feet are found and held).  Best
of ``--repeat`` runs, CPU time of this process (the machine is shared; the
operator's rows are wall time in its own process).  Not a test.

    python scripts/bench_blend.py [--frames 1000 10000] [--repeat 3] [--no-blender]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_core import cpu_seconds, generated_clip

from mocap_addon.core import save, world_positions
from mocap_addon.core.blend.mixing import blend, envelope, solve_mix
from mocap_addon.core.timing import resample

MIXES = np.linspace(0.0, 1.0, 11)

MEASURE = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import bpy
import mocap_addon
mocap_addon.register()
bpy.ops.wm.read_homefile(use_empty=True)
first, second, repeat = sys.argv[2], sys.argv[3], int(sys.argv[4])
feet = sys.argv[5]
times = {"import": [], "blend": []}
for _ in range(repeat):
    bpy.ops.wm.read_homefile(use_empty=True)
    started = time.perf_counter()
    bpy.ops.import_anim.mocap_bvh(filepath=first)
    times["import"].append(time.perf_counter() - started)
    bpy.ops.import_anim.mocap_bvh(filepath=second)
    started = time.perf_counter()
    bpy.ops.mocap.blend(clip_a="a", clip_b="b", mix=0.5, feet=feet)
    times["blend"].append(time.perf_counter() - started)
print("RESULT", json.dumps({k: min(v) for k, v in times.items()}), flush=True)
os._exit(0)
"""


def core_rows(frames: int, repeat: int, feet: str) -> list[str]:
    a = generated_clip(frames)
    b = generated_clip(frames + 1)
    b.motion = b.motion[:frames]
    hand = a.skeleton.names[-1]
    target = world_positions(blend(a, b, 0.37, feet=feet))[frames // 2, -1] + 1.0
    plain = cpu_seconds(repeat, lambda: blend(a, b, 0.5, feet=feet))
    rows = [
        ("blend", plain, "resample", cpu_seconds(repeat, lambda: resample(a, a.frame_time / 2))),
        ("blend", plain, "FK", cpu_seconds(repeat, lambda: world_positions(a))),
        ("envelope, 11 mixes", cpu_seconds(repeat, lambda: envelope(a, b, hand, MIXES, feet=feet)),
         "11 x (blend + FK)", cpu_seconds(1, lambda: [world_positions(blend(a, b, m, feet=feet)) for m in MIXES])),
        ("solve_mix", cpu_seconds(repeat, lambda: solve_mix(a, b, hand, frames // 2, target, feet=feet)),
         "blend + FK", cpu_seconds(repeat, lambda: world_positions(blend(a, b, 0.5, feet=feet)))),
        ("blend, DTW", cpu_seconds(1, lambda: blend(a, b, 0.5, align="dtw", feet=feet)), "blend", plain),
    ]
    return [f"| {frames} | {feet} | {name} | {ours:.3f} | {peer_name} | {peer:.3f} | {peer / ours:.2f} |"
            for name, ours, peer_name, peer in rows]


def blender_row(frames: int, repeat: int, feet: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / f"{name}.bvh" for name in ("a", "b")]
        for offset, path in enumerate(paths):
            clip = generated_clip(frames + offset)
            clip.motion = clip.motion[:frames]
            save(clip, path)
        result = subprocess.run([sys.executable, "-c", MEASURE, str(ROOT), *map(str, paths), str(repeat),
                                 feet.upper()], capture_output=True, text=True, check=True)
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULT "))
    times = json.loads(line[len("RESULT "):])
    return (f"| {frames} | {feet} | mocap.blend operator (wall) | {times['blend']:.3f} | our import of A "
            f"| {times['import']:.3f} | {times['import'] / times['blend']:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-blender", action="store_true", help="skip the Blender operator")
    options = parser.parse_args()
    print("| frames | feet | step | s | peer | peer s | ratio (> 1: ours faster) |")
    print("|---:|---|---|---:|---|---:|---:|")
    for frames in options.frames:
        for feet in ("free", "planted"):
            for row in core_rows(frames, options.repeat, feet):
                print(row, flush=True)
            if not options.no_blender:
                print(blender_row(frames, options.repeat, feet), flush=True)


if __name__ == "__main__":
    main()
