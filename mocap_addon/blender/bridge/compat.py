"""The one place that knows how Blender versions differ.

* 4.2/4.3: ``Action.fcurves`` and ``action_group`` on ``fcurves.new``.
* 4.4/4.5: slotted actions; F-curves live in a channelbag from ``strip.channelbag(slot, ensure=True)``.
* 5.0+: the same, ``Action.fcurves`` is gone, ``bpy_extras.anim_utils`` can make the channelbag.

Types are checked against Blender 4.2's API (the oldest supported), which has no
slots, layers or channelbags: the code for them reaches those through
:func:`slotted`, typed ``Any``, after :func:`is_slotted` said they are there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import bpy

LINEAR = 1  # Keyframe.interpolation enum value for 'LINEAR', as foreach_set expects
VECTOR = 2  # Keyframe.handle_left_type / handle_right_type enum value for 'VECTOR'


def is_slotted(action: bpy.types.Action) -> bool:
    return hasattr(action, "slots")


def slotted(block: bpy.types.Action | bpy.types.AnimData) -> Any:
    """``block`` with the 4.4+ API (``slots``, ``layers``, ``action_slot``) the 4.2 types lack."""
    return cast(Any, block)


def id_property(block: bpy.types.bpy_struct, key: str, default: Any = None) -> Any:
    """The custom property ``key`` of ``block``, else ``default``."""
    return block.get(key, default)


def id_properties(block: bpy.types.bpy_struct) -> dict[str, Any]:
    """The custom properties of ``block``, by name."""
    items: Any = block.items()  # type: ignore[func-returns-value]  # the stubs give items() no return value
    return dict(items)


def add_properties(owner: type[bpy.types.bpy_struct], **properties: object) -> None:
    """Give a Blender type run-time properties (``bpy.props`` calls, which the stubs say return nothing)."""
    for name, prop in properties.items():
        setattr(owner, name, prop)


def remove_properties(owner: type[bpy.types.bpy_struct], *names: str) -> None:
    """Undo :func:`add_properties`."""
    for name in names:
        delattr(owner, name)


def run_time_property(block: bpy.types.bpy_struct, name: str) -> Any:
    """A property added by :func:`add_properties`, which no stub knows."""
    return getattr(block, name)


def assign_action(obj: bpy.types.Object | bpy.types.Armature, action: bpy.types.Action) -> object | None:
    """Make ``action`` animate ``obj`` (an object or an armature's data); returns the slot (``None`` before
    slotted actions)."""
    animation = obj.animation_data or obj.animation_data_create()
    if not is_slotted(action):
        animation.action = action
        return None
    slots = slotted(action).slots
    slot = slots.new(id_type=obj.id_type, name=obj.name) if not slots else slots[0]
    animation.action = action
    slotted(animation).action_slot = slot
    return slot


class Channels:
    """Creates and finds F-curves of one action for one object, whatever the Blender version."""

    def __init__(self, action: bpy.types.Action, obj: bpy.types.Object | bpy.types.Armature,
                 create: bool = True) -> None:
        self.action = action
        self.bag: Any = None
        if not is_slotted(action):
            if create:
                assign_action(obj, action)
            return
        animation = obj.animation_data
        slot = slotted(animation).action_slot if animation and animation.action == action else None
        layered = slotted(action)
        if slot is None:
            slot = assign_action(obj, action) if create else (layered.slots[0] if layered.slots else None)
        if slot is None:
            return
        if create and not layered.layers:
            layered.layers.new("Layer").strips.new(type="KEYFRAME")
        for layer in layered.layers:
            for strip in layer.strips:
                bag = strip.channelbag(slot, ensure=create)
                if bag is not None:
                    self.bag = bag
                    return

    def new(self, data_path: str, index: int, group: str) -> bpy.types.FCurve:
        """A new F-curve in ``group`` (created if missing)."""
        if self.bag is None:
            return self.action.fcurves.new(data_path, index=index, action_group=group)
        fcurve: bpy.types.FCurve = self.bag.fcurves.new(data_path, index=index)
        groups = self.bag.groups
        fcurve.group = groups.get(group) or groups.new(group)
        return fcurve

    def find(self, data_path: str, index: int = 0) -> bpy.types.FCurve | None:
        """The F-curve of ``data_path`` [``index``] the object reads, if any."""
        if self.bag is not None:
            found: bpy.types.FCurve | None = self.bag.fcurves.find(data_path, index=index)
            return found
        return None if is_slotted(self.action) else self.action.fcurves.find(data_path, index=index)

    def all(self) -> Iterable[bpy.types.FCurve]:
        """Every F-curve the object reads from the action."""
        if self.bag is not None:
            fcurves: Iterable[bpy.types.FCurve] = self.bag.fcurves
            return fcurves
        if is_slotted(self.action):
            return ()
        return self.action.fcurves
