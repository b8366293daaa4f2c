"""Library batch throughput: ``python -m mocap_addon.core batch --to bvh`` on one library with 1 and 2
worker processes (and, with ``--dask``, on a local Dask cluster of 2), each run in a fresh output
folder, runs interleaved, best of ``--repeat``.  The goal (issue 22): 2 workers at least 1.6 times as
fast as 1.

The peer is the same number of tasks of pure CPU work (as long, on average, as a take with one
worker) on a process pool of 1 and 2: its ratio is what the machine gives two processes at the
moment, the most any batch could gain; ours over the peer's is the batch's own efficiency.

The library is the tests' (``tests/batch_library.py``): renamed copies of every take of
``../shared/corpus`` in nested folders plus six broken files; without the corpus, copies of the two
bundled samples.  The machine's load average is printed beside each run: on a shared machine, read
the ratio with it in mind (2 workers cannot run twice as fast where other work holds a core).

    python scripts/bench_batch.py [--takes 300] [--repeat 3] [--dask]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.batch_library import build_library
from tests.conftest import CORPUS, SAMPLES


def sample_library(root: Path, takes: int) -> int:
    """Copies of the bundled samples in nested folders (when the corpus is absent)."""
    samples = sorted(SAMPLES.glob("*.bvh"))
    for number in range(takes):
        folder = root / f"set_{number % 5}" / f"session_{number % 17:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(samples[number % len(samples)], folder / f"take_{number:04d}.bvh")
    return takes


def run(library: Path, out: Path, *options: str) -> float:
    """Wall seconds of one batch run into a fresh ``out``."""
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "mocap_addon.core", "batch", str(library), "-o", str(out),
                             "--to", "bvh", *options], cwd=REPO, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if result.returncode not in (0, 1):
        raise SystemExit(f"batch failed:\n{result.stderr}")
    return seconds


def spin(seconds: float) -> float:
    """Pure CPU work for about ``seconds`` (on an idle core)."""
    total, end = 0.0, time.process_time() + seconds
    while time.process_time() < end:
        total += sum(i * i for i in range(1000))
    return total


def peer(tasks: int, seconds: float, workers: int) -> float:
    """Wall seconds of ``tasks`` pieces of CPU work on a pool of ``workers`` processes."""
    started = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(spin, [seconds] * tasks))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--takes", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dask", action="store_true", help="also on a local Dask cluster of 2 workers")
    options = parser.parse_args()
    setups = {"1 worker": ["--jobs", "1"], "2 workers": ["--jobs", "2"]}
    if options.dask:
        setups["Dask LocalCluster, 2 workers"] = ["--jobs", "2", "--scheduler", "local"]
    with tempfile.TemporaryDirectory(prefix="bench_batch_") as scratch:
        library = Path(scratch) / "library"
        if CORPUS.is_dir():
            built = build_library(library, options.takes)
            count, source = len(built.takes) + len(built.broken), "corpus copies (6 broken)"
        else:
            count, source = sample_library(library, options.takes), "sample copies"
        size = sum(p.stat().st_size for p in library.rglob("*") if p.is_file()) / 1e6
        print(f"library: {count} takes, {size:.0f} MB ({source}); {os.cpu_count()} cores")
        best: dict[str, float] = {}
        loads: dict[str, list[float]] = {name: [] for name in [*setups, "peer, 1 process", "peer, 2 processes"]}
        for _ in range(options.repeat):
            for name, flags in setups.items():
                loads[name].append(os.getloadavg()[0])
                seconds = run(library, Path(scratch) / "out", *flags)
                best[name] = min(best.get(name, float("inf")), seconds)
                print(f"  {name}: {seconds:.2f} s (load average {loads[name][-1]:.1f} before)", flush=True)
            each = 0.8 * best["1 worker"] / count  # CPU work per task, a little under a take's wall time
            for workers in (1, 2):
                name = f"peer, {workers} process{'es' if workers > 1 else ''}"
                loads[name].append(os.getloadavg()[0])
                seconds = peer(count, each, workers)
                best[name] = min(best.get(name, float("inf")), seconds)
                print(f"  {name}: {seconds:.2f} s (load average {loads[name][-1]:.1f} before)", flush=True)
    print()
    print("| setup | best wall s | files/s | ratio to 1 worker | load average before runs |")
    print("|---|---:|---:|---:|---|")
    for name in best:
        first = best["peer, 1 process"] if name.startswith("peer") else best["1 worker"]
        print(f"| {name} | {best[name]:.2f} | {count / best[name]:.1f} | {first / best[name]:.2f} | "
              f"{', '.join(f'{v:.1f}' for v in loads[name])} |")
    ratio = best["1 worker"] / best["2 workers"]
    machine = best["peer, 1 process"] / best["peer, 2 processes"]
    print(f"\n2 workers / 1 worker: {ratio:.2f}x (goal 1.6x): {'met' if ratio >= 1.6 else 'NOT met'}; "
          f"the machine gave 2 processes {machine:.2f}x (peer); ours / peer: {ratio / machine:.2f}")


if __name__ == "__main__":
    main()
