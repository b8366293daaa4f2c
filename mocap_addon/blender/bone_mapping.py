"""Each bone's canonical joint, kept on the armature data: stored, read and detected here.

Imports detect it; the Bone Mapping panel (``tools.mapping``) shows and edits
it; tools that need canonical joints (retarget, blend) ask :func:`armature_mapping`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import bpy
import numpy as np
from bpy.props import CollectionProperty, IntProperty, StringProperty

from .armature_to_clip import ExportSettings, skeleton_from_bones
from .import_record import PROPERTY, skeleton_from_json

if TYPE_CHECKING:
    from ..core import Skeleton
    from ..core.naming import Preset

HAND_RULE = "set by hand"


def _canonical_names(self: Any, context: bpy.types.Context, edit_text: str) -> list[str]:
    from ..core.naming import CANONICAL_JOINTS

    return [joint for joint in CANONICAL_JOINTS if edit_text.lower() in joint]


def _canonical_edited(self: MOCAP_PG_bone_mapping, context: bpy.types.Context) -> None:
    """Keep a hand edit valid and the mapping injective: the joint leaves any other bone that had it."""
    from ..core.naming import CANONICAL_JOINTS

    if self.canonical and self.canonical not in CANONICAL_JOINTS:
        self.canonical = ""
        return
    self.rule = HAND_RULE
    if self.canonical:
        for entry in self.id_data.mocap_mapping:
            if entry.canonical == self.canonical and entry.name != self.name:
                entry.canonical = ""


class MOCAP_PG_bone_mapping(bpy.types.PropertyGroup):
    """One bone (``name``) and its canonical joint ("" for none) with the rule that chose it."""

    canonical: StringProperty(name="Canonical Joint", search=_canonical_names, update=_canonical_edited,
                              description="The canonical skeleton joint this bone drives (empty: none)")
    rule: StringProperty(name="Rule", description="Why the bone has this joint")


def store_mapping(obj: bpy.types.Object, mapping: dict[str, str | None], rules: dict[str, str]) -> None:
    """Replace the armature's stored mapping (bone order as given)."""
    stored = obj.data.mocap_mapping
    stored.clear()
    for bone, canonical in mapping.items():
        entry = stored.add()
        entry.name = bone
        # Writing the ID property directly skips the hand-edit callback.
        entry["canonical"] = canonical or ""
        entry.rule = rules.get(bone, "")
    obj.data.mocap_mapping_index = min(obj.data.mocap_mapping_index, max(len(stored) - 1, 0))


def stored_mapping(obj: bpy.types.Object) -> dict[str, str | None]:
    return {entry.name: entry.canonical or None for entry in obj.data.mocap_mapping}


def bone_skeleton(obj: bpy.types.Object) -> Skeleton:
    """A core skeleton of the armature's bones: the import record's where its names are still the bones',
    else one read from the bones themselves (armature space)."""
    if PROPERTY in obj.data:
        skeleton, _ = skeleton_from_json(obj.data[PROPERTY])
        if set(skeleton.names) == {bone.name for bone in obj.data.bones}:
            return skeleton
    return skeleton_from_bones(obj, ExportSettings(conversion=np.eye(3)), 1.0)


def detect_mapping(obj: bpy.types.Object, skeleton: Skeleton | None = None,
                   preset: Preset | None = None) -> dict[str, str | None]:
    """Detect the mapping of the armature's bones (with ``preset`` applied first), store and return it."""
    from ..core.naming import explain_mapping, map_skeleton

    skeleton = bone_skeleton(obj) if skeleton is None else skeleton
    mapping = map_skeleton(skeleton, preset=preset)
    store_mapping(obj, mapping, explain_mapping(skeleton, preset=preset))
    return mapping


def armature_mapping(obj: bpy.types.Object) -> dict[str, str | None]:
    """Bone -> canonical joint (``None``: folded or unmapped) for every bone of the armature.

    The stored mapping, hand edits included; detected and stored first when
    there is none or the bones changed since.
    """
    stored = stored_mapping(obj)
    bones = [bone.name for bone in obj.data.bones]
    if set(stored) != set(bones):
        stored = detect_mapping(obj)
    return {bone: stored[bone] for bone in bones}


CLASSES = (MOCAP_PG_bone_mapping,)


def register_properties() -> None:
    bpy.types.Armature.mocap_mapping = CollectionProperty(type=MOCAP_PG_bone_mapping, name="Bone Mapping")
    bpy.types.Armature.mocap_mapping_index = IntProperty(name="Active Bone Mapping", default=0, min=0)


def unregister_properties() -> None:
    del bpy.types.Armature.mocap_mapping_index
    del bpy.types.Armature.mocap_mapping
