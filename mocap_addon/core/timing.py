"""A clip in time: changing its frame rate, cutting it into its takes."""

from __future__ import annotations

import dataclasses

import numpy as np

from . import rotations
from .model import Clip, encode_motion


def resample(clip: Clip, frame_time: float) -> Clip:
    """The clip sampled every ``frame_time`` seconds over the same duration.

    Rotations are interpolated with slerp (shortest arc), translations and
    scales linearly; the channel layout is kept.
    """
    if not frame_time > 0:
        raise ValueError(f"frame time must be positive, got {frame_time}")
    if clip.frame_count < 2 or np.isclose(frame_time, clip.frame_time, rtol=1e-12, atol=0):
        result = clip.copy()
        result.frame_time = frame_time
        return result
    duration = (clip.frame_count - 1) * clip.frame_time
    count = int(np.floor(duration / frame_time + 1e-9)) + 1
    position = np.arange(count) * frame_time / clip.frame_time
    before = np.minimum(np.floor(position).astype(np.int64), clip.frame_count - 2)
    weight = position - before
    quaternions = rotations.quaternion_continuity(rotations.matrix_to_quaternion(clip.local_rotations()))
    turned = rotations.slerp(quaternions[before], quaternions[before + 1], weight[:, None])
    translations = clip.local_translations()
    moved = translations[before] + weight[:, None, None] * (translations[before + 1] - translations[before])
    scales = clip.local_scales()
    if scales is not None:
        scales = scales[before] + weight[:, None] * (scales[before + 1] - scales[before])
    first_angles = first_frame_angles(clip)
    motion = encode_motion(clip.skeleton, rotations.quaternion_to_matrix(turned), moved, scales, first_angles)
    result = clip.copy()
    result.motion = motion
    result.frame_time = frame_time
    if "takes" in clip.metadata:
        result.metadata["takes"] = sorted({round(t * clip.frame_time / frame_time) for t in clip.take_starts()})
    return result


def split_takes(clip: Clip) -> list[Clip]:
    """One clip per take (see :meth:`Clip.take_starts`), each numbered from the clip's first frame."""
    out = []
    for first, end in clip.take_ranges():
        take = dataclasses.replace(clip, motion=clip.motion[first:end], metadata=dict(clip.metadata))
        take.metadata.pop("takes", None)
        out.append(take)
    return out


def first_frame_angles(clip: Clip) -> np.ndarray:
    """Each joint's first-frame angles in its own order (degrees, zero-padded to three)."""
    out = np.zeros((clip.skeleton.joint_count, 3))
    if clip.frame_count == 0:
        return out
    for joint, layout in enumerate(clip.skeleton.channels):
        values = [clip.channel_values(joint, c) for c in layout if c[0] == "r"]
        out[joint, : len(values)] = [v[0] for v in values if v is not None]
    return out
