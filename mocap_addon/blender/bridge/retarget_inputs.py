"""What a retarget of one armature onto another is made of, shared by the tools that retarget (bake or live):
the core retarget of the two armatures (its root and feet options are the core's, ``core.options``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy

from .frame_range import FrameRange, in_range

if TYPE_CHECKING:
    from ...core import Pose
    from .control_rig import ControlRig


def retargeted(source: bpy.types.Object, target: bpy.types.Object, root: str, feet: str,
               frames: FrameRange | None = None, controls: ControlRig | None = None) -> Pose:
    """``source``'s action (its ``frames`` where given) on ``target``'s skeleton (core ``retarget``, ``root``
    and ``feet`` its ids), with both armatures' stored bone mappings and reference poses.  What the target
    plays now never changes the result: its rest (or stored reference pose), and for a rig imported here the
    captures it came with (its floor, how its bones twist).  With ``controls``, the result is on the rig's
    driven bones (``control_rig.driven_skeleton``, mapped by detection), for ``control_rig.key_controls``."""
    from ...core.retarget.transfer import retarget
    from .bone_mapping import armature_mapping
    from .read_rig import armature_pose, target_body
    from .reference_pose import reference_rotations

    pose = armature_pose(source) if frames is None else in_range(armature_pose(source), frames)
    if controls is not None:
        from .control_rig import driven_skeleton

        return retarget(pose, driven_skeleton(target, controls), mapping=armature_mapping(source), root=root,
                        source_reference=reference_rotations(source), feet=feet)
    return retarget(pose, target_body(target), mapping=armature_mapping(source),
                    target_mapping=armature_mapping(target), root=root, source_reference=reference_rotations(source),
                    target_reference=reference_rotations(target), feet=feet)
