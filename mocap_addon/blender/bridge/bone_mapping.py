"""Each bone's canonical joint, kept on the armature data: stored, read and detected here.

Imports detect it; the Bone Mapping panel (``tools.mapping``) shows and edits
it; tools that need canonical joints (retarget, blend) ask :func:`armature_mapping`,
which brings it up to date when bones were added, removed or renamed since:
each bone carries the name its entry was stored under (``Bone.mocap_mapped_as``,
which a rename keeps), so a renamed bone keeps its entry and hand edits survive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import bpy
from bpy.props import CollectionProperty, IntProperty, StringProperty

from .armature import armature_data
from .compat import add_properties, remove_properties, run_time_property
from .read_rig import bone_skeleton

if TYPE_CHECKING:
    from ...core import Skeleton
    from ...core.naming import Preset

HAND_RULE = "set by hand"


def _canonical_names(self: Any, context: bpy.types.Context, edit_text: str) -> list[str]:
    from ...core.naming import CANONICAL_JOINTS

    return [joint for joint in CANONICAL_JOINTS if edit_text.lower() in joint]


def _canonical_edited(self: MOCAP_PG_bone_mapping, context: bpy.types.Context) -> None:
    """Keep a hand edit valid and the mapping injective: the joint leaves any other bone that had it."""
    from ...core.naming import CANONICAL_JOINTS

    if self.canonical and self.canonical not in CANONICAL_JOINTS:
        self.canonical = ""
        return
    self.rule = HAND_RULE
    if self.canonical:
        for entry in run_time_property(self.id_data, "mocap_mapping"):
            if entry.canonical == self.canonical and entry.name != self.name:
                entry.canonical = ""


class MOCAP_PG_bone_mapping(bpy.types.PropertyGroup):
    """One bone (``name``) and its canonical joint ("" for none) with the rule that chose it."""

    canonical: StringProperty(name="Canonical Joint", search=_canonical_names, update=_canonical_edited,
                              description="The canonical skeleton joint this bone drives (empty: none)")
    rule: StringProperty(name="Rule", description="Why the bone has this joint")


def mapping_entries(obj: bpy.types.Object) -> Any:
    """The armature's stored mapping (a collection property): one :class:`MOCAP_PG_bone_mapping` per bone."""
    return run_time_property(armature_data(obj), "mocap_mapping")


def store_mapping(obj: bpy.types.Object, mapping: dict[str, str | None], rules: dict[str, str]) -> None:
    """Replace the armature's stored mapping (bone order as given); each bone notes the name it is stored under."""
    stored = mapping_entries(obj)
    stored.clear()
    bones = armature_data(obj).bones
    for bone, canonical in mapping.items():
        entry = stored.add()
        entry.name = bone
        # Writing the ID property directly skips the hand-edit callback.
        entry["canonical"] = canonical or ""
        entry.rule = rules.get(bone, "")
        if bone in bones:
            noted: Any = bones[bone]  # with the run-time property of register_properties()
            noted.mocap_mapped_as = bone
    data: Any = armature_data(obj)  # with the run-time properties of register_properties()
    data.mocap_mapping_index = min(data.mocap_mapping_index, max(len(stored) - 1, 0))


def stored_mapping(obj: bpy.types.Object) -> dict[str, str | None]:
    return {entry.name: entry.canonical or None for entry in mapping_entries(obj)}


def detect_mapping(obj: bpy.types.Object, skeleton: Skeleton | None = None,
                   preset: Preset | None = None) -> dict[str, str | None]:
    """Detect the mapping of the armature's bones (with ``preset`` applied first), store and return it."""
    from ...core.naming import explain_mapping, map_skeleton

    skeleton = bone_skeleton(obj) if skeleton is None else skeleton
    mapping = map_skeleton(skeleton, preset=preset)
    store_mapping(obj, mapping, explain_mapping(skeleton, preset=preset))
    return mapping


def armature_mapping(obj: bpy.types.Object) -> dict[str, str | None]:
    """Bone -> canonical joint (``None``: folded or unmapped) for every bone of the armature.

    The stored mapping, hand edits included; brought up to date first when the
    bones changed since it was stored (:func:`update_mapping`), detected when
    there is none.
    """
    stored = stored_mapping(obj)
    bones = [bone.name for bone in armature_data(obj).bones]
    if set(stored) != set(bones):
        stored = update_mapping(obj)
    return {bone: stored[bone] for bone in bones}


def update_mapping(obj: bpy.types.Object) -> dict[str, str | None]:
    """The stored mapping brought up to date with the bones, stored and returned.

    Each bone finds its entry by the name it was stored under (a renamed bone
    keeps its entry); hand edits and renamed bones' entries are kept, and the
    rest, new bones included, are detected again around them (as a preset
    is applied over detection).  With nothing stored, the whole mapping is detected.
    """
    from ...core.naming import Preset, explain_mapping, map_skeleton

    entries = {entry.name: (entry.canonical or None, entry.rule) for entry in mapping_entries(obj)}
    if not entries:
        return detect_mapping(obj)
    kept: dict[str, tuple[str | None, str]] = {}
    claimed: set[str] = set()
    bones = sorted(armature_data(obj).bones, key=lambda b: run_time_property(b, "mocap_mapped_as") != b.name)
    for bone in bones:  # a bone still under its stored name first: a duplicated bone carries the same note
        was = run_time_property(bone, "mocap_mapped_as") or bone.name
        if was in entries and was not in claimed:
            claimed.add(was)
            canonical, rule = entries[was]
            if rule == HAND_RULE or was != bone.name:
                kept[bone.name] = (canonical, rule)
    skeleton = bone_skeleton(obj)
    preset = Preset("kept", {name: canonical for name, (canonical, _) in kept.items()})
    mapping = map_skeleton(skeleton, preset=preset)
    rules = explain_mapping(skeleton, preset=preset)
    rules.update({name: rule for name, (canonical, rule) in kept.items() if mapping.get(name) == canonical})
    store_mapping(obj, mapping, rules)
    return mapping


CLASSES = (MOCAP_PG_bone_mapping,)


def register_properties() -> None:
    add_properties(bpy.types.Armature,
                   mocap_mapping=CollectionProperty(  # type: ignore[func-returns-value]  # stubs: bpy.props give None
                       type=MOCAP_PG_bone_mapping, name="Bone Mapping"),
                   mocap_mapping_index=IntProperty(  # type: ignore[func-returns-value]
                       name="Active Bone Mapping", default=0, min=0))
    add_properties(bpy.types.Bone, mocap_mapped_as=StringProperty(  # type: ignore[func-returns-value]
        name="Mapped As", options={"HIDDEN"}, description="The name the bone's mapping entry is stored under"))


def unregister_properties() -> None:
    remove_properties(bpy.types.Bone, "mocap_mapped_as")
    remove_properties(bpy.types.Armature, "mocap_mapping_index", "mocap_mapping")
