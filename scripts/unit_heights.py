"""Every human take of the corpus read with Unit Auto, side by side at the size it imports (metres), with the
1.2-2.2 m band and the unit each was read in; and the CPU time of the guess.

    python scripts/unit_heights.py [OUT.png]     (default unit_heights.png; needs ../shared/corpus)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from mocap_addon.core import load, world_positions
from mocap_addon.core.body.stature import guess_unit, with_guessed_unit

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
TAKES = [("asf_amc/fm_01_01.amc", "asf_amc/fm_01.asf"),
         ("asf_amc/vicon_male.walk-speed 4.AMC", "asf_amc/vicon_male.ASF"),
         *((f"bvh/{n}.bvh", None) for n in ("bandai_dataset-1_walk_normal_001", "bvhio_example", "bvhpy_test_freebvh",
                                            "fm_cmu_01_01", "fm_pfnn_hierarchy", "ganim_Joe_traj-example",
                                            "ganim_Malcolm_Gangnam-Style", "ganim_Xia_normal", "lafan1res_Geno_bind")),
         *((f"htr/{n}", None) for n in ("gpr450_xbot_base.HTR", "gpr450_xbot_walk_m_mixamo.com.htr"))]


def main(out: str) -> None:
    figure, axes = plt.subplots(figsize=(16, 5), dpi=100)
    for column, (path, skeleton) in enumerate(TAKES):
        clip = load(CORPUS / path, skeleton=CORPUS / skeleton) if skeleton else load(CORPUS / path)
        started = time.process_time()
        guess = guess_unit(clip)
        spent = time.process_time() - started
        read = with_guessed_unit(clip)
        points = world_positions(read)[0] * read.unit_in_metres
        extents = np.ptp(points, axis=0)
        up = 1 if extents[1] >= 0.25 * extents.max() else int(np.argmax(extents))  # one lying down: its length
        side = 0 if up != 0 else 2
        x = points[:, side] - points[:, side].mean() + 1.0 * column
        y = points[:, up] - points[:, up].min()
        parents = read.skeleton.parents
        for joint, parent in enumerate(parents):
            if parent >= 0:
                axes.plot([x[parent], x[joint]], [y[parent], y[joint]], color="tab:blue", lw=1)
        label = Path(path).stem[:18]
        unit = f"{read.unit_in_metres:.4g} m/unit" + (" (warned)" if guess.warning else "")
        axes.text(1.0 * column, -0.25, f"{label}\n{unit}\n{1000 * spent:.0f} ms", ha="center", fontsize=7)
        print(f"{path}: unit {read.unit_in_metres:.6g} m, stature {guess.stature * read.unit_in_metres:.3f} m, "
              f"first frame {y.max():.3f} m tall, guess {1000 * spent:.1f} ms CPU")
    for level in (1.2, 2.2):
        axes.axhline(level, color="tab:red", ls="--", lw=0.8)
    axes.set_aspect("equal")
    axes.set_ylim(-0.45, 2.5)
    axes.set_title("Corpus human takes read with Unit Auto (first frame, metres; red: 1.2 and 2.2 m)")
    figure.tight_layout()
    figure.savefig(out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "unit_heights.png")
