"""The one place that knows how Blender versions differ.

* 4.2/4.3: ``Action.fcurves`` and ``action_group`` on ``fcurves.new``.
* 4.4/4.5: slotted actions; F-curves live in a channelbag from ``strip.channelbag(slot, ensure=True)``.
* 5.0+: the same, ``Action.fcurves`` is gone, ``bpy_extras.anim_utils`` can make the channelbag.
"""

from __future__ import annotations

from collections.abc import Iterable

import bpy

LINEAR = 1  # Keyframe.interpolation enum value for 'LINEAR', as foreach_set expects
VECTOR = 2  # Keyframe.handle_left_type / handle_right_type enum value for 'VECTOR'


def is_slotted(action: bpy.types.Action) -> bool:
    return hasattr(action, "slots")


def assign_action(obj: bpy.types.ID, action: bpy.types.Action) -> object | None:
    """Make ``action`` animate ``obj`` (an object, or any animatable ID); returns the slot (``None`` before
    slotted actions)."""
    animation = obj.animation_data or obj.animation_data_create()
    if not is_slotted(action):
        animation.action = action
        return None
    slot = action.slots.new(id_type=obj.id_type, name=obj.name) if not action.slots else action.slots[0]
    animation.action = action
    animation.action_slot = slot
    return slot


class Channels:
    """Creates and finds F-curves of one action for one object, whatever the Blender version."""

    def __init__(self, action: bpy.types.Action, obj: bpy.types.Object, create: bool = True) -> None:
        self.action = action
        self.bag = None
        if not is_slotted(action):
            if create:
                assign_action(obj, action)
            return
        animation = obj.animation_data
        slot = animation.action_slot if animation and animation.action == action else None
        if slot is None:
            slot = assign_action(obj, action) if create else (action.slots[0] if action.slots else None)
        if slot is None:
            return
        if create and not action.layers:
            action.layers.new("Layer").strips.new(type="KEYFRAME")
        for layer in action.layers:
            for strip in layer.strips:
                bag = strip.channelbag(slot, ensure=create)
                if bag is not None:
                    self.bag = bag
                    return

    def new(self, data_path: str, index: int, group: str) -> bpy.types.FCurve:
        """A new F-curve in ``group`` (created if missing)."""
        if self.bag is None:
            return self.action.fcurves.new(data_path, index=index, action_group=group)
        fcurve = self.bag.fcurves.new(data_path, index=index)
        groups = self.bag.groups
        fcurve.group = groups.get(group) or groups.new(group)
        return fcurve

    def all(self) -> Iterable[bpy.types.FCurve]:
        """Every F-curve the object reads from the action."""
        if self.bag is not None:
            return self.bag.fcurves
        if is_slotted(self.action):
            return ()
        return self.action.fcurves
