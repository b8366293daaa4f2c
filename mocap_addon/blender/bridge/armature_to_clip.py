"""An armature and its action as a core clip: what File > Export writes, and what the tools read."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import bpy
import numpy as np

from ...core import Clip, Pose, Skeleton
from ...core.model import SCALE_CHANNEL
from ...core.rotations import quaternion_continuity
from ...core.transforms import rest_pose
from ...core.units import scale_lengths
from .animation import curves_by_path, has_keys, read_bone
from .armature import armature_data, pose_bones, rest_matrices
from .compat import id_property
from .conversion import scene_fps, unit_in_metres
from .import_record import skeleton_from_json, stored_record
from .rig_math import BoneFrames, RestRig, basis_to_local


@dataclass
class ExportSettings:
    """How an armature becomes a file (the export operators' options)."""

    conversion: np.ndarray  # file axes -> Blender axes (3x3), as on import
    scale: float = 1.0
    unit: str = "AUTO"  # conversion.UNIT_ITEMS; AUTO: undo the import's scale (1 for rigs made in Blender)
    frame_start: int | None = None  # None: the action's range
    frame_end: int | None = None
    rotation_order: str = "ZXY"  # for rigs not imported by this add-on
    use_import_layout: bool = True  # False: write an imported rig's bones as they are now, like any other rig
    extension: str | None = None  # the written format's (".bvh"): AUTO then writes the unit its readers expect
    custom_unit: float = 1.0  # metres per written unit when ``unit`` is CUSTOM


def _scene() -> bpy.types.Scene:
    scene = bpy.context.scene
    assert scene is not None, "a scene to read its frame and rate"
    return scene


def armature_action(obj: bpy.types.Object) -> bpy.types.Action | None:
    animation = obj.animation_data
    return animation.action if animation else None


def frame_range(obj: bpy.types.Object, settings: ExportSettings,
                action: bpy.types.Action | None = None) -> np.ndarray:
    """Frames to export: the settings' range, else the action's (the armature's own unless given), else the
    scene's current frame."""
    action = action or armature_action(obj)
    if action is not None:
        first, last = round(action.frame_range[0]), round(action.frame_range[1])
    else:
        first = last = _scene().frame_current
    first = first if settings.frame_start is None else settings.frame_start
    last = last if settings.frame_end is None else settings.frame_end
    return np.arange(first, max(first, last) + 1, dtype=np.float64)


def skeleton_from_bones(obj: bpy.types.Object, settings: ExportSettings, scale: float,
                        curves: dict[tuple[str, int], bpy.types.FCurve] | None = None) -> Skeleton:
    """A BVH-style skeleton for any armature: three rotations per bone in the chosen order, and
    position channels (replacing the offset) on roots and on every bone with location keys in ``curves``."""
    bones = sorted(armature_data(obj).bones, key=lambda b: len(b.parent_recursive))
    names = [b.name for b in bones]
    back = settings.conversion.T / scale
    heads = np.array([b.head_local for b in bones]).reshape(-1, 3)
    parents = [names.index(b.parent.name) if b.parent else -1 for b in bones]
    offsets = np.array([(heads[j] - (heads[p] if p >= 0 else 0.0)) @ back.T for j, p in enumerate(parents)])
    rotation = tuple(f"r{axis.lower()}" for axis in settings.rotation_order)
    moves = np.array([p < 0 or has_keys(curves or {}, name, "location") for name, p in zip(names, parents)])
    channels = [(("tx", "ty", "tz") if move else ()) + rotation for move in moves]
    end_sites = [(np.array(b.tail_local) - np.array(b.head_local)) @ back.T if not b.children else np.zeros((0, 3))
                 for b in bones]
    return Skeleton(names, parents, offsets, channels, [np.reshape(e, (-1, 3)) for e in end_sites],
                    position_replaces_offset=moves)


@dataclass
class ArmatureReading:
    """An armature's animation as export reads it: the skeleton it is written on, the frames, and
    (by :meth:`joints`) each joint's local transform, in the file's axes and the skeleton's own units."""

    obj: bpy.types.Object
    skeleton: Skeleton
    frames: np.ndarray  # Blender frames
    curves: dict[tuple[str, int], bpy.types.FCurve]
    bone_frames: BoneFrames
    native: float  # the skeleton's own lengths per Blender length
    scale: float  # Blender lengths per written unit
    frame_time: float
    clip_fields: dict[str, Any]  # start_frame, unit_in_metres, up_axis, metadata of the motion it makes

    def pose(self) -> Pose:
        """The animation as local poses in the skeleton's own units, read bone by bone (one joint's
        frames of keys in memory at a time): each bone's ``matrix_basis`` rotation and location turned
        into its joint's by :attr:`bone_frames` (the exact inverse of how keys are written)."""
        skeleton = self.skeleton
        shape = (len(self.frames), skeleton.joint_count)
        turns, moves, scales = np.empty(shape + (4,)), np.empty(shape + (3,)), np.empty(shape)
        bones = pose_bones(self.obj)
        for joint, name in enumerate(skeleton.names):
            rotation, location, scales[:, joint] = read_bone(bones[name], self.curves, self.frames)
            turns[:, joint], moves[:, joint] = basis_to_local(self.bone_frames, joint, rotation, location,
                                                              self.native)
        scaled = any(SCALE_CHANNEL in layout for layout in skeleton.channels)
        return Pose(skeleton, quaternion_continuity(turns), moves, scales if scaled else None, self.frame_time,
                    **self.clip_fields)


def read_armature(obj: bpy.types.Object, settings: ExportSettings,
                  action: bpy.types.Action | None = None) -> ArmatureReading:
    """What :func:`export_clip` reads of the armature (its own action unless one is given)."""
    stored = stored_record(obj)
    record: dict = {}
    if stored is not None:
        skeleton, record = skeleton_from_json(stored)
        import_scale = float(record["scale"])
    else:
        import_scale = 1.0
    # Blender lengths per written unit; an imported skeleton is first posed in its own file units.
    unit, scale = _written_unit(settings, record if stored is not None else None)
    action = action or armature_action(obj)
    if action is None:
        raise ValueError(f"{obj.name} has no action to export")
    curves = curves_by_path(obj, action)
    metadata = dict(record.get("metadata", {}))
    from_record = stored is not None and settings.use_import_layout
    if not from_record:
        skeleton = skeleton_from_bones(obj, settings, scale, curves)
        metadata = {}
    else:
        names = joint_bones(obj, skeleton)
        renamed = dict(zip(skeleton.names, names))
        skeleton = replace(skeleton, names=names)
        metadata = _renamed(metadata, renamed)
    native = import_scale if from_record else scale
    frames = frame_range(obj, settings, action)
    frame_time = float(id_property(action, "mocap_frame_time", record.get("frame_time", 1.0 / scene_fps(_scene()))))
    metadata["warnings"] = []
    # Takes are kept with the action they were imported into, as frames after its first key.
    metadata.pop("takes", None)
    first_key = round(action.frame_range[0])
    if id_property(action, "mocap_takes"):
        metadata["takes"] = [int(t) + first_key - int(frames[0]) for t in action["mocap_takes"]]
    fields = {"start_frame": int(record.get("start_frame", 1)),
              "unit_in_metres": unit,
              "up_axis": record.get("up_axis", "Y"), "metadata": metadata}
    return ArmatureReading(obj, skeleton, frames, curves, armature_bone_frames(obj, skeleton, settings.conversion),
                           native, scale, frame_time, fields)


def armature_bone_frames(obj: bpy.types.Object, skeleton: Skeleton, conversion: np.ndarray) -> BoneFrames:
    """The constant matrices between ``skeleton``'s joints (file axes) and ``obj``'s bones of the same names."""
    orientations, heads = rest_matrices(obj, skeleton.names)
    rig = RestRig(heads, heads, orientations, conversion @ rest_pose(skeleton)[0])
    return BoneFrames.of(skeleton.parents, rig, conversion)


def export_clip(obj: bpy.types.Object, settings: ExportSettings, action: bpy.types.Action | None = None) -> Clip:
    """The armature's animation (its own action unless one is given) as a clip, in the file's axes and units."""
    reading = read_armature(obj, settings, action)
    clip = reading.pose().to_clip()
    return clip if reading.native == reading.scale else scale_lengths(clip, reading.native / reading.scale)


def _written_unit(settings: ExportSettings, record: dict | None) -> tuple[float | None, float]:
    """One written unit in metres, and in Blender lengths.

    The chosen unit; From File: the unit the import read (values are the file's
    again), but a format that cannot state its unit gets the unit its readers
    expect for motion from another format (``formats.default_unit``: BVH of an
    HTR or ASF/AMC import in centimetres); a rig made in Blender (no ``record``)
    keeps Blender units, read as metres (as Blender's own exporters write them).
    """
    if settings.unit != "AUTO":
        unit = unit_in_metres(settings.unit, settings.custom_unit)
        return unit, settings.scale * unit
    if record is None:
        return 1.0, settings.scale
    imported, import_scale = record.get("unit_in_metres"), float(record["scale"])
    if settings.extension is None:
        return imported, settings.scale * import_scale
    from ...core.formats import default_unit

    written = default_unit(settings.extension, record.get("format"), imported)
    change = 1.0 if written is None or imported is None else written / imported
    return written, settings.scale * import_scale * change


def joint_bones(obj: bpy.types.Object, skeleton: Skeleton) -> list[str]:
    """The armature's bone for each stored joint, with the stored hierarchy.  Bones keep their place
    in the armature when renamed, so they are matched by place first (renamed bones export under
    their new names), else by name; anything else has changed too much to write the stored layout."""
    bones = armature_data(obj).bones
    by_place = [bone.name for bone in list(bones)[:skeleton.joint_count]]
    for names in (by_place, skeleton.names):
        if all(name in bones for name in names) and len(names) == skeleton.joint_count:
            index = {name: joint for joint, name in enumerate(names)}
            parents = [-1 if (parent := bones[name].parent) is None else index.get(parent.name, -2) for name in names]
            if parents == skeleton.parents:
                return list(names)
    missing = [name for name in skeleton.names if name not in bones] or ["hierarchy changed"]
    raise ValueError(f"bones removed or re-parented since import ({', '.join(missing[:5])}): "
                     "switch off Original Layout to export the armature as it is now")


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every table keyed by joint names (ASF limits and dofs, …) keyed by the new names."""
    if not isinstance(value, dict):
        return value
    by_joint = bool(value) and all(key in names for key in value)
    return {(names[key] if by_joint else key): _renamed(item, names) for key, item in value.items()}
