"""A rig's reference pose: the pose it stands in for retargeting (its T-pose), where the automatic one
is wrong.  Stored on the armature data as each bone's pose rotation relative to its rest; set and
cleared in the Retarget panel, read by every tool that retargets (retarget, transitions, the batch
script's rig targets)."""

from __future__ import annotations

import json

import bpy
import numpy as np

from .armature import armature_data
from .compat import id_property
from .read_rig import armature_skeleton, clip_space, posed_turns

REFERENCE_POSE = "mocap_reference_pose"  # on the armature data: bone -> pose rotation relative to rest (3x3)


def reference_rotations(obj: bpy.types.Object) -> np.ndarray | None:
    """The stored reference pose as world joint rotations ``(J, 3, 3)`` in clip space, or ``None``.

    A bone turned by ``D`` (armature space, relative to its rest) turns its
    joint's frame ``C @ G`` to ``D @ C @ G``; in clip space ``C^-1 @ D @ C @ G``.
    """
    from ...core.transforms import rest_pose

    stored = id_property(armature_data(obj), REFERENCE_POSE)
    if stored is None:
        return None
    turns = json.loads(stored)
    skeleton = armature_skeleton(obj)
    conversion, _ = clip_space(obj)
    rest = rest_pose(skeleton)[0]
    delta = np.array([np.reshape(turns.get(name, np.eye(3).ravel()), (3, 3)) for name in skeleton.names])
    return np.linalg.inv(conversion) @ delta @ conversion @ rest


def has_reference_pose(obj: bpy.types.Object) -> bool:
    return id_property(armature_data(obj), REFERENCE_POSE) is not None


def store_reference_pose(obj: bpy.types.Object) -> None:
    """Store the armature's current pose (as evaluated: update the view layer first) as its reference."""
    turns = {name: turn.ravel().tolist() for name, turn in posed_turns(obj).items()}
    armature_data(obj)[REFERENCE_POSE] = json.dumps(turns)


def clear_reference_pose(obj: bpy.types.Object) -> None:
    """Forget the stored reference pose: tools use the automatic T-pose."""
    armature_data(obj).pop(REFERENCE_POSE, None)
