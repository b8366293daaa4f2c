"""Two clips mixed into one performance (:mod:`.mixing`), with the time warp that pairs their frames
(:mod:`.timewarp`) and the root paths mixed in their heading frames (:mod:`.paths`)."""

from ..body.identity import same_body
from .mixing import blend, envelope, mask_presets, onto, preset_weights, solve_mix

__all__ = ["blend", "envelope", "mask_presets", "onto", "preset_weights", "same_body", "solve_mix"]
