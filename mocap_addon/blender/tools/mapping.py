"""Bone Mapping: each bone's canonical joint, stored on the armature data, shown and edited in the sidebar.

Imports fill the mapping; ``mocap.map_bones`` detects it again, presets (JSON,
see ``core/naming.py``) load and save it.  Other tools ask
:func:`armature_mapping` for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bpy
from bpy.props import CollectionProperty, EnumProperty, IntProperty, StringProperty

if TYPE_CHECKING:
    from ...core import Skeleton
    from ...core.naming import Preset

HAND_RULE = "set by hand"


# --------------------------------------------------------------------------- storage


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
    import numpy as np

    from ..files.exporter import ExportSettings, skeleton_from_bones
    from ..storage import PROPERTY, skeleton_from_json

    if PROPERTY in obj.data:
        skeleton, _ = skeleton_from_json(obj.data[PROPERTY])
        if set(skeleton.names) == {bone.name for bone in obj.data.bones}:
            return skeleton
    return skeleton_from_bones(obj, ExportSettings(conversion=np.eye(3)), 1.0)


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

    The stored mapping, hand edits included; detected and stored first when
    there is none or the bones changed since.
    """
    stored = stored_mapping(obj)
    bones = [bone.name for bone in obj.data.bones]
    if set(stored) != set(bones):
        stored = detect_mapping(obj)
    return {bone: stored[bone] for bone in bones}


# --------------------------------------------------------------------------- presets


def presets_folder(package: str | None = __package__, create: bool = True) -> Path:
    """Where user presets live: the extension's user directory, which a reinstall keeps; Blender's user
    config folder when the add-on runs as a plain module (tests, development)."""
    parts = (package or "").split(".")
    if parts[0] == "bl_ext" and len(parts) >= 3:
        folder = bpy.utils.extension_path_user(".".join(parts[:3]), path="presets", create=create)
    else:
        folder = bpy.utils.user_resource("CONFIG", path=os.path.join("mocap_io", "presets"), create=create)
    return Path(folder)


def user_presets() -> dict[str, Path]:
    folder = presets_folder()
    return {path.stem: path for path in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


_preset_items: list[tuple[str, str, str]] = []  # Blender keeps no copy of dynamic enum strings


def _preset_choices(self: Any, context: bpy.types.Context) -> list[tuple[str, str, str]]:
    from ...core.naming import builtin_presets

    _preset_items[:] = [(f"BUILTIN:{key}", preset.name, preset.description)
                        for key, preset in builtin_presets().items()]
    _preset_items.extend((f"USER:{stem}", stem, str(path)) for stem, path in user_presets().items())
    return _preset_items or [("NONE", "No Presets", "")]


def _armature(context: bpy.types.Context) -> bpy.types.Object | None:
    obj = context.active_object
    return obj if obj is not None and obj.type == "ARMATURE" else None


class _MappingOperator(bpy.types.Operator):
    """Shared by the mapping operators: an active armature, and detection with a report."""

    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _armature(context) is not None

    def detect(self, context: bpy.types.Context, preset: Preset | None = None) -> set[str]:
        """Map the active armature's bones (``preset`` first), store, and report what is missing."""
        from ...core.naming import REQUIRED_JOINTS, missing_joints

        obj = _armature(context)
        assert obj is not None
        mapping = detect_mapping(obj, preset=preset)
        missing = missing_joints(mapping, REQUIRED_JOINTS)
        text = f"{sum(c is not None for c in mapping.values())} of {len(mapping)} bones mapped"
        self.report({"WARNING"} if missing else {"INFO"},
                    text + (f"; required joints missing: {', '.join(missing)}" if missing else ""))
        return {"FINISHED"}


class MOCAP_OT_map_bones(_MappingOperator):
    """Detect again which canonical joint each bone is (replaces hand edits)"""

    bl_idname = "mocap.map_bones"
    bl_label = "Detect Mapping"

    def execute(self, context: bpy.types.Context) -> set[str]:
        return self.detect(context)


class MOCAP_OT_load_mapping_preset(_MappingOperator):
    """Map the bones with a preset (a naming convention), detecting the bones it does not name"""

    bl_idname = "mocap.load_mapping_preset"
    bl_label = "Load Mapping Preset"
    bl_property = "preset"

    preset: EnumProperty(name="Preset", items=_preset_choices)
    filepath: StringProperty(name="File", subtype="FILE_PATH", options={"SKIP_SAVE"},
                             description="A preset JSON file to load instead of a listed preset")

    def execute(self, context: bpy.types.Context) -> set[str]:
        from ...core.naming import builtin_presets, load_preset

        kind, _, key = self.preset.partition(":")
        try:
            if self.filepath:
                preset = load_preset(bpy.path.abspath(self.filepath))
            elif kind == "BUILTIN":
                preset = builtin_presets()[key]
            elif kind == "USER" and key in user_presets():
                preset = load_preset(user_presets()[key])
            else:
                self.report({"ERROR"}, "No preset chosen")
                return {"CANCELLED"}
        except (OSError, ValueError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        return self.detect(context, preset)


class MOCAP_OT_save_mapping_preset(bpy.types.Operator):
    """Save the active armature's mapping as a user preset, to map rigs named the same way"""

    bl_idname = "mocap.save_mapping_preset"
    bl_label = "Save Mapping Preset"

    name: StringProperty(name="Name", description="Preset name (also its file name)")

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = _armature(context)
        return obj is not None and len(obj.data.mocap_mapping) > 0

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        obj = _armature(context)
        self.name = self.name or (obj.name if obj is not None else "")
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context: bpy.types.Context) -> set[str]:
        from ...core.naming import Preset, save_preset

        obj = _armature(context)
        assert obj is not None
        stem = bpy.path.clean_name(self.name.strip())
        if not self.name.strip():
            self.report({"ERROR"}, "Give the preset a name")
            return {"CANCELLED"}
        path = presets_folder() / f"{stem}.json"
        try:
            save_preset(Preset(self.name.strip(), stored_mapping(obj), description=f"saved from {obj.name}"), path)
        except OSError as error:
            self.report({"ERROR"}, f"Cannot write {path}: {error}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Saved {path}")
        return {"FINISHED"}


# --------------------------------------------------------------------------- panel


class MOCAP_UL_bone_mapping(bpy.types.UIList):
    """Bones with their canonical joints; folded and unmapped bones marked."""

    def draw_item(self, context: bpy.types.Context, layout: bpy.types.UILayout, data: Any, item: Any,
                  icon: int, active_data: Any, active_property: str, index: int = 0, flt_flag: int = 0) -> None:
        row = layout.row(align=True)
        row.label(text=item.name, icon=_state_icon(item))
        row.prop(item, "canonical", text="")


def _state_icon(entry: MOCAP_PG_bone_mapping) -> str:
    if entry.canonical:
        return "BONE_DATA"
    return "REMOVE" if entry.rule.startswith("folded") else "QUESTION"


class VIEW3D_PT_mocap_mapping(bpy.types.Panel):
    """Which canonical joint each bone of the active armature is."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Mocap"
    bl_label = "Bone Mapping"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _armature(context) is not None

    def draw(self, context: bpy.types.Context) -> None:
        from ...core.naming import REQUIRED_JOINTS, missing_joints

        obj = _armature(context)
        assert obj is not None
        layout = self.layout
        row = layout.row(align=True)
        row.operator(MOCAP_OT_map_bones.bl_idname, icon="VIEWZOOM")
        row.operator_menu_enum(MOCAP_OT_load_mapping_preset.bl_idname, "preset", text="Preset",
                               icon="PRESET")
        row.operator(MOCAP_OT_save_mapping_preset.bl_idname, text="", icon="ADD")
        data = obj.data
        if not data.mocap_mapping:
            layout.label(text="No mapping yet: Detect Mapping", icon="INFO")
            return
        layout.template_list("MOCAP_UL_bone_mapping", "", data, "mocap_mapping", data, "mocap_mapping_index",
                             rows=8)
        if 0 <= data.mocap_mapping_index < len(data.mocap_mapping):
            layout.label(text=data.mocap_mapping[data.mocap_mapping_index].rule or "-", icon="INFO")
        missing = missing_joints(stored_mapping(obj), REQUIRED_JOINTS)
        box = layout.box()
        if missing:
            box.label(text="Required joints missing:", icon="ERROR")
            for start in range(0, len(missing), 3):
                box.label(text=", ".join(missing[start:start + 3]))
        else:
            box.label(text="All required joints mapped", icon="CHECKMARK")


CLASSES = (MOCAP_PG_bone_mapping, MOCAP_OT_map_bones, MOCAP_OT_load_mapping_preset, MOCAP_OT_save_mapping_preset,
           MOCAP_UL_bone_mapping, VIEW3D_PT_mocap_mapping)


def register_properties() -> None:
    bpy.types.Armature.mocap_mapping = CollectionProperty(type=MOCAP_PG_bone_mapping,
                                                          name="Bone Mapping")
    bpy.types.Armature.mocap_mapping_index = IntProperty(name="Active Bone Mapping", default=0, min=0)


def unregister_properties() -> None:
    del bpy.types.Armature.mocap_mapping_index
    del bpy.types.Armature.mocap_mapping
