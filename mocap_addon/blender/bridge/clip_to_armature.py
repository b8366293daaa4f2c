"""A core clip as a new armature with its action: what File > Import and the tools that make armatures build."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import bpy
import numpy as np

from ...core import Clip, Pose
from ...core.reduce import EulerKeys, reduce_keys
from ...core.timing import resample, split_takes
from .armature import armature_data
from .bone_mapping import detect_mapping
from .compat import assign_action
from .conversion import scene_fps, unit_in_metres
from .import_record import CAPTURES, PROPERTY, skeleton_to_json
from .read_rig import key_count, rest_matrices
from .rig_math import BoneFrames, RestRig, build_rest_rig
from .rollback import nothing_left_behind
from .write_rig import build_armature, euler_mode, write_pose


@dataclass
class ImportSettings:
    """How a clip lands in the scene (the operators' options)."""

    conversion: np.ndarray  # file axes -> Blender axes (3x3)
    scale: float = 1.0
    unit: str = "FILE"  # an import's Unit option (conversion.IMPORT_UNIT_ITEMS): AUTO and FILE take the clip's
    frame_start: int = 1
    fps_mode: str = "KEYS"
    update_scene_range: bool = False
    rotation_mode: str = "QUATERNION"
    split_takes: bool = False  # one action per take (HTR block sets), else one action with timeline markers
    reduce_tolerance: float | None = None  # key reduction's bound (a fraction of the figure's height); None: off
    custom_unit: float = 1.0  # metres per file unit when ``unit`` is CUSTOM

    def file_unit(self, clip: Clip) -> float | None:
        """One file unit in metres as this import reads it: the preset, else the clip's (Auto: the clip
        read in its guessed unit, ``core.body.stature.in_unit``), or none."""
        return clip.unit_in_metres if self.unit in ("AUTO", "FILE") else unit_in_metres(self.unit, self.custom_unit)

    def metres_per_unit(self, clip: Clip) -> float:
        """Blender units per file unit: the preset, or the file's own unit (else 1), times the scale."""
        return self.scale * (self.file_unit(clip) or 1.0)


@dataclass
class ImportResult:
    obj: bpy.types.Object
    joints: int
    frames: int
    fps: float
    seconds: float
    rig: RestRig
    scale: float
    keys: KeyReport | None = None

    def summary(self) -> str:
        motion = f"{self.frames} frames at {self.fps:g} fps" if self.frames else "skeleton only"
        reduced = f"; {self.keys.summary()}" if self.keys else ""
        return f"{self.obj.name}: {self.joints} joints, {motion} in {self.seconds:.2f} s{reduced}"


@dataclass
class KeyReport:
    """What key reduction kept: keys written against one per frame and curve, and the largest
    distance of any bone head or tail from the full import (Blender units)."""

    before: int
    after: int
    worst_error: float
    height: float

    def summary(self) -> str:
        return (f"keys {self.before} -> {self.after} ({100 * self.after / max(self.before, 1):.1f} %), "
                f"worst error {self.worst_error:.3g} ({self.worst_error / self.height:.2g} of the height)")

    def record(self, tolerance: float) -> dict[str, float | int]:
        """The figures as an ID property (plain numbers), with the tolerance asked for."""
        return {"tolerance": float(tolerance), "before": int(self.before), "after": int(self.after),
                "worst_error": float(self.worst_error), "height": float(self.height)}

    @classmethod
    def total(cls, reports: list[KeyReport]) -> KeyReport:
        """The figures of several actions (one per take) together."""
        return cls(sum(r.before for r in reports), sum(r.after for r in reports),
                   max(r.worst_error for r in reports), reports[0].height)


def import_clip(context: bpy.types.Context, clip: Clip, name: str, settings: ImportSettings,
                progress: Callable[[float], None] = lambda _: None) -> ImportResult:
    """Build the armature and its action for ``clip``; leaves nothing behind if it fails."""
    started = time.perf_counter()
    scene = context.scene
    assert scene is not None, "a scene to import into"
    file_fps = clip.fps
    with nothing_left_behind():
        if settings.fps_mode == "RESAMPLE":
            clip = resample(clip, 1.0 / scene_fps(scene))
        scale = settings.metres_per_unit(clip)
        vectors = clip.metadata.get("bone_vectors")
        rig = build_rest_rig(clip.skeleton, settings.conversion, scale,
                             None if vectors is None else np.asarray(vectors, dtype=np.float64))
        progress(0.2)
        obj = build_armature(name, clip.skeleton, rig, context)
        # Pose against the rest Blender actually stored (float32 heads and rolls), not the ideal one.
        rig.orientations, rig.heads = rest_matrices(obj, clip.skeleton.names)
        # The record keeps the unit the import read, so an export states it (a BVH read as cm exports as cm).
        armature_data(obj)[PROPERTY] = skeleton_to_json(replace(clip, unit_in_metres=settings.file_unit(clip)),
                                              settings.conversion, scale)
        detect_mapping(obj, clip.skeleton)
        progress(0.4)
        skeleton = clip.skeleton
        bone_frames = BoneFrames.of(skeleton.parents, rig, settings.conversion)
        takes = clip.take_starts()
        parts = split_takes(clip) if settings.split_takes and len(takes) > 1 else [clip]
        done = np.cumsum([0] + [part.frame_count for part in parts]) / max(clip.frame_count, 1)
        # Key reduction models the curves written: Euler angles of each bone's own basis, or quaternions.
        euler = (EulerKeys([euler_mode(order)[::-1] for order in bone_frames.euler_orders(skeleton)],
                           bone_frames.left, bone_frames.to_bone) if settings.rotation_mode == "EULER" else None)
        reports: list[KeyReport] = []

        def keys(part: Clip, number: int, action_name: str) -> bpy.types.Action:
            pose = Pose.of(part)
            reduction = None
            if settings.reduce_tolerance is not None:
                reduction = reduce_keys(pose, settings.reduce_tolerance, euler, rig.tails @ settings.conversion / scale)
            # A tolerance of 0 changes nothing, not even constant curves.
            keep = reduction.frames if reduction is not None and reduction.tolerance > 0 else None
            action = write_pose(obj, pose, name=action_name, frame_start=settings.frame_start,
                                rotation_mode=settings.rotation_mode, keep=keep,
                                progress=lambda share: progress(0.4 + 0.6 * (
                                    done[number] + (done[number + 1] - done[number]) * share)))
            if reduction is not None:
                reports.append(KeyReport(reduction.keys_before, key_count(obj, action), reduction.worst_error * scale,
                                         reduction.height * scale))
                action["mocap_reduction"] = reports[-1].record(reduction.tolerance / reduction.height)
            return action

        if clip.frame_count and len(parts) > 1:
            # One action per take, each from the start frame; the first is the armature's, all are kept.
            actions = [keys(part, n, f"{name} take {n + 1}") for n, part in enumerate(parts)]
            for action in actions:
                action.use_fake_user = True
            assign_action(obj, actions[0])
            armature_data(obj)[CAPTURES] = actions[0]
        elif clip.frame_count:
            action = keys(clip, 0, name)
            armature_data(obj)[CAPTURES] = action
            if len(takes) > 1:
                action["mocap_takes"] = takes
        if settings.fps_mode == "SCENE_FPS":
            fps = max(round(file_fps), 1)
            scene.render.fps, scene.render.fps_base = fps, fps / file_fps
        if settings.update_scene_range and clip.frame_count:
            scene.frame_start = settings.frame_start
            scene.frame_end = settings.frame_start + parts[0].frame_count - 1
        if len(parts) == 1 and len(takes) > 1:
            for number, first in enumerate(takes):
                scene.timeline_markers.new(f"{name} take {number + 1}", frame=settings.frame_start + first)
        progress(1.0)
    return ImportResult(obj, skeleton.joint_count, clip.frame_count, 1.0 / clip.frame_time,
                        time.perf_counter() - started, rig, scale, KeyReport.total(reports) if reports else None)
