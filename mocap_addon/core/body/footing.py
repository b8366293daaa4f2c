"""Feet on the floor: where a planted foot is held, and the two-bone leg IK that holds it there.

Works on arrays of world positions and rotations (one side of one clip, or any
number of legs at once), so retargeting, blending and the motion graph share it:

* :func:`pinned_ankles`: for each frame, where the ankle should be.  While the
  ankle touches the floor it stays where its contact began; once only the ball
  of the foot touches, the ball stays where it was and the ankle follows the
  foot's own turn about it.  After a contact the hold fades out over ``EASE``
  seconds (smoothstep), so nothing snaps.
* :func:`two_bone_ik`: the turns of the thigh and the shin that bring the ankle
  to its target with the knee bending only about its own hinge axis (closed
  form, bone lengths kept); where the target is out of reach the leg
  straightens towards it and the miss is returned.

On clips: :func:`standing` (a figure's floor and planted ankle height, from its
captures or its rest) and :func:`plant_feet` (a retarget stood on the target's
floor, its legs solved during the source's contacts), which ``retarget`` uses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..kinematics import forward_kinematics
from ..model import ROTATION_CHANNELS, TRANSLATION_CHANNELS, Clip, Skeleton
from ..pose import Pose
from ..rotations import FloatArray, matrix_to_quaternion, quaternion_continuity, quaternion_to_matrix
from ..transforms import World
from ..vectors import dot, turned_about, unit
from .contacts import Contacts, find_contacts, floor_height, leg_length, sole_points, standing_joints
from .soles import Foot, across, feet_points, pitch

EASE = 0.15  # seconds over which a hold fades in before its contact and out after it
BENT_PLANE = (5.0, 15.0)  # degrees of knee bend over which its axis turns from the anatomical one to its plane's
SOFTNESS = 0.02  # of the leg's length: how near straight a held leg is eased (see two_bone_ik)
MISSED = 1e-3  # leg lengths: an ankle held farther than this from where it should be has missed
HIPS_EASE = 0.05  # seconds: the standard deviation of the smoothing of the hips' lift between stances
SWAY = 0.1  # of the leg's length: the farthest the hips move across the floor so both stance knees bend as wanted
SWAY_EASE = 0.15  # seconds: the standard deviation of the smoothing of that move (and of the pelvis' roll)
ROLL = 10.0  # degrees: the most the pelvis rolls so two stance legs of the wanted spans reach from one height
CAP_EASE = 0.02  # seconds: the same for where the legs' reach holds the hips down


def pinned_ankles(ankles: FloatArray, balls: FloatArray, touching: NDArray[np.bool_], frame_time: float,
                  guide_ankles: FloatArray | None = None, guide_balls: FloatArray | None = None,
                  heights: tuple[FloatArray, FloatArray] | None = None,
                  ease: float = EASE, every_hold: bool = False) -> tuple[FloatArray, FloatArray]:
    """Ankle targets ``(F, ..., 3)`` and hold weights ``(F, ...)`` for free ``ankles`` and ``balls``
    ``(F, ..., 3)`` and which of them touch ``(F, ..., 2)`` (ankle, ball).

    Held, the target is the ankle where its contact began (ankle touching), or
    the ball where the ankle left the floor less the foot's current
    ankle-to-ball line (ball touching only); between contacts it is the free
    ankle moved by the last hold's offset fading out and the next one's fading
    in, each over ``ease`` seconds (``weight``: how much of a hold applies).  With
    ``guide_ankles`` and ``guide_balls`` (the source's, in these axes and
    units) a hold moves as they move from the start of its contact: a foot
    rolls as the source's does, and slides no more.  ``heights``: an up
    vector ``(3,)`` and the heights ``(F, ...)`` along it of held ankles (of
    every hold, the ball's too, with ``every_hold``).
    """
    frames = ankles.shape[0]
    shape = (frames, -1, 3)
    flat_ankles, flat_balls = ankles.reshape(shape), balls.reshape(shape)
    guides = [np.zeros_like(flat_ankles) if g is None else g.reshape(shape) for g in (guide_ankles, guide_balls)]
    flat_touching = touching.reshape(frames, -1, 2)
    legs = flat_ankles.shape[1]
    offsets = np.zeros_like(flat_ankles)  # held - free ankle, while held
    held = np.zeros((frames, legs), dtype=bool)
    index = np.arange(frames)[:, None]
    for leg in range(legs):
        ankle_down, ball_down = flat_touching[:, leg, 0], flat_touching[:, leg, 1] & ~flat_touching[:, leg, 0]
        foot = flat_balls[:, leg] - flat_ankles[:, leg]
        guide_ankle, guide_ball = guides[0][:, leg], guides[1][:, leg]
        # Ankle holds: the ankle where each run of ankle contact began (moved as the guide moved since).
        start = _run_starts(ankle_down)
        ankle_held = flat_ankles[start, leg] + guide_ankle - guide_ankle[start]
        if heights is not None:
            up, level = heights[0], heights[1].reshape(frames, -1)[:, leg]
            ankle_held += (level - ankle_held @ up)[:, None] * up
        # Ball holds: the ball where the ankle left the floor (with the ankle as it was held then), or
        # where a run of ball-only contact began without the ankle down before it.
        first = _run_starts(ball_down)
        before = np.maximum(first - 1, 0)
        after_ankle = (first > 0) & ankle_down[before]
        ball_start = np.where(after_ankle[:, None], ankle_held[before] + foot[before], flat_balls[first, leg])
        ball_held = ball_start + guide_ball - guide_ball[np.where(after_ankle, before, first)]
        wanted = np.where(ankle_down[:, None], ankle_held, ball_held - foot)
        if heights is not None and every_hold:
            wanted += (level - wanted @ up)[:, None] * up
        down = ankle_down | ball_down
        offsets[:, leg] = np.where(down[:, None], wanted - flat_ankles[:, leg], 0.0)
        held[:, leg] = down
    # Between holds, the last one fades out and the next one fades in (weights summing to at most 1).
    last = np.maximum.accumulate(np.where(held, index, -1), axis=0)
    following = np.minimum.accumulate(np.where(held, index, frames)[::-1], axis=0)[::-1]
    fade_out = np.where(last >= 0, smooth_fall((index - last) * frame_time / max(ease, 1e-12)), 0.0)
    fade_in = np.where(following < frames, smooth_fall((following - index) * frame_time / max(ease, 1e-12)), 0.0)
    total = np.maximum(fade_out + fade_in, 1.0)
    legs_index = np.arange(legs)[None, :]
    between = (fade_out / total)[..., None] * offsets[np.maximum(last, 0), legs_index] + (
        fade_in / total)[..., None] * offsets[np.minimum(following, frames - 1), legs_index]
    weight = np.where(held, 1.0, (fade_out + fade_in) / total)
    targets = flat_ankles + np.where(held[..., None], offsets, between)
    return targets.reshape(ankles.shape), weight.reshape(ankles.shape[:-1])


def mixed_holds(points: tuple[FloatArray, FloatArray], touching: tuple[NDArray[np.bool_], NDArray[np.bool_]],
                turns: tuple[FloatArray, FloatArray], mixes: FloatArray,
                up: FloatArray) -> tuple[NDArray[np.bool_], FloatArray, FloatArray]:
    """Where the feet of a mix of two motions touch, and how their holds move: for :func:`pinned_ankles`.

    ``points`` ``(F, 2, 2, 3)``: each motion's ankles and balls of the feet
    (sides ``l, r``) in one world; ``touching`` ``(F, 2, 2)``: which of them touch
    the floor; ``turns`` ``(..., F)``: the angle about ``up`` from each motion's
    heading to the mix's; ``mixes`` ``(..., F, 2)``: each leg's mix (0 the first
    motion, 1 the second).  A point of the mix touches where the mix of the
    two's touching is over one half, or both touch: the first's contacts below
    mix 0.5, the second's above, where both touch at 0.5 (a stance lasting
    while either touches outlasts the hips' reach: the leg straightens, then
    snaps back as the hold eases out).  Its guide moves, each frame, as the
    motions' points that touch at both ends of the step move (turned into the
    mix's heading), weighted by the mix (the first's alone at mix 0, the
    second's at 1; both where neither touches), so a hold slides no more than
    the one sliding more; a held ankle's height is the two ankles' heights
    mixed by the mix (whether they touch or not: a level that switched to the
    touching ankles' alone would jump where one contact ends, and the knee with
    it).  Returns touching ``(..., F, 2, 2)``, guides ``(..., F, 2, 2, 3)`` and
    ankle heights along ``up`` ``(..., F, 2)``.
    """
    first, second = (np.asarray(t, dtype=np.float64) for t in touching)
    share = np.asarray(mixes, dtype=np.float64)[..., None]  # (..., F, 2, 1): a leg's mix for both its points
    mixed = ((1.0 - share) * first + share * second > 0.5) | (first * second > 0.0)
    moves = [turned_about(up, np.diff(p, axis=0), turn[..., :-1, None, None]) for p, turn in zip(points, turns)]
    both = [t[1:] * t[:-1] for t in (first, second)]
    weight_a, weight_b = _touching_weights(share[..., :-1, :, :], both[0], both[1])
    step = weight_a[..., None] * moves[0] + weight_b[..., None] * moves[1]
    guides = np.concatenate([np.zeros_like(step[..., :1, :, :, :]), np.cumsum(step, axis=-4)], axis=-4)
    heights = [p[:, :, 0] @ up for p in points]
    levels = np.asarray(heights[0] + share[..., 0] * (heights[1] - heights[0]), dtype=np.float64)
    return np.asarray(mixed), guides, levels


def _touching_weights(share: FloatArray, first: FloatArray, second: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Weights (summing to 1) of two motions' points by the mix ``share`` among those touching (``first``,
    ``second``: 1 touching, 0 not); by the mix alone where neither touches."""
    one, other = (1.0 - share) * first, share * second
    total = one + other
    none = total <= 0.0
    one = np.where(none, 1.0 - share, one)
    other = np.where(none, share, other)
    total = np.where(none, 1.0, total)
    return one / total, other / total


def _run_starts(flags: NDArray[np.bool_]) -> NDArray[np.int64]:
    """For each frame, the first frame of the run of ``True`` it belongs to (else of the last run before)."""
    frames = np.arange(len(flags))
    begins = flags & ~np.concatenate([[False], flags[:-1]])
    return np.maximum.accumulate(np.where(begins, frames, 0))


def smooth_fall(t: FloatArray) -> FloatArray:
    """1 at ``t = 0`` falling smoothly to 0 at ``t >= 1`` (smoothstep)."""
    t = np.clip(t, 0.0, 1.0)
    return np.asarray(1.0 - t * t * (3.0 - 2.0 * t))


def two_bone_ik(hip: FloatArray, knee: FloatArray, ankle: FloatArray, target: FloatArray,
                axis: FloatArray, softness: float = 0.0) -> tuple[FloatArray, FloatArray, FloatArray]:
    """World turns ``(F, 3, 3)`` of the thigh (about the hip) and of the shin (about the knee, applied
    before the thigh's) that bring ``ankle`` to ``target``, and the distance still missing ``(F,)``.

    Positions are ``(F, 3)``; ``axis`` ``(F, 3)`` is the knee's hinge axis in
    the world (flexion positive).  The shin turns about it only, by the bend
    that makes the hip-to-ankle distance right (of the two, the one that
    leaves the knee bent forward, else the smaller), then
    the whole leg swings about the hip onto the target.  ``softness`` (a
    fraction of the leg's length): reaches within that of the straight leg and
    beyond what the leg already spans are eased so it straightens smoothly
    instead of snapping from bent to straight (the ankle falls short by at
    most that much).  New thigh world
    rotation: ``thigh_turn @ R_thigh``; new shin: ``thigh_turn @ shin_turn @ R_shin``.
    """
    thigh, shin = knee - hip, ankle - knee
    upper, lower = np.linalg.norm(thigh, axis=-1), np.linalg.norm(shin, axis=-1)
    reach = np.linalg.norm(target - hip, axis=-1)
    longest = upper + lower
    start = np.clip(np.maximum(longest * (1.0 - softness), np.linalg.norm(ankle - hip, axis=-1)), None, longest)
    wanted = np.clip(_softened(reach, longest, longest - start), np.abs(upper - lower), longest)
    cosine = (wanted ** 2 - upper ** 2 - lower ** 2) / np.maximum(2 * upper * lower, 1e-300)
    axis = unit(axis)
    bend = _forward_bend(axis, unit(thigh), unit(shin), cosine)
    shin_turn = rotations_about(axis, bend)
    moved_ankle = knee + (shin_turn @ shin[..., None])[..., 0]
    thigh_turn = _rotations_between(moved_ankle - hip, target - hip)
    return thigh_turn, shin_turn, np.abs(reach - wanted)


def _softened(reach: FloatArray, longest: FloatArray, soft: FloatArray) -> FloatArray:
    """``reach`` unchanged up to ``longest - soft``, beyond it approaching ``longest`` exponentially."""
    start = longest - soft
    beyond = np.maximum(reach - start, 0.0) / np.where(soft > 0, soft, 1.0)
    return np.where((reach > start) & (soft > 0), start + soft * (1.0 - np.exp(-beyond)), reach)


def _forward_bend(axis: FloatArray, thigh: FloatArray, shin: FloatArray, cosine: FloatArray) -> FloatArray:
    """The turn about unit ``axis`` of the unit ``shin`` until its dot product with the unit ``thigh`` is
    ``cosine`` (or as near as it comes): of the two, the one leaving the knee flexed forward (positive about
    ``axis``), the smaller where both or neither do."""
    one, other, _ = angles_to_reach(axis, shin, thigh, cosine)
    turns = np.stack([_wrap(one), _wrap(other)])
    flexion = np.stack([dot(axis, np.cross(thigh, (rotations_about(axis, turn) @ shin[..., None])[..., 0]))
                        for turn in turns])
    forward = flexion > -1e-9
    preferred = np.where(forward[0] == forward[1], np.argmin(np.abs(turns), axis=0), np.argmax(forward, axis=0))
    return turns[preferred, np.arange(turns.shape[1])]


def angles_to_reach(axis: FloatArray, start: FloatArray, toward: FloatArray,
                    cosine: FloatArray | float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The two angles turning ``start`` about unit ``axis`` until its dot product with ``toward`` is
    ``cosine`` (per frame), and whether that is reachable (else both are the nearest angle)."""
    along = dot(axis, start)
    p = dot(start, toward) - along * dot(axis, toward)
    q = dot(np.cross(axis, start), toward)
    radius = np.hypot(p, q)
    ratio = (cosine - along * dot(axis, toward)) / np.where(radius > 0, radius, 1.0)
    reachable = np.abs(ratio) <= 1.0
    spread = np.arccos(np.clip(ratio, -1.0, 1.0))
    middle = np.arctan2(q, p)
    return middle + spread, middle - spread, reachable


def _wrap(angles: FloatArray) -> FloatArray:
    return (angles + np.pi) % (2 * np.pi) - np.pi


def rotations_about(axes: FloatArray, angles: FloatArray) -> FloatArray:
    """Rotations ``(F, 3, 3)`` by ``angles`` about unit ``axes`` ``(F, 3)`` (Rodrigues)."""
    cos, sin = np.cos(angles)[:, None, None], np.sin(angles)[:, None, None]
    x, y, z = axes[:, 0], axes[:, 1], axes[:, 2]
    zero = np.zeros_like(x)
    skew = np.stack([np.stack([zero, -z, y], -1), np.stack([z, zero, -x], -1), np.stack([-y, x, zero], -1)], -2)
    return np.eye(3) + sin * skew + (1 - cos) * (skew @ skew)


def _rotations_between(a: FloatArray, b: FloatArray) -> FloatArray:
    """The smallest rotations ``(F, 3, 3)`` taking the directions of ``a`` onto those of ``b``."""
    a, b = unit(a), unit(b)
    axis = np.cross(a, b)
    size = np.linalg.norm(axis, axis=-1)
    angle = np.arctan2(size, dot(a, b))
    across = np.cross(a, np.eye(3)[np.argmin(np.abs(a), axis=-1)])  # for opposite directions
    return rotations_about(unit(np.where((size > 1e-12)[:, None], axis, across)), angle)




@dataclass
class Standing:
    """How a figure stands: its up vector, floor height along it and planted ankle height above the floor
    (its units), and its leg length."""

    up: FloatArray
    floor: float
    ankle: float
    leg: float


@dataclass
class Planting:
    """What planting the feet did: the figure raised by ``floor_shift`` (target units), frames held per
    side, and the frames and largest distance (leg lengths) by which a held ankle could not be reached."""

    floor_shift: float
    held_frames: tuple[int, int]
    missed_frames: int
    worst_miss: float
    contacts_found: bool = True

    def summary(self) -> str:
        text = (f"feet planted: held {self.held_frames[0]} + {self.held_frames[1]} frames (left + right), "
                f"figure raised {self.floor_shift:.4g} units onto the target's floor")
        if self.missed_frames:
            text += (f"; {self.missed_frames} frames out of the leg's reach (up to {self.worst_miss:.3g} leg "
                     "lengths): the leg straightens toward them")
        return text


def standing(figure: Clip | Pose | Skeleton, mapping: Mapping[str, str | None], up: FloatArray) -> Standing:
    """How ``figure`` stands: a clip of two frames or more by its own captures (its contacts' floor and
    planted ankle height), else its first frame or rest pose standing on its lowest foot point."""
    if not isinstance(figure, Skeleton) and figure.frame_count > 1:
        contacts = find_contacts(figure, mapping)
        height = contacts.planted_height()
        if np.isfinite(height):
            return Standing(contacts.up, contacts.floor, height * contacts.leg, contacts.leg)
    skeleton = figure if isinstance(figure, Skeleton) else figure.skeleton
    clip: Clip | Pose = Clip(_at_rest(skeleton), np.zeros((1, 0)), 1.0)
    if isinstance(figure, Clip) and figure.frame_count:
        clip = Clip(skeleton, figure.motion[:1], figure.frame_time)
    elif isinstance(figure, Pose) and figure.frame_count:
        clip = figure.at([0])
    index = {c: skeleton.index(n) for n, c in mapping.items() if c is not None}
    pose = forward_kinematics(clip)
    feet = [index[f"foot_{side}"] for side in "lr"]
    floor = floor_height(sole_points(clip, pose, feet), up)
    legs = [[index[f"{j}_{side}"] for j in ("upper_leg", "lower_leg", "foot")] for side in "lr"]
    ankle = float(np.mean(pose.positions[0, feet] @ up)) - floor
    return Standing(up, floor, ankle, leg_length(pose.positions, legs))


def _at_rest(skeleton: Skeleton) -> Skeleton:
    """The skeleton with no channels: its rest pose as a clip of no values."""
    rest = skeleton.copy()
    rest.position_replaces_offset[:] = False
    rest.channels = [() for _ in skeleton.names]
    return rest


@dataclass
class Gait:
    """What the source's legs do that the target's should do alike, per frame and side ``(F, 2)``: each
    sole's and toes' pitch (radians, see :mod:`.soles`; a foot without a toe line has its toes in line with
    its sole) and each knee's flexion (radians, 0 straight)."""

    sole_pitch: FloatArray
    toe_pitch: FloatArray
    knee_flexion: FloatArray

    @classmethod
    def of(cls, world: World, legs: list[tuple[int, int, int]], feet: tuple[Foot, Foot], up: FloatArray) -> Gait:
        """The gait of a motion in its ``world``: ``legs`` each side's hip, knee and ankle joints, ``feet`` its
        foot models, ``up`` its up vector."""
        points = feet_points(feet, world)  # (F, 2, 3, 3)
        joints = world.positions[:, np.asarray(legs)]  # (F, 2, 3, 3)
        thigh, shin = unit(joints[:, :, 1] - joints[:, :, 0]), unit(joints[:, :, 2] - joints[:, :, 1])
        flexion = np.arccos(np.clip(dot(thigh, shin), -1.0, 1.0))
        sole = pitch(points[:, :, 0], points[:, :, 1], up)
        toes = np.where([foot.toe_line for foot in feet], pitch(points[:, :, 1], points[:, :, 2], up), sole)
        return cls(sole, toes, flexion)

    def flat(self, touching: NDArray[np.bool_]) -> tuple[float, float]:
        """The sole's and toes' pitch while the foot stands flat (median over frames in which both the ankle
        and the ball touch, ``touching`` ``(F, 2, 2)``; 0 where it never does): how this body's feet lie on
        its floor, which its reference pose may not say."""
        flat = touching.all(axis=2)
        if not flat.any():
            return 0.0, 0.0
        return float(np.median(self.sole_pitch[flat])), float(np.median(self.toe_pitch[flat]))

    def relative(self, own: tuple[float, float], other: tuple[float, float]) -> Gait:
        """This gait with its feet's pitch measured from ``own`` flat pitches onto ``other``'s."""
        return Gait(self.sole_pitch - own[0] + other[0], self.toe_pitch - own[1] + other[1], self.knee_flexion)


def plant_feet(result: Pose, target_mapping: Mapping[str, str | None], contacts: Contacts, stand: Standing,
               to_target: FloatArray, knee_axes: dict[str, FloatArray],
               fewer_channels: Callable[[int, FloatArray], FloatArray], feet: tuple[Foot, Foot],
               gait: Gait) -> tuple[Pose, Planting]:
    """``result`` (a retarget, frame for frame with the source whose ``contacts`` and ``gait`` are given)
    standing on the target's floor, its soles on it while the source's feet are planted.

    The whole figure is first raised or lowered so its ankles, over the
    source's ankle contacts, are at the planted height of ``stand`` (median).
    During each contact (eased in and out) each foot, then its toes, turn
    about the horizontal axis across them until its sole (heel to ball of
    ``feet``) and toes have the source's pitch, and the ankle is held (see
    :func:`pinned_ankles`, guided by the source's feet, ``to_target`` turning
    and scaling the source's world into the target's) at the height that puts
    the foot's lowest point on the floor; no foot point goes under the floor.
    The hips are raised or lowered, moved across the floor and the pelvis
    rolled (:func:`_pelvis_roll`) so each stance knee bends as the source's
    (``gait``), within the legs' reach; each leg's thigh and shin turn by
    :func:`two_bone_ik` about the knee's own hinge.  ``knee_axes``:
    ``upper_leg_l`` / ``_r`` -> the knee's flexion axis in the thigh's frame;
    ``fewer_channels(joint, frame_rotations)``: what a joint of fewer than three
    angles holds.  Without contacts (a take too short to find them) the figure
    stands with its lowest foot point on the floor.
    """
    skeleton = result.skeleton
    index = {c: skeleton.index(n) for n, c in target_mapping.items() if c is not None}
    hips = index["hips"]
    world = forward_kinematics(result, standing_joints(skeleton.parents, index))
    positions = world.positions
    up = stand.up
    out = result.copy()
    if not contacts.touching.any():
        points = feet_points(feet, world)
        shift = stand.floor - float((points @ up).min())
        _raise(out, hips, shift * up, world)
        return out, Planting(shift, (0, 0), 0, 0.0, contacts_found=False)
    ankles = positions[:, [index["foot_l"], index["foot_r"]]]
    down = contacts.touching[..., 0]
    shift = stand.floor + stand.ankle - float(np.median((ankles @ up)[down])) if down.any() else 0.0
    _raise(out, hips, shift * up, world)
    lifted = shift * up
    guide = contacts.points @ to_target.T  # the source's feet, turned and scaled into the target's world
    _, weights = pinned_ankles(ankles, ankles, contacts.touching, result.frame_time)
    soles = [_pitched_foot(foot, world, up, gait, side, weights[:, side]) for side, foot in enumerate(feet)]
    balls = np.stack([sole.ball for sole in soles], axis=1) + lifted
    level = stand.floor - np.stack([sole.lowest for sole in soles], axis=1)  # ankles putting soles on the floor
    targets, weights = pinned_ankles(ankles + lifted, balls, contacts.touching, result.frame_time, guide[..., 0, :],
                                     guide[..., 1, :], (up, level), every_hold=True)
    legs = [Leg.of(index, side, knee_axes[f"upper_leg_{side}"]) for side in "lr"]
    hip_points = positions[:, [leg.thigh for leg in legs]] + lifted
    lengths = [_bone_lengths(positions[0], leg) for leg in legs]
    spans = _spans(lengths, gait.knee_flexion)
    sway, wanted = _hips_placed(hip_points, targets, weights, spans, stand, result.frame_time)
    targets += np.maximum(level - targets @ up, 0.0)[..., None] * up
    reach = np.maximum((1.0 - SOFTNESS) * np.array([sum(pair) for pair in lengths]), spans)
    lift = _capped_lift(hip_points + sway[:, None], targets, weights, reach, wanted, up, result.frame_time)
    _raise(out, hips, lift[:, None] * up + sway, world)
    moved = lifted + lift[:, None] * up + sway
    hip_points = hip_points + (lift[:, None] * up + sway)[:, None]
    rolling = _pelvis_roll(hip_points, targets, weights, spans, reach, up, result.frame_time)
    pelvis = _rolled_pelvis(out, hips, [leg.thigh for leg in legs], rolling, positions[:, hips] + moved, world,
                            fewer_channels)
    hip_points = pelvis.moved(hip_points)

    def lifted_world(joint: int) -> tuple[FloatArray, FloatArray]:
        return pelvis.placed(joint, world.joint_rotations(joint), positions[:, joint] + moved)

    every = np.arange(result.frame_count)
    toes_written, fewer = _written_toes(skeleton, feet)
    for attempt in range(2 if fewer else 1):
        if attempt:  # what feet of fewer channels hold misses the sole's height: move their ankles by the miss
            lower = _ankles_by_the_miss(out, feet, stand, targets, weights, hip_points, reach, result.frame_time)
            _raise(out, hips, lower[:, None] * up, world)
            moved = moved + lower[:, None] * up
        changed, misses = solve_legs(lifted_world, skeleton.parents, legs, [targets[:, s] for s in range(2)],
                                     [every, every], [sole.foot for sole in soles])
        changed.update({foot.toes: (every, _transposed(sole.foot) @ sole.toes)
                        for foot, sole in zip(feet, soles) if foot.toes in toes_written})
        set_local_rotations(out, changed, fewer_channels)
    return out, _planting(shift, down, misses, weights, stand.leg)


def _pelvis_roll(hips: FloatArray, ankles: FloatArray, weights: FloatArray, spans: FloatArray, reach: FloatArray,
                 up: FloatArray, frame_time: float) -> tuple[FloatArray, FloatArray]:
    """A roll ``(F, 3, 3)`` of the pelvis about a horizontal axis through one hip joint (the pivot ``(F, 3)``)
    that, where both legs are held (``weights`` 1), raises the other hip joint of ``hips`` ``(F, 2, 3)`` as far
    above it as its leg's ``spans`` to its ankle target in ``ankles`` want: what no one height of the hips gives
    (legs of different lengths, feet the sway could not reach).  At most :data:`ROLL`, eased as the sway, and
    lowered (eased) where a held leg would stretch past its ``reach``."""
    wanted = _lifts(hips, ankles, spans, up)  # how far each hip joint should rise
    both = (weights >= 1.0).all(axis=1)
    rise = _smoothed(np.where(both, wanted[:, 1] - wanted[:, 0], 0.0), SWAY_EASE / frame_time)
    ceiling = np.where(weights > 0.0, _lifts(hips, ankles, reach, up), np.inf)  # a held leg's farthest
    right, left = np.maximum(rise, 0.0), np.maximum(-rise, 0.0)  # the right hip joint raised, or the left
    right = np.maximum(right + _eased_below(np.minimum(ceiling[:, 1] - right, 0.0), CAP_EASE / frame_time), 0.0)
    left = np.maximum(left + _eased_below(np.minimum(ceiling[:, 0] - left, 0.0), CAP_EASE / frame_time), 0.0)
    rise = right - left
    width = hips[:, 1] - hips[:, 0]
    width = width - (width @ up)[:, None] * up
    size = np.maximum(np.linalg.norm(width, axis=-1), 1e-12)
    limit = np.sin(np.radians(ROLL))
    angle = np.arcsin(np.clip(rise / size, -limit, limit))
    axis = unit(np.cross(width, up))  # turning by +angle about it raises the right hip joint about the left
    pivot = np.where((angle >= 0.0)[:, None], hips[:, 0], hips[:, 1])
    return rotations_about(axis, angle), pivot


@dataclass
class _Roll:
    """The pelvis' roll: a turn ``(F, 3, 3)`` about ``pivot`` ``(F, 3)`` of the ``joints`` that turn with it."""

    turn: FloatArray
    pivot: FloatArray
    joints: set[int]

    def moved(self, points: FloatArray) -> FloatArray:
        """World ``points`` ``(F, ..., 3)`` turned with the pelvis."""
        pivot = self.pivot.reshape(self.pivot.shape[:1] + (1,) * (points.ndim - 2) + (3,))
        turn = self.turn.reshape(self.turn.shape[:1] + (1,) * (points.ndim - 2) + (3, 3))
        return np.asarray((turn @ (points - pivot)[..., None])[..., 0] + pivot)

    def placed(self, joint: int, turns: FloatArray, places: FloatArray) -> tuple[FloatArray, FloatArray]:
        """A joint's world rotations and positions after the roll."""
        return (self.turn @ turns, self.moved(places)) if joint in self.joints else (turns, places)


def _rolled_pelvis(out: Pose, hips: int, thighs: list[int], rolling: tuple[FloatArray, FloatArray],
                   hips_place: FloatArray, world: World, fewer_channels: Callable[[int, FloatArray], FloatArray]
                   ) -> _Roll:
    """Turn ``out``'s hips joint by the ``rolling`` (turn, pivot) of :func:`_pelvis_roll` (world, in place;
    ``hips_place`` its world position ``(F, 3)`` now), its children off the legs turned back so the trunk keeps
    its world rotation.  The roll of the joints that turn with the pelvis (the hips down the legs)."""
    skeleton = out.skeleton
    roll, pivot = rolling
    below = {j for thigh in thighs for j in skeleton.chain(thigh)}
    if hips not in below or not np.any(roll != np.eye(3)):
        return _Roll(np.broadcast_to(np.eye(3), roll.shape), pivot, set())  # nothing turns
    hips_turn = world.joint_rotations(hips)
    parent = skeleton.parents[hips]
    above = np.eye(3) if parent < 0 else world.joint_rotations(parent)
    every = np.arange(out.frame_count)
    changed = {hips: (every, _transposed(above) @ roll @ hips_turn)}
    back = _transposed(hips_turn) @ _transposed(roll) @ hips_turn
    for child in (j for j, p in enumerate(skeleton.parents) if p == hips and j not in below):
        changed[child] = every, back @ quaternion_to_matrix(out.rotations[:, child])
    set_local_rotations(out, changed, fewer_channels)
    _raise(out, hips, (roll @ (hips_place - pivot)[..., None])[..., 0] + pivot - hips_place, world)
    turning = {j for j in below if hips in skeleton.chain(j)} | _descendants_of(skeleton.parents, thighs)
    return _Roll(roll, pivot, turning)


def _descendants_of(parents: list[int], joints: list[int]) -> set[int]:
    """``joints`` and every joint below them."""
    out = set(joints)
    for joint, parent in enumerate(parents):  # parents come before their children
        if parent in out:
            out.add(joint)
    return out


def _ankles_by_the_miss(out: Pose, feet: tuple[Foot, Foot], stand: Standing, targets: FloatArray,
                        weights: FloatArray, hips_now: FloatArray, reach: FloatArray, frame_time: float) -> FloatArray:
    """Move the ankle ``targets`` (in place) by how far the feet ``out`` holds miss the floor, and the
    hips' lowering (eased) that keeps every held leg within ``reach``."""
    up = stand.up
    placed = forward_kinematics(out, [foot.tip_joint for foot in feet])
    points = feet_points(feet, placed)
    above = (points @ up).min(axis=-1) - stand.floor
    targets -= (weights * above + (1.0 - weights) * np.minimum(above, 0.0))[..., None] * up
    reachable = np.where(weights > 0.0, _lifts(hips_now, targets, reach, up), np.inf)
    return _eased_below(np.minimum(reachable.min(axis=1), 0.0), CAP_EASE / frame_time)


def _written_toes(skeleton: Skeleton, feet: tuple[Foot, Foot]) -> tuple[list[int], bool]:
    """The toe joints :func:`plant_feet` writes (children of their foot with three rotation channels), and
    whether a foot or its tip joint has fewer than three (what it holds then misses the sole's height)."""
    def turns(joint: int) -> int:
        return sum(c in ROTATION_CHANNELS for c in skeleton.channels[joint])

    toes = [foot.toes for foot in feet
            if foot.toes is not None and skeleton.parents[foot.toes] == foot.foot and turns(foot.toes) == 3]
    return toes, any(turns(j) < 3 for foot in feet for j in (foot.foot, foot.tip_joint))


def _capped_lift(hip_points: FloatArray, targets: FloatArray, weights: FloatArray, reach: FloatArray,
                 wanted: FloatArray, up: FloatArray, frame_time: float) -> FloatArray:
    """The hips' wanted lift, lowered (eased) where a held leg would stretch past its reach."""
    highest = np.where(weights > 0.0, _lifts(hip_points, targets, reach, up), np.inf).min(axis=1)
    excess = np.minimum(highest - wanted, 0.0)  # where a held leg would stretch too far (none held: inf)
    return wanted + _eased_below(excess, CAP_EASE / frame_time)


def _planting(shift: float, down: np.ndarray, misses: list[FloatArray], weights: FloatArray, leg: float) -> Planting:
    """What :func:`plant_feet` reports: the shift, contact frames per foot, held frames missed and the worst."""
    held = [miss[weights[:, s] > 0] for s, miss in enumerate(misses)]
    missed = sum(int(np.count_nonzero(miss > MISSED * leg)) for miss in held)
    worst = max([float(miss.max()) / leg for miss in held if miss.size], default=0.0)
    return Planting(shift, (int(down[:, 0].sum()), int(down[:, 1].sum())), missed, worst)


@dataclass
class _Sole:
    """A foot turned to its wanted pitch: the foot's and toes' world rotations ``(F, 3, 3)``, the ball
    relative to the ankle ``(F, 3)`` and the lowest foot point's height under the ankle ``(F,)``."""

    foot: FloatArray
    toes: FloatArray
    ball: FloatArray
    lowest: FloatArray


def _pitched_foot(foot: Foot, world: World, up: FloatArray, gait: Gait, side: int, weight: FloatArray) -> _Sole:
    """``foot`` (in the motion's ``world``) turned, by ``weight`` of the way, to the gait's sole pitch, then its
    toes to the toe pitch."""
    foot_turn, ankle = world.joint(foot.foot)
    toes_turn, toes = world.joint(foot.tip_joint)
    toes = toes - ankle
    heel, ball = foot_turn @ foot.heel, foot_turn @ foot.ball
    turn = rotations_about(across(foot_turn @ foot.right, up),
                           weight * _wrap(gait.sole_pitch[:, side] - pitch(heel, ball, up)))
    foot_turn, toes_turn = turn @ foot_turn, turn @ toes_turn
    heel, ball, toes = ((turn @ v[..., None])[..., 0] for v in (heel, ball, toes))
    if foot.toe_line:
        tip = toes + toes_turn @ foot.tip
        bend = weight * _wrap(gait.toe_pitch[:, side] - pitch(ball, tip, up))
        toes_turn = rotations_about(across(toes_turn @ foot.toes_right, up), bend) @ toes_turn
    tip = toes + toes_turn @ foot.tip
    lowest = np.minimum(np.minimum(heel @ up, ball @ up), tip @ up)
    return _Sole(foot_turn, toes_turn, ball + ankle, lowest)


def _bone_lengths(positions: FloatArray, leg: Leg) -> tuple[float, float]:
    """A leg's thigh and shin lengths from joint origins ``(J, 3)``."""
    hip, knee, ankle = positions[[leg.thigh, leg.shin, leg.foot]]
    return float(np.linalg.norm(knee - hip)), float(np.linalg.norm(ankle - knee))


def _spans(lengths: list[tuple[float, float]], flexion: FloatArray) -> FloatArray:
    """Hip-to-ankle distances ``(F, 2)`` of legs of these thigh and shin ``lengths`` with knees bent by
    ``flexion`` ``(F, 2)``."""
    upper, lower = (np.array([pair[k] for pair in lengths]) for k in (0, 1))
    return np.asarray(np.sqrt(upper ** 2 + lower ** 2 + 2 * upper * lower * np.cos(flexion)))


def _lifts(hips: FloatArray, ankles: FloatArray, spans: FloatArray, up: FloatArray) -> FloatArray:
    """How far ``(F, 2)`` to move hip joints ``hips`` along ``up`` so they are ``spans`` from ``ankles``
    ``(F, 2, 3)`` (straight above them where the span is shorter than the horizontal distance)."""
    line = hips - ankles
    height = line @ up
    across_squared = np.maximum(np.sum(line * line, axis=-1) - height ** 2, 0.0)
    return np.asarray(np.sqrt(np.maximum(spans ** 2 - across_squared, 0.0)) - height)


def _hips_wanted(hips: FloatArray, ankles: FloatArray, stance: NDArray[np.bool_], spans: FloatArray,
                 up: FloatArray, frame_time: float) -> FloatArray:
    """How far ``(F,)`` to move the hips along ``up`` so each stance leg (``stance`` ``(F, 2)``) spans its
    ``spans`` from hip joints ``hips`` to ankle targets ``ankles`` ``(F, 2, 3)``: where both stand, the
    lower; between stances, eased from one to the next (:data:`HIPS_EASE`)."""
    wanted = np.where(stance, _lifts(hips, ankles, spans, up), np.inf).min(axis=1)
    frames = np.arange(len(wanted))
    known = np.isfinite(wanted)
    if not known.any():
        return np.zeros(len(wanted))
    return _smoothed(np.interp(frames, frames[known], wanted[known]), HIPS_EASE / frame_time)


def _hips_placed(hips: FloatArray, ankles: FloatArray, weights: FloatArray, spans: FloatArray, stand: Standing,
                 frame_time: float) -> tuple[FloatArray, FloatArray]:
    """Where the hips go so each stance leg (held, ``weights`` 1) spans ``spans`` from hip joints ``hips`` to
    ankle targets ``ankles``: a move across the floor ``(F, 3)`` (:func:`_hips_sway`) and a lift ``(F,)``
    (:func:`_hips_wanted`).  ``ankles`` of feet not fully held move with the hips (in place)."""
    up, stance = stand.up, weights >= 1.0
    sway = _hips_sway(hips, ankles, stance, spans, up, SWAY * stand.leg, frame_time)
    ankles += (1.0 - weights)[..., None] * sway[:, None]
    wanted = _hips_wanted(hips + sway[:, None], ankles, stance, spans, up, frame_time)
    ankles += ((1.0 - weights) * wanted[:, None])[..., None] * up
    return sway, wanted


def _hips_sway(hips: FloatArray, ankles: FloatArray, stance: NDArray[np.bool_], spans: FloatArray, up: FloatArray,
               farthest: float, frame_time: float) -> FloatArray:
    """A move across the floor ``(F, 3)`` of hip joints ``hips`` ``(F, 2, 3)`` along the line between the feet,
    so that, where both legs stand (``stance`` ``(F, 2)``), one height of the hips lets each leg span its
    ``spans`` to its ankle target in ``ankles`` ``(F, 2, 3)``: where the feet lie at heights or distances that
    no height alone suits both (one on its toes, a long step).  The smallest such move, at most ``farthest``;
    between double stances eased from one to the next (:data:`SWAY_EASE`), none where none has one.

    Moving by ``s`` along the unit line ``u``, leg ``i`` (hip above its ankle by ``h_i``, across by ``r_i``)
    wants the hips at ``sqrt(X_i) - h_i`` with ``X_i = span_i**2 - |r_i + s u|**2``; ``X_l - X_r`` is linear in
    ``s``, so equal heights are a quadratic's roots (squared once: each root is checked)."""
    line = hips - ankles
    heights = line @ up
    across = line - heights[..., None] * up  # (F, 2, 3)
    between = ankles[:, 1] - ankles[:, 0]
    toward = unit(between - (between @ up)[:, None] * up)
    room = spans ** 2 - np.sum(across * across, axis=-1)  # X_i at s = 0
    slope = -2.0 * np.sum(across * toward[:, None], axis=-1)  # X_i = room_i + slope_i s - s**2
    rise = heights[:, 0] - heights[:, 1]
    linear, constant = slope[:, 0] - slope[:, 1], room[:, 0] - room[:, 1]  # X_l - X_r = linear s + constant
    shifted = rise ** 2 + constant
    quadratic = np.stack([linear ** 2 + 4.0 * rise ** 2, 2.0 * linear * shifted - 4.0 * rise ** 2 * slope[:, 0],
                          shifted ** 2 - 4.0 * rise ** 2 * room[:, 0]], axis=1)
    roots = _quadratic_roots(quadratic)  # (F, 2), NaN where none
    wanted_x = room[:, None] + slope[:, None] * roots[..., None] - roots[..., None] ** 2  # (F, 2 roots, 2 legs)
    heights_there = np.sqrt(np.maximum(wanted_x, 0.0)) - heights[:, None]
    scale = np.maximum(spans.max(axis=1), 1e-12)[:, None]
    valid = (wanted_x.min(axis=-1) >= 0.0) & (np.abs(heights_there[..., 0] - heights_there[..., 1]) <= 1e-6 * scale)
    size = np.where(valid, np.abs(roots), np.inf)
    best = np.argmin(size, axis=1)
    rows = np.arange(len(hips))
    distance = np.clip(roots[rows, best], -farthest, farthest)
    solvable = stance.all(axis=1) & np.isfinite(size[rows, best])
    if not solvable.any():
        return np.zeros_like(hips[:, 0])
    frames = np.arange(len(hips))
    move = distance[:, None] * toward
    return np.stack([_smoothed(np.interp(frames, frames[solvable], move[solvable, axis]), SWAY_EASE / frame_time)
                     for axis in range(3)], axis=1)


def _quadratic_roots(coefficients: FloatArray) -> FloatArray:
    """Both roots ``(F, 2)`` of ``a s**2 + b s + c`` per row of ``coefficients`` ``(F, 3)``: where none is real
    (or a double root rounds so), twice the nearest to one; one, twice, where ``a`` is zero.  Callers check."""
    a, b, c = coefficients.T
    with np.errstate(invalid="ignore", divide="ignore"):
        root = np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0))
        flat = np.abs(a) <= 1e-12 * (np.abs(b) + np.abs(c) + 1e-300)
        single = np.where(np.abs(b) > 0, -c / np.where(np.abs(b) > 0, b, 1.0), np.nan)
        twin = np.stack([(-b - root) / (2.0 * a), (-b + root) / (2.0 * a)], axis=1)
        return np.where(flat[:, None], single[:, None], twin)


def _eased_below(values: FloatArray, width: float) -> FloatArray:
    """``values`` ``(F,)`` smoothed (:func:`_smoothed`) after each took the least within the smoothing's
    reach: smooth, and nowhere above ``values``."""
    radius = int(np.ceil(3 * width))
    if radius < 1 or len(values) < 2:
        return values
    padded = np.concatenate([np.full(radius, values[0]), values, np.full(radius, values[-1])])
    least = np.lib.stride_tricks.sliding_window_view(padded, 2 * radius + 1).min(axis=1)
    return _smoothed(least, width)


def _smoothed(values: FloatArray, width: float) -> FloatArray:
    """``values`` ``(F,)`` averaged under a Gaussian of standard deviation ``width`` frames (edges held)."""
    radius = int(np.ceil(3 * width))
    if radius < 1 or len(values) < 2:
        return values
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / width) ** 2)
    padded = np.concatenate([np.full(radius, values[0]), values, np.full(radius, values[-1])])
    return np.asarray(np.convolve(padded, kernel / kernel.sum(), mode="valid"))


@dataclass
class Leg:
    """A leg's joints (at the hip, the knee and the ankle) and the knee's flexion axis in the thigh's own frame."""

    thigh: int
    shin: int
    foot: int
    knee_axis: FloatArray

    @classmethod
    def of(cls, index: Mapping[str, int], side: str, knee_axis: FloatArray) -> Leg:
        """The leg on ``side`` (``"l"`` or ``"r"``) of a skeleton whose canonical joints are ``index``."""
        return cls(index[f"upper_leg_{side}"], index[f"lower_leg_{side}"], index[f"foot_{side}"], knee_axis)


def solve_legs(world: Callable[[int], tuple[FloatArray, FloatArray]], parents: list[int], legs: list[Leg],
               targets: list[FloatArray], frames: list[NDArray[np.int64]], feet: list[FloatArray] | None = None
               ) -> tuple[dict[int, tuple[NDArray[np.int64], FloatArray]], list[FloatArray]]:
    """New local rotations of each leg's thigh, shin and foot that bring its ankle to ``targets`` ``(F, 3)``
    at ``frames`` (indices), by :func:`two_bone_ik` about the knee's own hinge; the foot keeps its world
    rotation, or takes the one ``feet`` gives (per leg, ``(F, 3, 3)``).  ``world(joint)``: the joint's world
    rotations ``(F, 3, 3)`` and positions ``(F, 3)``.

    Returns joint -> (frames, local rotations ``(k, 3, 3)``, rest included) and each leg's miss ``(k,)``.
    """
    changed: dict[int, tuple[NDArray[np.int64], FloatArray]] = {}
    misses = []
    for number, (leg, target, rows) in enumerate(zip(legs, targets, frames)):
        (thigh, hip), (shin, knee), (foot, ankle) = ((r[rows], p[rows]) for r, p in map(world, (leg.thigh, leg.shin,
                                                                                                 leg.foot)))
        if feet is not None:
            foot = feet[number][rows]
        axis = _knee_axis(np.stack([hip, knee, ankle], axis=1), thigh @ leg.knee_axis)
        thigh_turn, shin_turn, miss = two_bone_ik(hip, knee, ankle, target[rows], axis, SOFTNESS)
        # Joints between the thigh and the shin turn with the thigh, those between the shin and the foot
        # with both; the foot keeps its world rotation.  Only three local rotations change.
        above = {j: world(parents[j])[0][rows] for j in (leg.thigh, leg.shin, leg.foot)}
        changed[leg.thigh] = rows, _transposed(above[leg.thigh]) @ thigh_turn @ thigh
        changed[leg.shin] = rows, _transposed(above[leg.shin]) @ shin_turn @ shin
        changed[leg.foot] = rows, _transposed(thigh_turn @ shin_turn @ above[leg.foot]) @ foot
        misses.append(miss)
    return changed, misses


def _knee_axis(leg: FloatArray, anatomical: FloatArray) -> FloatArray:
    """The axis ``(F, 3)`` a knee bends about in a leg ``(F, 3, 3)`` (hip, knee, ankle): the plane of thigh
    and shin where bent over ``BENT_PLANE[1]`` degrees (oriented as the ``anatomical`` axis), the anatomical
    axis where bent under ``BENT_PLANE[0]``, turning smoothly from one to the other between."""
    thigh, shin = unit(leg[:, 1] - leg[:, 0]), unit(leg[:, 2] - leg[:, 1])
    plane = np.cross(thigh, shin)
    bend = np.degrees(np.arctan2(np.linalg.norm(plane, axis=-1), dot(thigh, shin)))
    plane *= np.where(dot(plane, anatomical) < 0, -1.0, 1.0)[:, None]
    low, high = BENT_PLANE
    share = 1.0 - smooth_fall((bend - low) / (high - low))
    return unit(share[:, None] * unit(plane) + (1.0 - share)[:, None] * unit(anatomical))


def _transposed(rotations: FloatArray) -> FloatArray:
    return np.swapaxes(rotations, -1, -2)


def _raise(pose: Pose, hips: int, lift: FloatArray, world: World) -> None:
    """Move ``pose``'s figure by the world vector ``lift`` (in place): the local translation of the joint
    nearest the root on the hips' chain that has all three translation channels."""
    skeleton = pose.skeleton
    carrier = next((j for j in skeleton.chain(hips) if set(TRANSLATION_CHANNELS) <= set(skeleton.channels[j])), None)
    if carrier is None or not np.any(lift):
        return
    parent = skeleton.parents[carrier]
    shift = np.broadcast_to(lift, (pose.frame_count, 3))
    if parent >= 0:
        shift = (_transposed(world.joint_rotations(parent)) @ shift[..., None])[..., 0] / world.scales[:, parent, None]
    pose.translations[:, carrier] += shift


def set_local_rotations(pose: Pose, changed: dict[int, tuple[NDArray[np.int64], FloatArray]],
                        fewer_channels: Callable[[int, FloatArray], FloatArray] | None = None) -> None:
    """Write joints' new local rotations ``(k, 3, 3)`` (rest included) at some frames (joint -> frames,
    rotations) into ``pose`` (in place), keeping each joint's quaternions continuous in time; with
    ``fewer_channels``, a joint of fewer than three rotation channels holds what they can."""
    skeleton = pose.skeleton
    for joint, (rows, local) in changed.items():
        count = sum(c in ROTATION_CHANNELS for c in skeleton.channels[joint])
        if count == 0:
            continue
        if count < 3 and fewer_channels is not None:
            rest = skeleton.rest_rotations[joint]
            local = rest @ fewer_channels(joint, rest.T @ local)
        column = pose.rotations[:, joint].copy()
        column[rows] = matrix_to_quaternion(local)
        pose.rotations[:, joint] = quaternion_continuity(column)
