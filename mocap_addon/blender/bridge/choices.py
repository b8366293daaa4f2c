"""Blender enum properties for the core's choices (:mod:`...core.options`): ids shown upper case, as
Blender's own enums are, and read back as the core's."""

from __future__ import annotations

from typing import Any

from bpy.props import EnumProperty

from ...core.options import Choice


def enum_items(choice: Choice) -> list[tuple[str, str, str]]:
    """``(identifier, label, description)`` for each of ``choice``'s items, in order."""
    return [(item.id.upper(), item.label, item.description) for item in choice.items]


def enum_property(choice: Choice, **options: Any) -> Any:
    """An ``EnumProperty`` offering ``choice`` (its name, description and default unless ``options`` say)."""
    settings = {"name": choice.label, "description": choice.description, "default": choice.default.upper(),
                **options}
    return EnumProperty(items=enum_items(choice), **settings)


def chosen(choice: Choice, identifier: str) -> str:
    """The core's id for an enum property's ``identifier`` (checked)."""
    return choice.check(identifier.lower())
