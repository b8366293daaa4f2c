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
  among them, and the hips' height above the clip's floor) is blended as
  Kovar et al. 2002 do: over ``blend_frames`` frames the motion the output
  would have made playing on after ``i`` (the output's last pose carried by
  source frames ``i + 1, i + 2, ...``) fades into ``j, j + 1, ...`` (rotations
  by slerp, a cosine ramp), so pose and speed are continuous at the jump and
  the motion ends exactly on ``j``'s clip.  Where ``i``'s clip ends within the
  blend, its motion runs on at its last frame's speed (held still, every joint
  would stop at once); a capture faster than :data:`CARRY_RATE` is carried
  averaged over that long (its jitter would ride into the blend).  A blend lasts
  at least :data:`MIN_BLEND` (a shorter fade accelerates the joints harder
  than the captures do).

Each joint's offset is its rotation relative to the heading in the carried
motion seen from its own in ``j``'s clip, split into a twist about the joint's
bone and a swing of the bone, each faded by slerp: two captures that agree on
where every bone points may still disagree on how far a bone is twisted about
itself (skeleton conventions survive the canonical conversion), and a large
twist faded together with a small swing would sweep the bone around a cone.
Faded apart, every bone's direction moves along the shortest arc and a twist
turns the bone in place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..kinematics import forward_kinematics, world_positions
from ..model import Clip, Skeleton
from ..naming import CANONICAL_JOINTS, CANONICAL_PARENTS
from ..pose import Pose
from ..retarget.transfer import bone_ends
from ..rotations import FloatArray, quaternion_conjugate, quaternion_multiply, slerp
from ..transforms import rest_positions
from .frame_matching import BoolArray, IntArray, heading
from .graph import MotionGraph, Transition, gap_frames, run_ends

Chooser = Callable[[int, list[Transition]], Transition | None]
HIPS = CANONICAL_JOINTS.index("hips")
CANONICAL_PARENT_INDICES = [CANONICAL_JOINTS.index(CANONICAL_PARENTS[n] or n) if CANONICAL_PARENTS[n] else -1
                            for n in CANONICAL_JOINTS]
FEET = [CANONICAL_JOINTS.index(n) for n in ("foot_l", "foot_r")]
TOES = [CANONICAL_JOINTS.index(n) for n in ("toes_l", "toes_r")]
FLOOR_PERCENT = 2.0  # a clip without planted feet: its floor is this percentile of its lowest foot point
MIN_INTERVAL = 1.0  # seconds between transitions, by default
CARRY_RATE = 15.0  # frames per second of the motion a blend carries on (a faster capture's jitter averaged out)
MIN_BLEND = 0.2  # seconds a blend lasts at least (a longer blend_frames is kept; 0 is a sharp jump)


def synthesize(graph: MotionGraph, clips: Sequence[Clip | Pose], *, frames: int, start: int = 0,
               seed: int | None = None, blend_frames: int = 5, choose: Chooser | None = None,
               min_interval: float = MIN_INTERVAL) -> Clip:
    """``frames`` frames of new motion on the canonical skeleton, from global frame ``start`` on.

    ``clips`` are the graph's clips, in its order.  Transitions are chosen at random by probability
    (:func:`walk`; the same ``seed`` gives the same motion) or by ``choose(frame, options)``, which returns
    one of ``options`` (best first) or ``None`` to play on; at least ``min_interval`` seconds (and the
    graph's ``min_gap``) pass between transitions and no stretch of the library plays three times in a
    row, wherever the graph leaves a choice.  Each transition is blended over ``blend_frames`` frames, at
    least :data:`MIN_BLEND` seconds (:func:`assemble`); every clip's planted feet stand on one floor,
    ``y = 0``.
    ``metadata["transitions"]`` lists ``(output_frame, from_global, to_global)`` and ``metadata["path"]``
    the global source frame of every output frame.  Retarget it onto any rig with :func:`..retarget.transfer.retarget`.
    """
    graph.check_clips(clips)
    path = walk(graph, frames, start=start, seed=seed, choose=choose, min_interval=min_interval)
    return assemble(graph, clips, path, blend_frames=blend_frames)


def interval_frames(graph: MotionGraph, min_interval: float) -> int:
    """The fewest frames between two transitions: ``min_interval`` seconds and the graph's ``min_gap``."""
    if not (math.isfinite(min_interval) and min_interval >= 0):
        raise ValueError(f"min_interval must be a non-negative number of seconds, got {min_interval}")
    return max(gap_frames(graph.params["min_gap"], graph.fps), gap_frames(min_interval, graph.fps))


def allowed(options: list[Transition], played: Sequence[tuple[int, int]], gap: int,
            ends: IntArray) -> list[Transition]:
    """The ``options`` that keep the quality rules after the stretches ``played`` (``(first, last)`` global
    frames, oldest first, the one playing now last): the target's run lasts ``gap`` frames (so the next
    transition can wait that long), and no stretch played in both of the last two plays a third time (no
    landing in it or before it in its run)."""
    kept = [t for t in options if ends[t.target] - t.target >= gap]
    if len(played) >= 2:
        low, high = max(played[-1][0], played[-2][0]), min(played[-1][1], played[-2][1])
        if low <= high:
            kept = [t for t in kept if not (t.target <= high and ends[t.target] > low)]
    return kept


def walk(graph: MotionGraph, frames: int, *, start: int = 0, seed: int | None = None,
         choose: Chooser | None = None, min_interval: float = MIN_INTERVAL) -> IntArray:
    """The global source frame of each of ``frames`` output frames, following the graph from ``start``.

    A ``start`` outside the kept part plays on into it (``ValueError`` when its clip never gets there).
    Decisions are made only at frames with transitions once ``min_interval`` has passed since the last
    one, among the transitions :func:`allowed` keeps that land where the interval can be kept for ever
    (:func:`safe_landings`), so the loop runs once per decision, not per frame.  The random walk leaves a
    run by its last such transition at the latest; a caller's ``choose`` may play on to the run's end,
    where the rules give way (those landings first, then any) when nothing else is left.
    """
    if frames < 1:
        raise ValueError(f"frames must be at least 1, got {frames}")
    total = graph.frame_count
    if not 0 <= start < total:
        raise ValueError(f"start frame {start} is outside the graph's {total} frames")
    rng = np.random.default_rng(seed)
    gap = interval_frames(graph, min_interval)
    clip_ends = graph.clip_ends
    ends = run_ends(graph.alive, clip_ends)
    safe = safe_landings(graph, gap, ends)
    exits = np.zeros(total, dtype=bool)
    exits[graph.sources[safe[graph.targets]]] = True
    last_exit = np.maximum.accumulate(np.where(exits, np.arange(total), -1))
    decisions = np.unique(graph.sources)
    pieces: list[IntArray] = []
    played: list[tuple[int, int]] = []
    frame, made, free_from, first = start, 0, 0, start
    while True:
        last = _last_playable(graph, frame, ends, clip_ends, start)
        earliest = frame + max(0, free_from - made - 1)
        if choose is None and last_exit[last] >= max(earliest, frame):
            last = int(last_exit[last])  # the run's last way on to a safe landing: the random walk leaves by then
        found = int(np.searchsorted(decisions, earliest))
        decision = int(decisions[found]) if found < len(decisions) and decisions[found] <= last else last
        if made + decision - frame + 1 >= frames:
            pieces.append(np.arange(frame, frame + frames - made))
            return np.concatenate(pieces).astype(np.int64)
        pieces.append(np.arange(frame, decision + 1))
        made += decision - frame + 1
        every = graph.transitions_from(decision)
        if not every and decision == last:
            raise ValueError(f"frame {decision} ({_where(graph, decision)}) is a dead end: build the graph with "
                             f"strongly_connected=True")
        options = [t for t in allowed(every, [*played, (first, decision)], gap, ends) if safe[t.target]]
        if decision == last and not options:
            options = [t for t in every if safe[t.target]] or every
        taken = _choose(decision, options, decision < last, rng, choose) if options else None
        if taken is None:
            frame = decision + 1
        else:
            played.append((first, decision))
            frame, first, free_from = taken.target, taken.target, made + gap


def safe_landings(graph: MotionGraph, gap: int, ends: IntArray) -> BoolArray:
    """Frames where a walk may land and keep ``gap`` frames between transitions for ever: from each, within
    its run and at least ``gap - 1`` frames on, a transition leads to another such frame (the largest such
    set).  Where the graph has none, every frame whose run lasts ``gap`` frames."""
    total = graph.frame_count
    frames = np.arange(total)
    lasting = graph.alive & (ends - frames >= gap)
    safe = lasting
    while True:
        exits = np.zeros(total, dtype=bool)
        exits[graph.sources[safe[graph.targets]]] = True
        next_exit = np.append(np.minimum.accumulate(np.where(exits, frames, total)[::-1])[::-1], total)
        kept = safe & (next_exit[np.minimum(frames + gap - 1, total)] < ends)
        if np.array_equal(kept, safe):
            return safe if safe.any() else lasting
        safe = kept


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
             blend_frames: int = 5, steer: FloatArray | None = None,
             start: tuple[float, float, float] | None = None) -> Clip:
    """The motion playing global frames ``path`` in turn, on the canonical skeleton (see the module notes).

    Wherever ``path`` does not go on to the next frame of a clip it jumps (any jump, not only the graph's
    transitions); each jump is blended over :func:`blend_length` frames.  ``steer`` (radians per output frame,
    the first ignored) turns the figure further about its planted feet (:func:`integrate`); ``start``
    ``(x, z, heading)`` places the first frame (default: where its source frame stands).
    """
    path = np.asarray(path, dtype=np.int64)
    if path.ndim != 1 or not len(path) or path.min() < 0 or path.max() >= graph.frame_count:
        raise ValueError("path must be a non-empty sequence of the graph's frame numbers")
    if blend_frames < 0:
        raise ValueError(f"blend_frames must not be negative, got {blend_frames}")
    count = len(path)
    extra = np.zeros(count) if steer is None else np.asarray(steer, dtype=np.float64)
    if extra.shape != (count,):
        raise ValueError(f"steer must hold one turn per output frame ({count}), got shape {extra.shape}")
    owner = graph.clip_of(path)
    landings = np.flatnonzero((path[1:] != path[:-1] + 1) | (owner[1:] != owner[:-1])) + 1
    if np.any(graph.clip_of(path[landings] - 1) != graph.clip_of(path[landings])):
        raise ValueError("a jump lands on the first frame of a clip, which has no frame before it to match")
    blend = blend_length(blend_frames, graph.fps)
    left = path[landings - 1]
    last = graph.clip_ends[graph.clip_of(left)] - 1
    smoothing = max(1, round(graph.fps / CARRY_RATE))
    ahead = left[:, None] + np.arange(1 - smoothing, blend + 1)
    beyond = np.maximum(ahead - last[:, None], 0)  # frames the carried motion runs past its clip's end
    ahead = np.clip(ahead, graph.offsets[graph.clip_of(left)][:, None], last[:, None])
    before_last = np.maximum(last - 1, graph.offsets[graph.clip_of(left)])
    source = _Source(graph, clips, np.concatenate([path, ahead.ravel(), before_last]))
    x, z, facing = start if start is not None else (source.ground[0].real, source.ground[0].imag,
                                                      source.heading[0])
    headings, ground = integrate(complex(x, z), facing, source.steps[1:count], source.turns[1:count],
                                 source.pivots[1:count], extra[1:])
    shape, stop = ahead.shape, count + ahead.size
    ahead_poses, ahead_heights = _extrapolated(source.poses[count:stop].reshape(shape + source.poses.shape[1:]),
                                               source.heights[count:stop].reshape(shape), source.poses[stop:],
                                               source.heights[stop:], beyond)
    ahead_poses, ahead_heights = _smoothed(ahead_poses, ahead_heights, smoothing)
    poses, heights = _blended(source.poses[:count], source.heights[:count], ahead_poses, ahead_heights, landings,
                              bone_axes(source.skeleton))
    translations = source.translations[:count].copy()
    translations[:, HIPS] = np.stack([ground.real, heights, ground.imag], axis=1)
    metadata: dict[str, Any] = {
        "source": "motion graph", "clips": list(graph.clip_names), "path": path.tolist(),
        "transitions": [(int(t), int(path[t - 1]), int(path[t])) for t in landings],
        "start": [float(x), float(z), float(facing)]}
    return Pose(source.skeleton, _local(poses, _yaw(headings)), translations, None, 1.0 / graph.fps, 1, 1.0, "Y",
                metadata).to_clip()


def blend_length(blend_frames: int, fps: float) -> int:
    """Frames a transition is blended over: ``blend_frames``, and at least :data:`MIN_BLEND` seconds
    (a short blend at a high frame rate jerks the joints); 0 stays 0 (a sharp jump)."""
    return 0 if blend_frames == 0 else max(blend_frames, math.ceil(MIN_BLEND * fps - 1e-9))


def integrate(position: complex, facing: float, steps: Any, turns: Any, pivots: Any,
              steer: Any) -> tuple[Any, Any]:
    """Headings and ground positions (``x + iz``) of frames that start at ``position`` facing ``facing``
    and then make, frame by frame (along the last axis), the source's ``steps`` (ground moves in the hips'
    heading before them, complex) and ``turns`` (radians), each also turned by ``steer`` about the
    planted feet at ``pivots`` (from the hips, in their heading; 0 turns about the hips)."""
    shape = np.broadcast_shapes(np.shape(steps), np.shape(turns), np.shape(pivots), np.shape(steer))
    zero = np.zeros(shape[:-1] + (1,))
    headings = facing + np.concatenate([zero, np.cumsum(np.broadcast_to(turns + steer, shape), axis=-1)], axis=-1)
    moves = (steps + pivots * (1 - np.exp(-1j * steer))) * np.exp(-1j * headings[..., :-1])
    return headings, position + np.concatenate([zero, np.cumsum(moves, axis=-1)], axis=-1)


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
        around += [f for f in range(source - after, source + 2) if 0 <= f < len(owner) and owner[f] == owner[source]]
        largest = steps[around].max(axis=0)
        for frame in range(landing, min(landing + after + 1, result.frame_count)):
            out.append(np.linalg.norm(positions[frame] - positions[frame - 1], axis=-1) - largest)
    height = float(np.ptp(rest_positions(result.skeleton)[:, 1]))
    return np.array(out).reshape(-1, positions.shape[1]) / height


def _ramp(count: int) -> FloatArray:
    """Weights of an offset fading out over ``count`` frames (1 on the frame before, 0 after; cosine)."""
    return np.asarray(0.5 * (1 + np.cos(np.pi * np.arange(1, count + 1) / (count + 1))))


def _extrapolated(poses: FloatArray, heights: FloatArray, before_poses: FloatArray, before_heights: FloatArray,
                  beyond: IntArray) -> tuple[FloatArray, FloatArray]:
    """The carried motion ``poses`` ``(L, B + 1, J, 4)`` and ``heights`` ``(L, B + 1)`` run on past its clip's
    end: where ``beyond`` frames past it (the clip's last frame repeated there), every joint keeps the turn
    and the hips the climb of the clip's last frame from ``before_poses`` / ``before_heights`` (``(L, J, 4)``,
    ``(L,)``: the frame before it).  A source held still while the blend carries it would stop every joint
    at once: a jolt."""
    if not np.any(beyond):
        return poses, heights
    last = poses.shape[1] - 1  # the carried motion's last frame is its clip's last wherever it runs past
    turn = quaternion_multiply(quaternion_conjugate(before_poses), poses[:, last])  # (L, J, 4), in each joint
    identity = np.zeros_like(turn)
    identity[..., 0] = 1.0
    steps = slerp(identity[:, None], turn[:, None], beyond[:, :, None].astype(np.float64))
    steps /= np.linalg.norm(steps, axis=-1, keepdims=True)
    climb = heights[:, last] - before_heights
    return quaternion_multiply(poses, steps), heights + beyond * climb[:, None]


def _smoothed(poses: FloatArray, heights: FloatArray, frames: int) -> tuple[FloatArray, FloatArray]:
    """The mean of every ``frames`` consecutive frames along axis 1 of ``poses`` ``(L, F, J, 4)`` and
    ``heights`` ``(L, F)`` (``F - frames + 1`` left)."""
    if frames == 1:
        return poses, heights
    windows = sliding_window_view(poses, frames, axis=1)  # (L, F', J, 4, frames)
    signs = np.where(np.sum(windows * windows[..., -1:], axis=-2, keepdims=True) < 0, -1.0, 1.0)
    means = (windows * signs).sum(axis=-1)
    means /= np.linalg.norm(means, axis=-1, keepdims=True)
    return means, sliding_window_view(heights, frames, axis=1).mean(axis=-1)


def _blended(poses: FloatArray, heights: FloatArray, ahead_poses: FloatArray, ahead_heights: FloatArray,
             landings: IntArray, axes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Rotations ``(T, J, 4)`` and hips heights with each landing blended (see the module notes).

    ``ahead_poses`` ``(L, B + 1, J, 4)`` and ``ahead_heights`` ``(L, B + 1)``: the source frame each landing
    leaves and the ``B`` after it (the blend's length; run on past its clip's end, :func:`_extrapolated`).
    One landing at a time, so a blend still running when the next jump comes is what that jump carries on.
    ``axes`` ``(J, 3)``: each joint's bone.
    """
    out_poses, out_heights = poses.copy(), heights.copy()
    blend = ahead_poses.shape[1] - 1
    for landing, left_poses, left_heights in zip(landings, ahead_poses, ahead_heights):
        span = slice(landing, min(len(poses), landing + blend))
        count = span.stop - span.start
        weight = _ramp(blend)[:count, None]
        moved = quaternion_multiply(quaternion_conjugate(left_poses[:1]), left_poses[1:count + 1])
        carried = quaternion_multiply(out_poses[landing - 1][None], moved)
        swing, twist = _swing_twist(quaternion_multiply(quaternion_conjugate(poses[span]), carried), axes)
        identity = np.zeros_like(swing)
        identity[..., 0] = 1.0
        fade = quaternion_multiply(slerp(identity, swing, weight), slerp(identity, twist, weight))
        out_poses[span] = quaternion_multiply(poses[span], fade)
        carried_heights = out_heights[landing - 1] + left_heights[1:count + 1] - left_heights[0]
        out_heights[span] = heights[span] + weight[:, 0] * (carried_heights - heights[span])
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
    floor (where its planted feet stand, so clips captured over different floors stand on one), the
    joints' local translations, and each frame's move from the frame before it in its clip: ``steps``
    (ground, in the heading before), ``turns`` and ``pivots`` (the planted feet from the hips, in the
    heading; 0 where none is planted and at a clip's first frame)."""

    def __init__(self, graph: MotionGraph, clips: Sequence[Clip | Pose], frames: IntArray) -> None:
        graph.check_clips(clips)
        count = len(frames)
        self.poses = np.empty((count, len(CANONICAL_JOINTS), 4))
        self.translations = np.empty((count, len(CANONICAL_JOINTS), 3))
        self.heading = np.empty(count)
        self.ground = np.empty(count, dtype=np.complex128)
        self.heights = np.empty(count)
        self.steps = np.zeros(count, dtype=np.complex128)
        self.turns = np.zeros(count)
        self.pivots = np.zeros(count, dtype=np.complex128)
        owner = graph.clip_of(frames)
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
            planted = graph.contacts[graph.offsets[index]:graph.offsets[index] + prepared.frame_count]
            headings = heading(world.quaternions[:, HIPS])
            hips = positions[:, HIPS, 0] + 1j * positions[:, HIPS, 2]
            self.poses[mine] = quaternion_multiply(_yaw(-headings[local])[:, None], world.quaternions[local])
            self.translations[mine] = prepared.translations[local]
            self.heading[mine], self.ground[mine] = headings[local], hips[local]
            self.heights[mine] = positions[local, HIPS, 1] - floor_height(positions, planted)
            moved = local > 0
            before = local[moved] - 1
            self.steps[mine[moved]] = (hips[local[moved]] - hips[before]) * np.exp(1j * headings[before])
            self.turns[mine[moved]] = np.angle(np.exp(1j * (headings[local[moved]] - headings[before])))
            self.pivots[mine] = _pivots(positions[local], planted[local], hips[local], headings[local])


def floor_height(positions: FloatArray, planted: Any) -> float:
    """Where a clip's planted feet stand: the median height of the lower of each planted foot's ankle and
    toes (world ``positions`` ``(F, J, 3)``, ``planted`` ``(F, 2)``; a low percentile of the lowest foot
    point when no foot is ever planted)."""
    lows = np.minimum(positions[:, FEET, 1], positions[:, TOES, 1])
    if np.any(planted):
        return float(np.median(lows[np.asarray(planted, dtype=bool)]))
    return float(np.percentile(lows.min(axis=1), FLOOR_PERCENT))


def _pivots(positions: FloatArray, planted: Any, hips: Any, headings: FloatArray) -> Any:
    """The middle of the planted feet (between ankle and toes) from the hips, in their heading (``x + iz``;
    0 where no foot is planted)."""
    middles = 0.5 * (positions[:, FEET] + positions[:, TOES])
    feet = middles[..., 0] + 1j * middles[..., 2]
    weights = np.asarray(planted, dtype=np.float64)
    count = weights.sum(axis=1)
    centre = (weights * feet).sum(axis=1) / np.maximum(count, 1)
    return np.where(count > 0, (centre - hips) * np.exp(1j * headings), 0)
