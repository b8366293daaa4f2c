"""What export needs from an import, kept as custom properties on the armature data, and its summary."""

from __future__ import annotations

import json
from typing import Any

import bpy
import numpy as np

from ...core import Clip, Skeleton
from .armature import armature_data
from .compat import id_property

PROPERTY = "mocap_skeleton"


def stored_record(obj: bpy.types.Object) -> str | None:
    """The armature's import record (JSON), ``None`` for an armature this add-on did not import."""
    stored = id_property(armature_data(obj), PROPERTY)
    return None if stored is None else str(stored)


CAPTURES = "mocap_captures"  # on the armature data: the action the armature was imported with (an ID pointer)


def captured_action(obj: bpy.types.Object) -> bpy.types.Action | None:
    """The action ``obj`` was imported with (kept with the file, followed through renames), whatever it plays
    now; ``None`` for a rig not imported here or whose import action was deleted."""
    action = id_property(armature_data(obj), CAPTURES)
    return action if isinstance(action, bpy.types.Action) else None


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


def source_summary(obj: bpy.types.Object | None) -> list[str]:
    """Lines describing the armature's stored import record (empty when it has none)."""
    if obj is None or obj.type != "ARMATURE" or (stored := stored_record(obj)) is None:
        return []
    from ...core.formats import file_formats

    record = json.loads(stored)
    timing = "skeleton only" if record.get("frame_count") == 0 else f"{1.0 / record['frame_time']:g} fps"
    labels = {file_format.key: file_format.label for file_format in file_formats()}
    label = labels.get(record.get("format"), (record.get("format") or "?").upper())
    lines = [f"{label}: {bpy.path.basename(record.get('source') or '')}",
             f"{len(record['names'])} joints, {timing}"]
    action = obj.animation_data.action if obj.animation_data else None
    if action is not None:
        first, last = round(action.frame_range[0]), round(action.frame_range[1])
        lines.append(f"frames {first}-{last}")
    lines += [f"warning: {w}" for w in record.get("metadata", {}).get("warnings", [])]
    return lines
