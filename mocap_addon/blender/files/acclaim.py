"""Acclaim ASF/AMC import and export operators."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty

from .base import MocapExportBase, MocapImportBase

if TYPE_CHECKING:
    from ...core import Clip
    from .importer import ImportResult


class IMPORT_ANIM_OT_mocap_amc(bpy.types.Operator, MocapImportBase):
    """Import Acclaim ASF/AMC motion capture (an .amc with its .asf, or an .asf alone for the skeleton)"""

    bl_idname = "import_anim.mocap_amc"
    bl_label = "Import ASF/AMC (Mocap I/O)"
    bl_options = {"REGISTER", "UNDO", "PRESET"}
    format_label = "ASF/AMC"
    filename_ext = ".amc"
    filter_glob: StringProperty(default="*.amc;*.AMC;*.asf;*.ASF", options={"HIDDEN"})
    skeleton_path: StringProperty(name="Skeleton (.asf)", subtype="FILE_PATH", default="",
                                  description="The .asf to use; empty: the one beside the .amc with a matching name")
    length_reading: EnumProperty(
        name="Length Unit", default="cmu",
        items=[("cmu", "CMU (1/L inch)", "Lengths as written, one unit = 1/L inch for ':units length L' "
                                         "(a CMU skeleton then spans about 1.6 m, toes to head bone)"),
               ("spec", "Specification", "Lengths multiplied by L on read-in, unit unknown")])
    fps: FloatProperty(name="Frame Rate", default=120.0, min=1.0, max=10000.0,
                       description="AMC files carry no frame rate (CMU captured at 120 fps)")
    lenient: BoolProperty(name="Hold Missing Bones", default=False,
                          description="A frame missing a bone keeps that bone's previous values (reported)")
    use_limits: BoolProperty(name="Limit Constraints", default=True,
                             description="Add Limit Rotation / Limit Location constraints for finite dof limits")
    enforce_limits: BoolProperty(name="Enforce Limits", default=False,
                                 description="Switch the limit constraints on (captured motion that strays past "
                                             "its limits is then clamped); off, the pose is exactly the file's")

    def load_options(self) -> dict:
        if self.filepath.lower().endswith(".asf"):
            return {"length_reading": self.length_reading}
        options = {"length_reading": self.length_reading, "lenient": self.lenient, "fps": self.fps}
        if self.skeleton_path:
            options["skeleton"] = bpy.path.abspath(self.skeleton_path)
        return options

    def extra_options(self) -> tuple[str, ...]:
        return ("skeleton_path", "length_reading", "fps", "lenient", "use_limits", "enforce_limits")

    def after_import(self, clip: Clip, result: ImportResult) -> list[str]:
        if not self.use_limits:
            return []
        from .constraints import add_limit_constraints

        skipped = add_limit_constraints(result.obj, clip, result.rig.orientations, result.rig.joint_axes,
                                        result.scale, self.enforce_limits)
        return [f"limits of {', '.join(skipped)} not along the bone's axes: no constraint"] if skipped else []

    def paths(self) -> list[str]:
        # Picking an .asf alone imports its rest skeleton; an .asf picked beside its .amc adds nothing.
        chosen = super().paths()
        motions = {os.path.splitext(p)[0].lower() for p in chosen if p.lower().endswith(".amc")}
        return [p for p in chosen if p.lower().endswith(".amc") or os.path.splitext(p)[0].lower() not in motions]


class EXPORT_ANIM_OT_mocap_amc(bpy.types.Operator, MocapExportBase):
    """Export the active armature's action as Acclaim AMC with its ASF skeleton"""

    bl_idname = "export_anim.mocap_amc"
    bl_label = "Export ASF/AMC (Mocap I/O)"
    bl_options = {"REGISTER", "PRESET"}
    format_label = "ASF/AMC"
    filename_ext = ".amc"
    filter_glob: StringProperty(default="*.amc;*.AMC", options={"HIDDEN"})


FORMATS = [(IMPORT_ANIM_OT_mocap_amc, EXPORT_ANIM_OT_mocap_amc)]
