"""The import record: what reading a rig back needs from its import (skeleton, timing, axes, scale), kept as
JSON in a custom property of the armature data (:data:`PROPERTY`), and the format of that JSON."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ...core import Clip, Skeleton

PROPERTY = "mocap_skeleton"  # on the armature data: the record (JSON)
CAPTURES = "mocap_captures"  # on the armature data: the action the armature was imported with (an ID pointer)
FRAME_TIME = "mocap_frame_time"  # on every action the add-on writes: seconds per frame of its motion


def skeleton_to_json(clip: Clip, conversion: np.ndarray, scale: float) -> str:
    """The clip's skeleton, timing and the import's axis conversion and scale, as JSON."""
    skeleton = clip.skeleton
    data: dict[str, Any] = {
        "names": skeleton.names,
        "parents": skeleton.parents,
        "offsets": skeleton.offsets.tolist(),
        "channels": [list(c) for c in skeleton.channels],
        "end_sites": [e.tolist() for e in skeleton.end_sites],
        "rest_rotations": skeleton.rest_rotations.tolist(),
        "position_replaces_offset": skeleton.position_replaces_offset.tolist(),
        "translation_in_rest_frame": skeleton.translation_in_rest_frame.tolist(),
        "length_directions": skeleton.length_directions.tolist(),
        "frame_time": clip.frame_time,
        "frame_count": clip.frame_count,
        "start_frame": clip.start_frame,
        "unit_in_metres": clip.unit_in_metres,
        "up_axis": clip.up_axis,
        "format": clip.metadata.get("format"),
        "source": clip.metadata.get("source"),
        "metadata": {k: v for k, v in clip.metadata.items() if _is_plain(v)},
        "conversion": np.asarray(conversion).tolist(),
        "scale": scale,
    }
    return json.dumps(data)


def _is_plain(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def skeleton_from_json(text: str) -> tuple[Skeleton, dict[str, Any]]:
    """The stored skeleton and the rest of the stored record."""
    data = json.loads(text)
    skeleton = Skeleton(
        names=data["names"], parents=data["parents"], offsets=np.array(data["offsets"]),
        channels=[tuple(c) for c in data["channels"]],
        end_sites=[np.array(e).reshape(-1, 3) for e in data["end_sites"]],
        rest_rotations=np.array(data["rest_rotations"]),
        position_replaces_offset=np.array(data["position_replaces_offset"], dtype=bool),
        translation_in_rest_frame=np.array(data["translation_in_rest_frame"], dtype=bool),
        length_directions=np.array(data["length_directions"]),
    )
    return skeleton, data
