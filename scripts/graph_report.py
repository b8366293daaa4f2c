"""What a motion graph finds on real walks, and pictures to judge the motion it makes (needs matplotlib).

On the corpus beside the checkout (``../shared/corpus``): the walks of five people from five sources in
three formats (Xia BVH, Vicon ASF/AMC, X-Bot HTR, two Bandai BVH), and with CMU 01_01 as BVH and as
ASF/AMC; Bandai's dance cut in two with 100 frames of overlap.  Prints the figures (markdown) and
writes to ``--out`` the graph plots and stick figures over time around transitions of 3,000 synthesized
frames (each seen from its side, across its hips' heading; blue before the jump, red the blended
frames, green after).  ``--paths``: only the part along paths: a graph of locomotion (the corpus walks,
CMU 01_01 and ``samples/walk_turn.bvh`` at 30 fps) followed along an 8 m S-curve, a circle of radius
2.5 m and 6 m + a 90-degree turn of radius 1.5 m + 4 m, two seeds each: the goals' figures and a picture
of each followed path over the asked one.  Not a test.

    python scripts/graph_report.py [--out out/graph_report] [--no-contacts] [--paths]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mocap_addon.core import Clip, Pose, load, world_positions
from mocap_addon.core.naming import CANONICAL_JOINTS, CANONICAL_PARENTS
from mocap_addon.core.rotations import quaternion_to_matrix
from mocap_addon.core.transitions import MotionGraph, build, follow, plot, synthesize, transition_steps
from mocap_addon.core.transitions.plots import plot_path
from mocap_addon.core.transitions.quality import most_repeats, transition_accelerations

CORPUS = ROOT.parent / "shared" / "corpus"
WALKS = ["bvh/ganim_Xia_normal.bvh", "asf_amc/vicon_male.walk-speed 4.AMC",
         "htr/gpr450_xbot_walk_m_mixamo.com.htr", "bvh/bandai_dataset-1_walk_normal_001.bvh",
         "bvh/bandai_dataset-2_walk_elderly_004.bvh"]
CMU = ["bvh/fm_cmu_01_01.bvh", "asf_amc/fm_01_01.amc"]
DANCE = "bvh/bandai_dataset-1_dance-short_normal_001.bvh"
FINGERS = ("thumb", "index", "middle", "ring", "pinky")


def part(clip: Clip, start: int, stop: int | None = None) -> Clip:
    out = clip.copy()
    out.motion = clip.motion[start:stop].copy()
    return out


def graph_table(graph: MotionGraph, seconds: float) -> None:
    clip_of = graph.clip_of
    between = int(np.sum(clip_of(graph.sources) != clip_of(graph.targets)))
    print(f"\n{len(graph.clip_names)} clips, {graph.frame_count} frames at {graph.fps:g} fps, built in "
          f"{seconds:.1f} s: {len(graph.sources)} transitions ({between} between clips), "
          f"{graph.alive.mean():.1%} of frames kept\n")
    counts = np.zeros((len(graph.clip_names),) * 2, dtype=np.int64)
    np.add.at(counts, (clip_of(graph.sources), clip_of(graph.targets)), 1)
    print("| clip | frames | kept | left foot planted | right foot planted | " +
          " | ".join(f"to {k}" for k in range(len(graph.clip_names))) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(graph.clip_names))
    for k, (name, first, count) in enumerate(zip(graph.clip_names, graph.offsets, graph.clip_frames)):
        span = slice(int(first), int(first + count))
        planted = graph.contacts[span].mean(axis=0)
        print(f"| {k} {name} | {count} | {graph.alive[span].mean():.1%} | {planted[0]:.0%} | {planted[1]:.0%} | "
              + " | ".join(str(n) for n in counts[k]) + " |")


def sticks(graph: MotionGraph, result: Clip, path: Path, count: int = 4) -> None:
    """Stick figures around ``count`` transitions of ``result`` (those between clips first)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    positions = world_positions(result)
    forward = quaternion_to_matrix(Pose.of(result).rotations[:, 0])[:, :, 2] * [1.0, 0.0, 1.0]  # the hips' forward
    facing = forward / np.maximum(np.linalg.norm(forward, axis=1, keepdims=True), 1e-9)
    parents = [CANONICAL_JOINTS.index(CANONICAL_PARENTS[n] or n) if CANONICAL_PARENTS[n] else -1
               for n in CANONICAL_JOINTS]
    shown = [j for j, n in enumerate(CANONICAL_JOINTS) if parents[j] >= 0 and not n.startswith(FINGERS)]
    transitions = result.metadata["transitions"]
    apart = [k for k, (t, a, b) in enumerate(transitions) if graph.clip_of(a) != graph.clip_of(b) and t > 40]
    within = [k for k, (t, a, b) in enumerate(transitions) if graph.clip_of(a) == graph.clip_of(b) and t > 40]
    chosen = (apart[:count - 1] + within[:1])[:count]
    figure = Figure(figsize=(14, 2.8 * len(chosen)), dpi=70)
    step = max(1, round(graph.fps / 40))  # about 1/40 s between figures: the blend shows frame by frame
    for row, k in enumerate(chosen):
        ax = figure.add_subplot(len(chosen), 1, row + 1)
        landing, source, target = transitions[k]
        for n, frame in enumerate(range(landing - 5 * step, min(landing + 8 * step, len(positions)), step)):
            pose = positions[frame]
            x = (pose - pose[0]) @ facing[frame] + 0.45 * n  # seen from the figure's side
            colour = "tab:blue" if frame < landing else "tab:red" if frame < landing + 5 else "tab:green"
            for joint in shown:
                ax.plot([x[joint], x[parents[joint]]], [pose[joint, 1], pose[parents[joint], 1]], color=colour, lw=1)
        (a, i), (b, j) = graph.local_frame(source), graph.local_frame(target)
        ax.set_aspect("equal")
        ax.set_title(f"output frame {landing}: {graph.clip_names[a]} {i} -> {graph.clip_names[b]} {j}", fontsize=9)
    figure.tight_layout()
    FigureCanvasAgg(figure).print_png(str(path))


LOCOMOTION = ["bvh/ganim_Xia_normal.bvh", "asf_amc/vicon_male.walk-speed 4.AMC",
              "bvh/bandai_dataset-1_walk_normal_001.bvh", "bvh/bandai_dataset-2_walk_elderly_004.bvh",
              "bvh/fm_cmu_01_01.bvh"]


def arc(centre: complex, radius: float, start: float, turn: float) -> np.ndarray:
    angles = start + np.linspace(0, turn, max(2, int(np.ceil(abs(turn) * radius / 0.05))))
    return np.asarray(centre + radius * np.exp(1j * angles))


def test_paths() -> dict[str, np.ndarray]:
    """The issue's three paths as ``(N, 2)`` ground points, each from the origin heading +z."""
    first = arc(3, 3, np.pi, -4 / 3)
    s_curve = np.concatenate([first, arc(2 * first[-1] - 3, 3, -4 / 3, 4 / 3)[1:]])
    corner = np.concatenate([1j * np.linspace(0, 6, 121), arc(1.5 + 6j, 1.5, np.pi, -np.pi / 2)[1:],
                             1.5 + 7.5j + np.linspace(0, 4, 81)[1:]])
    paths = {"S-curve 8 m": s_curve, "circle r 2.5 m": arc(2.5, 2.5, np.pi, -2 * np.pi),
             "6 m, 90 deg r 1.5 m, 4 m": corner}
    return {name: np.stack([p.real, p.imag], axis=1) for name, p in paths.items()}


def paths_report(out: Path) -> None:
    """follow() on a graph of locomotion along the issue's paths: the figures and pictures."""
    clips = [load(CORPUS / f) for f in LOCOMOTION] + [load(ROOT / "samples" / "walk_turn.bvh")]
    started = time.process_time()
    graph = build(clips, fps=30)
    print(f"\nlocomotion graph: {len(clips)} clips, {graph.frame_count} frames at 30 fps, {len(graph.sources)} "
          f"transitions, {graph.alive.mean():.1%} kept ({time.process_time() - started:.1f} s CPU)\n")
    synthesized = [transition_accelerations(graph, clips, synthesize(graph, clips, frames=600, seed=seed))
                   for seed in (1, 2, 3)]
    library = synthesized[0][1]
    print("| path | seed | motion s | transitions | mean m | max m | end m | search CPU s | repeats |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    followed = []
    for name, path in test_paths().items():
        for seed in (0, 1):
            result = follow(graph, clips, path, seed=seed)
            error = result.metadata["path_error"]
            followed.append(transition_accelerations(graph, clips, result)[0])
            print(f"| {name} | {seed} | {result.frame_count / graph.fps:.1f} | {len(result.metadata['transitions'])} "
                  f"| {error['mean']:.3f} | {error['max']:.3f} | {error['end']:.3f} | "
                  f"{result.metadata['search_seconds']:.2f} | {most_repeats(result.metadata['path'])} |")
            if seed == 0:
                plot_path(graph, result, path, out / f"follow_{name.split()[0].lower()}.png")
    print(f"\npeak joint acceleration in the frames a transition changes, 95th percentile: follow "
          f"{np.percentile(np.concatenate(followed), 95):.0f} m/s2 ({len(np.concatenate(followed))} transitions), "
          f"synthesize {np.percentile(np.concatenate([a for a, _ in synthesized]), 95):.0f} m/s2, the library's "
          f"windows {np.percentile(library, 95):.0f} m/s2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "out" / "graph_report"))
    parser.add_argument("--no-contacts", action="store_true")
    parser.add_argument("--paths", action="store_true", help="only motion along the issue's paths")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        raise SystemExit("the corpus (../shared/corpus) is absent")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.paths:
        paths_report(out)
        return
    contacts = not args.no_contacts
    print(f"motion graph report, {time.strftime('%Y-%m-%d %H:%M')}, contacts {'on' if contacts else 'off'}")

    walks = [load(CORPUS / f) for f in WALKS]
    started = time.perf_counter()
    graph = build(walks, contacts=contacts)
    graph_table(graph, time.perf_counter() - started)
    started = time.perf_counter()
    result = synthesize(graph, walks, frames=3000, seed=7, blend_frames=5)
    seconds = time.perf_counter() - started
    transitions = result.metadata["transitions"]
    between = sum(int(graph.clip_of(a)) != int(graph.clip_of(b)) for _, a, b in transitions)
    steps = transition_steps(graph, walks, result)
    print(f"\nsynthesize(frames=3000, seed=7, blend_frames=5) in {seconds:.1f} s: {len(transitions)} transitions, "
          f"{between} between clips; at a transition and the 5 frames after, a joint moves at most "
          f"{steps.max():.3f} body heights more than in the source frames around it, at 95 % of them at most "
          f"{np.percentile(steps, 95):.3f}, and {np.mean(steps <= 0.04):.1%} within 0.04")
    for kind in ("per_frame", "between", "matrix"):
        plot(graph, out / f"walks_{kind}.png", kind=kind)
    sticks(graph, result, out / "walks_transitions.png")

    with_cmu = walks + [load(CORPUS / f) for f in CMU]
    started = time.perf_counter()
    graph_table(build(with_cmu, contacts=contacts), time.perf_counter() - started)

    dance = load(CORPUS / DANCE)
    first, second = part(dance, 0, 1000), part(dance, 900)
    cut = build([first, second], contacts=contacts)
    across = (cut.clip_of(cut.sources) == 0) & (cut.clip_of(cut.targets) == 1)
    overlap = across & (cut.targets - 1 - 1000 == cut.sources - 900)
    print(f"\ndance cut in two (0-999, 900-1900): {len(cut.sources)} transitions, {cut.alive.mean():.1%} kept; "
          f"{int(overlap.sum())} from the first part to the second where they overlap, largest cost "
          f"{cut.costs[overlap].max(initial=0):.1e}")
    print(f"\npictures in {out}")


if __name__ == "__main__":
    main()
