"""Measure blends of real walks as an animator would judge them: planted feet, floor, paths, time warps.

Four pairs of walks from different captures and formats (two of them pairs
whose lengths differ by about three), ``blend(a, b, mix, align="dtw")`` at
mix 0.5 and 1 with ``feet="planted"`` and ``"free"``: the result's frame count,
the height of its ankles over ``a``'s ankle contacts against ``a``'s own
planted height, and the slide of its feet over ``a``'s contacts and over its
own (leg lengths per contact frame) against the inputs' own, with the bar of
issue 20 (1.25 x the more sliding input's + 0.0005).  Prints Markdown tables
(the README's figures come from here).  With ``--plot FOLDER`` (matplotlib),
per pair the feet's heights over time with their contacts shaded for ``a``,
``b`` on ``a``'s body and the blend, and the hips' paths from above.  Not a test.

    python scripts/blend_quality.py [--corpus ../shared/corpus] [--plot /tmp/blends]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mocap_addon.core import Clip, load, world_positions
from mocap_addon.core.blend.mixing import blend
from mocap_addon.core.body.contacts import Contacts, find_contacts
from mocap_addon.core.naming import map_skeleton
from mocap_addon.core.pose import as_pose

# (a, b): a's timeline is kept.  A name with "@s" is the file's first s seconds.  The third pair: b is 2.8 x
# a's length; the fourth: a is 3 x b's.
PAIRS = [("bvh/ganim_Xia_normal.bvh", "asf_amc/vicon_male.walk-speed 4.AMC"),
         ("asf_amc/vicon_male.walk-speed 4.AMC", "bvh/bandai_dataset-1_walk_normal_001.bvh"),
         ("htr/gpr450_xbot_walk_m_mixamo.com.htr", "bvh/ganim_Xia_normal.bvh"),
         ("bvh/bandai_dataset-1_walk_normal_001.bvh", "bvh/ganim_Xia_normal.bvh@2.2")]
HEIGHT_BAR = 0.03  # leg lengths from a's planted height
SLIDE_FACTOR, SLIDE_SLACK = 1.25, 0.0005  # times the more sliding input's, plus leg lengths per contact frame
MODES = [("planted", "blend"), ("free", "blend"), ("planted", "heading"), ("free", "heading")]  # feet, root


def walk(corpus: Path, name: str) -> Clip:
    """A walk of the corpus (``"path@s"``: its first ``s`` seconds)."""
    path, _, seconds = name.partition("@")
    clip = load(corpus / path)
    if seconds:
        clip.motion = clip.motion[:round(float(seconds) / clip.frame_time)].copy()
    return clip


def label(name: str) -> str:
    path, _, seconds = name.partition("@")
    return Path(path).name + (f" (first {seconds} s)" if seconds else "")


def feet(clip: Clip) -> np.ndarray:
    """World positions ``(F, 2, 2, 3)`` of the ankles and balls of the feet."""
    index = {c: clip.skeleton.index(n) for n, c in map_skeleton(clip.skeleton).items() if c is not None}
    positions = world_positions(clip)
    return positions[:, [[index[f"foot_{s}"], index.get(f"toes_{s}", index[f"foot_{s}"])] for s in "lr"]]


# One performer (issue 28): bars on the hips' turn, facing against travel, knee steps, the warp's use of b.
TURN_BAR = 30.0  # degrees the hips turn in one frame, at most
FACING_BAR = 60.0  # degrees between facing and travel while moving, at most
KNEE_SLACK = 10.0  # degrees per frame over the inputs' largest knee step
SHARE_BAR = 0.5  # of b's frames (or of those a's duration spans in b) the warp plays, at least
MOVING = 0.2  # leg lengths per second: the hips move (travel over a second)
TRAVEL_WINDOW = 0.5  # seconds either side over which travel is measured (a step's sway averages out)


def _canonical(clip: Clip) -> dict[str, int]:
    return {c: clip.skeleton.index(n) for n, c in map_skeleton(clip.skeleton).items() if c is not None}


def hips_turns(clip: Clip) -> np.ndarray:
    """Degrees the hips' world orientation turns from each frame to the next ``(F - 1,)``."""
    turns = as_pose(clip).world().quaternions[:, _canonical(clip)["hips"]]
    cosine = np.abs(np.sum(turns[1:] * turns[:-1], axis=-1))
    return np.degrees(2.0 * np.arccos(np.clip(cosine, 0.0, 1.0)))


def facing_off_travel(clip: Clip) -> tuple[np.ndarray, np.ndarray]:
    """Degrees between where the hips face (square to the thighs) and where they travel ``(F,)``, and
    whether they move then (travel over :data:`TRAVEL_WINDOW` either side faster than :data:`MOVING`)."""
    index, contacts = _canonical(clip), find_contacts(clip)
    positions = world_positions(clip)
    up = contacts.up
    facing = np.cross(positions[:, index["upper_leg_l"]] - positions[:, index["upper_leg_r"]], up)
    hips = positions[:, index["hips"]] - np.outer(positions[:, index["hips"]] @ up, up)
    rows = np.arange(clip.frame_count)
    reach = max(1, round(TRAVEL_WINDOW / clip.frame_time))
    ahead, behind = np.minimum(rows + reach, rows[-1]), np.maximum(rows - reach, 0)
    travel = (hips[ahead] - hips[behind]) / np.maximum(ahead - behind, 1)[:, None]
    speed = np.linalg.norm(travel, axis=1)
    cosine = np.sum(travel * facing, axis=1) / np.maximum(speed * np.linalg.norm(facing, axis=1), 1e-300)
    moving = speed / clip.frame_time / contacts.leg > MOVING
    return np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))), moving


def knee_angles(clip: Clip) -> np.ndarray:
    """Each knee's angle between thigh and shin, degrees ``(F, 2)`` (left, right; 180 straight)."""
    index, positions = _canonical(clip), world_positions(clip)
    angles = []
    for side in "lr":
        hip, knee, ankle = (positions[:, index[f"{part}_{side}"]] for part in ("upper_leg", "lower_leg", "foot"))
        thigh, shin = hip - knee, ankle - knee
        cosine = np.sum(thigh * shin, axis=1) / (np.linalg.norm(thigh, axis=1) * np.linalg.norm(shin, axis=1))
        angles.append(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))
    return np.stack(angles, axis=1)


def largest_knee_step(clip: Clip, frame_time: float) -> float:
    """The clip's largest knee change per frame of ``frame_time`` (its own rate converted), degrees."""
    return float(np.abs(np.diff(knee_angles(clip), axis=0)).max()) * frame_time / clip.frame_time


@dataclass
class Performer:
    """What issue 28 reads from a blend of ``a`` and ``b``: one performer, and the warp's use of ``b``."""

    hips_turn: float  # degrees in one frame, largest
    facing_off: float  # degrees between facing and travel while moving, largest
    knee_step: float  # degrees in one frame, largest
    knee_bar: float  # the inputs' largest (on a's frames) + KNEE_SLACK
    b_share: float  # the warp's share of b played (metadata)
    loops: int
    b_longer: bool  # b lasts longer than a

    @property
    def passes(self) -> bool:
        return (self.hips_turn <= TURN_BAR and self.facing_off <= FACING_BAR and self.knee_step <= self.knee_bar
                and self.b_share >= SHARE_BAR and not (self.b_longer and self.loops))


def performer(a: Clip, b: Clip, result: Clip) -> Performer:
    off, moving = facing_off_travel(result)
    time = result.metadata["blend"]["time"]
    return Performer(float(hips_turns(result).max()), float(off[moving].max(initial=0.0)),
                     float(np.abs(np.diff(knee_angles(result), axis=0)).max()),
                     max(largest_knee_step(a, a.frame_time), largest_knee_step(b, a.frame_time)) + KNEE_SLACK,
                     float(time["b_share"]), int(time["loops"]),
                     b.frame_count * b.frame_time > a.frame_count * a.frame_time)


@dataclass
class Measure:
    """What the check of issue 20 reads from one blend."""

    frames_kept: bool
    height: float  # median ankle height over a's ankle contacts, minus a's planted height (leg lengths)
    slide_over_a: float  # over a's contacts
    slide_own: float  # over the blend's own contacts
    bar: float  # the slide it must stay under

    @property
    def passes(self) -> bool:
        return self.frames_kept and abs(self.height) <= HEIGHT_BAR and self.slide_over_a <= self.bar


def measure(a: Clip, b: Clip, result: Clip, own_a: Contacts | None = None) -> Measure:
    """The check of issue 20 on ``result``, a blend of ``a`` and ``b``."""
    own_a = find_contacts(a) if own_a is None else own_a
    points = feet(result)
    ankles = (points[..., 0, :] @ own_a.up - own_a.floor) / own_a.leg
    height = float(np.median(ankles[own_a.touching[..., 0]])) - own_a.planted_height()
    bar = SLIDE_FACTOR * max(own_a.slide(), find_contacts(b).slide()) + SLIDE_SLACK
    return Measure(result.frame_count == a.frame_count, height, own_a.slide(points),
                   find_contacts(result).slide(), bar)


def table(corpus: Path, plots: Path | None) -> None:
    print("| a | b | length b / a | mix | feet | root | CPU s | warp | height | slide over a's contacts | own contacts "
          "| bar | passes |")
    print("|---|---|---:|---:|---|---|---:|---|---:|---:|---:|---:|---|")
    for a_name, b_name in PAIRS:
        a, b = walk(corpus, a_name), walk(corpus, b_name)
        own_a = find_contacts(a)
        ratio = (b.frame_count * b.frame_time) / (a.frame_count * a.frame_time)
        results = {}
        for mix in (0.5, 1.0):
            for mode, root in MODES:
                started = time.process_time()
                result = blend(a, b, mix, align="dtw", feet=mode, root=root)
                seconds = time.process_time() - started
                results[mix, mode, root] = result
                found = measure(a, b, result, own_a)
                warp = result.metadata["blend"]["time"]
                what = warp["match"] + (f", {warp['loops']} loops" if warp["loops"] else "") + (
                    ", held" if warp["held_from"] is not None else "")
                print(f"| {label(a_name)} | {label(b_name)} | {ratio:.2f} | {mix:g} | {mode} | {root} | {seconds:.2f} "
                      f"| {what} | {found.height:+.4f} | {found.slide_over_a:.4f} | {found.slide_own:.4f} "
                      f"| {found.bar:.4f} | {'yes' if found.passes else 'no'} |", flush=True)
        if plots is not None:
            plot(plots / f"{Path(a_name.partition('@')[0]).stem}+{Path(b_name.partition('@')[0]).stem}.png", a, b,
                 results)


def plot(path: Path, a: Clip, b: Clip, results: dict[tuple[float, str, str], Clip]) -> None:
    """Feet heights with contacts shaded (a, b on a's body and warped, the blends) and paths from above."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    own = find_contacts(a)
    rows = [("a", a), ("mix 1 (b on a's body, warped)", results[1.0, "planted", "blend"]),
            ("mix 0.5, planted", results[0.5, "planted", "blend"]), ("mix 0.5, free", results[0.5, "free", "blend"]),
            ("mix 0.5, planted, root heading", results[0.5, "planted", "heading"])]
    figure, axes = plt.subplots(len(rows) + 1, 1, figsize=(12, 2.2 * (len(rows) + 1)))
    seconds = np.arange(a.frame_count) * a.frame_time
    for axis, (title, clip) in zip(axes, rows):
        contacts = find_contacts(clip)
        heights = (feet(clip) @ own.up - own.floor) / own.leg
        for side, colour in ((0, "tab:blue"), (1, "tab:red")):
            axis.plot(seconds, heights[:, side, 0], colour, linewidth=1)
            axis.plot(seconds, heights[:, side, 1], colour, linestyle=":", linewidth=1)
            axis.fill_between(seconds, 0.0, 0.4, where=contacts.planted[:, side], color=colour, alpha=0.12,
                              step="mid", linewidth=0)
            axis.fill_between(seconds, -0.05 + 0.02 * side, -0.03 + 0.02 * side, where=contacts.planted[:, side],
                              color=colour, step="mid", linewidth=0)
        axis.axhline(own.planted_height(), color="k", linewidth=0.5)
        axis.set_ylim(-0.05, 0.4)
        axis.set_xlim(seconds[0], seconds[-1])
        axis.set_title(f"{title}: ankle (solid) and ball (dotted) heights, leg lengths; contacts shaded", fontsize=8)
    paths = axes[-1]
    across = [i for i in range(3) if abs(own.up[i]) < 0.5]
    for title, clip in rows:
        index = {c: clip.skeleton.index(n) for n, c in map_skeleton(clip.skeleton).items() if c is not None}
        hips = world_positions(clip)[:, index["hips"]][:, across] / own.leg
        if title == "a":  # a's travel runs left to right
            travel = hips[-1] - hips[0]
            angle = -np.arctan2(travel[1], travel[0])
            turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        hips = hips @ turn.T
        paths.plot(hips[:, 0], hips[:, 1], linewidth=1, label=title)
    paths.set_aspect("equal")
    paths.legend(fontsize=6)
    paths.set_title("hips from above (leg lengths)", fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=70)
    plt.close(figure)


# One performer: two people's walks of five sources, each way round (a's timeline kept).
PERFORMER_WALKS = ["bvh/ganim_Xia_normal.bvh", "asf_amc/vicon_male.walk-speed 4.AMC",
                   "bvh/bandai_dataset-1_walk_normal_001.bvh", "bvh/bandai_dataset-2_walk_elderly_004.bvh",
                   "htr/gpr450_xbot_walk_m_mixamo.com.htr"]


def performer_table(corpus: Path, plots: Path | None) -> None:
    """The bars of issue 28 on every ordered pair of :data:`PERFORMER_WALKS`, mix 0.5, ``align="dtw"``,
    the default root, and (for comparison) ``root="blend"``."""
    print("| a | b | root | hips turn (deg/frame) | facing off travel (deg) | knee step (deg/frame) | knee bar "
          "| warp | b share | passes |")
    print("|---|---|---|---:|---:|---:|---:|---|---:|---|")
    for a_name, b_name in itertools.permutations(PERFORMER_WALKS, 2):
        a, b = walk(corpus, a_name), walk(corpus, b_name)
        results = {}
        for root in ("heading", "blend"):
            result = results[root] = blend(a, b, 0.5, align="dtw", root=root)
            found, time = performer(a, b, result), result.metadata["blend"]["time"]
            warp = time["match"] + (f", {time['loops']} loops of {time['loop_seconds']:.2f} s" if time["loops"] else "")
            print(f"| {label(a_name)} | {label(b_name)} | {root}{' (default)' if root == 'heading' else ''} "
                  f"| {found.hips_turn:.1f} | {found.facing_off:.1f} | {found.knee_step:.1f} | {found.knee_bar:.1f} "
                  f"| {warp} | {found.b_share:.2f} | {'yes' if found.passes else 'no'} |", flush=True)
        if plots is not None:
            plot_performer(plots / f"performer_{Path(a_name).stem}+{Path(b_name).stem}.png", a, b, results)


def plot_performer(path: Path, a: Clip, b: Clip, results: dict[str, Clip]) -> None:
    """Hips from above, facing against travel, knee angles, and the warp's pairing with both clips' contacts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(4, 1, figsize=(12, 11))
    own = find_contacts(a)
    across = [i for i in range(3) if abs(own.up[i]) < 0.5]
    seconds = np.arange(a.frame_count) * a.frame_time
    clips = [("a", a), ("mix 0.5, root heading (default)", results["heading"]),
             ("mix 0.5, root blend", results["blend"])]
    start = world_positions(a)[:, _canonical(a)["hips"]][:, across]
    travel = start[-1] - start[0]
    angle = -np.arctan2(travel[1], travel[0])  # a's travel runs left to right
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    for title, clip in clips:
        hips = (world_positions(clip)[:, _canonical(clip)["hips"]][:, across] - start[0]) @ turn.T / own.leg
        axes[0].plot(hips[:, 0], hips[:, 1], linewidth=1, label=title)
        axes[0].plot(hips[:1, 0], hips[:1, 1], "ko", markersize=3)
        off, moving = facing_off_travel(clip)
        axes[1].plot(seconds, np.where(moving, off, np.nan), linewidth=1, label=title)
    axes[0].set_aspect("equal", adjustable="datalim")
    axes[0].legend(fontsize=7)
    axes[0].set_title("hips from above, a's travel left to right (leg lengths; dots: starts)", fontsize=8)
    axes[1].axhline(FACING_BAR, color="k", linewidth=0.5)
    axes[1].set_title("degrees between facing and travel, while moving (line: the bar)", fontsize=8)
    axes[1].legend(fontsize=7)
    mix_one = blend(a, b, 1.0, align="dtw", feet="free")
    for title, clip in (("a", a), ("b on a's body, warped (mix 1, free)", mix_one),
                        ("mix 0.5 (default)", results["heading"])):
        axes[2].plot(seconds, knee_angles(clip)[:, 0], linewidth=1, label=title)
    axes[2].set_title("left knee angle (degrees; 180 straight)", fontsize=8)
    axes[2].legend(fontsize=7)
    warp = np.asarray(results["heading"].metadata["warp"])
    paired = find_contacts(b).planted[np.round(warp).astype(np.int64)]
    axis = axes[3]
    axis.plot(seconds, warp * b.frame_time, "k", linewidth=1, label="b's second paired")
    top = max(float(warp.max() * b.frame_time), 1e-3)
    for side, colour in ((0, "tab:blue"), (1, "tab:red")):
        for row, (planted, shade) in enumerate(((own.planted[:, side], 0.25), (paired[:, side], 0.6))):
            low = -top * (0.1 + 0.08 * (2 * side + row))
            axis.fill_between(seconds, low, low + 0.07 * top, where=planted, color=colour, alpha=shade, step="mid",
                              linewidth=0)
    time = results["heading"].metadata["blend"]["time"]
    axis.set_title(f"the warp: b's time paired with a's ({time['match']}, b share {time['b_share']:.2f}); below, "
                   "planted feet of a (light) and of b at its paired frames (dark), left blue, right red", fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=70)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--plot", type=Path, help="folder for the pictures (needs matplotlib)")
    parser.add_argument("--performer", action="store_true", help="only the one-performer table of issue 28")
    options = parser.parse_args()
    if not options.performer:
        table(options.corpus, options.plot)
    performer_table(options.corpus, options.plot)


if __name__ == "__main__":
    main()
