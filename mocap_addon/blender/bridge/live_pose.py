"""One frame of a core pose put on an armature's pose bones at once: what a live tool does each frame.

:class:`Poser` folds the constant matrices between the skeleton's joints and
the armature's bones (:mod:`.rig_math`) into per-joint arrays once, so a frame
is a few array products and one ``foreach_set`` per pose-bone property, the
same values :func:`.motion.write_pose` keys (each bone in its own rotation mode).
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ...core import Skeleton, rotations
from ...core.rotations import FloatArray
from .animation import axis_angle_values
from .armature_to_clip import armature_bone_frames
from .motion import clip_space


@dataclass
class Poser:
    """How one skeleton's local poses become one armature's pose-bone values."""

    turns: FloatArray  # (J, 4, 4): a joint's local quaternion times this is its bone's basis rotation
    moves: FloatArray  # (J, 3, 3): a joint's local translation times this (transposed), less rest, ...
    rest_offset: FloatArray  # (J, 3)
    rest_inverse: FloatArray  # (J, 3, 3)
    bone_joints: list[int]  # for each pose bone, its joint
    modes: dict[str, list[int]]  # rotation mode -> pose bones (positions in pose.bones)

    @classmethod
    def of(cls, obj: bpy.types.Object, skeleton: Skeleton) -> Poser:
        """For ``skeleton`` (its joints named as ``obj``'s bones, in clip space) on ``obj``."""
        conversion, scale = clip_space(obj)
        frames = armature_bone_frames(obj, skeleton, conversion)
        turns = np.stack([rotations.quaternion_product_matrix(left, to_bone) for left, to_bone in frames.turns])
        assert obj.pose is not None, "an armature object has a pose"
        bones = obj.pose.bones
        missing = [bone.name for bone in bones if bone.name not in skeleton.names]
        if missing:
            raise ValueError(f"{obj.name}'s bones {', '.join(missing[:5])} are not in the motion's skeleton")
        modes: dict[str, list[int]] = {}
        for position, bone in enumerate(bones):
            modes.setdefault(bone.rotation_mode, []).append(position)
        return cls(turns, scale * frames.from_parent, frames.rest_offset, frames.rest_inverse,
                   [skeleton.index(bone.name) for bone in bones], modes)

    def apply(self, obj: bpy.types.Object, turns: FloatArray, moves: FloatArray, scales: FloatArray | None) -> None:
        """Pose ``obj``'s bones as the skeleton's local rotations ``(J, 4)``, translations ``(J, 3)`` and
        scales ``(J,)`` (clip space; ``None``: leave the scales) and tag it for redrawing."""
        joints = self.bone_joints
        assert obj.pose is not None, "an armature object has a pose"
        turned = np.einsum("jk,jkl->jl", turns[joints], self.turns[joints])
        moved = np.einsum("jk,jlk->jl", moves[joints], self.moves[joints]) - self.rest_offset[joints]
        located = np.einsum("jk,jlk->jl", moved, self.rest_inverse[joints])
        bones = obj.pose.bones
        count = len(joints)
        for mode, where in self.modes.items():
            if mode == "QUATERNION":
                values = np.empty((count, 4), dtype=np.float32)
                bones.foreach_get("rotation_quaternion", values.ravel())
                values[where] = turned[where]
                bones.foreach_set("rotation_quaternion", values.ravel())
            elif mode == "AXIS_ANGLE":
                values = np.empty((count, 4), dtype=np.float32)
                bones.foreach_get("rotation_axis_angle", values.ravel())
                values[where] = axis_angle_values(turned[where])
                bones.foreach_set("rotation_axis_angle", values.ravel())
            else:
                values = np.empty((count, 3), dtype=np.float32)
                bones.foreach_get("rotation_euler", values.ravel())
                ours = mode[::-1]
                angles = rotations.quaternion_to_euler(turned[where], ours)
                values[where] = angles[:, [ours.index(axis) for axis in "XYZ"]]
                bones.foreach_set("rotation_euler", values.ravel())
        bones.foreach_set("location", located.astype(np.float32).ravel())
        if scales is not None:
            bones.foreach_set("scale", np.repeat(scales[joints].astype(np.float32)[:, None], 3, axis=1).ravel())
        obj.update_tag(refresh={"DATA"})

