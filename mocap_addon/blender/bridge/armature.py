"""Build an armature object from a core skeleton's rest rig; an armature object's data, pose and rest bones."""

from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix

from ...core import Skeleton
from .rig_math import RestRig


def build_armature(name: str, skeleton: Skeleton, rig: RestRig,
                   context: bpy.types.Context) -> bpy.types.Object:
    """A new armature object linked to the active collection, one bone per joint, in object mode."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    view_layer = context.view_layer
    assert context.collection is not None and view_layer is not None, "a scene to build in"
    context.collection.objects.link(obj)
    previous = view_layer.objects.active
    if context.object is not None and context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    view_layer.objects.active = obj
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
        if previous is not None and previous.name in view_layer.objects:
            view_layer.objects.active = previous
    dropped = [joint_name for joint_name in skeleton.names if joint_name not in data.bones]
    if dropped:  # build_rest_rig gives every bone a length Blender keeps: this would be a new Blender rule
        raise ValueError(f"Blender dropped {len(dropped)} bone(s) on leaving edit mode: {', '.join(dropped[:5])}")
    return obj


def rig_copy(context: bpy.types.Context, obj: bpy.types.Object, name: str) -> bpy.types.Object:
    """A copy of the armature ``obj`` (object and data, no animation) called ``name``, in the active collection:
    where a tool writes motion made from ``obj``'s own action without writing over it."""
    copy = obj.copy()
    copy.name = name
    copy.animation_data_clear()
    data = armature_data(obj).copy()
    data.animation_data_clear()
    copy.data = data
    assert context.collection is not None, "a collection to add the copy to"
    context.collection.objects.link(copy)
    return copy


def make_active(context: bpy.types.Context, obj: bpy.types.Object) -> None:
    """Select ``obj`` alone and make it the active object (where a tool leaves what it made)."""
    view_layer = context.view_layer
    assert view_layer is not None, "run with a view layer"
    for other in view_layer.objects.selected:
        other.select_set(False)
    obj.select_set(True)
    view_layer.objects.active = obj


def armature_data(obj: bpy.types.Object) -> bpy.types.Armature:
    """The armature of an armature object (its ``data``)."""
    data = obj.data
    if not isinstance(data, bpy.types.Armature):
        raise TypeError(f"{obj.name} is not an armature")
    return data


def armature_named(name: str) -> bpy.types.Object | None:
    """The armature object called ``name``, if there is one."""
    # Not objects.get(name): the stubs say it returns nothing.
    obj = bpy.data.objects[name] if name in bpy.data.objects else None  # noqa: SIM401
    return obj if obj is not None and obj.type == "ARMATURE" else None


def is_armature(_owner: object, obj: bpy.types.Object) -> bool:
    """Poll of a property that takes armatures only."""
    return obj.type == "ARMATURE"


def named_or_selected(context: bpy.types.Context, active_name: str, other_name: str,
                      roles: tuple[str, str]) -> tuple[bpy.types.Object, bpy.types.Object]:
    """Two armatures for a tool, as Blender users pick them: each by name where given, else the active
    armature and the one other selected armature.  ``roles`` names them for the message of the
    ``LookupError`` raised where one is missing (a name no armature has, or what to select)."""
    active = context.active_object
    first = armature_named(active_name) if active_name else (
        active if active is not None and active.type == "ARMATURE" else None)
    others = [obj for obj in context.selected_objects if obj.type == "ARMATURE" and obj != first]
    second = armature_named(other_name) if other_name else (others[0] if len(others) == 1 else None)
    if first is None or second is None:
        name = active_name if first is None else other_name
        raise LookupError(f"no armature called {name!r}" if name else
                          f"select {roles[1]}, then {roles[0]} (active), or name them")
    return first, second


def pose_bones(obj: bpy.types.Object) -> bpy.types.bpy_prop_collection[bpy.types.PoseBone]:
    """The pose bones of an armature object."""
    if obj.pose is None:
        raise TypeError(f"{obj.name} is not an armature")
    return obj.pose.bones


def rest_matrices(obj: bpy.types.Object, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Rest orientations (J, 3, 3) and heads (J, 3) of the named bones, in armature space."""
    bones = armature_data(obj).bones
    matrices = np.array([np.array(bones[name].matrix_local) for name in names]).reshape(-1, 4, 4)
    return matrices[:, :3, :3], matrices[:, :3, 3]
