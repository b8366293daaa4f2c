"""Forward kinematics the slow, plain way: the model's equation as 4x4 matrices, one frame and joint at
a time.  An oracle for the core's vectorised forward kinematics (quaternions, a depth at a time)."""

from __future__ import annotations

import numpy as np

from mocap_addon.core import Clip
from mocap_addon.core.rotations import axis_matrices


def local_matrices(clip: Clip) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each joint's local rotation ``(F, J, 3, 3)`` (rest @ channels), translation ``(F, J, 3)`` and scale
    ``(F, J)`` from the channel values: ``L = T(base + t) R_rest R(channels) S`` (``t`` turned by the rest
    where the model says)."""
    skeleton = clip.skeleton
    shape = (clip.frame_count, skeleton.joint_count)
    rotations, translations, scales = np.zeros(shape + (3, 3)), np.zeros(shape + (3,)), np.ones(shape)
    starts = skeleton.channel_starts()
    for frame in range(clip.frame_count):
        for joint in range(skeleton.joint_count):
            values = dict(zip(skeleton.channels[joint], clip.motion[frame, starts[joint]:starts[joint + 1]]))
            rotation = np.eye(3)
            for channel in skeleton.channels[joint]:
                if channel[0] == "r":
                    rotation = rotation @ axis_matrices(channel[1].upper(), np.radians(values[channel]))
            moved = np.array([values.get(c, 0.0) for c in ("tx", "ty", "tz")])
            moved = moved + values.get("l", 0.0) * skeleton.length_directions[joint]
            if skeleton.translation_in_rest_frame[joint]:
                moved = skeleton.rest_rotations[joint] @ moved
            rotations[frame, joint] = skeleton.rest_rotations[joint] @ rotation
            translations[frame, joint] = moved + (0.0 if skeleton.position_replaces_offset[joint]
                                                  else skeleton.offsets[joint])
            scales[frame, joint] = values.get("s", 1.0)
    return rotations, translations, scales


def world_matrices(parents: list[int], rotations: np.ndarray, translations: np.ndarray,
                   scales: np.ndarray | None = None) -> np.ndarray:
    """World 4x4 transforms ``(F, J, 4, 4)`` from local rotations ``(F, J, 3, 3)``, translations and scales."""
    frames, joints = rotations.shape[:2]
    scales = np.ones((frames, joints)) if scales is None else scales
    worlds = np.zeros((frames, joints, 4, 4))
    for frame in range(frames):
        for joint, parent in enumerate(parents):
            local = np.eye(4)
            local[:3, :3] = rotations[frame, joint] * scales[frame, joint]
            local[:3, 3] = translations[frame, joint]
            worlds[frame, joint] = local if parent < 0 else worlds[frame, parent] @ local
    return worlds


def clip_world_matrices(clip: Clip) -> np.ndarray:
    """World 4x4 transforms ``(F, J, 4, 4)`` of a clip, straight from its channel values."""
    return world_matrices(clip.skeleton.parents, *local_matrices(clip))
