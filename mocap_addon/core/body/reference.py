"""Bodies: the canonical reference body, and how any skeleton stands (its axes, reference pose and legs).

The canonical body stands in a T-pose with Y up, +Z forward and its left along
+X, in metres.  Its proportions are data (``data/reference_body.json``): the
segment lengths and landmark heights of Drillis & Contini (1966) as reproduced
in Winter, *Biomechanics and Motor Control of Human Movement* (Fig. 4.1), for a
1.75 m adult; the file says which joints are placed by us between them.

Any other skeleton is read through a mapping of its joints onto the canonical
names (:mod:`.naming`): its body axes come from its rest geometry (up from the
hips to the head, left from the right leg to the left), and its T-pose from its
rest by swinging each mapped bone, without twisting it, onto the direction the
same bone has in the canonical T-pose.
"""

from __future__ import annotations

import functools
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import rotations
from ..model import Skeleton
from ..naming import CANONICAL_JOINTS, CANONICAL_PARENTS
from ..rotations import FloatArray
from ..transforms import compose

REFERENCE_BODY = Path(__file__).parents[1] / "data" / "reference_body.json"
CANONICAL_ROTATION = ("rz", "rx", "ry")  # ZXY, the Biovision order
TOP_JOINTS = ("head", "neck_02", "neck_01", "spine_04", "spine_03", "spine_02", "spine_01")
LEG_JOINTS = ("upper_leg", "lower_leg", "foot")

# The 24 rotations that map coordinate axes onto coordinate axes (signed permutations, determinant +1).
AXIS_ROTATIONS: FloatArray = np.array([m for m in (
    np.diag(signs)[list(order)] for order in itertools.permutations(range(3))
    for signs in itertools.product((1.0, -1.0), repeat=3)) if np.linalg.det(m) > 0])


def other_side(name: str) -> str:
    """The mirror name of a canonical ``_l`` joint (other names are their own mirror)."""
    return name[:-2] + "_r" if name.endswith("_l") else name


@dataclass(frozen=True)
class ReferenceBody:
    """The canonical T-pose in metres: joint origins, leaf bone ends and multi-child bone directions, and
    the anatomy that fixes each bone's twist (``hinges``: name -> upper, middle, lower joint; ``lines``:
    name -> from, to; ``twists``: joint -> the hinge or line measured in its frame and the canonical axis
    it lies along), and its stature."""

    joints: dict[str, FloatArray]
    ends: dict[str, FloatArray]
    bone_toward: dict[str, tuple[str, ...]]
    hinges: dict[str, tuple[str, ...]]
    lines: dict[str, tuple[str, ...]]
    twists: dict[str, tuple[str, FloatArray]]
    stature: float  # metres, crown of the head to the floor

    def leg_length(self) -> float:
        points = [self.joints[f"{joint}_{side}"] for side in "lr" for joint in LEG_JOINTS]
        return float(sum(np.linalg.norm(points[i + 1] - points[i]) for i in (0, 1, 3, 4))) / 2


@functools.cache
def reference_body() -> ReferenceBody:
    """The reference body of ``data/reference_body.json``, both sides, in metres."""
    data = json.loads(REFERENCE_BODY.read_text(encoding="utf-8"))
    stature = float(data["stature_m"])

    def both_sides(table: dict[str, list[float]]) -> dict[str, FloatArray]:
        out = {}
        for name, point in table.items():
            out[name] = stature * np.array(point, dtype=np.float64)
            out[other_side(name)] = out[name] * np.array([-1.0, 1.0, 1.0])
        return out

    def mirrored(table: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
        out = {}
        for name, joints in table.items():
            out[name] = tuple(joints)
            if other_side(name) != name:
                out[other_side(name)] = tuple(other_side(j) for j in joints)
        return out

    anatomy = data["anatomy"]
    twists = {}
    for name, (measure, axis) in anatomy["twists"].items():
        twists[name] = (measure, np.array(axis, dtype=np.float64))
        if other_side(name) != name:
            twists[other_side(name)] = (other_side(measure), np.array(axis, dtype=np.float64) * [1.0, -1.0, -1.0])
    return ReferenceBody(both_sides(data["joints"]), both_sides(data["ends"]), mirrored(data["bone_toward"]),
                         mirrored(anatomy["hinges"]), mirrored(anatomy["lines"]), twists, stature)


def canonical_skeleton(joints: dict[str, FloatArray], ends: dict[str, FloatArray]) -> Skeleton:
    """The canonical hierarchy with these T-pose joint origins and leaf ends (metres), BVH-style:
    identity rest rotations, a 6-channel root whose positions replace its offset, 3 rotations elsewhere."""
    names = list(CANONICAL_JOINTS)
    parents = [names.index(p) if (p := CANONICAL_PARENTS[n]) is not None else -1 for n in names]
    offsets = np.array([joints[n] - (joints[names[p]] if p >= 0 else 0.0) for n, p in zip(names, parents)])
    channels = [(("tx", "ty", "tz") if p < 0 else ()) + CANONICAL_ROTATION for p in parents]
    end_sites = [(ends[n] - joints[n])[None] if n in ends else np.zeros((0, 3)) for n in names]
    return Skeleton(names, parents, offsets, channels, end_sites,
                    position_replaces_offset=np.array([p < 0 for p in parents]))


def posed_geometry(skeleton: Skeleton, translations: FloatArray,
                   scales: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    """World rotations ``(J, 3, 3)`` and origins ``(J, 3)`` with every rotation channel at zero and these
    local translations ``(J, 3)`` (offsets included) and scales ``(J,)`` (a motion's first frame holds
    them where the offsets are empty)."""
    turns = rotations.matrix_to_quaternion(skeleton.rest_rotations).T[:, :, None]
    world, positions, _ = compose(skeleton.parents, turns, np.asarray(translations, dtype=np.float64).T[:, :, None],
                                  None if scales is None else np.asarray(scales, dtype=np.float64)[:, None])
    return rotations.quaternion_to_matrix(world[:, :, 0].T), positions[:, :, 0].T


def nearest_axes(frame: FloatArray) -> FloatArray:
    """The axis rotation nearest to the rotation ``frame`` (3, 3)."""
    return AXIS_ROTATIONS[int(np.argmax(np.einsum("kab,ab->k", AXIS_ROTATIONS, frame)))]


def body_axes(up: FloatArray, left: FloatArray) -> FloatArray:
    """The axis rotation taking a skeleton's vectors to canonical ones, nearest to the frame whose
    ``left`` is +X and ``up`` is +Y (forward = left x up is +Z)."""
    up = up / np.linalg.norm(up)
    left = left - (left @ up) * up
    left = left / np.linalg.norm(left)
    return nearest_axes(np.array([left, up, np.cross(left, up)]))


def world_axes(up: FloatArray) -> FloatArray:
    """The axis rotation taking the signed axis nearest ``up`` to +Y, turning the other axes least."""
    lift = AXIS_ROTATIONS[:, 1] @ (up / np.linalg.norm(up))
    candidates = AXIS_ROTATIONS[lift > lift.max() - 1e-9]
    return candidates[int(np.argmax(np.trace(candidates, axis1=1, axis2=2)))]


def world_up(rest_up: FloatArray) -> FloatArray:
    """The up axis of the world a skeleton stands in, from its rest's up: that axis where it is +Y or +Z
    (the up axes worlds use), else +Y (a rest lying on its side or upside down, as Bandai's)."""
    axis = world_axes(rest_up)[1]
    return axis if axis[1] == 1 or axis[2] == 1 else np.array([0.0, 1.0, 0.0])


def rotation_between(a: FloatArray, b: FloatArray) -> FloatArray:
    """The smallest rotation (3, 3) taking the direction of ``a`` onto that of ``b``."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    axis = np.cross(a, b)
    cosine = float(a @ b)
    if cosine < -1.0 + 1e-12:  # opposite: half a turn about any axis across a
        across = np.cross(a, np.eye(3)[int(np.argmin(np.abs(a)))])
        across /= np.linalg.norm(across)
        return 2.0 * np.outer(across, across) - np.eye(3)
    skew = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + skew + skew @ skew / (1.0 + cosine)


def descendants(parents: list[int]) -> list[np.ndarray]:
    """For every joint, the indices of its subtree (itself included), parents preceding children."""
    members: list[list[int]] = [[j] for j in range(len(parents))]
    for joint in range(len(parents) - 1, -1, -1):
        if parents[joint] >= 0:
            members[parents[joint]].extend(members[joint])
    return [np.array(sorted(m)) for m in members]


def swing(rotations: FloatArray, positions: FloatArray, parents: list[int],
          bones: dict[int, tuple[int, FloatArray]],
          twists: dict[int, tuple[FloatArray, FloatArray]] | None = None) -> tuple[FloatArray, FloatArray]:
    """A pose in which each ``joint -> (end, direction)`` bone points along ``direction``.

    Joints are visited parent first; each one's subtree turns rigidly about the
    joint by the smallest rotation that points the joint-to-end line along the
    direction, then, for a joint of ``twists`` (``joint -> (axis in its own
    frame, wanted world axis)``), about the bone until its axis comes nearest
    the wanted one: the twist is the body's, not the rest's bone axes'.  Bones
    of zero length stay as they are.
    """
    rotations, positions = rotations.copy(), positions.copy()
    subtree = descendants(parents)
    twists = twists or {}

    def turn_subtree(joint: int, turn: FloatArray) -> None:
        members = subtree[joint]
        rotations[members] = turn @ rotations[members]
        positions[members] = positions[joint] + (positions[members] - positions[joint]) @ turn.T

    for joint in sorted(bones):
        end, direction = bones[joint]
        line = positions[end] - positions[joint]
        if np.linalg.norm(line) <= 1e-12 * (1.0 + np.linalg.norm(positions[joint])):
            continue
        turn_subtree(joint, rotation_between(line, direction))
        if joint in twists:
            own, wanted = twists[joint]
            bone = direction / np.linalg.norm(direction)
            turn_subtree(joint, rotation_about(bone, twist_angle(bone, rotations[joint] @ own, wanted)))
    return rotations, positions


def twist_angle(bone: FloatArray, current: FloatArray, wanted: FloatArray) -> float:
    """The angle (radians) about unit ``bone`` that turns ``current`` nearest to ``wanted``."""
    current = current - (current @ bone) * bone
    wanted = wanted - (wanted @ bone) * bone
    return float(np.arctan2(bone @ np.cross(current, wanted), current @ wanted))


def rotation_about(axis: FloatArray, angle: float) -> FloatArray:
    """The rotation (3, 3) by ``angle`` (radians) about unit ``axis``."""
    skew = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * skew + (1.0 - np.cos(angle)) * (skew @ skew)
