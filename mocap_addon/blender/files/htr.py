"""Motion Analysis HTR import and export operators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bpy.props import BoolProperty, IntProperty, StringProperty

from ...core.options import HTR_ORDER, HTR_TRANSLATION, HTR_TRANSLATION_READING
from ..bridge.choices import chosen, enum_property
from .base import MocapExportBase, MocapImportBase


class IMPORT_ANIM_OT_mocap_htr(MocapImportBase):
    """Import Motion Analysis HTR motion capture as armatures with actions"""

    bl_idname = "import_anim.mocap_htr"
    bl_label = "Import HTR (Mocap I/O)"
    bl_options = {"REGISTER", "UNDO", "PRESET"}
    format_label = "HTR"
    filename_ext = ".htr"
    extensions = (".htr",)
    filter_glob: StringProperty(default="*.htr;*.HTR", options={"HIDDEN"})
    order_reading: enum_property(HTR_ORDER)
    translation: enum_property(HTR_TRANSLATION_READING)
    split_takes: BoolProperty(name="One Action per Take", default=False,
                              description="A file holding several takes (block sets numbered afresh) becomes one "
                                          "action per take; else one action, with a timeline marker per take")
    format_options = ("order_reading", "translation", "split_takes")

    @classmethod
    def load_options(cls, values: Mapping[str, Any], path: str) -> dict:
        return {"order_reading": chosen(HTR_ORDER, values["order_reading"]),
                "translation": chosen(HTR_TRANSLATION_READING, values["translation"])}


class EXPORT_ANIM_OT_mocap_htr(MocapExportBase):
    """Export the active armature's action as Motion Analysis HTR"""

    bl_idname = "export_anim.mocap_htr"
    bl_label = "Export HTR (Mocap I/O)"
    bl_options = {"REGISTER", "PRESET"}
    format_label = "HTR"
    filename_ext = ".htr"
    filter_glob: StringProperty(default="*.htr;*.HTR", options={"HIDDEN"})
    precision: IntProperty(name="Decimals", default=8, min=1, max=12, description="Decimals written per value")
    order_reading: enum_property(HTR_ORDER)
    translation: enum_property(HTR_TRANSLATION)

    def save_options(self) -> dict:
        return {**super().save_options(), "order_reading": chosen(HTR_ORDER, self.order_reading),
                "translation": chosen(HTR_TRANSLATION, self.translation)}


FORMATS = [(IMPORT_ANIM_OT_mocap_htr, EXPORT_ANIM_OT_mocap_htr)]
