"""What a retarget of one armature onto another is made of, shared by the tools that retarget (bake or live):
its root and feet options as Blender enum items, and the core retarget of the two armatures."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy

from ...core.retarget.transfer import FEET, ROOT_MODES
from .choices import enum_items

if TYPE_CHECKING:
    from ...core import Pose

ROOT_ITEMS = enum_items(ROOT_MODES, {"scale": ("Scale by Legs", "Hips travel scaled by the ratio of leg lengths"),
                                     "keep": ("Keep", "Hips travel copied as it is")})
FEET_ITEMS = enum_items(FEET, {
    "planted": ("Planted", "Feet on the target's floor, held where they land while the source's are planted "
                           "(leg IK, knees bending about their own axes)"),
    "free": ("Free", "Every bone's exact direction, feet where they fall")})


def retargeted(source: bpy.types.Object, target: bpy.types.Object, root: str, feet: str,
               target_action: bpy.types.Action | None) -> Pose:
    """``source``'s action on ``target``'s skeleton (core ``retarget``), with both armatures' stored bone
    mappings and reference poses.  A target with an action (``target_action``) lends its captures: its
    floor and how its bones twist; else its bones alone give its skeleton."""
    from ...core.retarget.transfer import retarget
    from .bone_mapping import armature_mapping
    from .motion import armature_pose, armature_skeleton
    from .reference_pose import reference_rotations

    pose = armature_pose(source)
    onto = armature_pose(target, target_action) if target_action is not None else armature_skeleton(target)
    return retarget(pose, onto, mapping=armature_mapping(source), target_mapping=armature_mapping(target),
                    root=root, source_reference=reference_rotations(source),
                    target_reference=reference_rotations(target), feet=feet)
