"""What every format's File > Import / Export operator shares: options, the import loop, export."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ..bridge.conversion import DEFAULT_AXES, IMPORT_UNIT_ITEMS, UNIT_ITEMS, conversion_matrix
from ..bridge.progress import Progress

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

    from ...core import Clip
    from ..bridge.clip_to_armature import ImportResult

    class ImportHelper:
        """bpy_extras' file-browser mixin as it works (its stubs give it no file path and no return values)."""

        filepath: str
        filename_ext: str

        def invoke_popup(self, context: bpy.types.Context, confirm_text: str = "") -> set[OperatorReturnItems]: ...

    class ExportHelper:
        """bpy_extras' file-browser mixin for exports, as it works."""

        filepath: str
        filename_ext: str
else:
    from bpy_extras.io_utils import ExportHelper, ImportHelper

AXES = [(a, a, "") for a in ("X", "Y", "Z", "-X", "-Y", "-Z")]
FORWARD, UP = DEFAULT_AXES


def file_axes(forward: str, up: str, file_up: str) -> tuple[str, str]:
    """Forward and up axes with the file's own up axis; forward moves off it if they clash."""
    up = file_up.upper()
    if forward.lstrip("-") == up.lstrip("-"):
        forward = "Y" if up.lstrip("-") == "Z" else "-Z"
    return forward, up


def reason(error: Exception) -> str:
    """One line saying why a file failed: the system's reason for OS errors, else the message."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error)


def operator_properties(idname: str) -> bpy.types.bpy_prop_collection:
    """The RNA properties (names, defaults, items) of the registered operator ``idname``."""
    module, name = idname.split(".")
    return getattr(getattr(bpy.ops, module), name).get_rna_type().properties


class MocapImportBase(bpy.types.Operator, ImportHelper):
    """Options and the import loop every format shares; subclasses name the format."""

    format_label: ClassVar[str] = ""
    format_options: ClassVar[tuple[str, ...]] = ()  # the format's own properties, drawn after the shared ones
    extensions: ClassVar[tuple[str, ...]] = ()  # what core.formats.format_of says this format's reader takes

    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})
    scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0,
                         description="Multiply every length by this, after the unit")
    unit: EnumProperty(name="Unit", items=IMPORT_UNIT_ITEMS, default="AUTO", description="Length of one file unit")
    custom_unit: FloatProperty(name="Metres per Unit", default=1.0, min=1e-9, max=1e9, precision=6,
                               description="Length of one file unit in metres, with the Unit 'Metres per Unit' "
                                           "(0.0254 / 0.45 = 0.056444 for CMU's lengths)")
    axis_forward: EnumProperty(name="Forward", items=AXES, default=FORWARD)
    axis_up: EnumProperty(name="Up", items=AXES, default=UP)
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
    use_file_up_axis: BoolProperty(name="File's Up Axis", default=True,
                                   description="Use the up axis the file states (HTR's GlobalAxisofGravity) "
                                               "instead of Up")
    reduce_keys: BoolProperty(name="Reduce Keys", default=False,
                              description="Keep only the keys needed to hold every bone's head and tail within "
                                          "Tolerance of the full import at every frame (LINEAR keys)")
    reduce_tolerance: FloatProperty(name="Tolerance", default=0.002, min=0.0, max=0.1, soft_max=0.01, step=0.01,
                                    precision=4, description="How far any bone head or tail may move, as a "
                                                             "fraction of the figure's height (0.002: 3.6 mm "
                                                             "on a 1.8 m figure)")

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if context.collection is not None and not context.collection.is_editable:
            cls.poll_message_set(f"Collection '{context.collection.name}' is linked from a library: "
                                 "make another collection active to import into")
            return False
        return True

    @classmethod
    def load_options(cls, values: Mapping[str, Any], path: str) -> dict:
        """Keyword arguments for ``core.load`` from this format's option ``values``."""
        return {}

    @classmethod
    def after_import(cls, values: Mapping[str, Any], clip: Clip, result: ImportResult) -> list[str]:
        """Format-specific finishing touches on the new armature; returns warnings."""
        return []

    @staticmethod
    def readers() -> list[type[MocapImportBase]]:
        """Every format's import operator (each subclasses this base): a selection of mixed formats
        reads each file with its own format's reader."""
        return MocapImportBase.__subclasses__()

    def paths(self) -> list[str]:
        """The chosen files: every named entry of ``files``, else ``filepath`` unless it is a folder."""
        if self.directory and any(f.name for f in self.files):
            return [os.path.join(self.directory, f.name) for f in self.files if f.name]
        return [self.filepath] if self.filepath and not os.path.isdir(self.filepath) else []

    def option_values(self, reader: type[MocapImportBase]) -> dict[str, Any]:
        """``reader``'s format options: this operator's value where it has the option, else the default."""
        own, theirs = operator_properties(type(self).bl_idname), operator_properties(reader.bl_idname)
        return {name: getattr(self, name) if name in own else theirs[name].default for name in reader.format_options}

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        assert layout is not None, "drawn in a layout"
        layout.use_property_split = True
        for name in ("unit", "custom_unit", "scale", "axis_forward", "axis_up", "use_file_up_axis", "frame_start",
                     "fps_mode", "update_scene_range", "rotation_mode", "reduce_keys", "reduce_tolerance",
                     *self.format_options):
            if name == "custom_unit" and self.unit != "CUSTOM":
                continue
            row = layout.row()
            row.active = name != "reduce_tolerance" or self.reduce_keys
            row.prop(self, name)

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[OperatorReturnItems]:
        if self.directory and self.files and hasattr(self, "invoke_popup"):
            return self.invoke_popup(context)  # dropped on the viewport
        return super().invoke(context, event)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core import MocapFormatError, load
        from ...core.body.stature import with_guessed_unit
        from ...core.formats import FORMATS as CORE_FORMATS
        from ...core.formats import files_to_read, format_of
        from ..bridge.clip_to_armature import ImportSettings, import_clip

        jobs = files_to_read(self.paths())
        if not jobs:
            where = f" in {self.directory}" if self.directory else ""
            self.report({"ERROR"}, f"{self.format_label} import: no file selected{where}")
            return {"CANCELLED"}
        view_layer = context.view_layer
        assert view_layer is not None, "run with a scene"
        imported: list[bpy.types.Object] = []
        refused: list[tuple[str, str]] = []  # file name, why
        with Progress(context, len(jobs)) as progress:
            for number, (path, skeleton) in enumerate(jobs):
                reader: type[MocapImportBase] = type(self)
                try:
                    extension = format_of(path)
                    reader = next((r for r in self.readers() if extension in r.extensions), reader)
                    values = self.option_values(reader)
                    options = reader.load_options(values, path)
                    if skeleton is not None:
                        options.setdefault("skeleton", skeleton)
                    clip = load(path, **options)
                    if self.unit == "AUTO":
                        clip = with_guessed_unit(clip)
                    forward, up = self.axis_forward, self.axis_up
                    if self.use_file_up_axis and CORE_FORMATS[extension].up_axis_known:
                        forward, up = file_axes(forward, up, clip.up_axis)
                    settings = ImportSettings(conversion_matrix(forward, up), self.scale, self.unit,
                                              self.frame_start, self.fps_mode, self.update_scene_range,
                                              self.rotation_mode, bool(values.get("split_takes", False)),
                                              reduce_tolerance=self.reduce_tolerance if self.reduce_keys else None,
                                              custom_unit=self.custom_unit)
                    name = os.path.splitext(os.path.basename(path))[0]
                    result = import_clip(context, clip, name, settings, progress.part(number, number + 1))
                except (MocapFormatError, OSError, ValueError) as error:
                    refused.append((os.path.basename(path), f"{reader.format_label} import failed: {reason(error)}"))
                    continue
                imported.append(result.obj)
                for warning in reader.after_import(values, clip, result) + clip.metadata.get("warnings", []):
                    self.report({"WARNING"}, f"{os.path.basename(path)}: {warning}")
                for note in clip.metadata.get("notes", []):
                    self.report({"INFO"}, f"{os.path.basename(path)}: {note}")
                self.report({"INFO"}, f"Imported {result.summary()}")
        if not imported:  # an ERROR report: the caller sees the failure (bpy.ops raises RuntimeError)
            for _, why in refused:
                self.report({"ERROR"}, why)
            return {"CANCELLED"}
        for obj in view_layer.objects.selected:
            obj.select_set(False)
        for obj in imported:
            obj.select_set(True)
        view_layer.objects.active = imported[-1]
        if refused:  # partial success is a success: the reasons, then which files are missing, as warnings
            for _, why in refused:
                self.report({"WARNING"}, why)
            self.report({"WARNING"}, f"{self.format_label} import: {len(imported)} of {len(jobs)} files imported; "
                                     f"refused: {', '.join(name for name, _ in refused)}")
        return {"FINISHED"}


class MocapExportBase(bpy.types.Operator, ExportHelper):
    """Options and the export every format shares; subclasses name the format."""

    format_label: ClassVar[str] = ""

    scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6,
                         description="Divide every length by this, then by the unit "
                                     "(From File already undoes the import's Scale)")
    unit: EnumProperty(name="Unit", items=UNIT_ITEMS, default="AUTO",
                       description="Length of one file unit (From File: the unit the import read, undoing its "
                                   "scale; a format that states no unit, as BVH, gets the unit its readers expect "
                                   "for motion from another format: centimetres)")
    custom_unit: FloatProperty(name="Metres per Unit", default=1.0, min=1e-9, max=1e9, precision=6,
                               description="Length of one file unit in metres, with the Unit 'Metres per Unit'")
    axis_forward: EnumProperty(name="Forward", items=AXES, default=FORWARD)
    axis_up: EnumProperty(name="Up", items=AXES, default=UP)
    use_action_range: BoolProperty(name="Action's Frame Range", default=True,
                                   description="Export the action's frame range, else the scene's")
    precision: IntProperty(name="Decimals", default=6, min=1, max=12, description="Decimals written per value")
    rotation_order: EnumProperty(
        name="Rotation Order", default="ZXY", items=[(o, o, f"Channels listed {o}") for o in
                                                     ("ZXY", "ZYX", "XYZ", "XZY", "YXZ", "YZX")],
        description="Channel order for armatures not imported by this add-on")
    use_import_layout: BoolProperty(
        name="Original Layout", default=True,
        description="For an armature this add-on imported: write its file's channels, rotation orders and header "
                    "(renamed bones under their new names); off: write the bones as they are now, as for any armature")
    # Set by Blender when the operator runs as one of a collection's exporters (Collection > Exporters).
    collection: StringProperty(name="Source Collection", default="", options={"HIDDEN"},
                               description="Export this collection's armatures (and its children's), "
                                           "not the active object")

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        active = context.active_object
        collection = getattr(context, "collection", None)
        if (active is not None and active.type == "ARMATURE") or (
                collection is not None and any(o.type == "ARMATURE" for o in collection.all_objects)):
            return True
        cls.poll_message_set("Select the armature to export")
        return False

    def save_options(self) -> dict:
        """Keyword arguments for ``core.save``; formats with more options extend them."""
        return {"precision": self.precision}

    def target_path(self) -> str:
        """``filepath`` with this format's extension added when it has none of its own (as the file
        browser does); a name with another motion capture format's extension is refused."""
        from ...core.formats import FORMATS

        extension = os.path.splitext(self.filepath)[1].lower()
        if extension == self.filename_ext:
            return self.filepath
        if extension in FORMATS:
            raise ValueError(f"{os.path.basename(self.filepath)}: the {self.format_label} exporter writes "
                             f"{self.filename_ext} files, not {extension}")
        return self.filepath + self.filename_ext

    def targets(self, context: bpy.types.Context, path: str) -> list[tuple[bpy.types.Object, str]]:
        """The armatures to write, with their files: the source collection's (one file each, named
        after the armature when there are several), else the active armature, to ``path``."""
        if not self.collection:
            active = context.active_object
            return [(active, path)] if active is not None and active.type == "ARMATURE" else []
        source = bpy.data.collections.get(self.collection)
        armatures: list[bpy.types.Object] = sorted(
            (o for o in source.all_objects if o.type == "ARMATURE"), key=lambda o: o.name) if source is not None else []
        if len(armatures) == 1:
            return [(armatures[0], path)]
        stem, extension = os.path.splitext(path)
        return [(obj, f"{stem}_{bpy.path.clean_name(obj.name)}{extension}") for obj in armatures]

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        from ...core import save
        from ...core.formats import unit_note
        from ..bridge.read_rig import ExportSettings, export_clip

        scene = context.scene
        assert scene is not None, "run with a scene"
        settings = ExportSettings(conversion_matrix(self.axis_forward, self.axis_up), self.scale, self.unit,
                                  None if self.use_action_range else scene.frame_start,
                                  None if self.use_action_range else scene.frame_end, self.rotation_order,
                                  self.use_import_layout, self.filename_ext, self.custom_unit)
        try:
            targets = self.targets(context, self.target_path())
        except ValueError as error:
            self.report({"ERROR"}, f"{self.format_label} export failed: {reason(error)}")
            return {"CANCELLED"}
        if not targets:
            where = f"collection {self.collection!r} has" if self.collection else "there is"
            self.report({"ERROR"}, f"{self.format_label} export failed: {where} no armature to export")
            return {"CANCELLED"}
        written = 0
        for obj, target in targets:
            started = time.perf_counter()
            try:
                clip = export_clip(obj, settings)
                save(clip, target, **self.save_options())
            except (OSError, ValueError) as error:
                which = f" ({obj.name})" if len(targets) > 1 else ""
                self.report({"ERROR"}, f"{self.format_label} export failed{which}: {reason(error)}")
                continue
            written += 1
            note = unit_note(clip, self.filename_ext)
            self.report({"INFO"}, f"Exported {obj.name} to {target}: {clip.skeleton.joint_count} joints, "
                                  f"{clip.frame_count} frames in {time.perf_counter() - started:.2f} s"
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
        "bl_file_extensions": ";".join(importer.extensions),
        "poll_drop": classmethod(poll_drop),
    })
