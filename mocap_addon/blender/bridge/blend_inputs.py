"""What a blend of two armatures is made of, shared by the tools that blend (bake or live): the blend's
options as Blender properties, A and B read as core poses, and the space their clips are in."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import bpy
import numpy as np
from bpy.props import EnumProperty, IntProperty

from ...core.options import ALIGNMENT, FEET, ROOT_PATH
from .choices import chosen, enum_property
from .read_rig import action_frames, armature_action

if TYPE_CHECKING:
    from ...core import Pose

_MASK_ITEMS: list[tuple[str, str, str]] = []  # Blender needs the item strings kept alive


def _mask_items(self: Any, context: bpy.types.Context | None) -> list[tuple[str, str, str]]:
    """No mask, then the core's mask presets (read on first use)."""
    if not _MASK_ITEMS:
        from ...core.blend.mixing import mask_presets

        _MASK_ITEMS.append(("NONE", "Whole Body", "Every joint takes the mix"))
        _MASK_ITEMS.extend((key.upper(), preset["label"], preset["description"])
                           for key, preset in mask_presets().items())
    return _MASK_ITEMS


class BlendOptions:
    """How A and B are blended, besides which they are and the mix (Blender property annotations)."""

    offset: IntProperty(name="Offset", default=0, description="B's frame f + offset pairs with A's frame f")
    align: enum_property(ALIGNMENT)
    root: enum_property(ROOT_PATH)
    mask: EnumProperty(name="Mask", items=_mask_items, description="Joints that take the mix (the rest stay A's)")
    feet: enum_property(FEET)


BLEND_OPTIONS = tuple(BlendOptions.__annotations__)  # offset, align, root, mask, feet


class HasBlendOptions(Protocol):
    offset: int
    align: str
    root: str
    mask: str
    feet: str


@dataclass
class Prepared:
    """What the core needs for a blend: A's motion, B's on A's skeleton, and the keyword options."""

    a: Pose
    b: Pose
    options: dict[str, Any]


def prepare_blend(clip_a: bpy.types.Object, clip_b: bpy.types.Object, settings: HasBlendOptions) -> Prepared:
    """Read A and B as local poses (quaternion keys stay quaternions); B on another body is retargeted
    onto A's (feet as the blend's), and a mask preset and A's feet are found, through the armatures'
    stored bone mappings (hand edits included)."""
    from ...core.blend.mixing import mask_presets, onto, preset_weights
    from ...core.pose import as_pose
    from .bone_mapping import armature_mapping
    from .read_rig import armature_pose

    for clip in (clip_a, clip_b):
        if armature_action(clip) is None:
            raise ValueError(f"{clip.name} has no action to blend")
    a = armature_pose(clip_a)
    mapping_a = armature_mapping(clip_a)
    feet = chosen(FEET, settings.feet)
    b = as_pose(onto(a, armature_pose(clip_b), mapping=armature_mapping(clip_b), target_mapping=mapping_a, feet=feet))
    mask = None
    if settings.mask != "NONE":
        joints = mask_presets()[settings.mask.lower()]["joints"]
        mask = dict(zip(a.skeleton.names, preset_weights(a.skeleton, mapping_a, joints)))
    options = {"offset": settings.offset, "align": chosen(ALIGNMENT, settings.align),
               "root": chosen(ROOT_PATH, settings.root), "mask": mask, "feet": feet, "mapping": mapping_a}
    return Prepared(a, b, options)


def first_frame(obj: bpy.types.Object) -> int:
    """The first frame of ``obj``'s action: a blend's frame 0."""
    action = armature_action(obj)
    if action is None:
        raise ValueError(f"{obj.name} has no action")
    return action_frames(action)[0]


def clip_to_world(obj: bpy.types.Object) -> np.ndarray:
    """4x4 matrix taking a point of ``obj``'s clips (file axes and units) to world space."""
    from .read_rig import clip_space

    conversion, scale = clip_space(obj)
    local = np.eye(4)
    local[:3, :3] = scale * conversion
    return np.array(obj.matrix_world) @ local


def updating(options: type, update: Callable[[Any, bpy.types.Context], None]) -> dict[str, Any]:
    """``options``' Blender property annotations (a class like :class:`BlendOptions`), each remade to call
    ``update`` when it changes: for a property group's ``__annotations__``."""
    namespace = sys.modules[options.__module__].__dict__
    remade = {}
    for name, annotation in options.__annotations__.items():
        prop = eval(annotation, namespace) if isinstance(annotation, str) else annotation
        remade[name] = prop.function(**{**prop.keywords, "update": update})
    return remade
