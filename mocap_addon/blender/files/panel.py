"""3D View sidebar panel: import buttons, and what the active armature was imported from."""

from __future__ import annotations

import json

import bpy

from ..storage import PROPERTY


def source_summary(obj: bpy.types.Object | None) -> list[str]:
    """Lines describing the armature's stored import record (empty when it has none)."""
    if obj is None or obj.type != "ARMATURE" or PROPERTY not in obj.data:
        return []
    record = json.loads(obj.data[PROPERTY])
    timing = "skeleton only" if record.get("frame_count") == 0 else f"{1.0 / record['frame_time']:g} fps"
    lines = [f"{(record.get('format') or '?').upper()}: {bpy.path.basename(record.get('source') or '')}",
             f"{len(record['names'])} joints, {timing}"]
    action = obj.animation_data.action if obj.animation_data else None
    if action is not None:
        first, last = (round(v) for v in action.frame_range)
        lines.append(f"frames {first}-{last}")
    lines += [f"warning: {w}" for w in record.get("metadata", {}).get("warnings", [])]
    return lines


class VIEW3D_PT_mocap_io(bpy.types.Panel):
    """Motion capture import/export in the 3D View sidebar (N panel, Mocap tab)."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Mocap"
    bl_label = "Motion Capture"

    def draw(self, context: bpy.types.Context) -> None:
        from . import FORMATS

        layout = self.layout
        column = layout.column(align=True)
        for importer, _ in FORMATS:
            column.operator(importer.bl_idname, text=f"Import {importer.format_label}", icon="IMPORT")
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            layout.label(text="Select an armature to export")
            return
        column = layout.column(align=True)
        for _, exporter in FORMATS:
            column.operator(exporter.bl_idname, text=f"Export {exporter.format_label}", icon="EXPORT")
        box = layout.box()
        for line in source_summary(obj) or ["Not imported by Mocap I/O"]:
            box.label(text=line)
