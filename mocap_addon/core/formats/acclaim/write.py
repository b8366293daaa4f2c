"""Writing ASF/AMC: a clip re-planned as ASF bones (dofless bones where a child starts elsewhere), then the text.

Lengths are written in the clip's own unit, stated as ``:units length
0.0254 / unit`` (one unit = 1/length inch, as the reader's CMU reading takes
it; a metre where the clip states none).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from ...bones import choose_tails
from ...errors import MocapWriteError
from ...kinematics import FRAME_BLOCK, last_angles, local_transforms
from ...model import ROTATION_CHANNELS, TRANSLATION_CHANNELS, Clip, Skeleton, encode_motion
from ...rotations import matrix_to_euler
from ...transforms import rest_pose
from ..textio import atomic_write, number_text, printable, quote, require_writable, safe_names
from .asf import applied_order, direction_and_length, file_layout

# A bone name is one word without the characters ASF reads as separators, and no keyword (":name").
_UNSAFE_IN_NAMES = re.compile(r"[\s,()#]+|^:")
_FRAMES_PER_PIECE = 4096  # frames formatted at a time when writing: the text is streamed, never held whole


@dataclass
class _Plan:
    """An ASF/AMC layout for a clip: the model skeleton (dummy bones added) and per-bone ASF data."""
    clip: Clip
    axes: np.ndarray  # world rest orientation of each joint (J, 3, 3)
    vectors: np.ndarray  # world rest bone vector of each joint (J, 3)


@dataclass
class _Bones:
    """The ASF bones for a skeleton's joints, parent before child: a joint's own bone, preceded by a
    dofless bone from its parent bone's end where the joint starts elsewhere."""
    names: list[str]
    parents: list[int]
    source: list[int]  # the joint each bone belongs to (a dummy: the parent joint whose end it starts at)
    dummy_of: list[int]  # for a dummy, the joint it leads to; -1 for a joint's own bone


def write_amc(clip: Clip, path: str | os.PathLike[str], *, precision: int = 6) -> None:
    """Write ``clip`` as ``<stem>.amc`` and its skeleton as ``<stem>.asf`` (both atomically)."""
    target = os.fspath(path)
    stem = os.path.splitext(target)[0]
    plan = acclaim_form(clip)
    asf_path = stem + ".asf"
    atomic_write(asf_path, format_asf(plan, os.path.basename(stem)).encode("utf-8"))
    if os.path.splitext(target)[1].lower() == ".amc":
        atomic_write(target, amc_pieces(plan, os.path.basename(asf_path), precision))


def acclaim_form(clip: Clip) -> _Plan:
    """The clip as ASF/AMC holds it: each joint a bone from its origin to where its children
    start; a child elsewhere gets a dofless bone from there (as CMU's hip joints).
    Rest frames are kept as the bones' axes, so frame rotations stay as they are."""
    require_writable(clip, "ASF/AMC")
    skeleton = clip.skeleton
    root_names = [skeleton.names[j] for j, parent in enumerate(skeleton.parents) if parent < 0]
    if len(root_names) > 1:
        raise MocapWriteError(f"cannot write ASF/AMC: it holds one root, the clip has {len(root_names)}: "
                              + ", ".join(quote(n) for n in root_names[:3]) + (", ..." if len(root_names) > 3 else ""))
    rotations, heads = rest_pose(skeleton)
    vectors = _bone_vectors(clip, rotations, heads)
    bones = _asf_bones(skeleton, heads, vectors)
    source_array = np.array(bones.source)
    is_dummy = np.array(bones.dummy_of) >= 0
    axes = rotations[source_array]
    new_vectors = np.where(is_dummy[:, None],
                           heads[np.maximum(bones.dummy_of, 0)] - (heads + vectors)[source_array],
                           vectors[source_array])
    target = _asf_skeleton(skeleton, bones, is_dummy, axes, heads, new_vectors)
    motion = _asf_motion(clip, target, bones, is_dummy, rotations, axes)
    result = Clip(target, motion, clip.frame_time, clip.start_frame, clip.unit_in_metres, clip.up_axis,
                  dict(clip.metadata))
    require_writable(result, "ASF/AMC")
    if not (np.isfinite(axes).all() and np.isfinite(new_vectors).all()):
        raise MocapWriteError("cannot write ASF/AMC: bone axes or lengths overflow (the skeleton is too large)")
    return _Plan(result, axes, new_vectors)


def _bone_vectors(clip: Clip, rotations: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """Each joint's world rest bone vector: to the tail ``choose_tails`` picks, or the clip's stored
    bone vector; none for roots (their children start at the root) nor for leaves whose tail is a stub."""
    skeleton = clip.skeleton
    stored = clip.metadata.get("bone_vectors")
    sites = [heads[j] + (rotations[j] @ e.T).T for j, e in enumerate(skeleton.end_sites)]
    tails = choose_tails(skeleton.parents, heads, sites, np.eye(3)[1])
    if stored is not None and len(stored) == skeleton.joint_count:
        given = (rotations @ np.asarray(stored, dtype=np.float64)[..., None])[..., 0]
        tails = np.where(np.linalg.norm(given, axis=1)[:, None] > 0, heads + given, tails)
    vectors = np.where(np.array(skeleton.parents)[:, None] < 0, 0.0, tails - heads)
    leaf = np.ones(skeleton.joint_count, dtype=bool)
    leaf[[p for p in skeleton.parents if p >= 0]] = False
    no_site = np.array([len(e) == 0 for e in skeleton.end_sites])
    vectors[leaf & no_site & (stored is None)] = 0.0
    return vectors


def _asf_bones(skeleton: Skeleton, heads: np.ndarray, vectors: np.ndarray) -> _Bones:
    """The bones, a dummy before each joint that does not start at its parent bone's end."""
    extent = max(float(np.ptp(heads, axis=0).max()), 1e-9)
    names, parents, source, dummy_of = [], [], [], []
    index_of: dict[int, int] = {}
    for joint, parent in enumerate(skeleton.parents):
        new_parent = -1 if parent < 0 else index_of[parent]
        if parent >= 0 and np.linalg.norm(heads[joint] - (heads[parent] + vectors[parent])) > 1e-9 * extent:
            names.append(f"{skeleton.names[parent]}_to_{skeleton.names[joint]}")
            parents.append(new_parent)
            source.append(parent)
            dummy_of.append(joint)
            new_parent = len(names) - 1
        names.append(skeleton.names[joint])
        parents.append(new_parent)
        source.append(joint)
        dummy_of.append(-1)
        index_of[joint] = len(names) - 1
    # Joint 0 is the root, which ASF calls "root": a later joint of that name is renamed.
    return _Bones(safe_names(["root", *names[1:]], _UNSAFE_IN_NAMES, fallback="bone"), parents, source, dummy_of)


def _asf_skeleton(skeleton: Skeleton, bones: _Bones, is_dummy: np.ndarray, axes: np.ndarray, heads: np.ndarray,
                  vectors: np.ndarray) -> Skeleton:
    """The model skeleton of the ASF bones: rest rotations from the axes, offsets along the parent bone.
    A dummy starts at its parent bone's end; the real joint after it starts at the dummy's end."""
    count = len(bones.names)
    rest = np.empty((count, 3, 3))
    offsets = np.empty((count, 3))
    for joint, parent in enumerate(bones.parents):
        if parent < 0:
            rest[joint], offsets[joint] = axes[joint], heads[bones.source[joint]]
        else:
            rest[joint] = axes[parent].T @ axes[joint]
            offsets[joint] = axes[parent].T @ vectors[parent]
    layouts: list[tuple[str, ...]] = []
    for joint in range(count):
        if is_dummy[joint]:
            layouts.append(())
            continue
        layout = skeleton.channels[bones.source[joint]]
        moved = any(c in TRANSLATION_CHANNELS or c == "l" for c in layout)
        rotation_tokens = tuple(c for c in layout if c in ROTATION_CHANNELS)
        layouts.append((TRANSLATION_CHANNELS if moved else ()) + rotation_tokens)
    has_child = np.zeros(count, dtype=bool)
    has_child[[p for p in bones.parents if p >= 0]] = True
    end_sites = [(axes[j].T @ vectors[j])[None] if not has_child[j] and vectors[j].any() else np.zeros((0, 3))
                 for j in range(count)]
    roots = np.array([p < 0 for p in bones.parents])
    return Skeleton(bones.names, bones.parents, offsets, layouts, end_sites, rest, np.zeros(count, dtype=bool),
                    ~roots, np.zeros((count, 3)))


def _asf_motion(clip: Clip, target: Skeleton, bones: _Bones, is_dummy: np.ndarray, rotations: np.ndarray,
                axes: np.ndarray) -> np.ndarray:
    """The clip's motion as channels of the ASF bones: the same world rotations under the bones' axes,
    encoded a block of frames at a time (each continuing from the last), so a long take's per-frame
    matrices are never held whole."""
    blocks: list[np.ndarray] = []
    for first in range(0, max(clip.frame_count, 1), FRAME_BLOCK):
        part = replace(clip, motion=clip.motion[first:first + FRAME_BLOCK])
        reference = None if not blocks else last_angles(target, blocks[-1][-1])
        blocks.append(_asf_motion_block(part, target, bones, is_dummy, rotations, axes, reference))
    return np.concatenate(blocks)


def _asf_motion_block(clip: Clip, target: Skeleton, bones: _Bones, is_dummy: np.ndarray, rotations: np.ndarray,
                      axes: np.ndarray, reference: np.ndarray | None) -> np.ndarray:
    """:func:`_asf_motion` for one block of frames, its angles starting nearest ``reference``."""
    skeleton = clip.skeleton
    rotation, translation, scales = local_transforms(clip)
    dropped = [j for j, c in enumerate(skeleton.channels) if "s" in c]
    if np.any(np.abs(scales[:, dropped] - 1.0) > 1e-5):
        raise MocapWriteError("cannot write ASF/AMC: the clip scales joints, which ASF/AMC cannot hold")
    count = target.joint_count
    frame_rotation = np.broadcast_to(np.eye(3), (clip.frame_count, count, 3, 3)).copy()
    channel_translation = np.zeros((clip.frame_count, count, 3))
    for joint in np.flatnonzero(~is_dummy):
        old = bones.source[joint]
        old_parent = skeleton.parents[old]
        parent = bones.parents[joint]
        # Same world rotation under the new rest rotation G0_p^T G0_j: frame = G0_j^T G0_p R_old.
        parent_axes = rotations[old_parent] if old_parent >= 0 else np.eye(3)
        frame_rotation[:, joint] = axes[joint].T @ parent_axes @ rotation[:, old]
        # Translations stay in the old parent's frame (a dummy turns with it) less the dummy's offset.
        dummy_parent = parent >= 0 and is_dummy[parent]
        step = translation[:, old] - (target.offsets[parent] if dummy_parent else 0.0)
        moved = step - target.offsets[joint]
        channel_translation[:, joint] = moved if parent < 0 else moved @ target.rest_rotations[joint]
    return encode_motion(target, frame_rotation, channel_translation, reference=reference)


def _listed_angles(matrices: np.ndarray, order: str = "XYZ") -> np.ndarray:
    """Angles in degrees listed in application ``order`` (as ASF writes them) for rotation matrices."""
    return np.degrees(matrix_to_euler(matrices, applied_order(order)))[..., ::-1]


def _number_text(values: np.ndarray, precision: int) -> str:
    return " ".join(number_text(v, precision) for v in values)


def unit_note(clip: Clip) -> str | None:
    """The ASF states the clip's unit (:func:`length_unit`); a clip that states none is written in metres."""
    return "no unit known: ASF written with one unit = 1 m" if clip.unit_in_metres is None else None


def length_unit(clip: Clip) -> float:
    """The ASF ``:units length`` that states the clip's unit as this module reads it (one unit is
    1/length inch); a clip that states no unit is taken as metres, as Blender takes it."""
    return 0.0254 / (clip.unit_in_metres or 1.0)


def format_asf(plan: _Plan, name: str, precision: int = 10) -> str:
    """ASF text for a planned clip (lengths in the clip's own unit, angles in degrees, ``precision``
    significant digits: the skeleton is small, so it is written finely)."""
    clip = plan.clip
    asf_meta = clip.metadata.get("asf", {}) if clip.metadata.get("format") == "amc" else {}
    unit = length_unit(clip)
    if not 0 < unit < math.inf:
        raise MocapWriteError(f"cannot write ASF: a unit of {clip.unit_in_metres} m has no length unit")
    lines = ["# Acclaim skeleton, written by Mocap I/O", ":version 1.10", f":name {name}", ":units",
             "  mass 1.0", f"  length {number_text(unit, 9)}", "  angle deg", ":documentation"]
    lines += [f"   {line}" for line in asf_meta.get("header", {}).get("documentation", [])] or ["   Mocap I/O"]
    axis_angles = _listed_angles(plan.axes)
    skeleton = clip.skeleton
    root_dof = file_layout(list(skeleton.channels[0]))
    lines += [":root", "   order " + " ".join(t.upper() for t in root_dof), "   axis XYZ",
              "   position " + _number_text(skeleton.offsets[0], precision),
              "   orientation " + _number_text(axis_angles[0], precision), ":bonedata"]
    for joint in range(1, skeleton.joint_count):
        lines += _bone_block(plan, joint, axis_angles[joint], asf_meta.get("limits", {}), precision)
    lines += [":hierarchy", "  begin"]
    for joint, children in enumerate(skeleton.child_lists()):
        if children:
            names = " ".join(skeleton.names[c] for c in children)
            lines.append(f"    {'root' if joint == 0 else skeleton.names[joint]} {names}")
    lines += ["  end"]
    return "\n".join(lines) + "\n"


def _bone_block(plan: _Plan, joint: int, axis_angles: np.ndarray, limits: dict[str, list[list[float]]],
                precision: int) -> list[str]:
    """A joint's ``begin`` .. ``end`` block of ``:bonedata``, with the limits the clip was read with."""
    skeleton = plan.clip.skeleton
    direction, length = direction_and_length(plan.vectors[joint])
    if not np.isfinite(length):
        raise MocapWriteError(f"cannot write ASF: bone {quote(skeleton.names[joint])} is too long for a float")
    if length == 0:
        direction = np.array([0.0, 1.0, 0.0])
    lines = ["  begin", f"     id {joint}", f"     name {skeleton.names[joint]}",
             "     direction " + _number_text(direction, precision),
             f"     length {number_text(length, precision)}",
             "     axis " + _number_text(axis_angles, precision) + "  XYZ"]
    dof = file_layout(list(skeleton.channels[joint]))
    if dof:
        lines.append("    dof " + " ".join(dof))
        bounds = limits.get(skeleton.names[joint])
        if bounds and len(bounds) == len(dof):
            lines += [("    limits " if n == 0 else "           ") + f"({lo:g} {hi:g})" for n, (lo, hi) in
                      enumerate(bounds)]
    lines.append("  end")
    return lines


def format_amc(plan: _Plan, asf_name: str, precision: int = 6) -> str:
    """AMC text: every frame lists every bone with dofs, in skeleton order."""
    return "".join(amc_pieces(plan, asf_name, precision))


def amc_pieces(plan: _Plan, asf_name: str, precision: int = 6) -> Iterator[str]:
    """:func:`format_amc`'s text in pieces (the header, then blocks of frames, each in one formatting call):
    a writer streams them to its file, so a long take's text is never held whole."""
    clip = plan.clip
    skeleton = clip.skeleton
    starts = skeleton.channel_starts()
    columns, row = [], ["%d"]
    for joint, layout in enumerate(skeleton.channels):
        if not layout:
            continue
        dof = file_layout(list(layout))
        columns += [int(starts[joint]) + layout.index(token) for token in dof]
        name = "root" if joint == 0 else skeleton.names[joint].replace("%", "%%")  # the row is a % template
        row.append(name + f" %.{precision}f" * len(dof))
    yield f"#!OML:ASF {asf_name}\n# written by Mocap I/O\n:FULLY-SPECIFIED\n:DEGREES\n"
    template = "\n".join(row) + "\n"
    for first in range(0, clip.frame_count, _FRAMES_PER_PIECE):
        last = min(first + _FRAMES_PER_PIECE, clip.frame_count)
        numbers = np.arange(clip.start_frame + first, clip.start_frame + last)
        table = np.column_stack([numbers, printable(clip.motion[first:last, columns], precision)])
        yield template * (last - first) % tuple(table.ravel().tolist())
