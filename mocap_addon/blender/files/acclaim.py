"""Acclaim ASF/AMC import and export operators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import bpy
from bpy.props import BoolProperty, FloatProperty, StringProperty

from ...core.options import ACCLAIM_LENGTHS
from ..bridge.choices import chosen, enum_property
from .base import MocapExportBase, MocapImportBase

if TYPE_CHECKING:
    from ...core import Clip
    from ..bridge.clip_to_armature import ImportResult


class IMPORT_ANIM_OT_mocap_amc(MocapImportBase):
    """Import Acclaim ASF/AMC motion capture (an .amc with its .asf, or an .asf alone for the skeleton)"""

    bl_idname = "import_anim.mocap_amc"
    bl_label = "Import ASF/AMC (Mocap I/O)"
    bl_options = {"REGISTER", "UNDO", "PRESET"}
    format_label = "ASF/AMC"
    filename_ext = ".amc"
    extensions = (".amc", ".asf")
    filter_glob: StringProperty(default="*.amc;*.AMC;*.asf;*.ASF", options={"HIDDEN"})
    skeleton_path: StringProperty(name="Skeleton (.asf)", subtype="FILE_PATH", default="",
                                  description="The .asf to use; empty: the one beside the .amc with a matching name")
    length_reading: enum_property(ACCLAIM_LENGTHS)
    fps: FloatProperty(name="Frame Rate", default=120.0, min=1.0, max=10000.0,
                       description="AMC files carry no frame rate (CMU captured at 120 fps)")
    lenient: BoolProperty(name="Hold Missing Bones", default=False,
                          description="A frame missing a bone keeps that bone's previous values (reported)")
    use_limits: BoolProperty(name="Limit Constraints", default=True,
                             description="Add Limit Rotation / Limit Location constraints for finite dof limits")
    enforce_limits: BoolProperty(name="Enforce Limits", default=False,
                                 description="Switch the limit constraints on (captured motion that strays past "
                                             "its limits is then clamped); off, the pose is exactly the file's")

    format_options = ("skeleton_path", "length_reading", "fps", "lenient", "use_limits", "enforce_limits")

    @classmethod
    def load_options(cls, values: Mapping[str, Any], path: str) -> dict:
        if path.lower().endswith(".asf"):
            return {"length_reading": chosen(ACCLAIM_LENGTHS, values["length_reading"])}
        options = {"length_reading": chosen(ACCLAIM_LENGTHS, values["length_reading"]), "lenient": values["lenient"],
                   "fps": values["fps"]}
        if values["skeleton_path"]:
            options["skeleton"] = bpy.path.abspath(values["skeleton_path"])
        return options

    @classmethod
    def after_import(cls, values: Mapping[str, Any], clip: Clip, result: ImportResult) -> list[str]:
        if not values["use_limits"]:
            return []
        from .constraints import add_limit_constraints

        skipped = add_limit_constraints(result.obj, clip, result.rig.orientations, result.rig.joint_axes,
                                        result.scale, values["enforce_limits"])
        return [f"limits of {', '.join(skipped)} not along the bone's axes: no constraint"] if skipped else []


class EXPORT_ANIM_OT_mocap_amc(MocapExportBase):
    """Export the active armature's action as Acclaim AMC with its ASF skeleton"""

    bl_idname = "export_anim.mocap_amc"
    bl_label = "Export ASF/AMC (Mocap I/O)"
    bl_options = {"REGISTER", "PRESET"}
    format_label = "ASF/AMC"
    filename_ext = ".amc"
    filter_glob: StringProperty(default="*.amc;*.AMC", options={"HIDDEN"})


FORMATS = [(IMPORT_ANIM_OT_mocap_amc, EXPORT_ANIM_OT_mocap_amc)]
