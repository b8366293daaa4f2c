"""Build an armature object from a core skeleton's rest rig."""

from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix

from ..core import Skeleton
from .rig_math import RestRig


def build_armature(name: str, skeleton: Skeleton, rig: RestRig,
                   context: bpy.types.Context) -> bpy.types.Object:
    """A new armature object linked to the active collection, one bone per joint, in object mode."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    context.collection.objects.link(obj)
    previous = context.view_layer.objects.active
    if context.object is not None and context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        bones = []
        for joint, joint_name in enumerate(skeleton.names):
            bone = data.edit_bones.new(joint_name)
            bone.head = rig.heads[joint]
            bone.tail = rig.tails[joint]
            frame = np.eye(4)
            frame[:3, :3] = rig.orientations[joint]
            frame[:3, 3] = rig.heads[joint]
            bone.matrix = Matrix(frame.tolist())
            bones.append(bone)
        for joint, parent in enumerate(skeleton.parents):
            if parent >= 0:
                bones[joint].parent = bones[parent]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        if previous is not None and previous.name in context.view_layer.objects:
            context.view_layer.objects.active = previous
    return obj


def rest_matrices(obj: bpy.types.Object, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Rest orientations (J, 3, 3) and heads (J, 3) of the named bones, in armature space."""
    bones = obj.data.bones
    matrices = np.array([np.array(bones[name].matrix_local) for name in names]).reshape(-1, 4, 4)
    return matrices[:, :3, :3], matrices[:, :3, 3]
