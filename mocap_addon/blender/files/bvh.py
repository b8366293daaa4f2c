"""BVH import and export operators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bpy.props import BoolProperty, StringProperty

from ...core.options import BVH_POSITIONS
from ..bridge.choices import chosen, enum_property
from .base import MocapExportBase, MocapImportBase


class IMPORT_ANIM_OT_mocap_bvh(MocapImportBase):
    """Import BVH motion capture as armatures with actions"""

    bl_idname = "import_anim.mocap_bvh"
    bl_label = "Import BVH (Mocap I/O)"
    bl_options = {"REGISTER", "UNDO", "PRESET"}
    format_label = "BVH"
    filename_ext = ".bvh"
    extensions = (".bvh",)
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})
    position_mode: enum_property(BVH_POSITIONS)

    lenient: BoolProperty(name="Load Incomplete Files", default=True,
                          description="Load the whole motion rows present when their number differs from "
                                      "'Frames:', dropping a last row cut short (both reported); off: refuse "
                                      "such files")
    format_options = ("position_mode", "lenient")

    @classmethod
    def load_options(cls, values: Mapping[str, Any], path: str) -> dict:
        return {"position_mode": chosen(BVH_POSITIONS, values["position_mode"]), "strict": not values["lenient"]}


class EXPORT_ANIM_OT_mocap_bvh(MocapExportBase):
    """Export the active armature's action as BVH"""

    bl_idname = "export_anim.mocap_bvh"
    bl_label = "Export BVH (Mocap I/O)"
    bl_options = {"REGISTER", "PRESET"}
    format_label = "BVH"
    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})


FORMATS = [(IMPORT_ANIM_OT_mocap_bvh, EXPORT_ANIM_OT_mocap_bvh)]
