"""Blender layer (registered by ``mocap_addon.register``).

``files``: File > Import / Export operators and the file panel; ``tools``: the
sidebar tools; ``batch``: the headless batch.  All stand on the shared bridge,
never on each other: ``bridge.read_rig`` reads a rig (bones, rest, import
record, action, frame range) as the core's skeleton, pose or clip, and
``bridge.write_rig`` writes one (a new armature, an action, a live pose);
``clip_to_armature`` is File > Import on them, ``bone_mapping`` keeps each
bone's canonical joint, ``compat`` knows the Blender versions.
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
