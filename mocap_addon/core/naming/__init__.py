"""Bone-name mapping: any skeleton's joints onto one canonical 54-joint humanoid skeleton.

Names and topology together: names (read by :mod:`.names`) find the hands,
feet and head and say which body part a joint may be; the tree settles the rest
(:mod:`.landmarks`, :mod:`.shape`).  The hips are where the legs and the spine
meet, the top of the spine (``spine_04``) where the arms and the neck branch
(:mod:`.trunk`), and each limb chain from its fork to its hand or foot is
labelled in order (:mod:`.limbs`, :mod:`.chains`).  Where names give no side,
the rest pose does (:mod:`.sides`); a side nothing supports is not guessed.

A preset (JSON data: explicit source -> canonical entries, :mod:`.presets`) is
applied before detection and wins over it.  The mapping is injective, and a
mapped joint's canonical ancestors map to its own ancestors (:mod:`.labels`).
:mod:`.mapping` runs the steps in that order.
"""

from .canonical import (
    ARM,
    CANONICAL_JOINTS,
    CANONICAL_PARENTS,
    LEG,
    NECK,
    REQUIRED_JOINTS,
    SIDES,
    SPINE,
    canonical_ancestors,
    canonical_side,
)
from .checks import limb_chain_warnings
from .mapping import explain_mapping, map_skeleton, mapping_report, missing_joints
from .presets import (
    MAX_PRESET_BYTES,
    PRESETS,
    Preset,
    PresetLike,
    builtin_presets,
    find_preset,
    load_preset,
    preset_from_dict,
    save_preset,
)

__all__ = ["ARM", "CANONICAL_JOINTS", "CANONICAL_PARENTS", "LEG", "MAX_PRESET_BYTES", "NECK", "PRESETS",
           "REQUIRED_JOINTS", "SIDES", "SPINE", "Preset", "PresetLike", "builtin_presets", "canonical_ancestors",
           "canonical_side", "explain_mapping", "find_preset", "limb_chain_warnings", "load_preset", "map_skeleton",
           "mapping_report", "missing_joints", "preset_from_dict", "save_preset"]
