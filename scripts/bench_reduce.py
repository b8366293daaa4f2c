"""Key reduction on real captures: keys kept, worst error and time, at two tolerances.

Keys are counted as an import writes them (quaternion rotations, one curve per
channel, constant and straight curves collapsed), against one key per frame
and curve.  The worst error is the largest distance of any bone head or tail
from the unreduced pose at any frame, as a fraction of the figure's height.
Files come from ``../shared/corpus``; ``--repeat-to N`` also reduces CMU 01_01
repeated end to end to N frames.  Not a test.

    python scripts/bench_reduce.py [--tolerances 0.002 0.001] [--repeat-to 50000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mocap_addon.core import Clip, load
from mocap_addon.core.reduce import reduce_keys

CORPUS = ROOT.parent / "shared" / "corpus"
CAPTURES = ["bvh/fm_cmu_01_01.bvh", "bvh/ganim_Xia_normal.bvh", "bvh/bandai_dataset-1_dance-short_normal_001.bvh",
            "htr/gpr450_xbot_samba_mixamo.com.htr", "asf_amc/fm_01_01.amc"]


def repeated(clip: Clip, frames: int) -> Clip:
    """``clip`` played end to end until it has ``frames`` frames."""
    copies = -(-frames // clip.frame_count)
    return Clip(clip.skeleton, np.tile(clip.motion, (copies, 1))[:frames], clip.frame_time)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tolerances", type=float, nargs="+", default=[0.002, 0.001])
    parser.add_argument("--repeat-to", type=int, default=0, help="also CMU 01_01 repeated to this many frames")
    args = parser.parse_args()
    clips = [(name, load(CORPUS / name)) for name in CAPTURES if (CORPUS / name).exists()]
    if args.repeat_to and clips:
        clips.append((f"CMU 01_01 x{args.repeat_to / clips[0][1].frame_count:.1f}",
                      repeated(clips[0][1], args.repeat_to)))
    print("| capture | frames | fps | tolerance | keys kept | worst error / height | CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, clip in clips:
        for tolerance in args.tolerances:
            started = time.process_time()
            result = reduce_keys(clip, tolerance)
            seconds = time.process_time() - started
            print(f"| {Path(name).name} | {clip.frame_count} | {clip.fps:.0f} | {tolerance:g} "
                  f"| {100 * result.kept_fraction:.1f} % | {result.worst_error / result.height:.2e} "
                  f"| {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
