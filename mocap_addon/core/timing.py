"""A motion in time: changing its frame rate, cutting it into its takes."""

from __future__ import annotations

import dataclasses
from typing import cast

import numpy as np

from .model import Clip
from .pose import Motion, as_pose, first_angles, like


def resample(motion: Motion, frame_time: float) -> Motion:
    """The motion (a clip or a pose) sampled every ``frame_time`` seconds over the same duration.

    Rotations are interpolated with slerp (shortest arc), translations and
    scales linearly; a clip keeps its channel layout, its angles starting
    nearest its own first frame's.
    """
    if not frame_time > 0:
        raise ValueError(f"frame time must be positive, got {frame_time}")
    if motion.frame_count < 2 or np.isclose(frame_time, motion.frame_time, rtol=1e-12, atol=0):
        copied = cast(Motion, motion.copy())
        copied.frame_time = frame_time
        return copied
    duration = (motion.frame_count - 1) * motion.frame_time
    count = int(np.floor(duration / frame_time + 1e-9)) + 1
    sampled = as_pose(motion).sample(np.arange(count) * frame_time / motion.frame_time)
    sampled.frame_time = frame_time
    if "takes" in motion.metadata:
        sampled.metadata["takes"] = sorted({round(t * motion.frame_time / frame_time) for t in motion.take_starts()})
    return like(motion, sampled, first_angles(motion))


def split_takes(clip: Clip) -> list[Clip]:
    """One clip per take (see :meth:`Clip.take_starts`), each numbered from the clip's first frame."""
    out = []
    for first, end in clip.take_ranges():
        take = dataclasses.replace(clip, motion=clip.motion[first:end], metadata=dict(clip.metadata))
        take.metadata.pop("takes", None)
        out.append(take)
    return out
