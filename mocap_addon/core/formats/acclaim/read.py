"""Reading ASF/AMC files into clips: each bone a joint at its start, with its axis frame as rest frame."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ...errors import MocapFormatError
from ...files import read_regular_file
from ...model import ROTATION_CHANNELS, Clip, Skeleton
from ...options import ACCLAIM_LENGTHS
from ...rotations import euler_to_matrix
from ..textio import MAGNITUDE_LIMIT, within_limit
from .amc import parse_amc
from .asf import AsfSkeleton, Bone, applied_order, file_layout, parse_asf


def read_asf(path: str | os.PathLike[str], *, length_reading: str = "cmu") -> Clip:
    """The ASF's skeleton in its rest pose, as a clip with no frames."""
    asf = parse_asf(read_regular_file(path), os.fspath(path))
    return _clip(asf, np.zeros((0, 0)), os.fspath(path), length_reading, start_frame=1, frame_time=1 / 120,
                 warnings_found=[], angle_degrees=True)


def find_skeleton(amc_path: str | os.PathLike[str]) -> str:
    """The .asf beside an .amc: same stem, or the stem up to its last '_' (CMU) or first '.'."""
    folder, name = os.path.split(os.fspath(amc_path))
    stem = os.path.splitext(name)[0]
    candidates = list(dict.fromkeys([stem, stem.rsplit("_", 1)[0], stem.split(".", 1)[0]]))
    entries = {entry.lower(): entry for entry in os.listdir(folder or ".")}
    for candidate in candidates:
        found = entries.get(f"{candidate}.asf".lower())
        if found:
            return os.path.join(folder, found)
    raise MocapFormatError(f"no skeleton (.asf) found beside it; tried {', '.join(c + '.asf' for c in candidates)}",
                           amc_path, None)


def read_amc(path: str | os.PathLike[str], skeleton: str | os.PathLike[str] | None = None, *,
             length_reading: str = "cmu", lenient: bool = False, fps: float = 120.0) -> Clip:
    """Read an AMC with its ASF (found beside it unless given).  AMC has no frame rate: ``fps``."""
    asf_path = os.fspath(skeleton) if skeleton is not None else find_skeleton(path)
    asf = parse_asf(read_regular_file(asf_path), asf_path)
    values, first, degrees, notes = parse_amc(read_regular_file(path), asf, os.fspath(path), lenient=lenient)
    clip = _clip(asf, values, os.fspath(path), length_reading, first, 1.0 / fps, notes, degrees)
    clip.metadata["skeleton_source"] = asf_path
    return clip


def _clip(asf: AsfSkeleton, values: np.ndarray, path: str, length_reading: str, start_frame: int,
          frame_time: float, warnings_found: list[str], angle_degrees: bool) -> Clip:
    """Build the model clip: joints in parent-before-child order, motion from dof values in file order."""
    ACCLAIM_LENGTHS.check(length_reading)
    factor = asf.length_unit if length_reading == "spec" else 1.0
    order = _parent_first(asf.parents)
    bones = [asf.bones[i] for i in order]
    position = {bone: n for n, bone in enumerate(order)}
    parents = [-1 if asf.parents[i] < 0 else position[asf.parents[i]] for i in order]
    axes = _axis_frames(bones, asf.angle_in_degrees)
    # The root's frame is its orientation; it starts at its position.
    file_directions = np.array([b.direction for b in bones])
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported just below
        vectors = np.array([b.length for b in bones])[:, None] * file_directions * factor
        vectors[0] = 0.0
        motion = _arrange(values, bones, order, asf, factor, angle_degrees)
        root_position = file_directions[0] * factor
    if not (within_limit(vectors) and within_limit(motion) and within_limit(root_position)):
        # Only a length unit read as a factor ("spec") can take lengths past the limit.
        raise MocapFormatError(f"lengths overflow the limit {MAGNITUDE_LIMIT:g} once multiplied by the length "
                               f"unit {asf.length_unit:g}",
                               asf.path, asf.length_unit_line)
    into_own_frame = np.swapaxes(axes, 1, 2)  # world (bone axis frame) vectors -> the joint's own frame
    local_vectors = (into_own_frame @ vectors[..., None])[..., 0]
    parent_index = np.array(parents)
    rooted = parent_index < 0
    parent_frame = into_own_frame[np.maximum(parent_index, 0)]
    rest = np.where(rooted[:, None, None], axes, parent_frame @ axes)
    offsets = np.where(rooted[:, None], root_position,
                       (parent_frame @ vectors[np.maximum(parent_index, 0), :, None])[..., 0])
    has_child = np.zeros(len(bones), dtype=bool)
    has_child[parent_index[~rooted]] = True
    end_sites = [np.zeros((0, 3)) if has_child[j] or not vectors[j].any() else local_vectors[j][None]
                 for j in range(len(bones))]
    layouts = [file_layout(b.dof) for b in bones]
    directions = (into_own_frame @ file_directions[..., None])[..., 0]
    skeleton = Skeleton([b.name for b in bones], parents, offsets, layouts, end_sites, rest,
                        np.zeros(len(bones), dtype=bool), np.array([p >= 0 for p in parents]), directions)
    unit = 0.0254 / asf.length_unit if length_reading == "cmu" else None
    metadata = _metadata(asf, bones, path, length_reading, warnings_found, local_vectors)
    return Clip(skeleton, motion, frame_time, start_frame, unit, "Y", metadata)


def _axis_frames(bones: list[Bone], degrees: bool) -> np.ndarray:
    """Each bone's axis frame ``C`` (world rotation), from angles listed in the order they are applied
    (composition runs the other way)."""
    to_radians = np.pi / 180 if degrees else 1.0
    axes = np.empty((len(bones), 3, 3))
    by_order: dict[str, list[int]] = {}
    for joint, bone in enumerate(bones):
        by_order.setdefault(bone.axis_order, []).append(joint)
    for axis_order, joints in by_order.items():
        angles = np.array([bones[j].axis_angles[::-1] for j in joints]) * to_radians
        axes[joints] = euler_to_matrix(angles, applied_order(axis_order))
    return axes


def _metadata(asf: AsfSkeleton, bones: list[Bone], path: str, length_reading: str, warnings_found: list[str],
              bone_vectors: np.ndarray) -> dict[str, Any]:
    """What the clip keeps of the files: bone vectors, and header, limits, dofs and ids for writing them again."""
    return {
        "format": "amc", "source": path, "warnings": warnings_found, "length_reading": length_reading,
        "bone_vectors": bone_vectors.tolist(),
        "asf": {"header": asf.header, "length_unit": asf.length_unit, "root_axis": bones[0].axis_order,
                "limits": {b.name: [list(bounds) for bounds in b.limits] for b in bones if b.limits},
                "dof": {b.name: b.dof for b in bones}, "ids": {b.name: b.extras.get("id") for b in bones}},
    }


def _parent_first(parents: list[int]) -> list[int]:
    """Bone indices ordered so each parent precedes its children (depth first, file order)."""
    children: list[list[int]] = [[] for _ in parents]
    for child, parent in enumerate(parents):
        if parent >= 0:
            children[parent].append(child)
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(children[node]))
    return order


def _arrange(values: np.ndarray, bones: list[Bone], order: list[int], asf: AsfSkeleton, factor: float,
             angle_degrees: bool) -> np.ndarray:
    """Motion columns in model layout from AMC values laid out per file bone order and dof order."""
    widths = [len(b.dof) for b in asf.bones]
    starts = np.concatenate([[0], np.cumsum(widths)])
    columns = []
    scale = []
    for index, bone in zip(order, bones):
        layout = file_layout(bone.dof)
        for token in layout:
            columns.append(int(starts[index]) + bone.dof.index(token))
            if token in ROTATION_CHANNELS:
                scale.append(1.0 if angle_degrees else 180 / np.pi)
            else:
                scale.append(factor)
    if values.size == 0:
        return np.zeros((values.shape[0], len(columns)))
    return values[:, columns] * np.array(scale)
