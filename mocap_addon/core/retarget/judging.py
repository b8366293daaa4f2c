"""A retarget judged against its source as an animator would: soles on the floor, knees that bend, no spins.

:func:`judge` measures, over the source's foot contacts (:mod:`..body.contacts`):
the lowest point of each of the result's feet (heel, ball, toe tip of
:mod:`..body.soles`) above the target's floor and the source's own above its
floor, in leg lengths; each stance's knee flexion at its middle frame against
the source's; frames with a knee straighter than :data:`STRAIGHT` degrees; and
frames where a limb bone turns more than :data:`SPIN` degrees while the source's
turns less than :data:`CALM` (a spin), bone by bone; and how far each forearm and
hand is twisted about its own bone from where the source's rotation would put it
(what a joint of fewer channels could not hold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..body.contacts import find_contacts
from ..body.footing import standing
from ..body.reference import LEG_JOINTS
from ..body.soles import feet_points, lowest
from ..kinematics import forward_kinematics
from ..model import Clip, Skeleton
from ..pose import Pose
from ..rotations import FloatArray, matrix_to_quaternion
from ..transforms import World
from ..vectors import unit
from .transfer import Figure, figure, paired_joints

STRAIGHT = 3.0  # degrees of knee flexion under which a knee is straight
SPIN = 60.0  # degrees a limb bone turns in one frame to spin...
CALM = 20.0  # ...while the source's turns less than this
LIMBS = ("clavicle", "upper_arm", "lower_arm", "hand", "upper_leg", "lower_leg", "foot")
TWISTED = ("upper_arm", "lower_arm", "hand")  # bones whose twist against the source's is measured


@dataclass
class Judgement:
    """What :func:`judge` measured (heights in leg lengths, angles in degrees)."""

    frames: int
    contact_frames: int
    soles: FloatArray  # (F, 2) the result's lowest foot point above the target's floor
    source_soles: FloatArray  # (F, 2) the source's above its own
    planted: NDArray[np.bool_]  # (F, 2) the source's contacts
    knees: FloatArray  # (F, 2) the result's knee flexion
    source_knees: FloatArray  # (F, 2)
    stances: list[tuple[int, int]]  # (middle frame, side) of each stance inside the take
    spins: int  # frames in which some limb spins
    limb_spins: dict[str, int]  # canonical limb -> frames in which it spins
    twists: dict[str, FloatArray]  # canonical arm bone -> (F,) its turn about itself against the source's
    arm_turns: dict[str, FloatArray]  # canonical arm bone -> (F,) its whole turn against the source's

    def on_floor(self, within: float = 0.015) -> float:
        """Share of contact frames with the lowest foot point within ``within`` of the floor."""
        return float(np.mean(np.abs(self.soles[self.planted]) <= within)) if self.planted.any() else 1.0

    def highest(self) -> float:
        """The lowest foot point's greatest height over contact frames (a foot hovering while it should stand)."""
        return float(self.soles[self.planted].max()) if self.planted.any() else 0.0

    def deepest(self) -> float:
        """The lowest foot point's lowest height over contact frames (negative: under the floor)."""
        return float(self.soles[self.planted].min()) if self.planted.any() else 0.0

    def source_deepest(self) -> float:
        return float(self.source_soles[self.planted].min()) if self.planted.any() else 0.0

    def stance_knee_errors(self) -> FloatArray:
        """Each stance's knee flexion minus the source's, at its middle frame."""
        return np.array([self.knees[f, s] - self.source_knees[f, s] for f, s in self.stances])

    def straight(self) -> tuple[int, int]:
        """Knee-frames straighter than :data:`STRAIGHT`: the result's and the source's."""
        return int((self.knees < STRAIGHT).sum()), int((self.source_knees < STRAIGHT).sum())


def judge(source: Clip | Pose, target: Clip | Pose | Skeleton, result: Clip | Pose) -> Judgement:
    """``result`` (``source`` retargeted onto ``target``) measured (see the module notes)."""
    source_figure, target_figure = figure(source, None, "source"), figure(target, None, "target")
    source_names = _names(source_figure)
    contacts = find_contacts(source, source_names)
    stand = standing(target, _names(target_figure), target_figure.world.T @ np.array([0.0, 1.0, 0.0]))
    world, source_world = forward_kinematics(result), forward_kinematics(source)
    soles = _soles(world, target_figure, stand.up, stand.floor) / stand.leg
    source_soles = _soles(source_world, source_figure, contacts.up, contacts.floor) / contacts.leg
    knees, source_knees = _flexion(world, target_figure), _flexion(source_world, source_figure)
    limbs = [f"{limb}_{side}" for limb in LIMBS for side in "lr"
             if f"{limb}_{side}" in target_figure.canonical and f"{limb}_{side}" in source_figure.canonical]
    spun = (_turns(world, target_figure, limbs) > SPIN) & (_turns(source_world, source_figure, limbs) < CALM)
    planted = contacts.planted
    return Judgement(result.frame_count, int(planted.sum()), soles, source_soles, planted, knees, source_knees,
                     _stances(planted), int(spun.any(axis=1).sum()),
                     {limb: int(spun[:, k].sum()) for k, limb in enumerate(limbs)},
                     *_arm_errors(world, source_world, target_figure, source_figure))


def _names(figure: Figure) -> dict[str, str | None]:
    return {figure.skeleton.names[j]: c for c, j in figure.canonical.items()}


def _soles(world: World, figure: Figure, up: FloatArray, floor: float) -> FloatArray:
    return lowest(feet_points(figure.feet(), world), up, floor)


def _flexion(world: World, figure: Figure) -> FloatArray:
    """Each knee's flexion (degrees, 0 straight) ``(F, 2)``."""
    out = []
    for side in "lr":
        hip, knee, ankle = (world.positions[:, figure.canonical[f"{j}_{side}"]] for j in LEG_JOINTS)
        thigh, shin = knee - hip, ankle - knee
        cosine = np.sum(thigh * shin, axis=-1) / np.maximum(
            np.linalg.norm(thigh, axis=-1) * np.linalg.norm(shin, axis=-1), 1e-300)
        out.append(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))
    return np.stack(out, axis=1)


def _turns(world: World, figure: Figure, limbs: list[str]) -> FloatArray:
    """Degrees each limb bone's world rotation turns from one frame to the next ``(F - 1, limbs)``."""
    if not limbs or world.positions.shape[0] < 2:
        return np.zeros((max(world.positions.shape[0] - 1, 0), len(limbs)))
    rotations = world.rotations[:, [figure.canonical[limb] for limb in limbs]]
    step = np.swapaxes(rotations[:-1], -1, -2) @ rotations[1:]
    cosine = (np.trace(step, axis1=-2, axis2=-1) - 1.0) / 2.0
    return np.asarray(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))


def _arm_errors(world: World, source_world: World, target: Figure,
                source: Figure) -> tuple[dict[str, FloatArray], dict[str, FloatArray]]:
    """How far ``(F,)`` (degrees) each arm bone of the result is turned about itself, and turned at all, from
    the world rotation the source's bone gives it (the retarget's mapping of reference poses and axes, see
    :mod:`.transfer`).  A bone is the segment reaching the next mapped joint: its last joint's frame,
    placed from the mapped joint by the reference pose (or following its own partner where paired by name)."""
    world_change = target.world.T @ source.world
    body_change = source.body.T @ target.body
    pairs = paired_joints(source, target)
    twists, turns = {}, {}
    for limb in (f"{bone}_{side}" for bone in TWISTED for side in "lr"):
        joint, partner = target.canonical.get(limb), source.canonical.get(limb)
        if joint is None or partner is None or joint not in target.ends:
            continue
        end = target.ends[joint]
        last = target.skeleton.parents[end]
        if last in pairs:  # paired by name: it follows its own partner
            partner = pairs[last]
        right = source.reference[partner].T @ body_change @ target.reference[last]
        expected = world_change @ source_world.rotations[:, partner] @ right
        off = matrix_to_quaternion(np.swapaxes(expected, -1, -2) @ world.rotations[:, last])
        bone = target.rest_rotations[last].T @ (target.rest_positions[end] - target.rest_positions[last])
        sign = np.where(off[:, 0] < 0, -1.0, 1.0)  # q and -q are one rotation
        twists[limb] = np.degrees(2.0 * np.arctan2(sign * (off[:, 1:] @ unit(bone)), sign * off[:, 0]))
        turns[limb] = np.degrees(2.0 * np.arccos(np.clip(np.abs(off[:, 0]), 0.0, 1.0)))
    return twists, turns


def _stances(planted: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """The middle frame and side of every run of contact that neither begins nor ends the take."""
    out = []
    frames = len(planted)
    for side in range(2):
        edges = np.flatnonzero(np.diff(np.concatenate([[0], planted[:, side].astype(np.int8), [0]])))
        for start, stop in zip(edges[::2], edges[1::2]):
            if start > 0 and stop < frames:
                out.append(((int(start) + int(stop) - 1) // 2, side))
    return out
