"""What every format's File > Import / Export operator shares: options, the import loop, export."""

from __future__ import annotations

import os
import time
from functools import partial
from typing import TYPE_CHECKING, ClassVar

import bpy
import numpy as np
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper, axis_conversion

if TYPE_CHECKING:
    from ...core import Clip
    from .importer import ImportResult

AXES = [(a, a, "") for a in ("X", "Y", "Z", "-X", "-Y", "-Z")]
UNIT_ITEMS = [
    ("AUTO", "From File", "The file's own unit where it states one, else 1 file unit = 1 Blender unit"),
    ("M", "Metres", "One file unit is a metre"),
    ("CM", "Centimetres", "One file unit is a centimetre"),
    ("MM", "Millimetres", "One file unit is a millimetre"),
    ("IN", "Inches", "One file unit is an inch"),
    ("FT", "Feet", "One file unit is a foot"),
]


def conversion_matrix(forward: str, up: str) -> np.ndarray:
    return np.array(axis_conversion(from_forward=forward, from_up=up).to_3x3())


def file_axes(forward: str, up: str, file_up: str) -> tuple[str, str]:
    """Forward and up axes with the file's own up axis; forward moves off it if they clash."""
    up = file_up.upper()
    if forward.lstrip("-") == up.lstrip("-"):
        forward = "Y" if up.lstrip("-") == "Z" else "-Z"
    return forward, up


def _progress(window_manager: bpy.types.WindowManager, done: int, share: float) -> None:
    window_manager.progress_update(done + share)


class MocapImportBase(ImportHelper):
    """Options and the import loop every format shares; subclasses name the format."""

    format_label: ClassVar[str] = ""
    bl_idname: ClassVar[str]

    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})
    scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0,
                         description="Multiply every length by this, after the unit")
    unit: EnumProperty(name="Unit", items=UNIT_ITEMS, default="AUTO", description="Length of one file unit")
    axis_forward: EnumProperty(name="Forward", items=AXES, default="-Z")
    axis_up: EnumProperty(name="Up", items=AXES, default="Y")
    frame_start: IntProperty(name="Start Frame", default=1, description="Frame of the clip's first sample")
    fps_mode: EnumProperty(
        name="Frame Rate", default="KEYS",
        items=[("KEYS", "One Key per Frame", "A key on every scene frame, whatever the file's rate"),
               ("SCENE_FPS", "Set Scene Rate", "One key per frame and set the scene's frame rate to the file's"),
               ("RESAMPLE", "Resample", "Resample the motion to the scene's frame rate")])
    update_scene_range: BoolProperty(name="Update Scene Range", default=False,
                                     description="Set the scene's start and end frame to the clip's")
    rotation_mode: EnumProperty(
        name="Rotation", default="QUATERNION",
        items=[("QUATERNION", "Quaternion", "Continuous quaternions"),
               ("EULER", "Euler", "Euler angles in each joint's own order, without 180° jumps")])
    split_takes: BoolProperty(name="One Action per Take", default=False,
                              description="A file holding several takes (HTR block sets numbered afresh) becomes "
                                          "one action per take; else one action, with a timeline marker per take")
    use_file_up_axis: BoolProperty(name="File's Up Axis", default=True,
                                   description="Use the up axis the file states (HTR's GlobalAxisofGravity) "
                                               "instead of Up")

    def load_options(self) -> dict:
        """Format-specific keyword arguments for ``core.load``."""
        return {}

    def paths(self) -> list[str]:
        if self.files and self.directory:
            return [os.path.join(self.directory, f.name) for f in self.files if f.name]
        return [self.filepath]

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.use_property_split = True
        for name in ("unit", "scale", "axis_forward", "axis_up", "use_file_up_axis", "frame_start", "fps_mode",
                     "update_scene_range", "rotation_mode", *self.extra_options()):
            layout.prop(self, name)

    def extra_options(self) -> tuple[str, ...]:
        return ()

    def after_import(self, clip: Clip, result: ImportResult) -> list[str]:
        """Format-specific finishing touches on the new armature; returns warnings."""
        return []

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if self.directory and self.files and hasattr(self, "invoke_popup"):
            return self.invoke_popup(context)  # dropped on the viewport
        return super().invoke(context, event)

    def execute(self, context: bpy.types.Context) -> set[str]:
        from ...core import MocapFormatError, load
        from .importer import ImportSettings, import_clip

        paths = self.paths()
        window_manager = context.window_manager
        window_manager.progress_begin(0, len(paths))
        imported, failed = [], 0
        try:
            for number, path in enumerate(paths):
                try:
                    clip = load(path, **self.load_options())
                    forward, up = self.axis_forward, self.axis_up
                    if self.use_file_up_axis and clip.metadata.get("format") != "bvh":
                        forward, up = file_axes(forward, up, clip.up_axis)
                    settings = ImportSettings(conversion_matrix(forward, up), self.scale, self.unit,
                                              self.frame_start, self.fps_mode, self.update_scene_range,
                                              self.rotation_mode, self.split_takes)
                    name = os.path.splitext(os.path.basename(path))[0]
                    result = import_clip(context, clip, name, settings, partial(_progress, window_manager, number))
                except (MocapFormatError, OSError, ValueError) as error:
                    failed += 1
                    self.report({"ERROR"}, f"{self.format_label} import failed: {error}")
                    continue
                imported.append(result.obj)
                for warning in self.after_import(clip, result):
                    self.report({"WARNING"}, f"{os.path.basename(path)}: {warning}")
                for warning in clip.metadata.get("warnings", []):
                    self.report({"WARNING"}, f"{os.path.basename(path)}: {warning}")
                self.report({"INFO"}, f"Imported {result.summary()}")
        finally:
            window_manager.progress_end()
        if imported:
            for obj in context.view_layer.objects.selected:
                obj.select_set(False)
            for obj in imported:
                obj.select_set(True)
            context.view_layer.objects.active = imported[-1]
        return {"FINISHED"} if imported or not failed else {"CANCELLED"}


class MocapExportBase(ExportHelper):
    """Options and the export every format shares; subclasses name the format."""

    format_label: ClassVar[str] = ""
    bl_idname: ClassVar[str]

    scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6,
                         description="Multiply every length by this before dividing by the unit")
    unit: EnumProperty(name="Unit", items=UNIT_ITEMS, default="AUTO",
                       description="Length of one file unit (From File: undo the import's scale)")
    axis_forward: EnumProperty(name="Forward", items=AXES, default="-Z")
    axis_up: EnumProperty(name="Up", items=AXES, default="Y")
    use_action_range: BoolProperty(name="Action's Frame Range", default=True,
                                   description="Export the action's frame range, else the scene's")
    precision: IntProperty(name="Decimals", default=6, min=1, max=12, description="Decimals written per value")
    rotation_order: EnumProperty(
        name="Rotation Order", default="ZXY", items=[(o, o, f"Channels listed {o}") for o in
                                                     ("ZXY", "ZYX", "XYZ", "XZY", "YXZ", "YZX")],
        description="Channel order for armatures not imported by this add-on")
    # Set by Blender when the operator runs as one of a collection's exporters (Collection > Exporters).
    collection: StringProperty(name="Source Collection", default="", options={"HIDDEN"},
                               description="Export this collection's armatures (and its children's), "
                                           "not the active object")

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        active = context.active_object
        collection = getattr(context, "collection", None)
        return (active is not None and active.type == "ARMATURE") or (
            collection is not None and any(o.type == "ARMATURE" for o in collection.all_objects))

    def save_options(self) -> dict:
        """Keyword arguments for ``core.save``; formats with more options extend them."""
        return {"precision": self.precision}

    def targets(self, context: bpy.types.Context) -> list[tuple[bpy.types.Object, str]]:
        """The armatures to write, with their files: the source collection's (one file each, named
        after the armature when there are several), else the active armature."""
        if not self.collection:
            active = context.active_object
            return [(active, self.filepath)] if active is not None and active.type == "ARMATURE" else []
        source = bpy.data.collections.get(self.collection)
        armatures = sorted((o for o in source.all_objects if o.type == "ARMATURE"), key=lambda o: o.name) \
            if source is not None else []
        if len(armatures) == 1:
            return [(armatures[0], self.filepath)]
        stem, extension = os.path.splitext(self.filepath)
        return [(obj, f"{stem}_{bpy.path.clean_name(obj.name)}{extension}") for obj in armatures]

    def execute(self, context: bpy.types.Context) -> set[str]:
        from ...core import save
        from ...core.units import unit_note
        from .exporter import ExportSettings, export_clip

        scene = context.scene
        settings = ExportSettings(conversion_matrix(self.axis_forward, self.axis_up), self.scale, self.unit,
                                  None if self.use_action_range else scene.frame_start,
                                  None if self.use_action_range else scene.frame_end, self.rotation_order)
        targets = self.targets(context)
        if not targets:
            where = f"collection {self.collection!r} has" if self.collection else "there is"
            self.report({"ERROR"}, f"{self.format_label} export failed: {where} no armature to export")
            return {"CANCELLED"}
        written = 0
        for obj, path in targets:
            started = time.perf_counter()
            try:
                clip = export_clip(obj, settings)
                save(clip, path, **self.save_options())
            except (OSError, ValueError) as error:
                which = f" ({obj.name})" if len(targets) > 1 else ""
                self.report({"ERROR"}, f"{self.format_label} export failed{which}: {error}")
                continue
            written += 1
            note = unit_note(clip, self.filename_ext)
            self.report({"INFO"}, f"Exported {obj.name} to {os.path.basename(path)}: {clip.skeleton.joint_count} "
                                  f"joints, {clip.frame_count} frames in {time.perf_counter() - started:.2f} s"
                                  + (f"; {note}" if note else ""))
        return {"FINISHED"} if written else {"CANCELLED"}


def file_handler(importer: type[MocapImportBase], exporter: type[MocapExportBase]) -> type:
    """A FileHandler so files of ``importer``'s extension dropped on the 3D viewport import."""
    extension = importer.filename_ext.lstrip(".")

    def poll_drop(cls: type, context: bpy.types.Context) -> bool:
        return context.area is not None and context.area.type == "VIEW_3D"

    return type(f"MOCAP_FH_{extension}", (bpy.types.FileHandler,), {
        "bl_idname": f"MOCAP_FH_{extension}",
        "bl_label": f"{importer.format_label} motion capture",
        "bl_import_operator": importer.bl_idname,
        "bl_export_operator": exporter.bl_idname,
        "bl_file_extensions": importer.filename_ext,
        "poll_drop": classmethod(poll_drop),
    })
