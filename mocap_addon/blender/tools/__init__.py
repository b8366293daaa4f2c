"""Sidebar tools in the 3D View's Mocap tab: one module per tool, each with its operators and panel.

A tool module lists its Blender classes in ``CLASSES`` and may define
``register_properties()`` / ``unregister_properties()`` for the properties it
adds to Blender's types; add the module to ``MODULES`` to register it.
"""

from __future__ import annotations

from types import ModuleType

from . import blend, live, mapping, reduce, retarget, transitions

MODULES: tuple[ModuleType, ...] = (mapping, retarget, blend, live, transitions, reduce)
CLASSES = tuple(c for module in MODULES for c in module.CLASSES)


def register_properties() -> None:
    for module in MODULES:
        if hasattr(module, "register_properties"):
            module.register_properties()


def unregister_properties() -> None:
    for module in reversed(MODULES):
        if hasattr(module, "unregister_properties"):
            module.unregister_properties()
