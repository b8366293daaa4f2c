"""Bone Mapping panel: each bone's canonical joint (stored by ``blender.bone_mapping``), shown and edited.

Imports fill the mapping; ``mocap.map_bones`` detects it again, presets (JSON,
see ``core/naming.py``) load and save it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty

from ..bridge.armature import armature_data
from ..bridge.bone_mapping import MOCAP_PG_bone_mapping, detect_mapping, mapping_entries, stored_mapping
from ..bridge.compat import run_time_property
from ..bridge.sidebar import SidebarPanel

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

    from ...core.naming import Preset


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
        if _armature(context) is None:
            cls.poll_message_set("Make an armature active: its bones are mapped")
            return False
        return True

    def detect(self, context: bpy.types.Context, preset: Preset | None = None) -> set[OperatorReturnItems]:
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

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        return self.detect(context)


class MOCAP_OT_load_mapping_preset(_MappingOperator):
    """Map the bones with a preset (a naming convention), detecting the bones it does not name"""

    bl_idname = "mocap.load_mapping_preset"
    bl_label = "Load Mapping Preset"
    bl_property = "preset"

    preset: EnumProperty(name="Preset", items=_preset_choices)
    filepath: StringProperty(name="File", subtype="FILE_PATH", options={"SKIP_SAVE"},
                             description="A preset JSON file to load instead of a listed preset")

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.naming import builtin_presets, load_preset

        if not self.filepath and not self.properties.is_property_set("preset"):
            self.report({"ERROR"}, "Load Mapping Preset: choose a preset (or a preset file)")
            return {"CANCELLED"}
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
    overwrite: BoolProperty(name="Overwrite", default=False,
                            description="Replace the preset file this name is saved as, if there is one (names "
                                        "that differ only in characters a file name cannot hold share a file)")

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = _armature(context)
        if obj is None:
            cls.poll_message_set("Make an armature active: its bone mapping is saved")
            return False
        if not mapping_entries(obj):
            cls.poll_message_set(f"{obj.name} has no bone mapping yet: detect it first")
            return False
        return True

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[OperatorReturnItems]:
        obj = _armature(context)
        self.name = self.name or (obj.name if obj is not None else "")
        assert context.window_manager is not None, "run in a window"
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core.naming import Preset, save_preset

        obj = _armature(context)
        assert obj is not None
        stem = bpy.path.clean_name(self.name.strip())
        if not self.name.strip():
            self.report({"ERROR"}, "Give the preset a name")
            return {"CANCELLED"}
        path = presets_folder() / f"{stem}.json"
        if path.exists() and not self.overwrite:
            self.report({"ERROR"}, f"A preset is already saved as {path.name}: tick Overwrite to replace it, "
                                   "or choose another name")
            return {"CANCELLED"}
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
                  icon: int | None, active_data: Any, active_property: str | None, index: int | None = 0,
                  flt_flag: int | None = 0) -> None:
        row = layout.row(align=True)
        row.label(text=item.name, icon=_state_icon(item))
        row.prop(item, "canonical", text="")


def _state_icon(entry: MOCAP_PG_bone_mapping) -> Literal["BONE_DATA", "REMOVE", "QUESTION"]:
    if entry.canonical:
        return "BONE_DATA"
    return "REMOVE" if entry.rule.startswith("folded") else "QUESTION"


class VIEW3D_PT_mocap_mapping(SidebarPanel):
    """Which canonical joint each bone of the active armature is."""

    bl_label = "Bone Mapping"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _armature(context) is not None

    def draw(self, context: bpy.types.Context) -> None:
        from ...core.naming import REQUIRED_JOINTS, missing_joints

        obj = _armature(context)
        layout = self.layout
        assert obj is not None and layout is not None
        row = layout.row(align=True)
        row.operator(MOCAP_OT_map_bones.bl_idname, icon="VIEWZOOM")
        row.operator_menu_enum(MOCAP_OT_load_mapping_preset.bl_idname, "preset", text="Preset",
                               icon="PRESET")
        row.operator(MOCAP_OT_save_mapping_preset.bl_idname, text="", icon="ADD")
        data, entries = armature_data(obj), mapping_entries(obj)
        if not entries:
            layout.label(text="No mapping yet: Detect Mapping", icon="INFO")
            return
        layout.template_list("MOCAP_UL_bone_mapping", "", data, "mocap_mapping", data, "mocap_mapping_index",
                             rows=8)
        active = run_time_property(data, "mocap_mapping_index")
        if 0 <= active < len(entries):
            layout.label(text=entries[active].rule or "-", icon="INFO")
        missing = missing_joints(stored_mapping(obj), REQUIRED_JOINTS)
        box = layout.box()
        if missing:
            box.label(text="Required joints missing:", icon="ERROR")
            for start in range(0, len(missing), 3):
                box.label(text=", ".join(missing[start:start + 3]))
        else:
            box.label(text="All required joints mapped", icon="CHECKMARK")


CLASSES = (MOCAP_OT_map_bones, MOCAP_OT_load_mapping_preset, MOCAP_OT_save_mapping_preset,
           MOCAP_UL_bone_mapping, VIEW3D_PT_mocap_mapping)

