"""Length units: their names, and a clip's lengths re-expressed in another unit.

A clip's ``unit_in_metres`` is the length of one of its units where its file
says; ``None`` where it does not, and then one unit is read as a metre, as
Blender's importers do.  Every writer labels the values it writes truthfully,
each format in its own way (``core.formats.unit_note`` says how, where a
report should tell).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .model import LENGTH_CHANNEL, TRANSLATION_CHANNELS, Clip

UNITS_IN_METRES = {"mm": 0.001, "cm": 0.01, "dm": 0.1, "m": 1.0, "km": 1000.0, "in": 0.0254, "inch": 0.0254,
                   "inches": 0.0254, "ft": 0.3048, "feet": 0.3048, "foot": 0.3048}
SHORT_NAMES = ("mm", "cm", "dm", "m", "km", "in", "ft")
# The units a user picks from (the importers' and exporters' Unit, the command line's --unit), in the order
# offered, with their names.
UNIT_CHOICES = {"m": "metres", "cm": "centimetres", "mm": "millimetres", "in": "inches", "ft": "feet"}


def unit_name(unit_in_metres: float | None) -> str | None:
    """The short name (``mm``, ``cm``, ``m``, ``in`` …) of a unit, or ``None`` if it has none."""
    if unit_in_metres is None:
        return None
    return next((n for n in SHORT_NAMES if math.isclose(UNITS_IN_METRES[n], unit_in_metres, rel_tol=1e-9)), None)


def convert_unit(clip: Clip, unit_in_metres: float) -> Clip:
    """The clip with its lengths expressed in units of ``unit_in_metres`` (its own unit must be known)."""
    if clip.unit_in_metres is None:
        raise ValueError("the clip states no unit to convert from")
    scaled = scale_lengths(clip, clip.unit_in_metres / unit_in_metres)
    scaled.unit_in_metres = unit_in_metres
    return scaled


def scale_lengths(clip: Clip, factor: float) -> Clip:
    """The clip with every length (offsets, End Sites, position and length channels, bone vectors and
    a format's ``bone_lengths``) multiplied by ``factor``; its unit is left as it is."""
    skeleton = clip.skeleton.copy()
    skeleton.offsets *= factor
    skeleton.end_sites = [site * factor for site in skeleton.end_sites]
    starts = skeleton.channel_starts()
    lengths = [int(starts[joint]) + n for joint, layout in enumerate(skeleton.channels)
               for n, channel in enumerate(layout) if channel in (*TRANSLATION_CHANNELS, LENGTH_CHANNEL)]
    motion = clip.motion.copy()
    motion[:, lengths] *= factor
    metadata = dict(clip.metadata)
    if "bone_vectors" in metadata:
        metadata["bone_vectors"] = (np.asarray(metadata["bone_vectors"]) * factor).tolist()
    for key, section in clip.metadata.items():  # a format's own section may keep its bone lengths
        if isinstance(section, dict) and "bone_lengths" in section:
            metadata[key] = {**section, "bone_lengths": (np.asarray(section["bone_lengths"]) * factor).tolist()}
    return dataclasses.replace(clip, skeleton=skeleton, motion=motion, metadata=metadata)
