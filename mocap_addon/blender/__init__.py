"""Blender layer (registered by ``mocap_addon.register``).

``files``: File > Import / Export operators and the file panel; ``tools``: the
sidebar tools.  Both stand on the shared bridge here, never on each other:
``clip_to_armature`` (a core clip as a new armature with its action),
``armature_to_clip`` (an armature's action as a core clip), ``motion`` (any
armature's action as a clip or local poses and back, for the tools),
``bone_mapping`` (each bone's canonical joint, kept on the armature), with
``animation`` (F-curves in bulk), ``armature``, ``rig_math``, ``import_record``,
``conversion`` (axes, units, frame rate), ``choices``, ``rollback`` and
``compat`` (Blender versions).
"""

from __future__ import annotations

import bpy

from . import files, tools
from .bridge import bone_mapping

CLASSES = bone_mapping.CLASSES + files.CLASSES + tools.CLASSES
_registered = False


def register() -> None:
    """Register classes, properties and menu entries; a second call does nothing."""
    global _registered
    if _registered:
        return
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bone_mapping.register_properties()
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
    bone_mapping.unregister_properties()
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
    _registered = False
