"""Motion onto the canonical skeleton or onto another skeleton (:mod:`.transfer`)."""

from .transfer import MissingJointsError, bone_ends, figure, retarget, to_canonical

__all__ = ["MissingJointsError", "bone_ends", "figure", "retarget", "to_canonical"]
