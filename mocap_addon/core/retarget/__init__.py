"""Motion onto the canonical skeleton or onto another skeleton (:mod:`.transfer`)."""

from .transfer import FEET, LENGTHS, METHODS, ROOT_MODES, MissingJointsError, bone_ends, figure, retarget, to_canonical

__all__ = ["FEET", "LENGTHS", "METHODS", "ROOT_MODES", "MissingJointsError", "bone_ends", "figure", "retarget",
           "to_canonical"]
