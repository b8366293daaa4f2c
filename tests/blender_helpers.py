"""Helpers for tests that drive real Blender (the bpy wheel)."""

from __future__ import annotations

import numpy as np


def pose_heads(bpy, obj, frames) -> tuple[np.ndarray, list[str]]:
    """World-space pose-bone heads (len(frames), bones, 3) by evaluating the scene at each frame."""
    scene = bpy.context.scene
    world = np.array(obj.matrix_world)
    names = [pb.name for pb in obj.pose.bones]
    heads = []
    for frame in frames:
        scene.frame_set(int(frame))
        local = np.array([pb.head for pb in obj.pose.bones]).reshape(-1, 3)
        heads.append(local @ world[:3, :3].T + world[:3, 3])
    return np.array(heads), names


def extent(points: np.ndarray) -> float:
    return float(np.ptp(points.reshape(-1, 3), axis=0).max())


def ids(bpy) -> dict[str, set[str]]:
    """Names of every ID in the data collections an import could touch."""
    return {attr: {block.name for block in getattr(bpy.data, attr)}
            for attr in ("objects", "armatures", "actions", "collections", "meshes", "materials")}


def blender_axes(points: np.ndarray) -> np.ndarray:
    """Points in file axes (Y up, Z forward) turned into Blender's, as the importers do by default."""
    from bpy_extras.io_utils import axis_conversion

    return points @ np.array(axis_conversion(from_forward="-Z", from_up="Y")).T


def check_import_and_round_trip(bpy, path, extension: str, folder):
    """Import ``path`` with our operator; its pose-bone heads must equal the core's world positions
    (Blender axes, metres in the unit Unit Auto reads) at every frame.  Export, re-import the export, and
    require the same heads.  Returns the clip as read and as exported."""
    from mocap_addon.core import load, world_positions
    from mocap_addon.core.body.stature import guess_unit

    importer = getattr(bpy.ops.import_anim, f"mocap_{extension}")
    exporter = getattr(bpy.ops.export_anim, f"mocap_{extension}")
    assert importer(filepath=str(path)) == {"FINISHED"}
    clip = load(path)
    frames = range(1, clip.frame_count + 1)
    heads, names = pose_heads(bpy, bpy.context.object, frames)
    assert names == clip.skeleton.names
    unit = guess_unit(clip).unit_in_metres or 1.0
    truth = blender_axes(world_positions(clip)) * unit
    tolerance = 1e-3 * unit + 1e-5 * extent(truth)
    assert np.abs(heads - truth).max() <= tolerance
    target = folder / f"out.{extension}"
    assert exporter(filepath=str(target)) == {"FINISHED"}
    exported = load(target)
    assert exported.skeleton.names == clip.skeleton.names and exported.start_frame == clip.start_frame
    # In metres: an export writes the unit the import read (an overruled stated unit converted, as HTR's mm).
    written = world_positions(exported) * (guess_unit(exported).unit_in_metres or 1.0)
    assert np.abs(written - world_positions(clip) * unit).max() <= tolerance
    importer(filepath=str(target))
    again, _ = pose_heads(bpy, bpy.context.object, frames)
    assert np.abs(again - heads).max() <= tolerance
    return clip, exported


def armature_from_bones(bpy, name: str, bones) -> object:
    """A new armature object linked to the scene and made active, from ``(name, parent, head, tail, roll)``
    rows (parents first; ``parent`` None or an earlier name), back in object mode."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    made = {}
    for bone_name, parent, head, tail, roll in bones:
        bone = data.edit_bones.new(bone_name)
        bone.head, bone.tail, bone.roll = head, tail, roll
        bone.parent = made.get(parent)
        made[bone_name] = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


class Layout:
    """Stands in for a panel's layout: checks every property and operator the panel draws exists."""

    def __init__(self, bpy, drawn):
        self.bpy, self.drawn = bpy, drawn

    def __getattr__(self, name):
        return lambda *args, **kwargs: Layout(self.bpy, self.drawn)  # row, column, box, label, separator

    def prop(self, data, name, **kwargs):
        assert name in data.bl_rna.properties, name
        self.drawn.append(name)

    def prop_search(self, data, name, search_data, search_name, **kwargs):
        assert name in data.bl_rna.properties and search_name in search_data.bl_rna.properties
        self.drawn.append(name)

    def operator(self, idname, **kwargs):
        category, name = idname.split(".")
        properties = getattr(getattr(self.bpy.ops, category), name).get_rna_type().properties
        self.drawn.append(idname)
        return OperatorProperties(properties)


class OperatorProperties:
    def __init__(self, properties):
        object.__setattr__(self, "properties", properties)

    def __setattr__(self, name, value):
        assert name in self.properties, name
