"""Benchmark hostile input: time and memory stay linear in what a file holds.

First table: a chain of N joints (each the parent of the next: the deepest
hierarchy) is loaded, posed and written in each format's own form, and
converted from BVH.  CPU seconds, best of ``--repeat``; the last column is the
ratio of the largest N's time to the smallest's: as large as the ratio of the
N for linear work, its square for quadratic work, on any machine.

Second table: a 50 MB line of 12 million values where each format reads rows
or lines.  Each case runs in a fresh process, which reports the CPU time to
refuse it and its peak resident memory once the file is made (in memory, as a
reader holds it) and once it is refused.  Not a test.

    python scripts/bench_hostile.py [--joints 1000 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench_core import cpu_seconds

from mocap_addon.core import MocapFormatError, load, save, world_positions
from tests.test_hostile import chain_bvh, fifty_megabyte_lines

FORMATS = (".bvh", ".htr", ".amc")


def chain_times(joints: int, repeat: int, folder: Path) -> dict[str, float]:
    """CPU seconds per step for a ``joints``-long chain in every format."""
    source = folder / f"chain{joints}.bvh"
    source.write_bytes(chain_bvh(joints))
    times: dict[str, float] = {}
    for extension in FORMATS:
        name = extension[1:].upper()
        path = folder / f"chain{joints}{extension}"
        if extension != ".bvh":
            times[f"BVH to {name}"] = cpu_seconds(repeat, lambda: save(load(source), path))
        clip = load(path)
        times[f"{name} load"] = cpu_seconds(repeat, lambda: load(path))
        times[f"{name} pose"] = cpu_seconds(repeat, lambda: world_positions(clip))
        times[f"{name} write"] = cpu_seconds(repeat, lambda: save(clip, folder / f"again{extension}"))
    return times


def refuse_long_line(wanted: str) -> dict[str, object]:
    """In this (fresh) process: make the named 50 MB case and parse it."""
    parse, make = next((parse, make) for name, parse, make, _ in fifty_megabyte_lines() if name == wanted)
    data = make()
    built = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.process_time()
    try:
        parse(data, "long")
        outcome = "loaded"
    except MocapFormatError as error:
        outcome = str(error)
    seconds = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "built_mb": built, "peak_mb": peak, "file_mb": len(data) / 1e6, "outcome": outcome}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--joints", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--long-line", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.long_line:
        print(json.dumps(refuse_long_line(args.long_line)))
        return
    with tempfile.TemporaryDirectory() as folder:
        results = {joints: chain_times(joints, args.repeat, Path(folder)) for joints in args.joints}
    small, large = min(args.joints), max(args.joints)
    columns = " | ".join(f"{n:,} joints, CPU s" for n in args.joints)
    print(f"| step | {columns} | ratio ({large // small}x joints) |")
    print("|---|" + "---:|" * (len(args.joints) + 1))
    for step in results[small]:
        ratio = results[large][step] / max(results[small][step], 1e-6)
        print(f"| {step} | " + " | ".join(f"{results[n][step]:.3f}" for n in args.joints) + f" | {ratio:.1f} |")
    print("\n| 50 MB line in | CPU s to refuse | file MB | peak MB, file made | peak MB, refused | message |")
    print("|---|---:|---:|---:|---:|---|")
    for name, *_ in fifty_megabyte_lines():
        child = subprocess.run([sys.executable, __file__, "--long-line", name], capture_output=True, text=True,
                               check=True, cwd=REPO, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
        row = json.loads(child.stdout)
        print(f"| {name} | {row['seconds']:.2f} | {row['file_mb']:.0f} | {row['built_mb']:.0f} "
              f"| {row['peak_mb']:.0f} | {row['outcome'][:60]} |")


if __name__ == "__main__":
    main()
