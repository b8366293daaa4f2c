"""What a library batch pays for retargeting and previews: ``batch --to bvh`` on one library three ways in
one sitting (converting alone; with ``--retarget-onto RIG --feet planted``; with ``--previews`` as well),
each in a fresh output folder with ``--jobs 2``: wall seconds and each way's ratio to converting alone (the
machine's load average beside: the workers' CPU time is not visible from here).  The issue's goal: all
three at most 2.5x converting alone.

The library is the tests' (``tests/batch_library.py``: renamed copies of the corpus's takes).  Not a test.

    python scripts/bench_library.py [--takes 250] [--rig ../shared/corpus/bvh/ganim_Xia_normal.bvh]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.batch_library import build_library
from tests.conftest import CORPUS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--takes", type=int, default=250)
    parser.add_argument("--rig", default=str(CORPUS / "bvh" / "ganim_Xia_normal.bvh"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        library = build_library(Path(folder) / "library", args.takes, broken=False)
        ways = {"convert": [], "+ planted retarget": ["--retarget-onto", args.rig, "--feet", "planted"],
                "+ previews": ["--retarget-onto", args.rig, "--feet", "planted", "--previews"]}
        print(f"{len(library.takes)} takes, rig {Path(args.rig).name}; {time.strftime('%Y-%m-%d %H:%M')}")
        print("| run | wall s | ratio to converting | load average |\n|---|---:|---:|---:|")
        first: float | None = None
        for number, (name, extra) in enumerate(ways.items()):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "mocap_addon.core", "batch", str(library.root), "-o",
                            f"{folder}/out{number}", "--to", "bvh", "--jobs", "2", *extra], cwd=REPO, check=False,
                           capture_output=True)
            wall = time.perf_counter() - started
            first = first or wall
            print(f"| {name} | {wall:.1f} | {wall / first:.2f} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
