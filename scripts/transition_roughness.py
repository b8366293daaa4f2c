"""How hard joints accelerate around the transitions of synthesize() and follow() on one graph of locomotion
(graph_report.py's: the corpus walks, CMU 01_01 and samples/walk_turn.bvh), against the clips' own windows of
the same length: the 95th percentiles, and which joints and transitions are the worst.  Not a test.

    python scripts/transition_roughness.py [--fps 30 120] [--worst 8]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from graph_report import CORPUS, LOCOMOTION, test_paths

from mocap_addon.core import load, world_positions
from mocap_addon.core.naming import CANONICAL_JOINTS
from mocap_addon.core.transitions import build, follow, synthesize
from mocap_addon.core.transitions.quality import transition_accelerations
from mocap_addon.core.transitions.synthesis import blend_length


def details(graph, result, blend: int) -> list[tuple[float, str, int, int]]:
    """Per transition: its window's peak (m/s2), the joint reaching it, its landing, frames its source had left."""
    positions = world_positions(result)
    accelerations = np.linalg.norm(positions[2:] - 2 * positions[1:-1] + positions[:-2], axis=-1) * graph.fps ** 2
    out = []
    for landing, source, _ in result.metadata["transitions"]:
        window = accelerations[max(0, landing - 2):landing - 2 + blend + 2]
        if not len(window):
            continue
        frame, joint = np.unravel_index(np.argmax(window), window.shape)
        left = int(graph.clip_ends[graph.clip_of(source)] - 1 - source)
        out.append((float(window[frame, joint]), CANONICAL_JOINTS[joint], landing, left))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fps", type=float, nargs="+", default=[30.0, 120.0])
    parser.add_argument("--worst", type=int, default=8)
    args = parser.parse_args()
    clips = [load(CORPUS / f) for f in LOCOMOTION] + [load(ROOT / "samples" / "walk_turn.bvh")]
    for fps in args.fps:
        started = time.process_time()
        graph = build(clips, fps=fps)
        blend = blend_length(5, graph.fps)
        made = {"synthesize": [synthesize(graph, clips, frames=round(20 * fps), seed=s) for s in (1, 2, 3)],
                "follow": [follow(graph, clips, p, seed=s) for p in test_paths().values() for s in (0, 1)]}
        library = transition_accelerations(graph, clips, made["synthesize"][0])[1]
        print(f"\n{fps:g} fps: {graph.frame_count} frames, blend {blend} frames; clips' windows p95 "
              f"{np.percentile(library, 95):.0f} m/s2 ({time.process_time() - started:.0f} s CPU)")
        for name, results in made.items():
            peaks = np.concatenate([transition_accelerations(graph, clips, r)[0] for r in results])
            rows = [row for r in results for row in details(graph, r, blend)]
            near = np.mean([left < blend for _, _, _, left in rows])
            print(f"  {name}: p95 {np.percentile(peaks, 95):.1f} m/s2 over {len(peaks)} transitions, "
                  f"{near:.0%} leave within the blend of a clip's end")
            for peak, joint, landing, left in sorted(rows, reverse=True)[:args.worst]:
                print(f"    {peak:6.0f} {joint:14s} landing {landing:5d}, source {left} frames before its clip's end")


if __name__ == "__main__":
    main()
