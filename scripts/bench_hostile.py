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

Third table (``--large-take BVH``, issue 26): a take repeated to ``--megabytes``
(default 200; written to a temporary folder, never kept) is converted to BVH, HTR
and ASF/AMC by the command line under ``/usr/bin/time -v``; its peak resident
memory is compared with the file's size (the aim: at most 4x).

    python scripts/bench_hostile.py [--joints 1000 10000] [--repeat 3]
    python scripts/bench_hostile.py --large-take ../shared/corpus/bvh/bandai_dataset-1_walk_normal_001.bvh
"""

from __future__ import annotations

import argparse
import json
import os
import re
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


def repeated_take(source: Path, megabytes: float, target: Path) -> int:
    """Write ``source`` (a BVH) with its frames repeated until the file reaches ``megabytes``; the frame count."""
    data = source.read_bytes()
    match = re.search(rb"Frames:[ \t]*\d+[ \t]*\r?\n(Frame Time:[^\n]*\n)", data)
    if match is None:
        raise SystemExit(f"{source}: no Frames:/Frame Time: lines")
    rows = data[match.end():].rstrip(b"\r\n") + b"\n"
    copies = int(megabytes * 1e6 // len(rows)) + 1
    frames = rows.count(b"\n") * copies
    with open(target, "wb") as stream:
        stream.write(data[:match.start()] + b"Frames: %d\n" % frames + match.group(1))
        for _ in range(copies):
            stream.write(rows)
    return frames


def large_take_memory(source: Path, megabytes: float) -> None:
    """Peak resident memory converting the repeated take to each format, against its size."""
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "large.bvh"
        frames = repeated_take(source, megabytes, big)
        size = big.stat().st_size
        print(f"{big.name}: {size / 1e6:.0f} MB, {frames:,} frames (from {source.name})\n")
        print("| converted to | peak MB | peak / file size | wall s |")
        print("|---|---:|---:|---:|")
        for extension in FORMATS:
            timed = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "mocap_addon.core", "convert",
                                    str(big), str(Path(folder) / f"out{extension}")], capture_output=True,
                                   text=True, check=True, cwd=REPO)
            peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timed.stderr).group(1)) * 1024
            wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", timed.stderr).group(1)
            seconds = sum(float(part) * 60 ** n for n, part in enumerate(reversed(wall.split(":"))))
            print(f"| {extension[1:].upper()} | {peak / 1e6:.0f} | {peak / size:.1f} | {seconds:.0f} |")
            for written in Path(folder).glob("out.*"):
                written.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--joints", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--long-line", help=argparse.SUPPRESS)
    parser.add_argument("--large-take", type=Path, help="a BVH to repeat into a large take (memory table only)")
    parser.add_argument("--megabytes", type=float, default=200.0, help="size of the large take (default 200)")
    args = parser.parse_args()
    if args.large_take:
        large_take_memory(args.large_take, args.megabytes)
        return
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
