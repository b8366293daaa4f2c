"""What a library batch pays for retargeting and previews: ``batch --to bvh`` on one library three ways in
one sitting (converting alone; with ``--retarget-onto RIG --feet planted``; with ``--previews`` as well),
each in a fresh output folder: wall seconds, the CPU seconds of the batch and its workers (children's
rusage: on a shared machine the fairer measure), each way's ratio to converting alone, and the load
average.  The issue's goal: all three at most 2.5x converting alone.

``--ways full`` runs only the last way (the whole library, once); ``--workers 1 2`` runs each way with 1
then 2 workers (``--scheduler local``: a local Dask cluster of that many) for the scaling.

Libraries: ``tests`` (``tests/batch_library.py``: renamed copies of every corpus take, humanoid or not) or
``cmu`` (CMU-shaped: ``--takes`` copies of humanoid captures in BVH and ASF/AMC in 100 subject folders;
2,500 takes hold 2.7 million frames).  Not a test.

    python scripts/bench_library.py [--library tests|cmu] [--takes 250] [--workers 2] [--ways all|full]
        [--scheduler local] [--rig ../shared/corpus/bvh/ganim_Xia_normal.bvh] [--keep FOLDER]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.batch_library import build_library, cmu_shaped_library
from tests.conftest import CORPUS


def adopt_orphans() -> None:
    """Become the reaper of our descendants whose parent ends first (Linux): the batch's workers are
    children of its fork server, which outlives the batch; waiting for it here counts their CPU too."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def reap(patience: float = 30.0) -> None:
    """Wait for every descendant left (the fork server ends once the batch has)."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process and its waited-for descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_way(library: Path, out: Path, workers: int, scheduler: str | None, extra: list[str]) -> dict[str, float]:
    """One batch run into ``out``: wall and CPU seconds, takes converted and failed, load average after."""
    scheduling = ["--scheduler", scheduler] if scheduler else []
    shutil.rmtree(out, ignore_errors=True)  # every way from nothing
    cpu, started = children_cpu(), time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "mocap_addon.core", "batch", str(library), "-o", str(out),
                             "--to", "bvh", "--jobs", str(workers), *scheduling, *extra], cwd=REPO, check=False,
                            capture_output=True, text=True)
    wall = time.perf_counter() - started
    reap()
    cpu = children_cpu() - cpu
    if result.returncode not in (0, 1):
        raise SystemExit(f"batch failed:\n{result.stderr[-2000:]}")
    lines = [json.loads(line) for line in (out / "report.jsonl").read_text().splitlines() if line.strip()]
    return {"wall": wall, "cpu": cpu, "ok": sum(line["status"] == "ok" for line in lines),
            "failed": sum(line["status"] == "error" for line in lines), "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", choices=["tests", "cmu"], default="tests")
    parser.add_argument("--takes", type=int, default=250)
    parser.add_argument("--rig", default=str(CORPUS / "bvh" / "ganim_Xia_normal.bvh"))
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--scheduler", default=None, help="local: a local Dask cluster of --workers processes")
    parser.add_argument("--ways", choices=["all", "full"], default="all")
    parser.add_argument("--keep", default=None, help="make the library (and outputs) in this folder, kept")
    args = parser.parse_args()
    adopt_orphans()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        root = folder / f"library_{args.library}_{args.takes}"
        if not root.exists():
            make = cmu_shaped_library if args.library == "cmu" else build_library
            make(root, args.takes, **({} if args.library == "cmu" else {"broken": False}))
        retarget = ["--retarget-onto", args.rig, "--feet", "planted"]
        ways = {"convert": [], "+ planted retarget": retarget, "+ previews": [*retarget, "--previews"]}
        if args.ways == "full":
            ways = {"+ previews": ways["+ previews"]}
        print(f"{args.library} library, {args.takes} takes, rig {Path(args.rig).name}, scheduler "
              f"{args.scheduler or 'processes'}; {time.strftime('%Y-%m-%d %H:%M')} UTC, load average "
              f"{os.getloadavg()[0]:.1f}")
        print("| run | workers | ok | failed | wall s | CPU s | wall ratio | CPU ratio | load average |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
        for workers in args.workers:
            first: dict[str, float] | None = None
            for number, (name, extra) in enumerate(ways.items()):
                measured = run_way(root, folder / f"out_{workers}_{number}", workers, args.scheduler, extra)
                first = first or measured
                print(f"| {name} | {workers} | {measured['ok']:.0f} | {measured['failed']:.0f} | "
                      f"{measured['wall']:.1f} | {measured['cpu']:.1f} | {measured['wall'] / first['wall']:.2f} | "
                      f"{measured['cpu'] / first['cpu']:.2f} | {measured['load']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
