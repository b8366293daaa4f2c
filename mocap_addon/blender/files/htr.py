"""Motion Analysis HTR import and export operators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty

from .base import MocapExportBase, MocapImportBase

ORDER_ITEMS = [("listed", "As Listed", "EulerRotationOrder ZYX means Rz·Ry·Rx (what real files show)"),
               ("reversed", "Reversed", "EulerRotationOrder ZYX means Rx·Ry·Rz")]
TRANSLATION_ITEMS = [("rotated", "Base-Rotated", "Frame translations are turned by the base rotation "
                                                 "(MACFileLib exports)"),
                     ("parent", "Parent Frame", "Frame translations add to the base translation (format notes)")]
READING_ITEMS = [("evidence", "By Evidence", "Read both ways; keep the reading under which planted feet slide "
                                             "least (the format notes' where they tie)"), *TRANSLATION_ITEMS]


class IMPORT_ANIM_OT_mocap_htr(MocapImportBase):
    """Import Motion Analysis HTR motion capture as armatures with actions"""

    bl_idname = "import_anim.mocap_htr"
    bl_label = "Import HTR (Mocap I/O)"
    bl_options = {"REGISTER", "UNDO", "PRESET"}
    format_label = "HTR"
    filename_ext = ".htr"
    extensions = (".htr",)
    filter_glob: StringProperty(default="*.htr;*.HTR", options={"HIDDEN"})
    order_reading: EnumProperty(name="Rotation Order", items=ORDER_ITEMS, default="listed")
    translation: EnumProperty(name="Frame Translation", items=READING_ITEMS, default="evidence")
    split_takes: BoolProperty(name="One Action per Take", default=False,
                              description="A file holding several takes (block sets numbered afresh) becomes one "
                                          "action per take; else one action, with a timeline marker per take")
    format_options = ("order_reading", "translation", "split_takes")

    @classmethod
    def load_options(cls, values: Mapping[str, Any], path: str) -> dict:
        return {"order_reading": values["order_reading"], "translation": values["translation"]}


class EXPORT_ANIM_OT_mocap_htr(MocapExportBase):
    """Export the active armature's action as Motion Analysis HTR"""

    bl_idname = "export_anim.mocap_htr"
    bl_label = "Export HTR (Mocap I/O)"
    bl_options = {"REGISTER", "PRESET"}
    format_label = "HTR"
    filename_ext = ".htr"
    filter_glob: StringProperty(default="*.htr;*.HTR", options={"HIDDEN"})
    precision: IntProperty(name="Decimals", default=8, min=1, max=12, description="Decimals written per value")
    order_reading: EnumProperty(name="Rotation Order", items=ORDER_ITEMS, default="listed")
    translation: EnumProperty(name="Frame Translation", items=TRANSLATION_ITEMS, default="parent")

    def save_options(self) -> dict:
        return {**super().save_options(), "order_reading": self.order_reading, "translation": self.translation}


FORMATS = [(IMPORT_ANIM_OT_mocap_htr, EXPORT_ANIM_OT_mocap_htr)]
