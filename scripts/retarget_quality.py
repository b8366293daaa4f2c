"""Measure retargets as an animator would judge them, on the corpus: twist, floor, sliding feet, pops.

Prints Markdown tables (the README's figures come from here):

* canonical clips: the knees' and elbows' axes in their own bones' frames
  against the anatomical ones (degrees), and on walks how far the hips, chest
  and head face from the direction of travel;
* walks from other captures onto the rigs: the slide of planted feet per
  contact frame (leg lengths), source and result, the planted ankle height
  against the rig's own captures, and the largest knee step, for ``feet="free"``
  and ``"planted"``;
* every human take onto every rig with planted feet (:mod:`core.retarget.judging`):
  the share of contact frames whose lowest foot point (heel, ball, toe tip) is
  within 0.015 leg lengths of the rig's floor, the highest above it, the deepest under it (and the
  source's own), each stance's knee flexion at mid-stance against the source's,
  straight-knee frames, limb spins, frames out of reach, CPU time and warnings;
* ``--spins-only``: every human take onto every rig, feet free and planted: frames
  where a limb bone spins (turns over 60 degrees while the source's turns under 20),
  bone by bone, and the arms' twist against the source's (p95);
* with ``--plot FOLDER`` (matplotlib), a side view of each retarget's legs and
  feet over time, free above planted, and each take's lowest foot point and
  knee flexion against the source's.  Not a test.

    python scripts/retarget_quality.py [--corpus ../shared/corpus] [--plot /tmp/feet] [--walk other.bvh ...]
        [--soles-only | --spins-only]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mocap_addon.core import Clip, load, world_positions
from mocap_addon.core.body.anatomy import angle_between, facing_to_travel, hinge_axes, largest_bend_step
from mocap_addon.core.body.contacts import Contacts, find_contacts
from mocap_addon.core.naming import map_skeleton
from mocap_addon.core.retarget.judging import Judgement, judge
from mocap_addon.core.retarget.transfer import retarget, to_canonical

WALKS = ["bvh/ganim_Xia_normal.bvh", "bvh/bandai_dataset-2_walk_elderly_004.bvh",
         "asf_amc/vicon_male.walk-speed 4.AMC", "htr/gpr450_xbot_walk_m_mixamo.com.htr",
         "bvh/bandai_dataset-1_walk_normal_001.bvh"]
RIGS = ["bvh/fm_cmu_01_01.bvh", "htr/gpr450_xbot_samba_mixamo.com.htr", "bvh/bandai_dataset-1_walk_normal_001.bvh",
        "asf_amc/fm_01_01.amc"]
ANATOMICAL = {"knee_l": [1.0, 0.0, 0.0], "knee_r": [1.0, 0.0, 0.0], "elbow_l": [0.0, -1.0, 0.0],
              "elbow_r": [0.0, 1.0, 0.0]}
NOT_HUMAN = ("Crab", "simple", "sinusoidal", "maya_export", "JSON_not_bvh")


def joints_of(clip: Clip) -> dict[str, int]:
    return {c: clip.skeleton.index(n) for n, c in map_skeleton(clip.skeleton).items() if c is not None}


def feet(clip: Clip) -> np.ndarray:
    """World positions ``(F, 2, 2, 3)`` of the ankles and balls of the feet."""
    index, positions = joints_of(clip), world_positions(clip)
    return positions[:, [[index[f"foot_{s}"], index.get(f"toes_{s}", index[f"foot_{s}"])] for s in "lr"]]


def canonical_table(corpus: Path) -> None:
    files = sorted(p for folder in ("bvh", "htr", "asf_amc") for p in (corpus / folder).iterdir()
                   if p.suffix.lower() in (".bvh", ".htr", ".amc") and not any(w in p.name for w in NOT_HUMAN))
    print("| file | knee L | knee R | elbow L | elbow R | hips | chest | head |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for path in files:
        canonical = to_canonical(load(path))
        axes = hinge_axes(canonical)
        cells = [f"{angle_between(a, np.array(ANATOMICAL[h])):.2f}" if a is not None else "-" for h, a in axes.items()]
        facing = facing_to_travel(canonical) if any(w.endswith(path.name) for w in WALKS) else {}
        cells += [f"{facing[j]:.0f}" if j in facing else "" for j in ("hips", "spine_04", "head")]
        print(f"| {path.name} | " + " | ".join(cells) + " |", flush=True)


def feet_table(corpus: Path, plots: Path | None, walks: list[str]) -> None:
    print("\n| rig | walk | slide source | free | planted | planted / source | planted height rig | free | "
          "planted | knee step source | planted | missed frames |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rig_name in RIGS:
        rig = load(corpus / rig_name)
        own = find_contacts(rig)
        for walk_name in [w for w in walks if w != rig_name]:
            source = load(corpus / walk_name)
            contacts = find_contacts(source)
            results = {mode: retarget(source, rig, feet=mode) for mode in ("free", "planted")}
            measured = {mode: replace(contacts, points=feet(r), up=own.up, leg=own.leg) for mode, r in results.items()}
            slides = {mode: m.slide() for mode, m in measured.items()}
            heights = {mode: float(np.median(((m.points[..., 0, :] @ own.up - own.floor) / own.leg)[
                contacts.touching[..., 0]])) for mode, m in measured.items()}
            planted = results["planted"]
            print(f"| {Path(rig_name).name} | {Path(walk_name).name} | {contacts.slide():.5f} | "
                  f"{slides['free']:.5f} | {slides['planted']:.5f} | {slides['planted'] / contacts.slide():.2f} | "
                  f"{own.planted_height():.3f} | "
                  f"{heights['free']:.3f} | {heights['planted']:.3f} | {largest_bend_step(source):.1f} | "
                  f"{largest_bend_step(planted):.1f} | {planted.metadata['feet']['missed_frames']} |", flush=True)
            if plots is not None:
                draw(plots / f"{Path(walk_name).stem}_onto_{Path(rig_name).stem}.png", contacts, own, measured,
                     f"{Path(walk_name).name} onto {Path(rig_name).name}")


def human_takes(corpus: Path) -> list[Path]:
    """Every human take of the corpus (more than one frame)."""
    return sorted(p for folder in ("bvh", "htr", "asf_amc") for p in (corpus / folder).iterdir()
                  if p.suffix.lower() in (".bvh", ".htr", ".amc") and not any(w in p.name for w in NOT_HUMAN))


def soles_table(corpus: Path, plots: Path | None, extra: list[str]) -> None:
    """Every human take onto every rig, feet planted: soles, stance knees, straight knees, spins, reach."""
    print("\n| rig | take | frames | contact frames | soles within 0.015 | highest | deepest | source deepest | "
          "stance knee error p50 / max | straight knees result / source | spins | missed | CPU s | warnings |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for rig_name, take, _, result, seconds, judged in judged_retargets(corpus, extra, ("planted",)):
        errors = np.abs(judged.stance_knee_errors())
        knees = f"{np.median(errors):.1f} / {errors.max():.1f}" if errors.size else "-"
        straight = judged.straight()
        warnings = "; ".join(w.split(":")[0] for w in result.metadata.get("warnings", []))
        print(f"| {Path(rig_name).name} | {take.name} | {judged.frames} | {judged.contact_frames} | "
              f"{judged.on_floor():.3f} | {judged.highest():.3f} | {judged.deepest():.3f} | "
              f"{judged.source_deepest():.3f} | {knees} | {straight[0]} / {straight[1]} | {judged.spins} | "
              f"{result.metadata['feet'].get('missed_frames', 0)} | {seconds:.2f} | {warnings} |", flush=True)
        if plots is not None:
            draw_soles(plots / f"soles_{take.stem}_onto_{Path(rig_name).stem}.png", judged,
                       f"{take.name} onto {Path(rig_name).name}")


def judged_retargets(corpus: Path, extra: list[str], modes: tuple[str, ...]
                     ) -> Iterator[tuple[str, Path, str, Clip, float, Judgement]]:
    """Every human take (and the extra files) retargeted onto every rig with each feet mode, judged:
    ``(rig name, take, feet mode, result, CPU seconds, judgement)``."""
    for rig_name in RIGS:
        rig = load(corpus / rig_name)
        for take in human_takes(corpus) + [Path(w) for w in extra]:
            source = load(take)
            for mode in modes:
                started = time.process_time()
                result = retarget(source, rig, feet=mode)
                seconds = time.process_time() - started
                yield rig_name, take, mode, result, seconds, judge(source, rig, result)


def spins_table(corpus: Path, plots: Path | None, extra: list[str]) -> None:
    """Every human take onto every rig, feet free and planted: limb spins bone by bone (frames where a
    bone turns over 60 degrees while the source's turns under 20), and how far the arms are twisted about
    their bones (and the hands turned at all) from where the source's rotations put them, p95."""
    print("\n| rig | take | feet | frames | spin frames (%) | spinning bones | upper arm twist p95 | "
          "forearm twist p95 | hand twist p95 | hand turn p95 | CPU s |")
    print("|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for rig_name, take, mode, _, seconds, judged in judged_retargets(corpus, extra, ("free", "planted")):
        bones = ", ".join(f"{limb} {count}" for limb, count in judged.limb_spins.items() if count) or "-"
        cells = [_p95(judged.twists, bone) for bone in ("upper_arm", "lower_arm", "hand")]
        cells.append(_p95(judged.arm_turns, "hand"))
        print(f"| {Path(rig_name).name} | {take.name} | {mode} | {judged.frames} | {judged.spins} "
              f"({100 * judged.spins / max(judged.frames - 1, 1):.2f}) | {bones} | " + " | ".join(cells)
              + f" | {seconds:.2f} |", flush=True)
        if plots is not None and mode == "free":
            draw_arms(plots / f"arms_{take.stem}_onto_{Path(rig_name).stem}.png", judged,
                      f"{take.name} onto {Path(rig_name).name}")


def _p95(errors: dict[str, np.ndarray], bone: str) -> str:
    """The larger side's 95th percentile of ``|errors|`` of a bone (degrees), or '-' where unmapped."""
    sides = [np.percentile(np.abs(errors[f"{bone}_{side}"]), 95) for side in "lr" if f"{bone}_{side}" in errors]
    return f"{max(sides):.1f}" if sides else "-"


def draw_arms(path: Path, judged: Judgement, title: str) -> None:
    """Each arm bone's twist against the source's over time, and the frames where a limb spins."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(3, 1, figsize=(12, 7), sharex=True)
    frames = np.arange(judged.frames)
    for axis, bone in zip(axes, ("upper_arm", "lower_arm", "hand")):
        for side, colour in (("l", "tab:blue"), ("r", "tab:red")):
            if f"{bone}_{side}" in judged.twists:
                axis.plot(frames, judged.twists[f"{bone}_{side}"], color=colour, label=f"twist {side.upper()}")
            if bone == "hand" and f"{bone}_{side}" in judged.arm_turns:
                axis.plot(frames, judged.arm_turns[f"{bone}_{side}"], color=colour, linestyle=":",
                          label=f"whole turn {side.upper()}")
        axis.set_ylabel(f"{bone} (degrees)")
        axis.legend(fontsize=7, loc="upper right")
    axes[0].set_title(f"{title}, feet free: arm bones against the source's ({judged.spins} spin frames)", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=70)
    plt.close(figure)


def draw_soles(path: Path, judged: Judgement, title: str) -> None:
    """The lowest foot point above the floor and the knees' flexion over time, source beside result."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(3, 1, figsize=(12, 8), sharex=True)
    frames = np.arange(judged.frames)
    for side, colour in ((0, "tab:blue"), (1, "tab:red")):
        axes[0].plot(frames, judged.soles[:, side], color=colour, label=f"result {'LR'[side]}")
        axes[0].plot(frames, judged.source_soles[:, side], color=colour, linestyle=":", label=f"source {'LR'[side]}")
        axes[0].fill_between(frames, -0.03 - 0.01 * side, -0.025 - 0.01 * side, where=judged.planted[:, side],
                             color=colour, step="mid")
        axes[1 + side].plot(frames, judged.source_knees[:, side], color="black", label="source")
        axes[1 + side].plot(frames, judged.knees[:, side], color=colour, label="result")
        axes[1 + side].fill_between(frames, 0, 4, where=judged.planted[:, side], color=colour, alpha=0.3, step="mid")
        axes[1 + side].set_ylabel(f"knee {'LR'[side]} flexion (degrees)")
        axes[1 + side].legend(fontsize=7, loc="upper right")
    axes[0].axhline(0.0, color="black", linewidth=0.5)
    axes[0].set_ylim(-0.06, 0.3)
    axes[0].set_ylabel("lowest foot point (leg lengths)")
    axes[0].legend(fontsize=7, loc="upper right")
    axes[0].set_title(f"{title}: feet planted (contacts shaded)", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=70)
    plt.close(figure)


def draw(path: Path, contacts: Contacts, own: Contacts, measured: dict[str, Contacts], title: str) -> None:
    """Ankle heights above the rig's floor over time (contacts shaded), free above planted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 1, figsize=(12, 6), sharex=True)
    frames = np.arange(contacts.frame_count)
    for axis, (mode, points) in zip(axes, measured.items()):
        for side, colour in ((0, "tab:blue"), (1, "tab:red")):
            height = (points.points[:, side, 0] @ own.up - own.floor) / own.leg
            axis.plot(frames, height, color=colour, label=f"ankle {'LR'[side]}")
            axis.fill_between(frames, -0.04 + 0.015 * side, -0.03 + 0.015 * side, where=contacts.touching[:, side, 0],
                              color=colour, alpha=0.5, step="mid")
        axis.axhline(own.planted_height(), color="green", linestyle=":", label="rig's planted height")
        axis.axhline(0.0, color="black", linewidth=0.5)
        axis.set_ylabel("leg lengths")
        axis.set_title(f"{title}: feet {mode}", fontsize=9)
        axis.legend(fontsize=7, loc="upper right")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=70)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--plot", type=Path, help="a folder for side views (needs matplotlib)")
    parser.add_argument("--walk", action="append", default=[], help="another walk (a path) to retarget onto the rigs")
    parser.add_argument("--soles-only", action="store_true", help="only the table of every take onto every rig")
    parser.add_argument("--spins-only", action="store_true",
                        help="only the table of limb spins and arm twists, every take onto every rig")
    args = parser.parse_args()
    if args.spins_only:
        spins_table(args.corpus, args.plot, [str(Path(w).resolve()) for w in args.walk])
        return
    if not args.soles_only:
        canonical_table(args.corpus)
        feet_table(args.corpus, args.plot, WALKS + [str(Path(w).resolve()) for w in args.walk])
    soles_table(args.corpus, args.plot, [str(Path(w).resolve()) for w in args.walk])


if __name__ == "__main__":
    main()
