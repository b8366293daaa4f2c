"""Reading a rig: the one place that turns an armature (its bones and rest, the record its import stored,
its action and frame range) into the core's skeleton, pose and clip.

A rig this add-on imported is read in its *clip space*: the file's own
skeleton, axes and units (its import record, :mod:`.import_record`); any other
rig as a skeleton made from its bones, with the exporters' default axes (-Z
forward, Y up) in Blender units.  :func:`armature_skeleton` and
:func:`armature_pose` give what the tools work on, :func:`export_clip` what
File > Export writes (in the unit chosen); :mod:`.write_rig` is the exact
inverse.  Keys are read in bulk (``foreach_get``) as quaternions: Euler-mode
bones convert at their own curves only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import bpy
import numpy as np

from ...core import Clip, Pose, Skeleton, rotations
from ...core.model import SCALE_CHANNEL
from ...core.rotations import quaternion_continuity
from ...core.transforms import rest_pose
from ...core.units import scale_lengths
from .armature import armature_data, bone_path, pose_bones
from .compat import LINEAR, Channels, id_property
from .conversion import DEFAULT_AXES, conversion_matrix, scene_fps, unit_in_metres
from .import_record import CAPTURES, FRAME_TIME, PROPERTY, skeleton_from_json
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


def recorded(obj: bpy.types.Object) -> tuple[Skeleton, dict[str, Any]] | None:
    """The skeleton and the rest of the record stored on ``obj``'s import, ``None`` for an armature this
    add-on did not import."""
    stored = id_property(armature_data(obj), PROPERTY)
    return None if stored is None else skeleton_from_json(str(stored))


def captured_action(obj: bpy.types.Object) -> bpy.types.Action | None:
    """The action ``obj`` was imported with (kept with the file, followed through renames), whatever it plays
    now; ``None`` for a rig not imported here or whose import action was deleted."""
    action = id_property(armature_data(obj), CAPTURES)
    return action if isinstance(action, bpy.types.Action) else None


def armature_action(obj: bpy.types.Object | bpy.types.Armature) -> bpy.types.Action | None:
    """The action ``obj`` (an armature object, or an armature's data) plays, if any."""
    animation = obj.animation_data
    return animation.action if animation else None


def action_frames(action: bpy.types.Action) -> tuple[int, int]:
    """The first and last frame of ``action``'s keys."""
    return round(action.frame_range[0]), round(action.frame_range[1])


def action_frame_time(action: bpy.types.Action, default: float) -> float:
    """Seconds per frame of ``action``: as the add-on noted when it wrote the action, else ``default``."""
    return float(id_property(action, FRAME_TIME, default))


def keyed_curve(owner: bpy.types.Object | bpy.types.Armature, path: str, index: int = 0) -> bpy.types.FCurve | None:
    """The F-curve of the action ``owner`` plays that animates its ``path`` [``index``], if any."""
    action = armature_action(owner)
    return None if action is None else Channels(action, owner, create=False).find(path, index)


def frame_range(obj: bpy.types.Object, settings: ExportSettings,
                action: bpy.types.Action | None = None) -> np.ndarray:
    """Frames to export: the settings' range, else the action's (the armature's own unless given), else the
    scene's current frame."""
    action = action or armature_action(obj)
    if action is not None:
        first, last = action_frames(action)
    else:
        first = last = _scene().frame_current
    first = first if settings.frame_start is None else settings.frame_start
    last = last if settings.frame_end is None else settings.frame_end
    return np.arange(first, max(first, last) + 1, dtype=np.float64)


def key_points(fcurve: bpy.types.FCurve) -> tuple[np.ndarray, np.ndarray]:
    """The frames and values of ``fcurve``'s keys, read in bulk."""
    co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    return co[0::2].astype(np.float64), co[1::2].astype(np.float64)


def sample_fcurve(fcurve: bpy.types.FCurve, frames: np.ndarray) -> np.ndarray:
    """``fcurve`` at ``frames``: from the keys directly where possible, else Blender's evaluation."""
    keys = fcurve.keyframe_points
    count = len(keys)
    if count == 0:
        return np.full(len(frames), fcurve.evaluate(float(frames[0])) if len(frames) else 0.0)
    x, y = key_points(fcurve)
    plain = len(fcurve.modifiers) == 0 and fcurve.extrapolation == "CONSTANT"
    if plain and np.array_equal(frames, x):  # a curve passes through its keys, whatever the interpolation
        return y
    interpolation = np.empty(count, dtype=np.uint8)  # the enum's own size: copied straight
    keys.foreach_get("interpolation", interpolation)
    if plain and np.all(interpolation[:-1] == LINEAR):
        return np.interp(frames, x, y)
    return np.array([fcurve.evaluate(float(f)) for f in frames])


def curves_by_path(obj: bpy.types.Object | bpy.types.Armature,
                   action: bpy.types.Action) -> dict[tuple[str, int], bpy.types.FCurve]:
    """The F-curves ``obj`` reads from ``action``, by (data path, index)."""
    return {(fc.data_path, fc.array_index): fc for fc in Channels(action, obj, create=False).all()}


def key_count(obj: bpy.types.Object | bpy.types.Armature, action: bpy.types.Action) -> int:
    """How many keys the F-curves ``obj`` reads from ``action`` hold."""
    return sum(len(fcurve.keyframe_points) for fcurve in Channels(action, obj, create=False).all())


def has_keys(curves: dict[tuple[str, int], bpy.types.FCurve], bone_name: str, prop: str) -> bool:
    """Whether any F-curve in ``curves`` animates ``prop`` (e.g. ``"location"``) of the named pose bone."""
    path = bone_path(bone_name, prop)
    return any((path, index) in curves for index in range(4))


def read_bone(pose_bone: bpy.types.PoseBone, curves: dict[tuple[str, int], bpy.types.FCurve],
              frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One bone's ``matrix_basis`` rotation (unit quaternions ``(F, 4)``), location ``(F, 3)`` and uniform
    scale ``(F,)`` at ``frames``, from its F-curves (its current value where a channel has none)."""
    name = pose_bone.name
    count = len(frames)

    def channel(prop: str, size: int, current: object) -> np.ndarray:
        path = bone_path(name, prop)
        fallback = np.array(current, dtype=np.float64)
        return np.stack([sample_fcurve(curves[(path, i)], frames) if (path, i) in curves
                         else np.full(count, fallback[i]) for i in range(size)], axis=-1)

    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        turns = channel("rotation_quaternion", 4, pose_bone.rotation_quaternion)
        turns /= np.maximum(np.linalg.norm(turns, axis=1, keepdims=True), 1e-300)
    elif mode == "AXIS_ANGLE":
        axis_angle = channel("rotation_axis_angle", 4, pose_bone.rotation_axis_angle)
        half = 0.5 * axis_angle[:, 0]
        axis = axis_angle[:, 1:] / np.maximum(np.linalg.norm(axis_angle[:, 1:], axis=1, keepdims=True), 1e-12)
        turns = np.concatenate([np.cos(half)[:, None], np.sin(half)[:, None] * axis], axis=1)
    else:
        ours = mode[::-1]
        by_axis = channel("rotation_euler", 3, pose_bone.rotation_euler)
        turns = rotations.euler_to_quaternion(by_axis[:, ["XYZ".index(a) for a in ours]], ours)
    scale = np.cbrt(np.prod(channel("scale", 3, pose_bone.scale), axis=1))
    return turns, channel("location", 3, pose_bone.location), scale


def rest_matrices(obj: bpy.types.Object, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Rest orientations (J, 3, 3) and heads (J, 3) of the named bones, in armature space."""
    bones = armature_data(obj).bones
    matrices = np.array([np.array(bones[name].matrix_local) for name in names]).reshape(-1, 4, 4)
    return matrices[:, :3, :3], matrices[:, :3, 3]


def posed_turns(obj: bpy.types.Object) -> dict[str, np.ndarray]:
    """Each bone's pose rotation relative to its rest ``(3, 3)``, armature space, as Blender evaluated it last
    (update the view layer first), whatever the bone's scale."""
    turns = {}
    for pose_bone in pose_bones(obj):
        posed = np.array(pose_bone.matrix)[:3, :3]
        rest = np.array(pose_bone.bone.matrix_local)[:3, :3]
        posed /= np.linalg.norm(posed, axis=0)  # rotation only, whatever the bone's scale
        turns[pose_bone.name] = posed @ np.linalg.inv(rest)
    return turns


def armature_bone_frames(obj: bpy.types.Object, skeleton: Skeleton, conversion: np.ndarray) -> BoneFrames:
    """The constant matrices between ``skeleton``'s joints (file axes) and ``obj``'s bones of the same names."""
    orientations, heads = rest_matrices(obj, skeleton.names)
    rig = RestRig(heads, heads, orientations, conversion @ rest_pose(skeleton)[0])
    return BoneFrames.of(skeleton.parents, rig, conversion)


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


def skeleton_from_bones(obj: bpy.types.Object, settings: ExportSettings, scale: float,
                        curves: dict[tuple[str, int], bpy.types.FCurve] | None = None) -> Skeleton:
    """A BVH-style skeleton for any armature: three rotations per bone in the chosen order, and
    position channels (replacing the offset) on roots and on every bone with location keys in ``curves``."""
    bones = sorted(armature_data(obj).bones, key=lambda b: len(b.parent_recursive))
    names = [b.name for b in bones]
    parents = [names.index(b.parent.name) if b.parent else -1 for b in bones]
    moves = [p < 0 or has_keys(curves or {}, name, "location") for name, p in zip(names, parents)]
    return skeleton_of_bones(names, parents, *rest_points(obj, names), settings.conversion.T / scale, moves,
                             settings.rotation_order)


def rest_points(obj: bpy.types.Object, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Rest heads and tails ``(J, 3)`` of the named bones, in armature space."""
    bones = armature_data(obj).bones
    return (np.array([bones[name].head_local for name in names]).reshape(-1, 3),
            np.array([bones[name].tail_local for name in names]).reshape(-1, 3))


def skeleton_of_bones(names: list[str], parents: list[int], heads: np.ndarray, tails: np.ndarray,
                      back: np.ndarray, moves: list[bool], rotation_order: str = "ZXY") -> Skeleton:
    """A BVH-style skeleton of bones given by rest ``heads`` and ``tails`` (armature space; ``back`` takes
    them to the clip's axes and units): three rotations per joint in ``rotation_order``, position channels
    (replacing the offset) where ``moves``, and an end site along each leaf bone."""
    offsets = np.array([(heads[j] - (heads[p] if p >= 0 else 0.0)) @ back.T for j, p in enumerate(parents)])
    rotation = tuple(f"r{axis.lower()}" for axis in rotation_order)
    channels = [(("tx", "ty", "tz") if move else ()) + rotation for move in moves]
    leaves = set(range(len(names))) - set(parents)
    end_sites = [np.reshape((tails[j] - heads[j]) @ back.T, (-1, 3)) if j in leaves else np.zeros((0, 3))
                 for j in range(len(names))]
    return Skeleton(names, parents, offsets, channels, end_sites, position_replaces_offset=np.array(moves))


def bone_skeleton(obj: bpy.types.Object) -> Skeleton:
    """A core skeleton of the armature's bones: the import record's where its names are still the bones',
    else one read from the bones themselves (armature space)."""
    stored = recorded(obj)
    if stored is not None:
        skeleton = stored[0]
        if set(skeleton.names) == {bone.name for bone in armature_data(obj).bones}:
            return skeleton
    return skeleton_from_bones(obj, ExportSettings(conversion=np.eye(3)), 1.0)


def clip_space(obj: bpy.types.Object) -> tuple[np.ndarray, float]:
    """File axes -> Blender axes (3x3) and Blender units per clip unit, as File > Export uses them."""
    stored = recorded(obj)
    if stored is None:
        return conversion_matrix(*DEFAULT_AXES), 1.0
    record = stored[1]
    return np.array(record["conversion"], dtype=np.float64), float(record["scale"])


def armature_skeleton(obj: bpy.types.Object) -> Skeleton:
    """The armature's skeleton in clip space: its import record's (under the bones' current names), else one
    made from its bones; the skeleton :func:`armature_pose` gives."""
    stored = recorded(obj)
    if stored is not None:
        return replace(stored[0], names=joint_bones(obj, stored[0]))
    conversion, scale = clip_space(obj)
    return skeleton_from_bones(obj, ExportSettings(conversion), scale)


def clip_tails(obj: bpy.types.Object, skeleton: Skeleton) -> np.ndarray:
    """The rest tails ``(J, 3)`` of ``skeleton``'s bones (named as ``obj``'s) in clip space."""
    conversion, scale = clip_space(obj)
    return rest_points(obj, skeleton.names)[1] @ conversion / scale


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
    stored = recorded(obj)
    record: dict[str, Any] = {} if stored is None else stored[1]
    import_scale = 1.0 if stored is None else float(record["scale"])
    # Blender lengths per written unit; an imported skeleton is first posed in its own file units.
    unit, scale = _written_unit(settings, None if stored is None else record)
    action = action or armature_action(obj)
    if action is None:
        raise ValueError(f"{obj.name} has no action to export")
    curves = curves_by_path(obj, action)
    metadata = dict(record.get("metadata", {}))
    layout = stored[0] if stored is not None and settings.use_import_layout else None
    if layout is None:
        skeleton = skeleton_from_bones(obj, settings, scale, curves)
        metadata = {}
    else:
        names = joint_bones(obj, layout)
        skeleton = replace(layout, names=names)
        metadata = _renamed(metadata, dict(zip(layout.names, names)))
    native = scale if layout is None else import_scale
    frames = frame_range(obj, settings, action)
    frame_time = action_frame_time(action, record.get("frame_time", 1.0 / scene_fps(_scene())))
    metadata["warnings"] = []
    # Takes are kept with the action they were imported into, as frames after its first key.
    metadata.pop("takes", None)
    first_key = action_frames(action)[0]
    if id_property(action, "mocap_takes"):
        metadata["takes"] = [int(t) + first_key - int(frames[0]) for t in action["mocap_takes"]]
    fields = {"start_frame": int(record.get("start_frame", 1)),
              "unit_in_metres": unit,
              "up_axis": record.get("up_axis", "Y"), "metadata": metadata}
    return ArmatureReading(obj, skeleton, frames, curves, armature_bone_frames(obj, skeleton, settings.conversion),
                           native, scale, frame_time, fields)


def armature_pose(obj: bpy.types.Object, action: bpy.types.Action | None = None) -> Pose:
    """The armature's animation (``action``, else its own) over the action's frame range as the local
    pose of every joint of :func:`armature_skeleton`: the bones as Blender shows them (turns and moves
    a joint's channels could not hold included), the exact inverse of :func:`write_pose`.  Its
    ``start_frame`` is the first Blender frame, so :func:`write_pose` puts keys back where they were."""
    settings = ExportSettings(clip_space(obj)[0])
    pose = read_armature(obj, settings, action).pose()
    pose.start_frame = int(frame_range(obj, settings, action)[0])
    return pose


def target_body(obj: bpy.types.Object) -> Skeleton | Pose:
    """``obj`` as the target of a retarget: the pose of the captures it was imported with (their floor, how
    its bones twist), else its skeleton; never what it plays now."""
    captures = captured_action(obj)
    return armature_skeleton(obj) if captures is None else armature_pose(obj, captures)


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


def source_summary(obj: bpy.types.Object | None) -> list[str]:
    """Lines describing the armature's stored import record (empty when it has none)."""
    if obj is None or obj.type != "ARMATURE" or (stored := recorded(obj)) is None:
        return []
    from ...core.formats import file_formats

    record = stored[1]
    timing = "skeleton only" if record.get("frame_count") == 0 else f"{1.0 / record['frame_time']:g} fps"
    labels = {file_format.key: file_format.label for file_format in file_formats()}
    kind = str(record.get("format") or "?")
    label = labels.get(kind, kind.upper())
    lines = [f"{label}: {bpy.path.basename(record.get('source') or '')}",
             f"{len(record['names'])} joints, {timing}"]
    action = armature_action(obj)
    if action is not None:
        first, last = action_frames(action)
        lines.append(f"frames {first}-{last}")
    lines += [f"warning: {w}" for w in record.get("metadata", {}).get("warnings", [])]
    return lines
