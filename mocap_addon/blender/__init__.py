"""Blender layer: operators, file handlers, menus and the sidebar panel (registered by ``mocap_addon.register``)."""

from __future__ import annotations

import bpy

from . import operators, operators_acclaim, operators_htr, panels

# (import operator, export operator) per format; each gets menu entries and a FileHandler.
FORMATS = operators.FORMATS + operators_htr.FORMATS + operators_acclaim.FORMATS
CLASSES = (*(c for pair in FORMATS for c in (*pair, operators.file_handler(*pair))), panels.VIEW3D_PT_mocap_io)
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(CLASSES)
_registered = False


def _menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    for importer, _ in FORMATS:
        self.layout.operator(importer.bl_idname, text=f"Motion Capture ({importer.filename_ext})")


def _menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    for _, exporter in FORMATS:
        self.layout.operator(exporter.bl_idname, text=f"Motion Capture ({exporter.filename_ext})")


def register() -> None:
    """Register classes and menu entries; a second call does nothing."""
    global _registered
    if _registered:
        return
    _register_classes()
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)
    _registered = True


def unregister() -> None:
    """Undo :func:`register`; a second call does nothing."""
    global _registered
    if not _registered:
        return
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)
    _unregister_classes()
    _registered = False
