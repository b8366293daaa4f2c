"""What a retarget of one armature onto another is made of, shared by the tools that retarget (bake or live):
its root and feet options as Blender enum items, and the core retarget of the two armatures."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy

from ...core.retarget.transfer import FEET, ROOT_MODES
from .choices import enum_items
from .frame_range import FrameRange, in_range

if TYPE_CHECKING:
    from ...core import Pose

ROOT_ITEMS = enum_items(ROOT_MODES, {
    "scale": ("Scale by Legs", "Hips travel scaled by the ratio of leg lengths"),
    "keep": ("Keep", "Hips travel copied as it is"),
    "in_place": ("In Place", "Hips travel over the ground removed (game engines move the character themselves)"),
    "to_root_bone": ("To Root Bone", "Hips travel over the ground carried by the bone above the hips (the rig's "
                                     "root), the hips keeping only what is relative to it")})
FEET_ITEMS = enum_items(FEET, {
    "planted": ("Planted", "Feet on the target's floor, held where they land while the source's are planted "
                           "(leg IK, knees bending about their own axes)"),
    "free": ("Free", "Every bone's exact direction, feet where they fall")})


def retargeted(source: bpy.types.Object, target: bpy.types.Object, root: str, feet: str,
               frames: FrameRange | None = None) -> Pose:
    """``source``'s action (its ``frames`` where given) on ``target``'s skeleton (core ``retarget``), with both
    armatures' stored bone mappings and reference poses.  What the target plays now never changes the result:
    its rest (or stored reference pose), and for a rig imported here the captures it came with (its floor,
    how its bones twist)."""
    from ...core.retarget.transfer import retarget
    from .bone_mapping import armature_mapping
    from .import_record import captured_action
    from .motion import armature_pose, armature_skeleton
    from .reference_pose import reference_rotations

    pose = armature_pose(source) if frames is None else in_range(armature_pose(source), frames)
    captures = captured_action(target)
    onto = armature_skeleton(target) if captures is None else armature_pose(target, captures)
    return retarget(pose, onto, mapping=armature_mapping(source), target_mapping=armature_mapping(target),
                    root=root, source_reference=reference_rotations(source),
                    target_reference=reference_rotations(target), feet=feet)
