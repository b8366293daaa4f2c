"""Two clips mixed into one performance (:mod:`.mixing`), with the time warp that pairs their frames
(:mod:`.timewarp`) and the root paths mixed in their heading frames (:mod:`.paths`)."""

from .mixing import (
    ALIGN_MODES,
    FEET_MODES,
    ROOT_MODES,
    blend,
    envelope,
    mask_presets,
    onto,
    preset_weights,
    same_body,
    solve_mix,
)

__all__ = ["ALIGN_MODES", "FEET_MODES", "ROOT_MODES", "blend", "envelope", "mask_presets", "onto", "preset_weights",
           "same_body", "solve_mix"]
