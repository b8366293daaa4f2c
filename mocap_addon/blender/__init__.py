"""Blender layer (registered by ``mocap_addon.register``).

``files``: File > Import / Export operators and the file panel; ``tools``: the
sidebar tools.  Shared here: version compatibility, armature building, F-curve
reading and writing, rest-frame maths and the import record stored on armatures.
"""

from __future__ import annotations

import bpy

from . import files, tools

CLASSES = files.CLASSES + tools.CLASSES
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(CLASSES)
_registered = False


def register() -> None:
    """Register classes, properties and menu entries; a second call does nothing."""
    global _registered
    if _registered:
        return
    _register_classes()
    tools.register_properties()
    files.add_menus()
    _registered = True


def unregister() -> None:
    """Undo :func:`register`; a second call does nothing."""
    global _registered
    if not _registered:
        return
    files.remove_menus()
    tools.unregister_properties()
    _unregister_classes()
    _registered = False
