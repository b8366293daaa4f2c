"""The bpy-free core: data model, rotations, kinematics and file formats (numpy only)."""

from .errors import MocapFormatError, MocapWriteError
from .formats import load, save
from .kinematics import conform, forward_kinematics, world_positions
from .model import Clip, Skeleton
from .pose import Pose
from .transforms import World, rest_positions

__all__ = ["Clip", "MocapFormatError", "MocapWriteError", "Pose", "Skeleton", "World", "conform", "forward_kinematics",
           "load", "rest_positions", "save", "world_positions"]
