"""File > Import / Export: one operator pair per format, drag-and-drop handlers, menus and the file panel."""

from __future__ import annotations

import bpy

from . import acclaim, bvh, htr, panel
from .base import MocapImportBase, file_handler

# (import operator, export operator) per format; each gets menu entries and a FileHandler.
FORMATS = bvh.FORMATS + htr.FORMATS + acclaim.FORMATS
CLASSES = (*(c for pair in FORMATS for c in (*pair, file_handler(*pair))), panel.VIEW3D_PT_mocap_io)


def menu_label(importer: type[MocapImportBase]) -> str:
    """A File menu entry's text: named after the add-on, so it stands apart from Blender's own
    "Motion Capture (.bvh)" entries of io_anim_bvh."""
    return f"Mocap I/O {importer.format_label} ({'/'.join(importer.extensions)})"


def _menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    for importer, _ in FORMATS:
        self.layout.operator(importer.bl_idname, text=menu_label(importer))


def _menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    for importer, exporter in FORMATS:
        self.layout.operator(exporter.bl_idname, text=menu_label(importer))


def add_menus() -> None:
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)


def remove_menus() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)
