"""New motion from a motion graph: a walk over its frames and transitions, blended at every jump.

:func:`walk` chooses the frames (the thesis's Markov process: at a frame with
transitions, each is taken with weight ``P`` against 1 for playing on, or the
caller chooses); :func:`assemble` makes the motion of any such path on the
canonical skeleton.  At a jump from frame ``i`` to frame ``j`` the new clip
plays on from ``j`` as it played on from ``j - 1``, carried by where frame
``i`` left the figure:

- heading and ground position are re-integrated: every output frame moves the
  hips by the step (turn about the vertical, move on the ground in the hips'
  own heading) its source frame made from the frame before it, so the figure
  never jumps and clips from anywhere in space join;
- the rest (every joint's rotation relative to the heading, the hips' tilt
  among them, and the hips' height above the clip's floor) takes the
  difference between frame ``i`` and frame ``j - 1`` as an offset that fades
  out over ``blend_frames`` frames (rotations by slerp, a cosine ramp), so the
  pose is continuous and ends exactly on ``j``'s clip.

Each joint's offset is its rotation relative to the heading at frame ``i``
seen from its own frame at ``j - 1``, split into a twist about the joint's
bone and a swing of the bone, each faded by slerp: two captures that agree on
where every bone points may still disagree on how far a bone is twisted about
itself (skeleton conventions survive the canonical conversion), and a large
twist faded together with a small swing would sweep the bone around a cone.
Faded apart, every bone's direction moves along the shortest arc and a twist
turns the bone in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..kinematics import forward_kinematics, rest_positions, world_positions
from ..model import Clip, Skeleton
from ..naming import CANONICAL_JOINTS, CANONICAL_PARENTS
from ..pose import Pose
from ..retarget.transfer import bone_ends
from ..rotations import FloatArray, quaternion_conjugate, quaternion_multiply, slerp
from .frame_matching import IntArray, heading
from .graph import MotionGraph, Transition, gap_frames, run_ends

Chooser = Callable[[int, list[Transition]], Transition | None]
HIPS = CANONICAL_JOINTS.index("hips")
CANONICAL_PARENT_INDICES = [CANONICAL_JOINTS.index(CANONICAL_PARENTS[n] or n) if CANONICAL_PARENTS[n] else -1
                            for n in CANONICAL_JOINTS]
FEET = [CANONICAL_JOINTS.index(n) for n in ("foot_l", "foot_r")]
FLOOR_PERCENT = 2.0  # the floor: this percentile of the lower ankle's height over a clip


def synthesize(graph: MotionGraph, clips: Sequence[Clip | Pose], *, frames: int, start: int = 0,
               seed: int | None = None,
               blend_frames: int = 5, choose: Chooser | None = None) -> Clip:
    """``frames`` frames of new motion on the canonical skeleton, from global frame ``start`` on.

    ``clips`` are the graph's clips, in its order.  Transitions are chosen at random by probability
    (:func:`walk`; the same ``seed`` gives the same motion) or by ``choose(frame, options)``, which returns
    one of ``options`` (best first) or ``None`` to play on; at least ``min_gap`` seconds pass between
    transitions (in a graph built with ``strongly_connected``: elsewhere a clip may end sooner).  Each
    transition is blended over ``blend_frames`` frames (:func:`assemble`).
    ``metadata["transitions"]`` lists ``(output_frame, from_global, to_global)`` and ``metadata["path"]``
    the global source frame of every output frame.  Retarget it onto any rig with :func:`.retarget.retarget`.
    """
    graph.check_clips(clips)
    path = walk(graph, frames, start=start, seed=seed, choose=choose)
    return assemble(graph, clips, path, blend_frames=blend_frames)


def walk(graph: MotionGraph, frames: int, *, start: int = 0, seed: int | None = None,
         choose: Chooser | None = None) -> IntArray:
    """The global source frame of each of ``frames`` output frames, following the graph from ``start``.

    A ``start`` outside the kept part plays on into it (``ValueError`` when its clip never gets there).
    Decisions are made only at frames with transitions once ``min_gap`` has passed since the last one,
    so the loop runs once per decision, not per frame.
    """
    if frames < 1:
        raise ValueError(f"frames must be at least 1, got {frames}")
    total = graph.frame_count
    if not 0 <= start < total:
        raise ValueError(f"start frame {start} is outside the graph's {total} frames")
    rng = np.random.default_rng(seed)
    gap = gap_frames(graph.params["min_gap"], graph.fps)
    clip_ends = graph.clip_ends
    ends = run_ends(graph.alive, clip_ends)
    decisions = np.unique(graph.sources)
    pieces: list[IntArray] = []
    frame, made, free_from = start, 0, 0
    while True:
        last = _last_playable(graph, frame, ends, clip_ends, start)
        earliest = frame + max(0, free_from - made - 1)
        found = int(np.searchsorted(decisions, earliest))
        decision = int(decisions[found]) if found < len(decisions) and decisions[found] <= last else last
        if made + decision - frame + 1 >= frames:
            pieces.append(np.arange(frame, frame + frames - made))
            return np.concatenate(pieces).astype(np.int64)
        pieces.append(np.arange(frame, decision + 1))
        made += decision - frame + 1
        options = graph.transitions_from(decision)
        if not options and decision == last:
            raise ValueError(f"frame {decision} ({_where(graph, decision)}) is a dead end: build the graph with "
                             f"strongly_connected=True")
        taken = _choose(decision, options, decision < last, rng, choose)
        if taken is None:
            frame = decision + 1
        else:
            frame, free_from = taken.target, made + gap


def _last_playable(graph: MotionGraph, frame: int, ends: IntArray, clip_ends: IntArray, start: int) -> int:
    """The last frame reached by playing on from ``frame`` (into the kept part if it is outside it)."""
    if graph.alive[frame]:
        return int(ends[frame]) - 1
    clip_end = int(clip_ends[graph.clip_of(frame)])
    ahead = np.flatnonzero(graph.alive[frame:clip_end])
    if not len(ahead):
        raise ValueError(f"start frame {start} ({_where(graph, start)}) does not lead into the graph's kept part")
    return int(ends[frame + ahead[0]]) - 1


def _where(graph: MotionGraph, frame: int) -> str:
    clip, local = graph.local_frame(frame)
    return f"{graph.clip_names[clip]} frame {local}"


def _choose(frame: int, options: list[Transition], goes_on: bool, rng: np.random.Generator,
            choose: Chooser | None) -> Transition | None:
    """The transition taken at ``frame`` (``None``: play on, only where ``goes_on``)."""
    if choose is not None:
        taken = choose(frame, list(options))
        if taken is None:
            return None if goes_on else options[0]
        if taken not in options:
            raise ValueError(f"choose returned {taken!r}, not one of the transitions from frame {frame}")
        return taken
    weights = np.array([t.probability for t in options] + ([1.0] if goes_on else []))
    pick = int(rng.choice(len(weights), p=weights / weights.sum()))
    return options[pick] if pick < len(options) else None


def assemble(graph: MotionGraph, clips: Sequence[Clip | Pose], path: Sequence[int] | IntArray, *,
             blend_frames: int = 5) -> Clip:
    """The motion playing global frames ``path`` in turn, on the canonical skeleton (see the module notes).

    Wherever ``path`` does not go on to the next frame of a clip it jumps (any jump, not only the graph's
    transitions); each jump is blended over ``blend_frames`` frames.
    """
    path = np.asarray(path, dtype=np.int64)
    if path.ndim != 1 or not len(path) or path.min() < 0 or path.max() >= graph.frame_count:
        raise ValueError("path must be a non-empty sequence of the graph's frame numbers")
    if blend_frames < 0:
        raise ValueError(f"blend_frames must not be negative, got {blend_frames}")
    owner = graph.clip_of(path)
    landings = np.flatnonzero((path[1:] != path[:-1] + 1) | (owner[1:] != owner[:-1])) + 1
    if np.any(graph.clip_of(path[landings] - 1) != graph.clip_of(path[landings])):
        raise ValueError("a jump lands on the first frame of a clip, which has no frame before it to match")
    source = _Source(graph, clips, np.concatenate([path, path[landings] - 1, path[1:] - 1]))
    count = len(path)
    poses, heights, hips = source.poses[:count], source.heights[:count], source.ground[:count]
    before = slice(count + len(landings), None)
    headings = _headings(source.heading[:count], source.heading[before])
    step = (hips[1:] - source.ground[before]) * np.exp(1j * source.heading[before]) * np.exp(-1j * headings[:-1])
    ground = hips[0] + np.concatenate([[0], np.cumsum(step)])
    poses, heights = _blended(poses, heights, source.poses[count:count + len(landings)],
                              source.heights[count:count + len(landings)], landings, blend_frames,
                              bone_axes(source.skeleton))
    translations = source.translations[:count].copy()
    translations[:, HIPS] = np.stack([ground.real, heights, ground.imag], axis=1)
    metadata: dict[str, Any] = {
        "source": "motion graph", "clips": list(graph.clip_names), "path": path.tolist(),
        "transitions": [(int(t), int(path[t - 1]), int(path[t])) for t in landings]}
    return Pose(source.skeleton, _local(poses, _yaw(headings)), translations, None, 1.0 / graph.fps, 1, 1.0, "Y",
                metadata).to_clip()


def transition_steps(graph: MotionGraph, clips: Sequence[Clip | Pose], result: Clip | Pose, *,
                     after: int = 5) -> FloatArray:
    """How much further than in the sources each joint moves at ``result``'s transitions.

    For each transition of ``result`` (:func:`synthesize`'s or :func:`assemble`'s, on ``graph``'s ``clips``)
    and the ``after`` frames after it, each joint's move from the frame before, less the largest move it
    makes in one frame in the source frames around the transition (``after`` frames either side, both
    clips); ``(transitions * (after + 1), J)``, in body heights (the canonical rest's height).  Small
    or negative where the blend is invisible.
    """
    library = np.concatenate([world_positions(graph.canonical(clip, index=k)) for k, clip in enumerate(clips)])
    positions = world_positions(result)
    frames = np.arange(graph.frame_count)
    has_step = np.ones(graph.frame_count, dtype=bool)
    has_step[graph.offsets] = False  # a clip's first frame has no frame before it
    steps = np.zeros(library.shape[:2])
    steps[has_step] = np.linalg.norm(library[frames[has_step]] - library[frames[has_step] - 1], axis=-1)
    owner = graph.clip_of(frames)
    out = []
    for landing, source, target in result.metadata["transitions"]:
        around = [f for f in range(target - 1, target + after + 2) if f < len(owner) and owner[f] == owner[target]]
        around += [f for f in range(source - after, source + 2) if f >= 0 and owner[f] == owner[source]]
        largest = steps[around].max(axis=0)
        for frame in range(landing, min(landing + after + 1, result.frame_count)):
            out.append(np.linalg.norm(positions[frame] - positions[frame - 1], axis=-1) - largest)
    height = float(np.ptp(rest_positions(result.skeleton)[:, 1]))
    return np.array(out).reshape(-1, positions.shape[1]) / height


def _headings(current: FloatArray, previous: FloatArray) -> FloatArray:
    """Output headings: the first frame's, then each source frame's turn from the frame before it."""
    turn = np.angle(np.exp(1j * (current[1:] - previous)))
    return np.asarray(current[0] + np.concatenate([[0.0], np.cumsum(turn)]))


def _ramp(count: int) -> FloatArray:
    """Weights of an offset fading out over ``count`` frames (1 on the frame before, 0 after; cosine)."""
    return np.asarray(0.5 * (1 + np.cos(np.pi * np.arange(1, count + 1) / (count + 1))))


def _blended(poses: FloatArray, heights: FloatArray, matched_poses: FloatArray, matched_heights: FloatArray,
             landings: IntArray, blend_frames: int, axes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Rotations ``(T, J, 4)`` and hips heights with each landing's offset (the output just before it
    against the source frame its target follows) faded out; one landing at a time, so an offset still
    fading when the next jump comes is carried into that jump's.  ``axes`` ``(J, 3)``: each joint's bone."""
    out_poses, out_heights = poses.copy(), heights.copy()
    for landing, matched_pose, matched_height in zip(landings, matched_poses, matched_heights):
        span = slice(landing, min(len(poses), landing + blend_frames))
        weight = _ramp(blend_frames)[:span.stop - span.start, None]
        swing, twist = _swing_twist(quaternion_multiply(quaternion_conjugate(matched_pose), out_poses[landing - 1]),
                                    axes)
        identity = np.zeros_like(swing)
        identity[:, 0] = 1.0
        fade = quaternion_multiply(slerp(identity[None], swing[None], weight),
                                   slerp(identity[None], twist[None], weight))
        out_poses[span] = quaternion_multiply(poses[span], fade)
        out_heights[span] = heights[span] + weight[:, 0] * (out_heights[landing - 1] - matched_height)
    return out_poses, out_heights


def _swing_twist(rotations: FloatArray, axes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``rotations = swing * twist`` with ``twist`` about ``axes`` (unit) and ``swing`` about an axis
    across them (quaternions ``(..., 4)``; a half turn of pure swing has no twist)."""
    along = np.sum(rotations[..., 1:] * axes, axis=-1, keepdims=True)
    twist = np.concatenate([rotations[..., :1], along * axes], axis=-1)
    size = np.linalg.norm(twist, axis=-1, keepdims=True)
    identity = np.zeros_like(twist)
    identity[..., 0] = 1.0
    twist = np.where(size > 1e-12, twist / np.where(size > 1e-12, size, 1.0), identity)
    return quaternion_multiply(rotations, quaternion_conjugate(twist)), twist


def bone_axes(skeleton: Skeleton) -> FloatArray:
    """Each canonical joint's bone direction in its own frame ``(J, 3)``: towards the joint its bone points
    at (:func:`.retarget.bone_ends`; the hips: up the spine), a leaf along the bone that reaches it."""
    index = {name: joint for joint, name in enumerate(skeleton.names)}
    ends = bone_ends(skeleton, index)
    ends[index["hips"]] = index["spine_01"]
    axes = np.array([skeleton.offsets[ends.get(joint, joint)] for joint in range(skeleton.joint_count)])
    size = np.linalg.norm(axes, axis=1, keepdims=True)
    return np.where(size > 1e-12, axes / np.where(size > 1e-12, size, 1.0), [0.0, 1.0, 0.0])


def _yaw(angles: FloatArray) -> FloatArray:
    """Quaternions of turns by ``angles`` about +Y."""
    out = np.zeros(angles.shape + (4,))
    out[..., 0], out[..., 2] = np.cos(angles / 2), np.sin(angles / 2)
    return out


def _local(poses: FloatArray, yaws: FloatArray) -> FloatArray:
    """Local rotations ``(T, J, 4)`` from rotations relative to the heading and the heading's quaternions."""
    out = np.empty_like(poses)
    for joint, parent in enumerate(CANONICAL_PARENT_INDICES):
        above = yaws if parent < 0 else quaternion_conjugate(poses[:, parent])
        out[:, joint] = quaternion_multiply(above, poses[:, joint])
    return out


class _Source:
    """The library's values at a list of global frames: every joint's rotation relative to the hips'
    heading (``poses``), that heading, the hips' ground position (``x + iz``) and height above the clip's
    floor (its ankles' low percentile, so clips captured over different floors stand on one), and the
    joints' local translations."""

    def __init__(self, graph: MotionGraph, clips: Sequence[Clip | Pose], frames: IntArray) -> None:
        graph.check_clips(clips)
        count = len(frames)
        self.poses = np.empty((count, len(CANONICAL_JOINTS), 4))
        self.translations = np.empty((count, len(CANONICAL_JOINTS), 3))
        self.heading = np.empty(count)
        self.ground = np.empty(count, dtype=np.complex128)
        self.heights = np.empty(count)
        owner = graph.clip_of(frames)
        floors: dict[int, float] = {}
        for index in np.unique(owner).tolist():
            prepared = graph.canonical(clips[index], index=index)
            if prepared.frame_count != graph.clip_frames[index]:
                raise ValueError(f"clip {index} ({graph.clip_names[index]}) has {prepared.frame_count} frames at "
                                 f"{graph.fps:g} fps, the graph's {graph.clip_frames[index]}: not the clip it "
                                 f"was built from")
            self.skeleton = prepared.skeleton
            mine = np.flatnonzero(owner == index)
            local = frames[mine] - graph.offsets[index]
            world = forward_kinematics(prepared)
            positions = world.positions
            floors[index] = float(np.percentile(positions[:, FEET, 1].min(axis=1), FLOOR_PERCENT))
            self.poses[mine] = world.quaternions[local]
            self.translations[mine] = prepared.translations[local]
            hips = positions[local, HIPS]
            self.ground[mine] = hips[:, 0] + 1j * hips[:, 2]
            self.heights[mine] = hips[:, 1] - floors[index]
        first = floors[int(owner[0])]
        self.heights += first
        self.heading = heading(self.poses[:, HIPS])
        self.poses = quaternion_multiply(_yaw(-self.heading)[:, None], self.poses)
