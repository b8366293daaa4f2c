"""Blending two clips: the pose between them at any mix, its envelope, and the mix that reaches a target.

**Body.**  ``b`` is first put on ``a``'s body (:func:`onto`): as it is where it
has ``a``'s joints, rest rotations and bone vectors (:func:`same_body`), else
retargeted onto ``a`` (:func:`..retarget.transfer.retarget`, ``a`` itself the target,
with the blend's ``feet``), so at mix 1 the blend is ``retarget(b, a)`` (with
``root="blend"``; by default, that moved to start where ``a`` starts).

**Poses.**  Each joint's local rotation (rest rotation included) is
interpolated as a quaternion along the short arc, frame by frame, so two files
that write one orientation with different Euler triples (``(x, y, z)`` and
``(x+180, 180-y, z+180)``, or 360 degrees apart) blend to that orientation;
translations and scales are interpolated linearly.  Clips and poses
(:class:`.pose.Pose`, e.g. read from an armature's keys) blend alike; a clip's
blend is written back as continuous Euler angles in ``a``'s channel layout.

**Time.**  ``a``'s timeline is kept.  ``b``'s frame ``f * a.frame_time /
b.frame_time + offset`` pairs with ``a``'s frame ``f`` (frames counted from
each clip's first, fractional frames interpolated, frames past ``b``'s ends
held); ``align="scale"`` stretches ``b`` from ``offset`` to its last frame over
``a``'s length; ``align="dtw"`` warps ``b`` (from ``offset`` on) onto ``a`` by
dynamic time warping (:mod:`.timewarp`) on root-relative joint positions and
which feet are planted (steps pair with steps, left with left: whole gait
cycles), at between half and double speed: where ``b`` is the longer, the
part of it that best matches all of ``a``; else ``b`` from within its first
gait cycle, and where it runs out, on again from a loop frame (a loop, its
path carried on): the earliest frame in the last's contact state, at least a
gait cycle before it (each foot touches down in between), that joins about as
well as the best, so the loop holds whole cycles and as much of ``b`` as
joins well; held only where ``b`` is still at its end.
``result.metadata["warp"]`` holds ``b``'s frame paired with each of ``a``'s,
``metadata["blend"]["time"]`` what the warp did, with how much of ``b`` it
plays: ``b_played`` of its ``b_frames`` frames, ``b_share`` that over the
frames ``a``'s duration spans in ``b`` (or all of ``b``, if shorter), and
``loop_seconds``.

**Root.**  The *body root* is the skeleton's root, or, where the root is a
fixed joint with one child (a ground node above the hips), the first joint
below it that moves.  ``"heading"`` (the default) mixes the two paths each in
its own moving heading frame, so two captures blend whichever way and
wherever each walks; ``"blend"`` interpolates the root like any joint (only
for clips that share a place and heading: paths facing apart cancel out and
flip at half a turn apart); ``"a"`` and
``"b"`` take its path and heading (turn about the up axis) from that clip and
blend only its tilt; ``"heading"`` (:func:`.paths.mixed_path`): per frame the turning rate and the
speed are interpolated and integrated from ``a``'s start, so mix 0 is ``a``'s
path, mix 1 ``b``'s started where ``a``'s starts facing ``a``'s way, and a
half mix of a straight and a curving walk curves half as much.

**Feet.**  ``feet="planted"`` (the default, for humanoids): a foot of the
blend touches the floor where the mix of the two inputs' contacts
(:mod:`..body.contacts`, ``b``'s at its paired frames) is over one half, or
where both touch, and is held there by two-bone leg IK (:mod:`..body.footing`),
eased in and out: where its contact begins, then moving as the inputs' planted
feet move (turned into the blend's heading, mixed), at the mix of their
ankles' heights.  So a planted
foot slides no more than the more sliding input's, stands on ``a``'s floor,
and mix 0 is still ``a`` and mix 1 ``b`` on ``a``'s body, exactly.
``feet="free"``: the local mix alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .. import rotations
from ..body.anatomy import hinge_axes
from ..body.contacts import Contacts, find_contacts
from ..body.footing import EASE, MISSED, Leg, mixed_holds, pinned_ankles, smooth_fall, solve_legs
from ..body.identity import body_root, same_body
from ..body.reference import TOP_JOINTS
from ..model import MOVE_CHANNELS, SCALE_CHANNEL, Clip, Skeleton
from ..naming import map_skeleton
from ..options import ALIGNMENT, FEET, FREE, PLANTED, ROOT_PATH
from ..pose import Motion, Pose, as_pose, columns, decode, encode, first_angles
from ..retarget.transfer import retarget
from ..rotations import FloatArray
from ..transforms import compose
from ..vectors import up_vector
from .paths import Heading, Steps, mixed_path
from .timewarp import Warp, warp_onto

MASK_PRESETS_FILE = Path(__file__).parents[1] / "data" / "blend_masks.json"
CONTACT_WEIGHT = 2.0  # a foot planted in one clip and not the other costs this many typical pose distances
LOOP_REACH = 0.1  # seconds over which a loop frame's motion is matched (see timewarp.loop_frame)
SHORTEST_LOOP = 0.5  # seconds: a loop is at least this long
WARP_SMOOTHING = 0.075  # seconds: the time warp's speed is smoothed over about this (see timewarp.warp_onto)
LOOP_EASE = 0.25  # seconds over which a loop's pass eases from the pose the last pass ended in
UNMOVED = 1e-9  # leg lengths: an ankle whose target is nearer than this is left as the mix made it
HELD_MIXES_AT_ONCE = 8  # mixes whose legs are held at once (an envelope's arrays stay small)

Mask = str | Mapping[str, float] | None


# Masks ----------------------------------------------------------------------------------------------------------

@cache
def _presets() -> dict[str, dict[str, Any]]:
    return json.loads(MASK_PRESETS_FILE.read_text(encoding="utf-8"))["presets"]


def mask_presets() -> dict[str, dict[str, Any]]:
    """The named masks: key -> ``{"label", "description", "joints"}`` (canonical joint names)."""
    return {key: dict(value) for key, value in _presets().items()}


def mask_weights(skeleton: Skeleton, mask: Mask) -> FloatArray:
    """Each joint's factor on the mix, ``(J,)``.

    ``None``: every joint 1.  A mapping: the weights it gives, 0 for joints it
    does not name.  A preset name (:func:`mask_presets`): 1 for the joints that
    map onto its canonical joints (``core.naming``), else 0.
    """
    if mask is None:
        return np.ones(skeleton.joint_count)
    if isinstance(mask, str):
        if mask not in _presets():
            raise ValueError(f"unknown mask preset {mask!r}; presets: {', '.join(_presets())}")
        return preset_weights(skeleton, map_skeleton(skeleton), _presets()[mask]["joints"])
    unknown = [name for name in mask if name not in skeleton.names]
    if unknown:
        raise ValueError(f"the mask names joints the skeleton lacks: {', '.join(map(str, unknown[:5]))}")
    weights = np.zeros(skeleton.joint_count)
    for name, weight in mask.items():
        weights[skeleton.index(name)] = float(weight)
    if not np.all(np.isfinite(weights)):
        raise ValueError("mask weights must be finite numbers")
    return weights


def preset_weights(skeleton: Skeleton, mapping: Mapping[str, str | None], canonical: Sequence[str]) -> FloatArray:
    """1 for joints whose canonical joint (``mapping``, joint name -> canonical or ``None``) is listed.

    A joint mapped to no canonical joint follows its parent; joints above the
    one mapped to ``hips`` (a ground node) follow the hips.
    """
    chosen = set(canonical)
    mapped = [mapping.get(name) for name in skeleton.names]
    ground = set()
    if "hips" in mapped:
        joint = skeleton.parents[mapped.index("hips")]
        while joint >= 0 and mapped[joint] is None:
            ground.add(joint)
            joint = skeleton.parents[joint]
    weights = np.zeros(skeleton.joint_count)
    for joint, (canonical_name, parent) in enumerate(zip(mapped, skeleton.parents)):
        if canonical_name is not None:
            weights[joint] = float(canonical_name in chosen)
        elif joint in ground:
            weights[joint] = float("hips" in chosen)
        elif parent >= 0:
            weights[joint] = weights[parent]
    return weights


# Poses ----------------------------------------------------------------------------------------------------------


@dataclass
class _Joints:
    """Local rotations ``(..., F, K, 4)``, translations ``(..., F, K, 3)`` and scales ``(..., F, K)`` of
    some joints of a pose (leading axes: several mixes at once)."""

    rotations: FloatArray
    translations: FloatArray
    scales: FloatArray

    @classmethod
    def of(cls, pose: Pose, joints: Sequence[int] | slice = slice(None)) -> _Joints:
        return cls(pose.rotations[:, joints], pose.translations[:, joints], pose.scale_values()[:, joints])

    def toward(self, other: _Joints, weights: FloatArray) -> _Joints:
        """Slerp / lerp from these joints toward ``other``'s by ``weights`` ``(..., F, K)``."""
        return _Joints(rotations.slerp(self.rotations, other.rotations, weights),
                       self.translations + weights[..., None] * (other.translations - self.translations),
                       self.scales + weights * (other.scales - self.scales))

    def columns(self, positions: Sequence[int]) -> _Joints:
        return _Joints(self.rotations[..., positions, :], self.translations[..., positions, :],
                       self.scales[..., positions])


def _world_of(parents: list[int], joints: Sequence[int], pose: _Joints) -> tuple[FloatArray, FloatArray]:
    """World quaternions ``(..., F, K, 4)`` and positions ``(..., F, K, 3)`` of ``joints`` (in order, each
    after its parent, every ancestor among them) from their local poses ``pose``."""
    place = {joint: column for column, joint in enumerate(joints)}
    above = [place[parents[j]] if parents[j] >= 0 else -1 for j in joints]
    turns, positions, _ = compose(above, np.ascontiguousarray(np.moveaxis(pose.rotations, (-2, -1), (1, 0))),
                                  np.ascontiguousarray(np.moveaxis(pose.translations, (-2, -1), (1, 0))),
                                  np.ascontiguousarray(np.moveaxis(pose.scales, -1, 0)))
    return np.moveaxis(turns, (0, 1), (-1, -2)), np.moveaxis(positions, (0, 1), (-1, -2))


def _with_ancestors(skeleton: Skeleton, joints: Sequence[int]) -> list[int]:
    """``joints`` and every joint above them, in skeleton order."""
    return sorted({above for joint in joints for above in skeleton.chain(joint)})


def _part(pose: Pose, joints: list[int]) -> Pose:
    """The pose of some joints (each with its parent among them, in skeleton order) on a skeleton of those."""
    skeleton = pose.skeleton
    place = {joint: column for column, joint in enumerate(joints)}
    part = Skeleton([skeleton.names[j] for j in joints],
                    [place[skeleton.parents[j]] if skeleton.parents[j] >= 0 else -1 for j in joints],
                    skeleton.offsets[joints], [skeleton.channels[j] for j in joints],
                    [skeleton.end_sites[j] for j in joints], skeleton.rest_rotations[joints],
                    skeleton.position_replaces_offset[joints], skeleton.translation_in_rest_frame[joints],
                    skeleton.length_directions[joints])
    return replace(pose, skeleton=part, rotations=pose.rotations[:, joints], translations=pose.translations[:, joints],
                   scales=None if pose.scales is None else pose.scales[:, joints])


# B on A's body -----------------------------------------------------------------------------------------------------

def onto(a: Clip | Pose, b: Clip | Pose, *, mapping: Mapping[str, str | None] | None = None,
         target_mapping: Mapping[str, str | None] | None = None, feet: str = FEET.default) -> Clip | Pose:
    """``b`` on ``a``'s body: ``b`` itself where it is already (:func:`same_body`), else retargeted onto
    ``a`` (:func:`..retarget.transfer.retarget` with these bone mappings and ``feet``; ``a`` itself is the target, so
    its first frame gives the bone vectors, its captures the floor and how its bones twist).
    :func:`blend` does this first."""
    FEET.check(feet)
    return _onto(a, b, as_pose(a), mapping, target_mapping, feet)[0]


def _onto(a: Clip | Pose, b: Clip | Pose, pose_a: Pose, mapping: Mapping[str, str | None] | None,
          target_mapping: Mapping[str, str | None] | None, feet: str) -> tuple[Clip | Pose, Pose]:
    """:func:`onto`, with ``a``'s pose given; and the result's pose."""
    pose_b = as_pose(b)
    if same_body(pose_a, pose_b):
        return b, pose_b
    try:
        moved = retarget(b, a, mapping=mapping, target_mapping=target_mapping, feet=feet)
    except ValueError as error:
        raise ValueError(f"b cannot be put on a's body: {error}") from error
    return moved, as_pose(moved)


# Time -------------------------------------------------------------------------------------------------------------

def _pose_features(pose: Pose, frames: FloatArray, root: int, heading: Heading,
                   parent_rotation: FloatArray) -> FloatArray:
    """Joint positions at ``frames`` relative to the body root, turned so the root always faces one way,
    ``(F, 3J)``."""
    world = pose.sample(frames).world()
    world_heading = Heading(parent_rotation @ heading.up, heading.axis)
    back = world_heading.turns(-world_heading.angles(world.quaternions[:, root]))
    relative = world.positions - world.positions[:, root:root + 1]
    return rotations.quaternion_rotate(back[:, None], relative).reshape(len(frames), -1)


def _planted_at(contacts: Contacts, frames: FloatArray) -> FloatArray:
    """Each foot planted (1) or not (0) at fractional ``frames`` ``(F, 2)`` (between frames, in between)."""
    planted = contacts.planted.astype(np.float64)
    steps = np.arange(len(planted))
    return np.stack([np.interp(frames, steps, planted[:, side]) for side in range(2)], axis=1)


@dataclass
class _Timing:
    """Which frame of ``b`` pairs with each frame of ``a`` (a warp in ``b``'s own frames)."""

    frames: FloatArray  # (Fa,) b's frame, within b
    loops: NDArray[np.int64]  # (Fa,) times b has looped back by then
    joins: tuple[float, float] | None  # b's frames a loop joins: its loop frame stands for its last
    report: dict[str, Any]


def _timing(a: Pose, b: Pose, offset: float, align: str, features: Callable[[Pose, FloatArray], FloatArray],
            contacts: tuple[Contacts | None, Contacts | None]) -> _Timing:
    """``b``'s frames paired with ``a``'s for ``offset`` and ``align`` (see the module notes); time warps
    read ``features`` of both and, where both have them, their contacts."""
    ratio = a.frame_time / b.frame_time
    last = b.frame_count - 1
    steps = np.arange(a.frame_count, dtype=np.float64)
    if align in ("none", "scale"):
        if align == "scale" and offset > last:
            raise ValueError(f"offset {offset:g} is past b's last frame ({last})")
        frames = offset + steps * (ratio if align == "none" else (last - offset) / max(a.frame_count - 1, 1))
        held = np.flatnonzero((frames < 0) | (frames > last))
        clipped = np.clip(frames, 0.0, float(last))
        return _Timing(clipped, np.zeros(a.frame_count, dtype=np.int64), None, {
            "match": "frame by frame" if align == "none" else "stretched", "b_first": float(clipped[0]),
            "b_last": float(clipped[-1]), "loop_frame": None, "loops": 0,
            "held_from": int(held[0]) if len(held) else None})
    count = int(np.floor((last - offset) / ratio + 1e-9)) + 1
    if count < 1:
        raise ValueError(f"offset {offset:g} is past b's last frame ({last})")
    sampled = np.clip(offset + np.arange(count) * ratio, 0, last)
    pose_a, pose_b = features(a, steps), features(b, sampled)
    shortest = max(2, round(SHORTEST_LOOP / a.frame_time))
    states = 0
    if contacts[0] is not None and contacts[1] is not None:
        # A foot planted in one and not the other costs as much as two poses far apart: steps pair with
        # steps, left with left.
        typical = float(np.sqrt(2.0 * np.mean(np.sum((pose_a - pose_a.mean(axis=0)) ** 2, axis=1))))
        weight = CONTACT_WEIGHT * typical
        planted_b = _planted_at(contacts[1], sampled)
        pose_a = np.concatenate([pose_a, weight * _planted_at(contacts[0], steps)], axis=1)
        pose_b = np.concatenate([pose_b, weight * planted_b], axis=1)
        shortest, states = max(shortest, _whole_cycle(planted_b)), 2
    warp: Warp = warp_onto(pose_a, pose_b, reach=max(1, round(LOOP_REACH / a.frame_time)), shortest=shortest,
                           smoothing=WARP_SMOOTHING / a.frame_time, states=states)
    frames = np.clip(offset + ratio * warp.frames, 0.0, float(last))
    joins = None if warp.loop_frame is None else (float(sampled[warp.loop_frame]), float(sampled[-1]))
    report = warp.report()
    played = _swept(frames, warp.loops, b.frame_count)
    spanned = min(last + 1 - offset, (a.frame_count - 1) * ratio + 1)  # b's frames a's duration spans
    report.update(b_first=float(frames[0]), b_last=float(frames[-1]), loop_frame=None if joins is None else joins[0],
                  b_frames=b.frame_count, b_played=played, b_share=played / max(spanned, 1.0),
                  loop_seconds=None if joins is None else (joins[1] - joins[0]) * b.frame_time)
    return _Timing(frames, warp.loops, joins, report)


def _swept(frames: FloatArray, loops: NDArray[np.int64], count: int) -> int:
    """How many of ``count`` frames a warp ``frames`` plays through, its passes (``loops``) together."""
    played = np.zeros(count + 1, dtype=np.int64)
    starts = np.flatnonzero(np.diff(loops, prepend=-1))
    ends = np.append(starts[1:], len(frames)) - 1
    np.add.at(played, np.floor(frames[starts]).astype(np.int64), 1)
    np.add.at(played, np.ceil(frames[ends]).astype(np.int64) + 1, -1)
    return int(np.count_nonzero(np.cumsum(played)[:count]))


def _whole_cycle(planted: FloatArray) -> int:
    """Rows back from the last of ``planted`` ``(F, 2)`` (each foot's share planted) within which each foot
    that steps touches down: a loop at least this long holds whole gait cycles (0 where no foot steps)."""
    down = (planted[1:] >= 0.5) & (planted[:-1] < 0.5)
    stepping = down.any(axis=0)
    if not stepping.any():
        return 0
    last_down = [int(np.flatnonzero(down[:, side])[-1]) + 1 for side in range(2) if stepping[side]]
    return len(planted) - min(last_down)


def _paired(b: Pose, timing: _Timing, root: int, heading: Heading) -> Pose:
    """``b`` at the frames paired with ``a``'s.  Each pass of a loop carries the body root's path on from
    where the last one ended (turned and moved so its loop frame lies where ``b``'s last did), and starts
    from the pose the last one ended in, easing into its own over :data:`LOOP_EASE`."""
    paired = b.sample(timing.frames)
    if timing.joins is None or not timing.loops.any():
        return paired
    paired = paired.copy()
    ends = b.sample(np.array(timing.joins))  # the loop frame, then the last
    turn = float(np.diff(heading.angles(ends.rotations[:, root]))[0])
    start, end = ends.translations[:, root]
    shift = heading.horizontal(end - start)

    def placed(rotation: FloatArray, translation: FloatArray, passes: int) -> tuple[FloatArray, FloatArray]:
        moved = heading.turned(shift, turn * np.arange(passes)).sum(axis=0)
        return heading.moved(rotation, translation, passes * turn, start, moved)

    ease = LOOP_EASE / b.frame_time
    for passes in range(1, int(timing.loops.max()) + 1):
        rows = timing.loops == passes
        paired.rotations[rows, root], paired.translations[rows, root] = placed(
            paired.rotations[rows, root], paired.translations[rows, root], passes)
        begin, ended = ends.copy(), ends.copy()  # this pass's loop frame, the last pass's last frame
        begin.rotations[0, root], begin.translations[0, root] = placed(ends.rotations[0, root],
                                                                       ends.translations[0, root], passes)
        ended.rotations[1, root], ended.translations[1, root] = placed(ends.rotations[1, root],
                                                                       ends.translations[1, root], passes - 1)
        offset = rotations.quaternion_multiply(ended.rotations[1], rotations.quaternion_conjugate(begin.rotations[0]))
        share = smooth_fall((timing.frames[rows] - timing.joins[0]) / ease)[:, None]
        paired.rotations[rows] = rotations.quaternion_multiply(
            rotations.slerp(np.array([1.0, 0.0, 0.0, 0.0]), offset, share), paired.rotations[rows])
        paired.translations[rows] += share[..., None] * (ended.translations[1] - begin.translations[0])
    return paired


# Feet -------------------------------------------------------------------------------------------------------------

@dataclass
class _Feet:
    """What holding a blend's feet needs: its legs, and both inputs' feet at ``a``'s frames (``b``'s paired)."""

    legs: list[Leg]  # left, right
    balls: list[int]  # each side's ball of the foot (its toes joint, else its foot)
    joints: list[int]  # the legs and every joint above them, in skeleton order
    points: tuple[FloatArray, FloatArray]  # (F, 2, 2, 3) ankles and balls of a and of b, in a's world
    touching: tuple[NDArray[np.bool_], NDArray[np.bool_]]  # (F, 2, 2)
    headings: tuple[FloatArray, FloatArray]  # (F,) the body root's heading in a and in b
    up: FloatArray  # a's world up
    leg: float  # a's leg length
    frame_time: float

    def first(self, count: int) -> _Feet:
        """The feet over the first ``count`` frames."""
        return replace(self, points=(self.points[0][:count], self.points[1][:count]),
                       touching=(self.touching[0][:count], self.touching[1][:count]),
                       headings=(self.headings[0][:count], self.headings[1][:count]))

    def moves(self, joints: Sequence[int]) -> bool:
        """Whether holding the feet moves any of ``joints`` (a leg joint or one below)."""
        return any(leg.thigh in joints for leg in self.legs)

    def hold(self, parents: list[int], pose: _Joints, mixes: FloatArray,
             headings: FloatArray) -> tuple[dict[int, FloatArray], dict[str, Any]]:
        """New local rotations ``(..., F, 4)`` of the joints the holds turn (thighs, shins, feet; only where
        an ankle's target moved it), from the mix's local poses of :attr:`joints` (``pose``), each leg's mix
        ``(..., F, 2)`` and the mix's body root heading ``(..., F)``; and what was held."""
        column = {joint: k for k, joint in enumerate(self.joints)}
        turns, places = _world_of(parents, self.joints, pose)
        ankles = places[..., [column[leg.foot] for leg in self.legs], :]
        balls = places[..., [column[ball] for ball in self.balls], :]
        touching, guides, levels = mixed_holds(self.points, self.touching, (headings - self.headings[0],
                                                                            headings - self.headings[1]),
                                               mixes, self.up)
        first = len(mixes.shape) - 2  # the frame axis, which pinned_ankles wants first

        def frames_first(values: NDArray[Any]) -> NDArray[Any]:
            return np.moveaxis(values, first, 0)

        targets, _ = pinned_ankles(frames_first(ankles), frames_first(balls), frames_first(touching),
                                   self.frame_time, frames_first(guides[..., 0, :]), frames_first(guides[..., 1, :]),
                                   (self.up, frames_first(levels)))
        targets = np.moveaxis(targets, 0, first)
        moved = np.linalg.norm(targets - ankles, axis=-1) > UNMOVED * self.leg
        count = int(np.prod(mixes.shape[:-1]))
        flat_turns = turns.reshape(count, len(self.joints), 4)
        flat_places = places.reshape(count, len(self.joints), 3)

        def world(joint: int) -> tuple[FloatArray, FloatArray]:
            return rotations.quaternion_to_matrix(flat_turns[:, column[joint]]), flat_places[:, column[joint]]

        sides = [side for side in range(2) if moved[..., side].any()]
        rows = [np.flatnonzero(moved[..., side].reshape(count)) for side in sides]
        changed, misses = solve_legs(world, parents, [self.legs[s] for s in sides],
                                     [targets[..., s, :].reshape(count, 3) for s in sides], rows)
        turned = {}
        for joint, (where, local) in changed.items():
            column_turns = pose.rotations[..., column[joint], :].reshape(count, 4).copy()
            column_turns[where] = rotations.matrix_to_quaternion(local)
            turned[joint] = rotations.quaternion_continuity(column_turns.reshape(mixes.shape[:-1] + (4,)),
                                                            axis=first)
        held = touching.any(axis=-1)
        misses_in_legs = [m / self.leg for m in misses]
        report = {"mode": PLANTED, "held_frames": [int(held[..., s].sum()) for s in range(2)],
                  "moved_frames": [int(moved[..., s].sum()) for s in range(2)],
                  "missed_frames": int(sum(np.count_nonzero(m > MISSED) for m in misses_in_legs)),
                  "worst_miss": max([float(m.max()) for m in misses_in_legs if m.size], default=0.0)}
        return turned, report


def _find_contacts(pose: Pose, mapping: Mapping[str, str | None]) -> Contacts:
    """:func:`.contacts.find_contacts` of ``pose``, reading only the joints it needs (the hips, the legs and
    feet with all below, a spine or head joint, and all above them)."""
    skeleton = pose.skeleton
    index = {c: skeleton.index(n) for n, c in mapping.items() if c is not None and n in skeleton.names}
    wanted = [index[c] for c in index if c == "hips" or c.startswith(("upper_leg", "lower_leg", "foot", "toes"))]
    wanted += [index[c] for c in TOP_JOINTS if c in index][:1]
    feet = {index[c] for c in ("foot_l", "foot_r") if c in index}
    wanted += [j for j in range(skeleton.joint_count) if feet & set(skeleton.chain(j))]
    joints = _with_ancestors(skeleton, wanted)
    names = {skeleton.names[j] for j in joints}
    return find_contacts(_part(pose, joints), {n: c for n, c in mapping.items() if n in names})


def _feet(a: Pose, paired: Pose, mapping: Mapping[str, str | None], contacts: tuple[Contacts, Contacts],
          timing: _Timing, heading: Heading, root: int, up: FloatArray) -> _Feet:
    """Both inputs' feet at ``a``'s frames, and ``a``'s legs (the knees' axes from ``a``'s captures, else
    ``b``'s).  Raises ``ValueError`` where a knee never bends."""
    skeleton = a.skeleton
    index = {c: skeleton.index(n) for n, c in mapping.items() if c is not None}
    knees = hinge_axes(a, mapping)
    knees_b = None
    legs, balls = [], []
    for side in "lr":
        axis = knees[f"knee_{side}"]
        if axis is None:
            knees_b = hinge_axes(paired, mapping) if knees_b is None else knees_b
            axis = knees_b[f"knee_{side}"]
        if axis is None:
            raise ValueError(f"the {'left' if side == 'l' else 'right'} knee never bends in either clip")
        legs.append(Leg.of(index, side, axis))
        balls.append(index.get(f"toes_{side}", index[f"foot_{side}"]))
    joints = _with_ancestors(skeleton, balls)
    rows = np.clip(np.round(timing.frames).astype(np.int64), 0, contacts[1].frame_count - 1)
    if np.array_equal(rows, timing.frames) and not timing.loops.any():
        points = contacts[1].points[rows]  # b's own frames: its feet as its contacts found them
    else:
        place = {joint: column for column, joint in enumerate(joints)}
        _, places = _world_of(skeleton.parents, joints, _Joints.of(paired, joints))
        points = places[:, [[place[leg.foot], place[ball]] for leg, ball in zip(legs, balls)]]
    return _Feet(legs, balls, joints, (contacts[0].points, points),
                 (contacts[0].touching, contacts[1].touching[rows]),
                 (heading.angles(a.rotations[:, root]), heading.angles(paired.rotations[:, root])), up,
                 contacts[0].leg, a.frame_time)


# Pairing a with b -------------------------------------------------------------------------------------------------

@dataclass
class _Pairing:
    """``a`` and ``b`` (on ``a``'s body, sampled at the frames paired with ``a``'s) frame by frame, with
    the mask, the root treatment and what holding the feet needs."""

    a: Pose
    b: Pose  # at the frames paired with a's
    b_onto_a: Clip | Pose  # b on a's body, as given to the pairing
    timing: _Timing
    root: str
    root_joint: int
    heading: Heading
    weights: FloatArray  # (J,) the mask
    steps: tuple[Steps, Steps] | None  # the root paths, in heading mode
    feet: _Feet | None
    notes: dict[str, Any]  # what the result's metadata says of the feet

    def poses(self, joints: Sequence[int] | slice = slice(None),
              frames: np.ndarray | slice = slice(None)) -> tuple[_Joints, _Joints]:
        """Local poses of ``joints`` at ``a``'s ``frames``, from ``a`` and from ``b``."""
        return _Joints.of(self.a.at(frames) if isinstance(frames, np.ndarray) else self.a, joints), \
            _Joints.of(self.b.at(frames) if isinstance(frames, np.ndarray) else self.b, joints)

    def mix(self, pose_a: _Joints, pose_b: _Joints, weights: FloatArray, joints: Sequence[int],
            frame: int | None = None) -> _Joints:
        """The blended pose of ``joints`` for ``weights`` ``(..., F, K)`` (leading axes: several mixes), at
        every frame from the first, or (``frame``) at that one frame with each mix held from the first."""
        mixed = pose_a.toward(pose_b, weights)
        if self.root_joint not in joints or self.root == "blend":
            return mixed
        column = list(joints).index(self.root_joint)
        if self.root == "heading" and self.steps is not None:
            share = weights[..., column]
            if frame is not None:
                share = np.broadcast_to(share[..., :1], share.shape[:-1] + (frame + 1,))
            turn, place = mixed_path(self.heading, *self.steps, share, last_only=frame is not None)
            mixed.rotations[..., column, :], mixed.translations[..., column, :] = turn, place
            return mixed
        turn_a, tilt_a = self.heading.split(pose_a.rotations[:, column])
        turn_b, tilt_b = self.heading.split(pose_b.rotations[:, column])
        # Blending two tilts can turn a little about the up axis: split that off too.
        _, tilt = self.heading.split(rotations.slerp(tilt_a, tilt_b, weights[..., column]))
        turn, source = (turn_a, pose_a) if self.root == "a" else (turn_b, pose_b)
        mixed.rotations[..., column, :] = rotations.quaternion_multiply(turn, tilt)
        mixed.translations[..., column, :] = source.translations[:, column]
        return mixed

    def held(self, mixed: _Joints, weights: FloatArray, joints: Sequence[int]) -> tuple[_Joints, list[int],
                                                                                         dict[str, Any]]:
        """The blended pose of ``joints`` (at the frames from the first on) with its feet held: the joints
        whose rotations the holds changed, and what was held (``mixed`` itself where the feet are free)."""
        if self.feet is None or not self.feet.moves(joints):
            return mixed, [], {}
        position = {joint: column for column, joint in enumerate(joints)}
        mixes = np.stack([weights[..., [position[j] for j in (leg.thigh, leg.shin, leg.foot)]].mean(axis=-1)
                          for leg in self.feet.legs], axis=-1)
        feet = self.feet.first(mixes.shape[-2])
        turned, report = feet.hold(self.a.skeleton.parents, mixed.columns([position[j] for j in feet.joints]),
                                   mixes, self.heading.angles(mixed.rotations[..., position[self.root_joint], :]))
        for joint, values in turned.items():
            mixed.rotations[..., position[joint], :] = values
        return mixed, list(turned), report

    def positions(self, joint: int, mixes: FloatArray) -> FloatArray:
        """World positions ``(n, F, 3)`` of ``joint`` for mix profiles ``mixes`` ``(n, F)``, posing only its
        chain (and the legs, where holding the feet moves it)."""
        skeleton = self.a.skeleton
        chain = skeleton.chain(joint)
        if self.feet is None or not self.feet.moves(chain):
            mixed = self.mix(*self.poses(chain), mixes[:, :, None] * self.weights[chain], chain)
            return _world_of(skeleton.parents, chain, mixed)[1][..., -1, :]
        return self._held_positions(joint, mixes, slice(None))

    def position_at(self, joint: int, mixes: FloatArray, frame: int) -> FloatArray:
        """World positions ``(n, 3)`` of ``joint`` at ``a``'s ``frame`` for mixes ``mixes`` ``(n,)``, each
        held from the first frame."""
        skeleton = self.a.skeleton
        chain = skeleton.chain(joint)
        if self.feet is None or not self.feet.moves(chain):
            mixed = self.mix(*self.poses(chain, np.array([frame])), mixes[:, None, None] * self.weights[chain],
                             chain, frame)
            return _world_of(skeleton.parents, chain, mixed)[1][:, 0, -1, :]
        # A hold at this frame depends on the frames before it, and on the next hold's start within an ease.
        count = min(self.a.frame_count, frame + int(np.ceil(EASE / self.a.frame_time)) + 2)
        profiles = np.broadcast_to(mixes[:, None], (len(mixes), count))
        return self._held_positions(joint, profiles, np.arange(count))[:, frame]

    def _held_positions(self, joint: int, mixes: FloatArray, frames: np.ndarray | slice) -> FloatArray:
        """:meth:`positions` with the feet held, over ``a``'s ``frames`` (all, or the first few)."""
        skeleton = self.a.skeleton
        joints = _with_ancestors(skeleton, [joint, *self.feet.joints] if self.feet else [joint])
        found = []
        for start in range(0, len(mixes), HELD_MIXES_AT_ONCE):  # a few mixes at a time: the legs' arrays
            weights = mixes[start:start + HELD_MIXES_AT_ONCE, :, None] * self.weights[joints]
            mixed, _, _ = self.held(self.mix(*self.poses(joints, frames), weights, joints), weights, joints)
            found.append(_world_of(skeleton.parents, joints, mixed)[1][..., joints.index(joint), :])
        return np.concatenate(found)


def _holds_feet_on(skeleton: Skeleton, mapping: Mapping[str, str | None], chain: Sequence[int]) -> bool:
    """Whether holding the feet moves a joint of ``chain``: a thigh (by the bone mapping) is in it."""
    return any(skeleton.index(name) in chain for name, canonical in mapping.items()
               if canonical in ("upper_leg_l", "upper_leg_r") and name in skeleton.names)


def _pair(a: Clip | Pose, b: Clip | Pose, offset: float = 0, align: str = ALIGNMENT.default,
          root: str = ROOT_PATH.default, mask: Mask = None, feet: str = FEET.default,
          mapping: Mapping[str, str | None] | None = None,
          chain: Sequence[int] | None = None) -> _Pairing:
    """``a`` and ``b`` paired for :func:`blend`'s options; ``chain``: the only joints that will be posed
    (the feet are found only where they move one of them)."""
    ALIGNMENT.check(align)
    ROOT_PATH.check(root)
    FEET.check(feet)
    if a.frame_count == 0 or b.frame_count == 0:
        raise ValueError("blending needs at least one frame in each clip")
    if not np.isfinite(offset):
        raise ValueError(f"offset must be a finite number of frames, not {offset}")
    pose_a = as_pose(a)
    b_onto_a, pose_b = _onto(a, b, pose_a, None, mapping, feet)
    weights = mask_weights(a.skeleton, mask)
    root_joint = body_root(pose_a)
    parent = a.skeleton.parents[root_joint]
    first = pose_a.at([0]).world()
    parent_rotation = first.rotations[0, parent] if parent >= 0 else np.eye(3)
    up = parent_rotation.T @ up_vector(a.up_axis)
    flatness = np.abs(up @ rotations.quaternion_to_matrix(pose_a.rotations[0, root_joint]))
    heading = Heading(up, int(np.argmin(flatness)))
    notes: dict[str, Any] = {"mode": feet}
    contacts: tuple[Contacts | None, Contacts | None] = (None, None)
    if feet == PLANTED or align == "dtw":
        mapping = map_skeleton(a.skeleton) if mapping is None else mapping
        if chain is not None and not _holds_feet_on(a.skeleton, mapping, chain):
            feet = FREE  # holding the feet moves none of the joints asked for
    if mapping is not None and (feet == PLANTED or align == "dtw"):
        try:
            contacts = (_find_contacts(pose_a, mapping), _find_contacts(pose_b, mapping))
        except ValueError as error:
            if feet == PLANTED:
                notes.update(mode=FREE, reason=str(error))

    def features(motion: Pose, frames: FloatArray) -> FloatArray:
        return _pose_features(motion, frames, root_joint, heading, parent_rotation)

    timing = _timing(pose_a, pose_b, float(offset), align, features, contacts)
    paired = _paired(pose_b, timing, root_joint, heading)
    steps = None
    if root == "heading":
        steps = (Steps.of(heading, pose_a.rotations[:, root_joint], pose_a.translations[:, root_joint]),
                 Steps.of(heading, paired.rotations[:, root_joint], paired.translations[:, root_joint]))
    held = None
    if feet == PLANTED and contacts[0] is not None and contacts[1] is not None and mapping is not None:
        world_up = parent_rotation @ up
        if contacts[0].up @ world_up < np.cos(np.radians(45)):
            notes.update(mode=FREE, reason="a's motion stands along another axis than its file's up")
        else:
            try:
                held = _feet(pose_a, paired, mapping, (contacts[0], contacts[1]), timing, heading, root_joint,
                             world_up)
            except ValueError as error:
                notes.update(mode=FREE, reason=str(error))
    return _Pairing(pose_a, paired, b_onto_a, timing, root, root_joint, heading, weights, steps, held, notes)


def _joint_index(skeleton: Skeleton, joint: str | int) -> int:
    if isinstance(joint, str):
        if joint not in skeleton.names:
            raise ValueError(f"no joint {joint!r} in a's skeleton")
        return skeleton.index(joint)
    if not 0 <= int(joint) < skeleton.joint_count:
        raise ValueError(f"joint index {joint} out of range (a has {skeleton.joint_count} joints)")
    return int(joint)


def _same_joint(a: Skeleton, b: Skeleton, joint: int) -> bool:
    """Whether ``b``'s channel values for ``joint`` mean the same transform on ``a``'s skeleton."""
    return (a.channels[joint] == b.channels[joint]
            and bool(a.position_replaces_offset[joint] == b.position_replaces_offset[joint])
            and bool(a.translation_in_rest_frame[joint] == b.translation_in_rest_frame[joint])
            and (bool(a.position_replaces_offset[joint]) or np.array_equal(a.offsets[joint], b.offsets[joint]))
            and np.array_equal(a.rest_rotations[joint], b.rest_rotations[joint])
            and np.array_equal(a.length_directions[joint], b.length_directions[joint]))


# The API ----------------------------------------------------------------------------------------------------------

def blend(a: Motion, b: Clip | Pose, mix: float | FloatArray, *, offset: float = 0, align: str = ALIGNMENT.default,
          root: str = ROOT_PATH.default, mask: Mask = None, feet: str = FEET.default,
          mapping: Mapping[str, str | None] | None = None) -> Motion:
    """The motion between ``a`` (mix 0) and ``b`` (mix 1), on ``a``'s body, frames and frame time.

    ``a`` and ``b`` are clips or poses (:class:`.pose.Pose`); the result is
    ``a``'s kind.  ``mix`` is a number or one value per frame of ``a``; values
    outside [0, 1] extrapolate.  ``mask`` (a preset name or joint -> weight)
    multiplies the mix per joint.  See the module docstring for ``offset``,
    ``align``, ``root`` and ``feet``; ``mapping`` is ``a``'s bone mapping
    (:func:`.naming.map_skeleton`, detected when ``None``), which finds its feet.
    The result holds what ``a``'s channels can hold (:meth:`.pose.Pose.held`).
    For clips, a joint whose mix is 0 at every frame (and that no held foot
    turns) keeps ``a``'s channel values exactly; one whose mix is 1 takes
    ``b``'s where ``b``'s frames pair whole and the joint's layout agrees.
    ``result.metadata``: ``"warp"`` ``b``'s frame paired with each frame of
    ``a``, ``"blend"`` the settings and what the time warp did, ``"feet"``
    what was held (or why the feet were left free).
    """
    pairing = _pair(a, b, offset, align, root, mask, feet, mapping)
    profile, weights = _mix_weights(pairing, mix)
    joints = list(range(a.skeleton.joint_count))
    mixed, turned, held = pairing.held(pairing.mix(*pairing.poses(), weights, joints), weights, joints)
    metadata = dict(a.metadata)
    metadata["warp"] = pairing.timing.frames
    metadata["blend"] = {"mix": float(profile[0]) if np.all(profile == profile[0]) else "profile",
                         "offset": float(offset), "align": align, "root": root, "feet": feet,
                         "mask": mask if isinstance(mask, str | None) else "custom",
                         "b": b.metadata.get("source"), "time": pairing.timing.report}
    metadata["feet"] = {**pairing.notes, **held}
    if feet == PLANTED and pairing.feet is None:
        metadata["warnings"] = [*metadata.get("warnings", []),
                                f"feet left free: {pairing.notes.get('reason', 'no contacts')}"]
    pose = replace(pairing.a, rotations=mixed.rotations, translations=mixed.translations,
                   scales=None if pairing.a.scales is None and pairing.b.scales is None else mixed.scales,
                   metadata=metadata).held()
    return cast(Motion, pose if isinstance(a, Pose) else _channels_of(a, pose, pairing, weights, turned))


def _channels_of(a: Clip, pose: Pose, pairing: _Pairing, weights: FloatArray, turned: list[int]) -> Clip:
    """The blend as channel values in ``a``'s layout: ``a``'s own values where its joints do not mix,
    ``b``'s own where they mix fully and ``b``'s values mean the same, the rest encoded continuous from
    ``a``'s first angles.  Joints the held feet ``turned`` are encoded."""
    skeleton = a.skeleton
    b_clip = pairing.b_onto_a if isinstance(pairing.b_onto_a, Clip) else None
    from_a = np.all(weights == 0.0, axis=0)
    from_b = np.all(weights == 1.0, axis=0) & np.array_equal(pairing.timing.frames, np.round(pairing.timing.frames))
    from_b &= np.array([b_clip is not None and _same_joint(skeleton, b_clip.skeleton, j)
                        for j in range(skeleton.joint_count)])
    from_a[turned] = from_b[turned] = False
    if pairing.root == "b":  # (the heading root's path at weight 0 is a's own)
        from_a[pairing.root_joint] = False
    if pairing.root in ("a", "heading") or pairing.timing.loops.any():
        from_b[pairing.root_joint] = False
    starts = skeleton.channel_starts()
    motion = a.motion.copy()
    b_rows = pairing.timing.frames.astype(np.int64)
    for joint in np.flatnonzero(from_b & ~from_a):  # only where b is a clip
        motion[:, starts[joint]:starts[joint + 1]] = cast(Clip, b_clip).motion[b_rows, starts[joint]:starts[joint + 1]]
    encoded = np.flatnonzero(~from_a & ~from_b)
    if len(encoded):
        motion[:, columns(skeleton, encoded)] = encode(skeleton, pose.rotations, pose.translations, pose.scales,
                                                       encoded, first_angles(a))
    return Clip(skeleton.copy(), motion, a.frame_time, a.start_frame, a.unit_in_metres, a.up_axis, pose.metadata)


def _mix_weights(pairing: _Pairing, mix: float | FloatArray) -> tuple[FloatArray, FloatArray]:
    """The mix profile ``(F,)`` (checked) and each joint's weight at each frame ``(F, J)`` (mask included)."""
    count = pairing.a.frame_count
    profile = np.asarray(mix, dtype=np.float64)
    if profile.ndim == 0:
        profile = np.full(count, float(profile))
    if profile.shape != (count,) or not np.all(np.isfinite(profile)):
        raise ValueError(f"mix must be a finite number or {count} finite values (one per frame of a)")
    return profile, profile[:, None] * pairing.weights[None, :]


def envelope(a: Clip | Pose, b: Clip | Pose, joint: str | int, mixes: Sequence[float] | FloatArray,
             **blend_options: Any) -> FloatArray:
    """World path of ``joint`` for each mix, ``(len(mixes), frames of a, 3)``, in ``a``'s axes and units.

    ``blend_options`` are :func:`blend`'s keywords.  Only the joint's chain is
    posed (with held feet, the legs too where they move it), for all mixes at
    once.  A mix may also be a per-frame profile (``mixes`` of shape ``(n, frames)``).
    """
    index = _joint_index(a.skeleton, joint)
    pairing = _pair(a, b, **blend_options, chain=a.skeleton.chain(index))
    values = np.asarray(mixes, dtype=np.float64)
    count = a.frame_count
    if values.ndim == 1:
        values = np.repeat(values[:, None], count, axis=1)
    if values.ndim != 2 or values.shape[1] != count or not np.all(np.isfinite(values)):
        raise ValueError(f"mixes must be finite numbers or profiles of {count} values")
    return pairing.positions(index, values)


def _read_joints(a: Clip | Pose, b: Clip | Pose, chain: Sequence[int], frame: int,
                 options: Mapping[str, Any]) -> tuple[Pose, Pose] | None:
    """Two clips' poses with only what posing ``chain`` at ``a``'s ``frame`` reads decoded: the body
    root's joints and the joints that move at every frame (the root's path, the body checks), the rest of
    the chain at that frame and at ``b``'s frames paired with it, every other joint and frame held at its
    first frame's pose.  Only where nothing else is read: frame by frame or stretched timing (a time warp
    reads every frame's features), no held feet on the chain, ``b`` already on ``a``'s body (else it is
    retargeted, which reads all).  ``None`` where the whole clips are needed."""
    align, offset = options.get("align", "none"), float(options.get("offset", 0))
    if not (isinstance(a, Clip) and isinstance(b, Clip) and a.skeleton.same_joints(b.skeleton)
            and align in ("none", "scale") and np.isfinite(offset) and 0 <= frame < a.frame_count
            and b.frame_count and not (align == "scale" and offset > b.frame_count - 1)):
        return None
    skeleton = a.skeleton
    if options.get("feet", FEET.default) == PLANTED and \
            _holds_feet_on(skeleton, options.get("mapping") or map_skeleton(skeleton), chain):
        return None
    children = skeleton.child_lists()
    root = [skeleton.parents.index(-1)]
    while len(children[root[-1]]) == 1:  # where body_root looks
        root.append(children[root[-1]][0])
    moving = [j for j, layout in enumerate(skeleton.channels)
              if any(c in MOVE_CHANNELS or c == SCALE_CHANNEL for c in layout)]
    everywhere = sorted(set(root) | set(moving))
    pose_a, pose_b = Pose.of(a, everywhere), Pose.of(b, everywhere)
    if not same_body(pose_a, pose_b):
        return None
    paired = float(_timing(pose_a, pose_b, offset, align, _no_features, (None, None)).frames[frame])
    rest = np.array([j for j in chain if j not in everywhere], dtype=np.int64)
    b_rows = np.unique([int(np.floor(paired)), int(np.ceil(paired))])
    for pose, clip, rows in ((pose_a, a, np.array([frame])), (pose_b, b, b_rows)):
        if len(rest):
            turns, moves, scales = decode(skeleton, clip.motion[rows], rest)
            pose.rotations[np.ix_(rows, rest)], pose.translations[np.ix_(rows, rest)] = turns, moves
            if pose.scales is not None:
                pose.scales[np.ix_(rows, rest)] = scales
    return pose_a, pose_b


def _no_features(motion: Pose, frames: FloatArray) -> FloatArray:
    raise AssertionError("frame by frame and stretched timings read no features")


def solve_mix(a: Clip | Pose, b: Clip | Pose, joint: str | int, frame: int, target: Sequence[float] | FloatArray, *,
              bounds: tuple[float, float] = (0.0, 1.0), **blend_options: Any) -> tuple[float, float]:
    """The mix within ``bounds`` that brings ``joint`` nearest ``target`` at ``a``'s ``frame`` (0-based).

    Returns ``(mix, distance)``: ``distance`` is what remains, 0 (to rounding)
    when the target is in reach.  The mix is held from the first frame (the
    heading root's path and held feet depend on the frames before).  A scan
    over the bounds, then finer scans around the best; each poses the joint's
    chain at that one frame (with the heading root its path up to it, with
    held feet the legs up to it).
    """
    index = _joint_index(a.skeleton, joint)
    chain = a.skeleton.chain(index)
    decoded = _read_joints(a, b, chain, frame, blend_options)
    if decoded is not None:
        a, b = decoded
    pairing = _pair(a, b, **blend_options, chain=chain)
    if not 0 <= frame < a.frame_count:
        raise ValueError(f"frame {frame} is outside a's {a.frame_count} frames")
    goal = np.asarray(target, dtype=np.float64).reshape(3)
    low, high = (float(v) for v in bounds)
    if not (np.isfinite(low) and np.isfinite(high) and low <= high and np.all(np.isfinite(goal))):
        raise ValueError(f"bounds must be finite with low <= high and the target finite, got {bounds}, {target}")

    def distances(mixes: FloatArray) -> FloatArray:
        return np.linalg.norm(pairing.position_at(index, mixes, frame) - goal, axis=-1)

    grid = np.linspace(low, high, 101)
    while True:
        found = distances(grid)
        best = int(np.argmin(found))
        step = grid[1] - grid[0] if len(grid) > 1 else 0.0
        if step <= 1e-12 * max(1.0, high - low):
            return float(grid[best]), float(found[best])
        grid = np.linspace(max(low, grid[best] - step), min(high, grid[best] + step), 21)
