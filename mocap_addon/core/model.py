"""Format-neutral skeleton and clip.

A joint's local transform at frame ``f`` is::

    L = T(base + t_f) @ R_rest @ R_f @ S(s_f)        (translation not rotated by rest)
    L = T(base) @ R_rest @ T(t_f) @ R_f @ S(s_f)     (``translation_in_rest_frame``)

``base`` is the joint's offset, or zero where the joint's position channels
replace it (``position_replaces_offset``, the BVH reading).  ``t_f`` comes from
the ``tx ty tz`` channels plus ``l`` times the joint's ``length_direction``;
``R_f`` is the product of the rotation channels in the order listed; ``s_f`` is
the ``s`` channel (uniform scale).  World = parent world @ local.

Channel values are kept as read: translations in file units, angles in degrees,
so a clip written back in its own format reproduces the file.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from . import rotations
from .rotations import FloatArray

TRANSLATION_CHANNELS = ("tx", "ty", "tz")
ROTATION_CHANNELS = ("rx", "ry", "rz")
LENGTH_CHANNEL = "l"
SCALE_CHANNEL = "s"
MOVE_CHANNELS = TRANSLATION_CHANNELS + (LENGTH_CHANNEL,)  # a joint with any of these moves from its offset
CHANNEL_TOKENS = TRANSLATION_CHANNELS + ROTATION_CHANNELS + (LENGTH_CHANNEL, SCALE_CHANNEL)


def rotation_order(channels: Sequence[str]) -> str:
    """The rotation order (e.g. ``"ZXY"``) spelt by a joint's channels, in listed order."""
    return "".join(c[1].upper() for c in channels if c in ROTATION_CHANNELS)


class ChannelLayouts(list[tuple[str, ...]]):
    """A skeleton's per-joint channel layouts: a list that counts its own changes.

    ``Skeleton.channel_starts`` is cached against that count, so an edit in place
    (``skeleton.channels[j] = ...``) is seen as surely as a new list.
    """

    changes = 0


def _counting(name: str) -> Callable[..., Any]:
    method = getattr(list, name)

    def changing(self: ChannelLayouts, *args: Any, **kwargs: Any) -> Any:
        self.changes += 1
        return method(self, *args, **kwargs)

    changing.__name__ = name
    return changing


for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend", "insert", "pop",
              "remove", "clear", "sort", "reverse"):
    setattr(ChannelLayouts, _name, _counting(_name))


@dataclass
class Skeleton:
    """Joints in parent-before-child order, with their rest transforms and channel layout."""

    names: list[str]
    parents: list[int]
    offsets: FloatArray
    channels: list[tuple[str, ...]]
    end_sites: list[FloatArray] = field(default_factory=list)
    rest_rotations: FloatArray = field(default_factory=lambda: np.zeros(0))
    position_replaces_offset: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    translation_in_rest_frame: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    length_directions: FloatArray = field(default_factory=lambda: np.zeros(0))
    _starts: tuple[ChannelLayouts, int, NDArray[np.int64]] | None = field(
        default=None, init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "channels" and not isinstance(value, ChannelLayouts):
            value = ChannelLayouts(value)
        super().__setattr__(name, value)

    def __post_init__(self) -> None:
        """Normalise array types and fill the optional per-joint arrays left empty."""
        count = len(self.names)
        self.offsets = np.asarray(self.offsets, dtype=np.float64).reshape(count, 3)
        self.channels = [tuple(c) for c in self.channels]
        if not self.end_sites:
            self.end_sites = [np.zeros((0, 3)) for _ in range(count)]
        self.end_sites = [np.asarray(e, dtype=np.float64).reshape(-1, 3) for e in self.end_sites]
        if np.size(self.rest_rotations) == 0:
            self.rest_rotations = np.broadcast_to(np.eye(3), (count, 3, 3)).copy()
        self.rest_rotations = np.asarray(self.rest_rotations, dtype=np.float64).reshape(count, 3, 3)
        if np.size(self.position_replaces_offset) == 0:
            self.position_replaces_offset = np.zeros(count, dtype=bool)
        self.position_replaces_offset = np.asarray(self.position_replaces_offset, dtype=bool)
        if np.size(self.translation_in_rest_frame) == 0:
            self.translation_in_rest_frame = np.zeros(count, dtype=bool)
        self.translation_in_rest_frame = np.asarray(self.translation_in_rest_frame, dtype=bool)
        if np.size(self.length_directions) == 0:
            self.length_directions = np.zeros((count, 3))
        self.length_directions = np.asarray(self.length_directions, dtype=np.float64).reshape(count, 3)
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` if the arrays disagree or a parent follows its child."""
        count = len(self.names)
        lengths = {len(self.parents), len(self.channels), len(self.end_sites),
                   len(self.rest_rotations), len(self.position_replaces_offset),
                   len(self.translation_in_rest_frame), len(self.length_directions)}
        if lengths != {count}:
            raise ValueError("skeleton arrays differ in length")
        for index, parent in enumerate(self.parents):
            if not -1 <= parent < index:
                raise ValueError(f"joint {self.names[index]!r}: parent {parent} must come before it")
        for name, layout in zip(self.names, self.channels):
            unknown = set(layout) - set(CHANNEL_TOKENS)
            if unknown or len(set(layout)) != len(layout):
                raise ValueError(f"joint {name!r}: bad channel layout {layout}")

    @property
    def joint_count(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Index of the joint called ``name``."""
        return self.names.index(name)

    def chain(self, joint: int) -> list[int]:
        """``joint`` and its ancestors, root first."""
        chain = [joint]
        while self.parents[chain[-1]] >= 0:
            chain.append(self.parents[chain[-1]])
        return chain[::-1]

    def same_joints(self, other: Skeleton) -> bool:
        """Whether ``other`` has these joints: the same names with the same parents."""
        return self.names == other.names and self.parents == other.parents

    def child_lists(self) -> list[list[int]]:
        """For every joint, the indices of its children (in joint order)."""
        children: list[list[int]] = [[] for _ in self.names]
        for joint, parent in enumerate(self.parents):
            if parent >= 0:
                children[parent].append(joint)
        return children

    def channel_starts(self) -> NDArray[np.int64]:
        """Column of each joint's first channel in ``Clip.motion``; the last entry is the total.

        Computed once per state of ``channels`` (read-only), so per-joint lookups stay cheap.
        """
        layouts = cast(ChannelLayouts, self.channels)  # __setattr__ keeps it one
        if self._starts is None or self._starts[0] is not layouts or self._starts[1] != layouts.changes:
            starts = np.concatenate([[0], np.cumsum([len(c) for c in layouts])]).astype(np.int64)
            starts.flags.writeable = False
            self._starts = (layouts, layouts.changes, starts)
        return self._starts[2]

    def copy(self) -> Skeleton:
        return Skeleton(list(self.names), list(self.parents), self.offsets.copy(),
                        list(self.channels), [e.copy() for e in self.end_sites],
                        self.rest_rotations.copy(),
                        self.position_replaces_offset.copy(),
                        self.translation_in_rest_frame.copy(),
                        self.length_directions.copy())


class Timed:
    """A motion in time: its frame time and rate, and the takes it holds (HTR block sets numbered
    afresh, from ``metadata["takes"]``); shared by :class:`Clip` and :class:`.pose.Pose`."""

    frame_time: float
    metadata: dict[str, Any]

    @property
    def frame_count(self) -> int:
        raise NotImplementedError

    @property
    def fps(self) -> float:
        return 1.0 / self.frame_time

    def check_frame_time(self) -> None:
        """Raise ``ValueError`` unless the frame time is positive and gives a finite frame rate."""
        if not (0 < self.frame_time < math.inf and 1 / self.frame_time < math.inf):
            raise ValueError(f"frame time must be positive and give a finite frame rate, got {self.frame_time}")

    def take_starts(self) -> list[int]:
        """The first frame (index from 0) of each take; ``[0]`` for a motion that is one take."""
        starts = self.metadata.get("takes") or []
        return sorted({0, *(int(t) for t in starts if 0 < int(t) < self.frame_count)})

    def take_ranges(self) -> list[tuple[int, int]]:
        """Each take's first frame and the frame after its last (indices from 0)."""
        return list(itertools.pairwise([*self.take_starts(), self.frame_count]))


@dataclass
class Clip(Timed):
    """A skeleton with channel values for every frame.

    ``motion`` has shape ``(frames, channels)`` with the joints' channels side by
    side in skeleton order.  ``start_frame`` is the file's number of the first
    frame; ``unit_in_metres`` is the length of one file unit where the file says
    (``None`` where it does not); ``up_axis`` is the file's up axis.
    """

    skeleton: Skeleton
    motion: FloatArray
    frame_time: float
    start_frame: int = 1
    unit_in_metres: float | None = None
    up_axis: str = "Y"
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        total = int(self.skeleton.channel_starts()[-1])
        motion = np.asarray(self.motion, dtype=np.float64)
        frames = motion.shape[0] if motion.ndim == 2 else motion.size // max(total, 1)
        self.motion = motion.reshape(frames, total)
        self.check_frame_time()

    @property
    def frame_count(self) -> int:
        return int(self.motion.shape[0])

    def channel_values(self, joint: int, channel: str) -> FloatArray | None:
        """The column of one joint's channel, or ``None`` if the joint lacks it."""
        layout = self.skeleton.channels[joint]
        if channel not in layout:
            return None
        return self.motion[:, int(self.skeleton.channel_starts()[joint]) + layout.index(channel)]

    def joint_rotations(self, joint: int) -> FloatArray:
        """One joint's frame rotations ``R_f``, shape ``(F, 3, 3)``."""
        order, angles = self._rotation_angles(joint)
        if not order:
            return np.broadcast_to(np.eye(3), (self.frame_count, 3, 3)).copy()
        return rotations.euler_to_matrix(angles, order)

    def _rotation_angles(self, joint: int) -> tuple[str, FloatArray]:
        """A joint's rotation order and its angles in radians, ``(F, len(order))``."""
        layout = self.skeleton.channels[joint]
        start = int(self.skeleton.channel_starts()[joint])
        columns = [start + n for n, c in enumerate(layout) if c in ROTATION_CHANNELS]
        return rotation_order(layout), np.radians(self.motion[:, columns])

    def joint_translations(self, joint: int) -> FloatArray:
        """One joint's channel translation ``t_f``, shape ``(F, 3)`` (zero where absent)."""
        out = np.zeros((self.frame_count, 3))
        for axis, channel in enumerate(TRANSLATION_CHANNELS):
            values = self.channel_values(joint, channel)
            if values is not None:
                out[:, axis] = values
        length = self.channel_values(joint, LENGTH_CHANNEL)
        if length is not None:
            out += length[:, None] * self.skeleton.length_directions[joint]
        return out

    def local_scales(self) -> FloatArray | None:
        """Uniform scale per joint ``(F, J)``, or ``None`` when no joint has a scale channel."""
        skeleton = self.skeleton
        if not any(SCALE_CHANNEL in layout for layout in skeleton.channels):
            return None
        out = np.ones((self.frame_count, skeleton.joint_count))
        for joint in range(skeleton.joint_count):
            values = self.channel_values(joint, SCALE_CHANNEL)
            if values is not None:
                out[:, joint] = values
        return out

    def copy(self) -> Clip:
        return Clip(self.skeleton.copy(), self.motion.copy(), self.frame_time, self.start_frame,
                    self.unit_in_metres, self.up_axis, dict(self.metadata))


def encode_motion(skeleton: Skeleton, frame_rotations: FloatArray,
                  translations: FloatArray | None = None, scales: FloatArray | None = None,
                  reference: FloatArray | None = None) -> FloatArray:
    """Channel values for ``skeleton``'s layout from frame rotations ``(F, J, 3, 3)``.

    ``translations`` ``(F, J, 3)`` fill ``tx ty tz``, ``scales`` ``(F, J)`` fill
    ``s``; ``reference`` ``(J, 3)`` (degrees) is where each joint's angles start.
    Joints that share a layout are encoded together; see :func:`encode_joint`.
    """
    starts = skeleton.channel_starts()
    motion = np.zeros((frame_rotations.shape[0], int(starts[-1])))
    groups: dict[tuple[str, ...], list[int]] = {}
    for joint, layout in enumerate(skeleton.channels):
        if layout:
            groups.setdefault(layout, []).append(joint)
    for layout, joints in groups.items():
        columns = starts[joints][:, None] + np.arange(len(layout))
        motion[:, columns] = encode_joint(
            layout, frame_rotations[:, joints], None if translations is None else translations[:, joints],
            None if scales is None else scales[:, joints], skeleton.length_directions[joints],
            None if reference is None else reference[joints])
    return motion


def encode_joint(layout: tuple[str, ...], frame_rotations: FloatArray, translations: FloatArray | None = None,
                 scales: FloatArray | None = None, length_direction: FloatArray | None = None,
                 reference: FloatArray | None = None, *, orthonormal: bool = False) -> FloatArray:
    """One joint's channel values ``(F, len(layout))`` from its frame rotations: matrices ``(F, 3, 3)``
    or unit quaternions ``(F, 4)``.

    Translations ``(F, 3)`` fill ``tx ty tz`` (an ``l`` channel takes the
    component along ``length_direction``); scales ``(F,)`` fill ``s``.  Angles
    are made continuous over time, starting nearest ``reference`` (degrees, in
    the joint's order) when given.  With fewer than three rotation channels the
    dropped axes are kept at zero; a rotation about them is lost.  Several joints
    with this layout are encoded at once with an extra axis after the first on
    every argument (``(F, n, 3, 3)``, ``length_direction`` ``(n, 3)``...).
    ``orthonormal``: the rotations are exact to rounding (see :func:`.rotations.matrix_to_euler`).
    """
    quaternions = frame_rotations.shape[-1] == 4
    out = np.zeros(frame_rotations.shape[:-1 if quaternions else -2] + (len(layout),))
    order = rotation_order(layout)
    if order:
        full = order + "".join(a for a in "XYZ" if a not in order)
        angles = (rotations.quaternion_to_euler(frame_rotations, full) if quaternions
                  else rotations.matrix_to_euler(frame_rotations, full, orthonormal=orthonormal))
        start = None if reference is None else np.radians(reference)
        if len(order) == 3:
            angles = rotations.euler_continuity(angles, start)
        else:
            angles = rotations.partial_euler(angles, len(order), start)
        angles = np.degrees(angles)
    for column, channel in enumerate(layout):
        if channel in ROTATION_CHANNELS:
            out[..., column] = angles[..., order.index(channel[1].upper())]
        elif channel in TRANSLATION_CHANNELS and translations is not None:
            out[..., column] = translations[..., TRANSLATION_CHANNELS.index(channel)]
        elif channel == LENGTH_CHANNEL and translations is not None and length_direction is not None:
            squared = np.maximum(np.sum(length_direction * length_direction, axis=-1), 1e-300)
            out[..., column] = np.sum(translations * length_direction, axis=-1) / squared
        elif channel == SCALE_CHANNEL:
            out[..., column] = 1.0 if scales is None else scales
    return out
