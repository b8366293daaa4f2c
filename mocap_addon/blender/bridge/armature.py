"""Armature objects as the tools find them (by name, the selection, a property's poll), their data and
pose bones, and the data path of a pose-bone property."""

from __future__ import annotations

import bpy


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


def bone_path(name: str, prop: str) -> str:
    """The data path of pose bone ``name``'s property ``prop`` (what an F-curve animates)."""
    return f'pose.bones["{bpy.utils.escape_identifier(name)}"].{prop}'
