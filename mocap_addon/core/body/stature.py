"""How tall a human figure is, and the length unit its file was written in: the Unit option's Auto.

A figure's stature comes from its legs (thigh + shin over the frames, the
reference body's proportions: pose-independent, so raised arms, a crouch or a
figure lying down do not change it).  A unit the file states is trusted while
it gives a plausible person (:data:`PLAUSIBLE_HEIGHTS`); a file that states
none, or an implausible one, is read in the first standard unit that makes the
figure 1.2-2.2 m tall (these units lie far enough apart that at most one does),
else at the scale that makes it :data:`FALLBACK_HEIGHT` tall, with a warning.
A skeleton without hips and both legs is no figure to measure: its file's unit
stands (1 unit = 1 m where it states none).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..kinematics import world_positions
from ..model import Clip
from ..naming import map_skeleton
from ..options import AUTO_UNIT, FILE_UNIT, READ_UNIT
from ..transforms import rest_pose
from ..units import UNITS_IN_METRES, unit_name
from .contacts import SIDES, leg_length
from .reference import LEG_JOINTS, reference_body

HUMAN_HEIGHTS = (1.2, 2.2)  # metres: the statures a guessed unit may give
PLAUSIBLE_HEIGHTS = (0.5, 3.0)  # metres: a stated unit giving a stature outside these is not believed
FALLBACK_HEIGHT = 1.7  # metres: the stature a figure no standard unit fits is scaled to
# The units tried, in order: the usual ones and CMU's (ASF ":units length 0.45": 1/0.45 inch, as CMU's BVHs).
CANDIDATE_UNITS = (("metres", 1.0), ("centimetres", 0.01), ("millimetres", 0.001), ("inches", 0.0254),
                   ("CMU's 1/0.45 inch", 0.0254 / 0.45))
MEASURED_FRAMES = 200  # frames (evenly spread) the legs are measured over


@dataclass(frozen=True)
class UnitGuess:
    """The unit an Auto import reads (metres per file unit; ``None``: not known, read as metres), the
    figure's stature in file units (``None``: no human figure found), and what a user should be told."""

    unit_in_metres: float | None
    stature: float | None
    warning: str | None = None
    note: str | None = None


def stature(clip: Clip) -> float | None:
    """The figure's stature in file units, from its legs (``None`` without hips and both legs)."""
    mapping = map_skeleton(clip.skeleton)
    index = {canonical: clip.skeleton.index(name) for name, canonical in mapping.items() if canonical is not None}
    legs = [[index.get(f"{joint}_{side}") for joint in LEG_JOINTS] for side in SIDES]
    if "hips" not in index or any(joint is None for leg in legs for joint in leg):
        return None
    if clip.frame_count:
        step = max(1, clip.frame_count // MEASURED_FRAMES)
        positions = world_positions(dataclasses.replace(clip, motion=clip.motion[::step]))
    else:
        positions = rest_pose(clip.skeleton)[1][None]
    leg = leg_length(positions, [[int(joint) for joint in leg if joint is not None] for leg in legs])
    body = reference_body()
    return leg * body.stature / body.leg_length() if leg > 0 else None


def guess_unit(clip: Clip) -> UnitGuess:
    """The unit to read ``clip``'s lengths in (see the module notes)."""
    stated = clip.unit_in_metres
    tall = stature(clip)
    if tall is None:
        note = None if stated is not None else "no hips and legs to measure: read at 1 unit = 1 m"
        return UnitGuess(stated, None, note=note)
    if stated is not None and PLAUSIBLE_HEIGHTS[0] <= tall * stated <= PLAUSIBLE_HEIGHTS[1]:
        return UnitGuess(stated, tall)
    low, high = HUMAN_HEIGHTS
    fitting = next(((name, unit) for name, unit in CANDIDATE_UNITS if low <= tall * unit <= high), None)
    doubt = "" if stated is None else (f"the file states {_spoken(stated)}, which makes the figure "
                                       f"{tall * stated:.3g} m tall; ")
    if fitting is not None:
        name, unit = fitting
        read = f"read in {name}: {tall * unit:.2f} m tall"
        return UnitGuess(unit, tall, warning=f"{doubt}{read}" if doubt else None,
                         note=None if doubt else f"unit guessed from the figure's size: {read}")
    unit = FALLBACK_HEIGHT / tall
    return UnitGuess(unit, tall, warning=(
        f"{doubt}no standard unit makes this figure {low:g}-{high:g} m tall ({tall:.4g} units): read at "
        f"1 unit = {unit:.4g} m, a {FALLBACK_HEIGHT:g} m figure; set the Unit to change it"))


def with_guessed_unit(clip: Clip) -> Clip:
    """``clip`` with the unit :func:`guess_unit` reads, the guess's warning and note in its metadata."""
    guess = guess_unit(clip)
    metadata = dict(clip.metadata)
    for key, text in (("warnings", guess.warning), ("notes", guess.note)):
        if text is not None:
            metadata[key] = [*metadata.get(key, []), text]
    return dataclasses.replace(clip, unit_in_metres=guess.unit_in_metres, metadata=metadata)


def _spoken(unit: float) -> str:
    name = unit_name(unit)
    return name if name is not None else f"1 unit = {unit:.4g} m"


def in_unit(clip: Clip, unit: str) -> Clip:
    """``clip`` read in the Unit option ``unit`` (an id of :data:`..options.READ_UNIT`): guessed, the file's,
    or the named unit."""
    READ_UNIT.check(unit)
    if unit == AUTO_UNIT:
        return with_guessed_unit(clip)
    return clip if unit == FILE_UNIT else dataclasses.replace(clip, unit_in_metres=UNITS_IN_METRES[unit])
