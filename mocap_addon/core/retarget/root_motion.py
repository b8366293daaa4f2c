"""Root motion as game engines take it: the hips' travel over the ground removed (``"in_place"``) or carried
by the bone above the hips (``"to_root_bone"``), the hips keeping only what is relative to it."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..kinematics import forward_kinematics, rest_positions
from ..model import TRANSLATION_CHANNELS
from ..pose import Pose
from ..rotations import FloatArray

ROOT_MOTION = ("in_place", "to_root_bone")


def move_root(pose: Pose, hips: int, up: FloatArray, mode: str) -> Pose:
    """``pose`` with the hips' horizontal travel (across ``up``, a unit vector in the pose's world axes)
    taken away (``"in_place"``: the figure stays over where it starts, its vertical motion kept) or put on
    the skeleton's root bone (``"to_root_bone"``: the root follows the hips over the ground at its rest
    height; the hips gain translation channels if they lack them and keep their place in the world)."""
    skeleton = pose.skeleton
    root = skeleton.chain(hips)[0]
    world = forward_kinematics(pose)
    if mode == "in_place":
        travel = world.positions[:, hips] - world.positions[:1, hips]
        translations = pose.translations.copy()
        translations[:, root] -= travel - np.outer(travel @ up, up)
        return dataclasses.replace(pose, translations=translations)
    if mode != "to_root_bone":
        raise ValueError(f"root motion must be one of {', '.join(ROOT_MOTION)}, got {mode!r}")
    if root == hips:
        raise ValueError(f"root='to_root_bone': {skeleton.names[hips]} has no bone above it to carry the root "
                         "motion (use 'in_place', or give the rig a root bone)")
    rest = rest_positions(skeleton)[root]
    apart = world.positions[:, hips] - rest
    shift = rest + apart - np.outer(apart @ up, up) - world.positions[:, root]  # at its rest height, under the hips
    parent = skeleton.parents[hips]
    translations = pose.translations.copy()
    translations[:, root] += shift
    translations[:, hips] -= np.einsum("fji,fj->fi", world.rotations[:, parent], shift) / world.scales[:, parent, None]
    moved = skeleton.copy()
    layout = skeleton.channels[hips]
    if not any(c in TRANSLATION_CHANNELS for c in layout):
        moved.channels = [("tx", "ty", "tz", *c) if j == hips else c for j, c in enumerate(skeleton.channels)]
        moved.position_replaces_offset[hips] = True
    return dataclasses.replace(pose, skeleton=moved, translations=translations)
