"""Blender layer: operators, file handlers and menus (registered by ``mocap_addon.register``)."""

from __future__ import annotations

import bpy

from . import operators

_register_classes, _unregister_classes = bpy.utils.register_classes_factory(operators.CLASSES)
_registered = False


def _menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    for operator in operators.IMPORT_OPERATORS:
        self.layout.operator(operator.bl_idname, text=f"Motion Capture ({operator.filename_ext})")


def _menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    for operator in operators.EXPORT_OPERATORS:
        self.layout.operator(operator.bl_idname, text=f"Motion Capture ({operator.filename_ext})")


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
