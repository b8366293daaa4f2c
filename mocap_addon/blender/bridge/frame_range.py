"""The part of a source's frames a tool uses (retarget and blend): its Blender frames from Start to End."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from bpy.props import BoolProperty, IntProperty

if TYPE_CHECKING:
    from ...core.pose import Pose


class FrameRange:
    """Operator and panel options: use only the source's frames from Start to End (Blender frames)."""

    use_frame_range: BoolProperty(name="Frame Range", default=False,
                                  description="Use only the source's frames from Start to End")
    frame_start: IntProperty(name="Start", default=1, description="First Blender frame of the source used")
    frame_end: IntProperty(name="End", default=250, description="Last Blender frame of the source used")


def in_range(pose: Pose, chosen: FrameRange) -> Pose:
    """``pose`` (starting at Blender frame ``pose.start_frame``) cut to the chosen range, its start frame moved
    with it; the whole pose when no range is used (``ValueError`` when the range holds none of its frames)."""
    if not chosen.use_frame_range:
        return pose
    first = max(chosen.frame_start - pose.start_frame, 0)
    last = min(chosen.frame_end - pose.start_frame, pose.frame_count - 1)
    if last < first:
        raise ValueError(f"frames {chosen.frame_start}-{chosen.frame_end} hold none of the source's "
                         f"{pose.start_frame}-{pose.start_frame + pose.frame_count - 1}")
    cut = pose.at(np.arange(first, last + 1))
    cut.start_frame = pose.start_frame + first
    return cut
