"""Benchmark building a motion graph (``core.transitions.build``) against numpy's Gram-matrix floor.

The library: every distinct capture of the corpus beside the checkout (``../shared/corpus``: walks, dances,
jumps, samba... in BVH, HTR and ASF/AMC), or the bundled samples where it is absent, each also played
20 % faster and 20 % slower (resampled, then given its original frame time back), all resampled to the
frame rate that makes about ``--frames`` frames.  The floor: one float32 ``N x N`` Gram matrix
``X @ X.T`` of 200 features with numpy on the same machine (the dense matrix, which a build never makes).

With ``--library varied`` (``copies``) the library is instead made of variants of those captures at 30 fps
(``scripts/varied_library.py``: other subjects' proportions, speeds, timing warps, styles, mirrored, placed
elsewhere; or copies only turned and moved) until it holds ``--frames`` frames: a smaller library is the
first variants of a larger one.
Times are CPU seconds of the child (``time.process_time``: the machine is shared) beside wall seconds.

Each measurement runs in a fresh child process: the clips are loaded, the process's peak resident memory is
reset (``/proc/self/clear_refs``), then the build (or the floor) runs; memory is the growth of the peak over
what the process held before it.  Runs alternate floor and build ``--repeat`` times; the ratio compares the
best build with the best floor (and the medians).  Not a test.

    python scripts/bench_transitions.py [--frames 10000 13000 30000] [--repeat 2] [--no-contacts]
                                        [--matching auto|dense|search] [--library corpus|varied|copies] [--no-floor]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
# Distinct human captures (CMU 01_01 once, not also as ASF/AMC; no crab, no one-frame or one-fps files).
CAPTURES = ["bvh/ganim_Xia_normal.bvh", "bvh/bandai_dataset-1_walk_normal_001.bvh",
            "bvh/bandai_dataset-2_walk_elderly_004.bvh", "bvh/bandai_dataset-1_dance-short_normal_001.bvh",
            "bvh/fm_cmu_01_01.bvh", "bvh/ganim_Malcolm_Gangnam-Style.bvh",
            "bvh/bvhpy_test_freebvh.bvh", "asf_amc/fm_11_01.amc", "asf_amc/vicon_male.walk-speed 4.AMC",
            "htr/gpr450_xbot_walk_m_mixamo.com.htr", "htr/gpr450_xbot_samba_mixamo.com.htr",
            "htr/gpr450_xbot_anim1.HTR"]
SAMPLES = ["samples/walk_turn.bvh", "samples/jog_wave.bvh"]

CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
task, frames, contacts, matching, kind, files = (sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5],
                                                 sys.argv[6], sys.argv[7:])


def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1])


def reset_peak():
    with open("/proc/self/clear_refs", "w") as stream:
        stream.write("5")


if task == "floor":
    features = np.random.default_rng(0).standard_normal((frames, 200)).astype(np.float32)
    reset_peak()
    before = peak_kb()
    started, cpu = time.perf_counter(), time.process_time()
    gram = features @ features.T
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "mb": (peak_kb() - before) / 1024, "frames": frames}))
    sys.exit(0)

from mocap_addon.core import load
from mocap_addon.core.timing import resample
from mocap_addon.core.transitions import build, nearest

if matching == "dense":
    nearest.tree_class = lambda: None
elif matching == "search":
    nearest.SEARCH_PAIR_COST = 0.0  # search whatever the library's size and density

library = []
if kind in ("varied", "copies"):
    sys.path.insert(0, sys.argv[1] + "/scripts")
    import varied_library

    library = varied_library.library(files, frames, varied=kind == "varied")
for path in files if kind == "corpus" else []:
    clip = load(path)
    library.append(clip)
    for speed in (1.2, 1 / 1.2):  # 20 % faster and slower: resampled, then played at the original rate
        variant = resample(clip, clip.frame_time * speed)
        variant.frame_time = clip.frame_time
        variant.metadata["name"] = f"{path} x{speed:.2f}"
        library.append(variant)
seconds_of_motion = sum((c.frame_count - 1) * c.frame_time + 1e-9 for c in library)
fps = frames / seconds_of_motion if kind == "corpus" else varied_library.FPS
reset_peak()
before = peak_kb()
started, cpu = time.perf_counter(), time.process_time()
graph = build(library, fps=fps, contacts=contacts)
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
print(json.dumps({"seconds": seconds, "cpu": cpu, "mb": (peak_kb() - before) / 1024, "peak_mb": peak_kb() / 1024,
                  "frames": graph.frame_count,
                  "fps": fps, "clips": len(library), "transitions": int(len(graph.sources)),
                  "between": int(np.sum(graph.clip_of(graph.sources) != graph.clip_of(graph.targets))),
                  "alive": float(graph.alive.mean())}))
"""


def run(task: str, frames: int, contacts: bool, files: list[str], matching: str = "auto",
        kind: str = "corpus") -> dict[str, float]:
    result = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), task, str(frames), "1" if contacts else "0",
                             matching, kind, *files], capture_output=True, text=True, check=False)
    if result.returncode:
        raise SystemExit(f"{task} at {frames} frames failed:\n{result.stderr}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, nargs="+", default=[10000, 13000, 30000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-contacts", action="store_true", help="build without the contact rule")
    parser.add_argument("--matching", choices=("auto", "dense", "search"), default="auto",
                        help="all against all, the nearest-neighbour search, or as build chooses (default)")
    parser.add_argument("--library", choices=("corpus", "varied", "copies"), default="corpus",
                        help="the captures at 3 speeds resampled to the frames, variants or copies at 30 fps")
    parser.add_argument("--no-floor", action="store_true", help="no N x N Gram matrix (it needs 4 N^2 bytes)")
    args = parser.parse_args()
    files = [str(CORPUS / f) for f in CAPTURES] if CORPUS.is_dir() else [str(ROOT / f) for f in SAMPLES]
    made = {"corpus": "x 3 speeds", "varied": "varied at 30 fps", "copies": "copied at 30 fps"}[args.library]
    print(f"matching {args.matching}; library: {len(files)} captures {made} "
          f"({'corpus' if CORPUS.is_dir() else 'bundled samples'}), "
          f"contacts {'off' if args.no_contacts else 'on'}; {time.strftime('%Y-%m-%d %H:%M')}")
    print("| frames | fps | clips | build CPU s (best, median) | wall s | floor CPU s | ratio to floor "
          "| build MB | peak MB | transitions | between clips | kept |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    first: tuple[int, float] | None = None
    for frames in args.frames:
        floors, builds = [], []
        for _ in range(args.repeat):
            if not args.no_floor:
                floors.append(run("floor", frames, False, []))
            builds.append(run("build", frames, not args.no_contacts, files, args.matching, args.library))
        cpu = [b["cpu"] for b in builds]
        floor = min(f["cpu"] for f in floors) if floors else float("nan")
        last = builds[-1]
        print(f"| {int(last['frames'])} | {last['fps']:.1f} | {int(last['clips'])} | {min(cpu):.1f}, "
              f"{statistics.median(cpu):.1f} | {min(b['seconds'] for b in builds):.1f} | {floor:.2f} | "
              f"{min(cpu) / floor:.2f} | {max(b['mb'] for b in builds):.0f} | {max(b['peak_mb'] for b in builds):.0f} "
              f"| {int(last['transitions'])} | {int(last['between'])} | {last['alive']:.0%} |", flush=True)
        if first is None:
            first = (int(last["frames"]), min(cpu))
        else:
            print(f"{int(last['frames']) / first[0]:.1f}x the frames of {first[0]}: {min(cpu) / first[1]:.1f}x the "
                  f"build's CPU time", flush=True)


if __name__ == "__main__":
    main()
