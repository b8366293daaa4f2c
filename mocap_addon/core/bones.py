"""Bones for a skeleton: where each joint's bone ends and rest frames that lie along it.

Shared by the Blender armature builder (bones along Y) and the HTR and ASF
writers (bones along the file's length axis).
"""

from __future__ import annotations

import numpy as np

from .rotations import FloatArray
from .vectors import unit

_MIN_ALIGNMENT = 0.2


def subtree_sizes(parents: list[int]) -> np.ndarray:
    """Number of joints in each joint's subtree, itself included (parents precede children)."""
    sizes = np.ones(len(parents), dtype=np.int64)
    for joint in range(len(parents) - 1, -1, -1):
        if parents[joint] >= 0:
            sizes[parents[joint]] += sizes[joint]
    return sizes


def choose_tails(parents: list[int], heads: FloatArray, end_sites: list[FloatArray],
                 up: FloatArray) -> FloatArray:
    """Tail of each bone: the child the chain continues through, else its End Site, else a stub.

    A root continues into its largest subtree (the spine over the legs; ties go
    to the child further ``up``); any other joint into the child straightest
    ahead of the bone that leads to it (the neck over the shoulders).  Children
    and End Sites at the joint itself are skipped.  All points in one space.
    """
    sizes = subtree_sizes(parents)
    extent = float(np.ptp(heads, axis=0).max()) if len(heads) > 1 else 1.0
    stub = 0.05 * (extent if extent > 0 else 1.0)
    tiny = 1e-6 * max(extent, 1e-9)
    children: list[list[int]] = [[] for _ in parents]
    for joint, parent in enumerate(parents):
        if parent >= 0:
            children[parent].append(joint)
    tails = np.empty_like(heads)
    for joint, parent in enumerate(parents):
        head = heads[joint]
        incoming = head - heads[parent] if parent >= 0 else np.zeros(3)
        straight = np.linalg.norm(incoming) > tiny
        candidates = [c for c in children[joint] if np.linalg.norm(heads[c] - head) > tiny]
        if candidates:
            if straight:
                direction = unit(incoming)
                best = max(candidates, key=lambda c: float(unit(heads[c] - head) @ direction))
            else:
                best = max(candidates, key=lambda c: (int(sizes[c]), float((heads[c] - head) @ up)))
            tails[joint] = heads[best]
            continue
        sites = [s for s in end_sites[joint] if np.linalg.norm(s - head) > tiny]
        if sites:
            tails[joint] = sites[0]
            continue
        direction = unit(incoming) if straight else unit(np.asarray(up, dtype=np.float64))
        length = 0.5 * np.linalg.norm(incoming) if straight else stub
        tails[joint] = head + direction * min(max(length, tiny * 10), stub * 2)
    return tails


def aligned_frames(heads: FloatArray, tails: FloatArray, joint_axes: FloatArray, along: int = 1) -> FloatArray:
    """Rest frames (axes as columns) with axis ``along`` (0 X, 1 Y, 2 Z) from head to tail.

    The frame's next axis is kept as near the joint's own as possible (for bones
    along Y that is X, the computed roll); where that axis runs along the bone,
    the remaining one decides.  ``joint_axes`` holds each joint's axes as columns.
    """
    first, second = (along + 2) % 3, (along + 1) % 3
    direction = unit(tails - heads)

    def across(axis: int) -> FloatArray:
        reference = joint_axes[:, :, axis]
        return reference - np.sum(reference * direction, axis=1, keepdims=True) * direction

    primary = across(first)
    weak = np.linalg.norm(primary, axis=1) < _MIN_ALIGNMENT
    primary = unit(np.where(weak[:, None], np.cross(direction, unit(across(second))), primary))
    out = np.empty((len(heads), 3, 3))
    out[:, :, along] = direction
    out[:, :, first] = primary
    out[:, :, second] = np.cross(primary, direction)
    return out
