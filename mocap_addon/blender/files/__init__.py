"""File > Import / Export: one operator pair per format, drag-and-drop handlers, menus and the sidebar panel
with the same buttons."""

from __future__ import annotations

import bpy

from ..bridge.read_rig import source_summary
from ..bridge.sidebar import SidebarPanel
from . import acclaim, bvh, htr
from .base import MocapImportBase, file_handler

# (import operator, export operator) per format; each gets menu entries and a FileHandler.
FORMATS = bvh.FORMATS + htr.FORMATS + acclaim.FORMATS


def menu_label(importer: type[MocapImportBase]) -> str:
    """A File menu entry's text: named after the add-on, so it stands apart from Blender's own
    "Motion Capture (.bvh)" entries of io_anim_bvh."""
    return f"Mocap I/O {importer.format_label} ({'/'.join(importer.extensions)})"


def _menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    assert self.layout is not None, "drawn in a layout"
    for importer, _ in FORMATS:
        self.layout.operator(importer.bl_idname, text=menu_label(importer))


def _menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    assert self.layout is not None, "drawn in a layout"
    for importer, exporter in FORMATS:
        self.layout.operator(exporter.bl_idname, text=menu_label(importer))


def add_menus() -> None:
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)


def remove_menus() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)


class VIEW3D_PT_mocap_io(SidebarPanel):
    """Motion capture import/export in the 3D View sidebar (N panel, Mocap tab)."""

    bl_label = "Motion Capture"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        assert layout is not None, "drawn in a layout"
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


CLASSES = (*(c for pair in FORMATS for c in (*pair, file_handler(*pair))), VIEW3D_PT_mocap_io)
