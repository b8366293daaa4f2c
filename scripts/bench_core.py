"""Benchmark the core on generated 31-joint BVH files: parse, forward kinematics, write.

A second table gives the other formats' parse and write speed on the same
clips.  Each BVH figure stands beside numpy's own text routines on the same MOTION text in
the same run (``np.loadtxt`` for parsing, ``np.savetxt`` for writing), so the
ratios hold across machines.  Best of ``--repeat`` runs.  Not a test.

    python scripts/bench_core.py [--frames 1000 10000 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mocap_addon.core import Clip, Skeleton, load, save, world_positions
from mocap_addon.core.formats.textio import format_rows

# A CMU-like 31-joint tree: (parent index, offset).
_CHAINS = [
    (None, 0, [(0, 0, 0)]),                                   # Hips
    ("Hips", 5, [(1, -2, 0), (0, -18, 0), (0, -17, 0), (0, -3, 6), (0, 0, 2)]),   # left leg + toe
    ("Hips", 5, [(-1, -2, 0), (0, -18, 0), (0, -17, 0), (0, -3, 6), (0, 0, 2)]),  # right leg
    ("Hips", 6, [(0, 2, 0), (0, 2, 0), (0, 3, 0), (0, 3, 0), (0, 3, 0), (0, 3, 0)]),  # spine to head
    ("Spine3", 7, [(1, 2, 0), (3, 0, 0), (11, 0, 0), (9, 0, 0), (1, 0, 0), (1, 0, 0), (1, 0, 0)]),
    ("Spine3", 7, [(-1, 2, 0), (-3, 0, 0), (-11, 0, 0), (-9, 0, 0), (-1, 0, 0), (-1, 0, 0), (-1, 0, 0)]),
]


def skeleton_31() -> Skeleton:
    names: list[str] = []
    parents: list[int] = []
    offsets: list[tuple[int, int, int]] = []
    for chain, (parent_name, _, links) in enumerate(_CHAINS):
        parent = -1 if parent_name is None else names.index(parent_name)
        for link, offset in enumerate(links):
            name = "Hips" if parent_name is None else ("Spine3" if chain == 3 and link == 3 else f"j{chain}_{link}")
            names.append(name)
            parents.append(parent)
            offsets.append(offset)
            parent = len(names) - 1
    layouts = [("tx", "ty", "tz", "rz", "ry", "rx")] + [("rz", "ry", "rx")] * (len(names) - 1)
    return Skeleton(names, parents, np.array(offsets, float), layouts,
                    position_replaces_offset=np.arange(len(names)) == 0)


def generated_clip(frames: int) -> Clip:
    skeleton = skeleton_31()
    rng = np.random.default_rng(frames)
    columns = int(skeleton.channel_starts()[-1])
    t = np.arange(frames)[:, None] / 120.0
    motion = 60.0 * np.sin(2 * np.pi * (rng.uniform(0.2, 2.0, columns) * t + rng.uniform(0, 1, columns)))
    return Clip(skeleton, motion, 1.0 / 120.0)


OTHER_FORMATS = (".htr", ".amc")


def best(repeat: int, work: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> float:
    """Least time by ``clock`` (wall time unless told) over ``repeat`` runs of ``work``."""
    times = []
    for _ in range(repeat):
        start = clock()
        work()
        times.append(clock() - start)
    return min(times)


def cpu_seconds(repeat: int, work: Callable[[], object]) -> float:
    """Least CPU time of this process over ``repeat`` runs of ``work`` (steadier than wall time on a busy machine)."""
    return best(repeat, work, time.process_time)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| frames | file MB | parse MB/s | np.loadtxt MB/s | parse ratio | FK frames/s "
          "| write MB/s | np.savetxt MB/s | write ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for frames in args.frames:
            clip = generated_clip(frames)
            path = Path(folder) / f"bench_{frames}.bvh"
            save(clip, path)
            size = path.stat().st_size / 1e6
            text = path.read_text()
            motion_text = text[text.index("Frame Time:"):].split("\n", 1)[1]
            motion_mb = len(motion_text) / 1e6
            parse = best(args.repeat, lambda: load(path))
            loadtxt = best(args.repeat, lambda: np.loadtxt(io.StringIO(motion_text)))
            loaded = load(path)
            fk = best(args.repeat, lambda: world_positions(loaded))
            write = best(args.repeat, lambda: save(loaded, path))
            rows = best(args.repeat, lambda: format_rows(loaded.motion, 6))
            savetxt = best(args.repeat, lambda: np.savetxt(io.StringIO(), loaded.motion, fmt="%.6f"))
            print(f"| {frames} | {size:.1f} | {size / parse:.0f} | {motion_mb / loadtxt:.0f} "
                  f"| {loadtxt / parse * size / motion_mb:.2f} | {frames / fk:,.0f} | {size / write:.0f} "
                  f"| {motion_mb / savetxt:.0f} | {savetxt / rows:.2f} |", flush=True)
        print("\n| format | frames | file MB | parse MB/s | write MB/s |\n|---|---:|---:|---:|---:|")
        for frames in args.frames:
            clip = generated_clip(frames)
            for extension in OTHER_FORMATS:
                path = Path(folder) / f"bench_{frames}{extension}"
                write = best(args.repeat, lambda: save(clip, path))
                size = path.stat().st_size / 1e6
                parse = best(args.repeat, lambda: load(path))
                print(f"| {extension[1:].upper()} | {frames} | {size:.1f} | {size / parse:.0f} | {size / write:.0f} |",
                      flush=True)


if __name__ == "__main__":
    main()
