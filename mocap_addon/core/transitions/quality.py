"""Measures of motion made from a motion graph against the quality rules :func:`.synthesis.synthesize` and
:func:`.path_following.follow` keep: how often a stretch of the library plays in a row, where planted feet
stand, and how hard joints accelerate around transitions against the library's own motion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..kinematics import world_positions
from ..model import Clip
from ..pose import Pose
from ..rotations import FloatArray
from .frame_matching import IntArray
from .graph import MotionGraph
from .synthesis import FEET, TOES, blend_length


def stretches(path: Sequence[int] | IntArray) -> list[tuple[int, int]]:
    """The runs ``(first, last)`` of consecutive library frames a synthesized ``metadata["path"]`` plays."""
    frames = np.asarray(path, dtype=np.int64)
    cuts = np.flatnonzero(frames[1:] != frames[:-1] + 1) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [len(frames)]]) - 1
    return list(zip(frames[starts].tolist(), frames[ends].tolist()))


def most_repeats(path: Sequence[int] | IntArray) -> int:
    """The most times any library frame plays in consecutive stretches of ``path`` (1: never repeated)."""
    runs = stretches(path)
    best = 1 if runs else 0
    for first in range(len(runs)):
        low, high = runs[first]
        for later in range(first + 1, len(runs)):
            low, high = max(low, runs[later][0]), min(high, runs[later][1])
            if low > high:
                break
            best = max(best, later - first + 1)
    return best


def planted_heights(graph: MotionGraph, result: Clip | Pose) -> dict[str, float]:
    """The median height (metres) of the lower of the ankle and toes of each planted foot in ``result``
    (:func:`.synthesis.synthesize`'s or :func:`.path_following.follow`'s), per clip its frames come from."""
    path = np.asarray(result.metadata["path"], dtype=np.int64)
    positions = world_positions(result)
    lows = np.minimum(positions[:, FEET, 1], positions[:, TOES, 1])
    planted = graph.contacts[path]
    owner = graph.clip_of(path)
    return {graph.clip_names[clip]: float(np.median(lows[(owner == clip)[:, None] & planted]))
            for clip in np.unique(owner).tolist() if np.any(planted[owner == clip])}


def peak_accelerations(positions: FloatArray, fps: float, window: int) -> FloatArray:
    """The largest joint acceleration (metres per second squared) in every window of ``window`` frames
    of world ``positions`` ``(F, J, 3)`` whose frames all have a frame on either side."""
    accelerations = np.linalg.norm(positions[2:] - 2 * positions[1:-1] + positions[:-2], axis=-1).max(axis=1)
    if len(accelerations) < window:
        return np.zeros(0)
    return np.asarray(sliding_window_view(accelerations * fps ** 2, window).max(axis=1))


def transition_accelerations(graph: MotionGraph, clips: Sequence[Clip | Pose], result: Clip | Pose, *,
                             blend_frames: int = 5) -> tuple[FloatArray, FloatArray]:
    """Peak joint accelerations in the windows around ``result``'s transitions (the frames whose
    acceleration the jump and its blend change: from the frame before the landing to the blend's end,
    :func:`.synthesis.blend_length`) and in every window of that length of the library's clips.

    The rule the synthesis keeps: the 95th percentile of the first is at most the second's.
    """
    blend_frames = blend_length(blend_frames, graph.fps)
    window = blend_frames + 2  # the frames whose acceleration the jump and its blend change
    library = np.concatenate([peak_accelerations(world_positions(graph.canonical(clip, index=k)), graph.fps, window)
                              for k, clip in enumerate(clips)])
    around = peak_accelerations(world_positions(result), graph.fps, window)  # window k: frames k+1 .. k+window
    starts = np.array([landing - 2 for landing, _, _ in result.metadata["transitions"]], dtype=int)
    starts = starts[(starts >= 0) & (starts < len(around))]
    return around[starts], library
