"""Between a file's space and time and Blender's: axes, length units and the scene's frame rate."""

from __future__ import annotations

from typing import cast

import bpy
import numpy as np
from bpy_extras.io_utils import axis_conversion
from mathutils import Matrix

from ...core.options import READ_UNIT
from ...core.units import UNIT_CHOICES, UNITS_IN_METRES
from .choices import enum_items

DEFAULT_AXES = ("-Z", "Y")  # the file's forward and up axes unless told otherwise (as Blender's BVH importer)

# The Unit option of exports: the unit the import read, one of the core's unit choices, or any length (the
# operators' Metres per Unit, for files in a unit of their own, as CMU's 1/0.45 inch); of imports: the core's
# choice (Auto: guessed from the figure's size; From File; the units) and Metres per Unit.
CUSTOM_UNIT = ("CUSTOM", "Metres per Unit", "One file unit is the length given in Metres per Unit")
UNIT_ITEMS = [("AUTO", "From File", "The unit the import read (an Auto import's guess included), else 1 file "
                                    "unit = 1 Blender unit"),
              *((short.upper(), name.title(), f"One file unit is {UNITS_IN_METRES[short]:g} m")
                for short, name in UNIT_CHOICES.items()), CUSTOM_UNIT]
IMPORT_UNIT_ITEMS = [*enum_items(READ_UNIT), CUSTOM_UNIT]


def conversion_matrix(forward: str, up: str) -> np.ndarray:
    """File axes -> Blender axes (3x3) for a file whose forward and up are the named axes (``"-Z"``, ``"Y"``)."""
    # The stubs say None: axis_conversion is plain Python without annotations, and returns a Matrix.
    matrix = cast(Matrix, axis_conversion(from_forward=forward, from_up=up))
    return np.array(matrix.to_3x3())


def unit_in_metres(unit: str, custom: float = 1.0) -> float:
    """The length of a Unit option naming one (``"CM"``), in metres; ``custom`` for ``"CUSTOM"``."""
    return custom if unit == "CUSTOM" else UNITS_IN_METRES[unit.lower()]


def scene_fps(scene: bpy.types.Scene) -> float:
    """The scene's frame rate in frames per second."""
    return scene.render.fps / scene.render.fps_base
