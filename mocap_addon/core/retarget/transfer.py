"""Motion onto the canonical skeleton (:func:`to_canonical`) or onto any other skeleton (:func:`retarget`).

Both skeletons are read through their mappings onto the canonical joints.  Each
has a reference pose ``T`` (world joint orientations, by default its rest swung
into a T-pose, see :mod:`..body.reference`), body axes ``B`` (its rest geometry's left, up,
forward as canonical X, Y, Z) and world axes ``A`` (its world's up as canonical
Y: the rest's up where that is +Y or +Z, else +Y, see :func:`..body.reference.world_up`).  A target joint
paired with a source joint (same canonical joint, or same name where neither is
mapped) gets the world rotation::

    W_t = A_t^-1 A_s . W_s . T_s^-1 B_s^-1 B_t T_t

so every mapped bone keeps its world direction (up to the constant change of
world axes) and the figure keeps its facing.  Target joints without a partner
keep their reference local rotation, so joints one skeleton has between two
mapped ones fold into the next mapped joint.  A joint with fewer than three
rotation channels holds the rotation that points its bone where it should:
a one-axis hinge (ASF ``dof rx`` knees and elbows) first has its parent turned
about the parent's own bone until the hinge can reach (closed form), and every
child is computed from what the joint actually holds.  The hips' world position
is scaled by the ratio of leg lengths (thigh + shin), or kept (``root="keep"``).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import rotations
from ..body import reference as bodies
from ..body.anatomy import twist_axes
from ..body.contacts import Contacts, find_contacts, standing_joints
from ..body.footing import Gait, plant_feet, standing
from ..body.footing import angles_to_reach as _angles_to_reach
from ..body.footing import rotations_about as _rotations_about
from ..body.identity import same_body
from ..body.soles import Foot, feet_of
from ..kinematics import forward_kinematics
from ..model import ROTATION_CHANNELS, TRANSLATION_CHANNELS, Clip, Skeleton, encode_joint
from ..model import rotation_order as order_of
from ..naming import CANONICAL_JOINTS, CANONICAL_PARENTS, limb_chain_warnings, map_skeleton
from ..options import BONE_LENGTHS, CANONICAL_FEET, CANONICAL_METHOD, FEET, FREE, HIPS_TRAVEL, PLANTED
from ..pose import Motion, Pose, as_pose, like
from ..rotations import FloatArray, axis_matrices, euler_to_matrix
from ..transforms import World, compose
from ..vectors import dot, unit
from .continuity import continued, largest_steps
from .root_motion import ROOT_MOTION, move_root

REQUIRED = ("hips", "upper_leg_l", "lower_leg_l", "foot_l", "upper_leg_r", "lower_leg_r", "foot_r")
LIMB_JOINTS = tuple(f"{part}_{side}" for side in "lr" for part in ("clavicle", "upper_arm", "lower_arm", "hand",
                                                                   "upper_leg", "lower_leg", "foot"))
STILL = 5.0  # degrees: a joint turning less than this over a take does not move
TURN_COST = 0.3  # radians of a hinge's miss worth one radian less turn (see _best)
LARGEST_MISS = 0.1  # radians: a hinge misses by more than the best candidate only up to this
JUMP = 0.5  # a held rotation changing by more than this (largest matrix element) in one frame has jumped
ROLLS = 3  # secant steps of a one-channel roll for its child's twist (see _rolled)
ROLL_ALONG = 0.4  # ...taken where the roll's axis and the child's bone are this aligned (cosine)
ROLL_CLOSE = 1e-3  # radians: a bone twisted this near the wanted needs no further roll
JUMP_SLACK = 0.05  # how much more a candidate nearer the previous frame may cost (radians of miss)


class MissingJointsError(ValueError):
    """A skeleton lacks canonical joints a conversion needs; ``missing`` lists them."""

    def __init__(self, what: str, missing: list[str]) -> None:
        self.missing = missing
        super().__init__(f"{what} has no joint mapped to {', '.join(missing)} (needed: hips, both legs down "
                         f"to the feet, and a spine, neck or head joint)")


@dataclass
class Figure:
    """A skeleton read through its mapping, with what a transfer needs from it."""

    skeleton: Skeleton
    canonical: dict[str, int]  # canonical joint -> joint
    translations: FloatArray  # (J, 3) local translations (offsets included) of the reference pose
    scales: FloatArray  # (J,) scales of the reference pose
    rest_rotations: FloatArray  # (J, 3, 3) world, every rotation channel zero
    rest_positions: FloatArray  # (J, 3)
    ends: dict[int, int]  # mapped joint -> the mapped joint its bone points at
    body: FloatArray  # B
    world: FloatArray  # A
    reference: FloatArray  # T, (J, 3, 3)
    leg: float

    def paired(self) -> set[int]:
        return set(self.canonical.values())

    def reference_positions(self) -> FloatArray:
        """Joint origins ``(J, 3)`` in the reference pose (the rest's bones turned as ``reference`` turns
        them, the hips where they rest)."""
        positions = self.rest_positions.copy()
        for joint, parent in enumerate(self.skeleton.parents):
            if parent >= 0:
                bone = self.rest_rotations[parent].T @ (self.rest_positions[joint] - self.rest_positions[parent])
                positions[joint] = positions[parent] + self.reference[parent] @ bone
        return positions

    def feet(self) -> tuple[Foot, Foot]:
        """The foot models (left, right) of the reference pose (see :mod:`.body.soles`)."""
        return feet_of(self.skeleton, self.canonical, self.reference, self.reference_positions(), self.body)


def to_canonical(clip: Motion, *, method: str = "rotations", mapping: Mapping[str, str | None] | None = None,
                 lengths: str = "reference", reference: FloatArray | None = None, root: str = "scale",
                 feet: str = CANONICAL_FEET.default) -> Motion:
    """``clip`` on the canonical skeleton: every name of ``naming.CANONICAL_JOINTS``, metres, Y up.

    ``method="rotations"`` (the source's method 1): the canonical body stands in
    its T-pose and each joint's rotation is re-expressed so every mapped bone
    points as in the source.  ``method="lengths"`` (method 2): the source's rest
    pose and joint rotations are kept (re-expressed in canonical axes) and only
    the bone lengths change, along the source's own bone directions.
    ``lengths="reference"`` takes bone lengths from the reference body,
    ``"source"`` from the source (in metres where the file states its unit,
    else scaled so the legs are the reference body's).  ``mapping`` is
    ``naming.map_skeleton``'s result (detected when ``None``); ``reference``
    gives the source's reference pose as world joint rotations ``(J, 3, 3)``
    when its automatic T-pose is wrong (``method="rotations"`` only).  The hips'
    travel is scaled by the canonical/source leg-length ratio (``root="keep"``:
    kept).  ``feet="planted"``: on the canonical floor, feet held while the
    source's are planted (see :func:`retarget`); ``"free"`` (default): exact
    limb directions.  Same frame count, frame time and start frame; a clip
    gives a clip, a pose a pose.
    """
    CANONICAL_METHOD.check(method)
    CANONICAL_FEET.check(feet)
    BONE_LENGTHS.check(lengths)
    if reference is not None and method != "rotations":
        raise ValueError("a reference pose only applies to method 'rotations' (method 2 keeps the rest pose)")
    motion = as_pose(clip)
    source = figure(motion, mapping, "source", reference if method == "rotations" else "rest")
    joints, ends = _canonical_points(motion, source, method, lengths)
    skeleton = bodies.canonical_skeleton(joints, ends)
    target = figure(skeleton, {n: n for n in CANONICAL_JOINTS}, "canonical skeleton", reference="rest")
    metadata = {"source": clip.metadata.get("source"), "canonical": {"method": method, "lengths": lengths}}
    result = _transfer(motion, source, target, root, 1.0, "Y", metadata)
    return like(clip, _planted(motion, result, source, target, skeleton, root) if feet == PLANTED else result)


def retarget(clip: Motion, target: Skeleton | Clip | Pose, *, mapping: Mapping[str, str | None] | None = None,
             target_mapping: Mapping[str, str | None] | None = None, root: str = "scale",
             source_reference: FloatArray | None = None, target_reference: FloatArray | None = None,
             feet: str = FEET.default) -> Motion:
    """``clip``'s motion on ``target``'s skeleton: its names, rest rotations, bone lengths and channel layout.

    Every target joint gets values, mapped or not.  A clip gives a clip (in the
    target's channel layout), a pose a pose.  A ``Clip`` (or ``Pose``) target's first
    frame gives the bone vectors its offsets lack (HTR written by Maya keeps
    them in constant frame translations), and translation channels other than
    the hips' keep those values.  ``mapping`` / ``target_mapping`` are
    ``naming.map_skeleton`` results (detected when ``None``);
    ``source_reference`` / ``target_reference`` replace the automatic T-poses
    (world joint rotations ``(J, 3, 3)``).  ``root="scale"`` scales the hips'
    travel by the target/source leg-length ratio, ``"keep"`` copies it.
    ``feet="planted"`` (default): the figure stands on the target's floor (a
    clip's captures give its floor and planted ankle height, a skeleton's rest
    stands on it) and while the source's feet are planted (:mod:`..body.contacts`)
    the target's are held where their contact began, by two-bone leg IK with
    the knee bending about its own hinge axis, eased in and out over a few
    frames (:mod:`..body.footing`); ``metadata["feet"]`` says what was held and what
    could not be reached.  ``feet="free"``: every mapped bone's exact
    direction, and ``retarget(c, c)`` gives ``c``'s poses, as does
    ``retarget(c, c.skeleton)`` where ``c``'s translation channels agree with
    its offsets.
    """
    FEET.check(feet)
    motion = as_pose(clip)
    source = figure(motion, mapping, "source", source_reference)
    own_captures = motion if isinstance(target, Skeleton) and same_body(motion, target) else None
    prepared = own_captures is None and target_mapping is None and target_reference is None
    target_figure = (_prepared(target, "figure", lambda: figure(target, None, "target")) if prepared
                     else figure(target, target_mapping, "target", reference=target_reference, captures=own_captures))
    if isinstance(target, Skeleton):
        unit, up, metadata = None, "Y", {}
    else:
        unit, up, metadata = target.unit_in_metres, target.up_axis, dict(target.metadata)
    metadata.update(warnings=_mapping_warnings(source, target_figure) + _unmapped_limbs(motion, source, target_figure),
                    retargeted_from=clip.metadata.get("source"))
    result = _transfer(motion, source, target_figure, root, unit, up, metadata)
    if feet == PLANTED:
        result = _planted(motion, result, source, target_figure, target, root)
    if root in ROOT_MOTION:
        up_axis = target_figure.world.T @ np.array([0.0, 1.0, 0.0])
        result = move_root(result, target_figure.canonical["hips"], up_axis, root)
    return like(clip, result)


def _planted(motion: Pose, result: Pose, source: Figure, target: Figure, standing_on: Clip | Pose | Skeleton,
             root: str) -> Pose:
    """``result`` on the target's floor with its feet held during the source's contacts (see :func:`retarget`)."""
    source_mapping = {motion.skeleton.names[j]: c for c, j in source.canonical.items()}
    target_mapping = {target.skeleton.names[j]: c for c, j in target.canonical.items()}
    source_world = forward_kinematics(motion, standing_joints(motion.skeleton.parents, source.canonical))
    contacts = find_contacts(motion, source_mapping, world=source_world)
    stand = _prepared(standing_on, "standing",
                      lambda: standing(standing_on, target_mapping, target.world.T @ np.array([0.0, 1.0, 0.0])),
                      target)
    turn = target.world.T @ source.world
    if (turn @ contacts.up) @ stand.up < np.cos(np.radians(45)):
        result.metadata.setdefault("warnings", []).append(
            "feet left free: the source's motion stands along another axis than its rest's up "
            f"({_axis_name(contacts.up)} in its own axes), so the target's floor is not under it")
        result.metadata["feet"] = {"mode": FREE}
        return result
    left = target.body.T @ np.array([1.0, 0.0, 0.0])  # the knees' flexion axis in the reference pose
    knee_axes = {f"upper_leg_{side}": target.reference[target.canonical[f"upper_leg_{side}"]].T @ left
                 for side in "lr"}
    bone = _bone_vectors(target)
    layouts = target.skeleton.channels
    to_target = turn * (target.leg / source.leg if root != "keep" else 1.0)
    out, planting = plant_feet(result, target_mapping, contacts, stand, to_target, knee_axes,
                               lambda joint, frame: _held(layouts[joint], frame, bone.get(joint)),
                               target.feet(), _gait(source, contacts, source_world, target, standing_on))
    out.metadata["feet"] = {"mode": PLANTED, "floor_shift": planting.floor_shift,
                            "held_frames": list(planting.held_frames), "missed_frames": planting.missed_frames,
                            "worst_miss": planting.worst_miss}
    warnings = out.metadata.setdefault("warnings", [])
    if not planting.contacts_found:
        warnings.append(f"feet not held: no foot contacts found in {motion.frame_count} frames (too short or "
                        "never still), so the figure stands with its lowest foot point on the target's floor")
    elif planting.missed_frames:
        warnings.append(planting.summary())
    return out


def _gait(source: Figure, contacts: Contacts, source_world: World, target: Figure,
          standing_on: Clip | Pose | Skeleton) -> Gait:
    """The source's feet's pitch and knees' flexion, frame by frame (see :class:`.footing.Gait`), its feet's
    pitch measured from how they lie flat on its floor onto how the target's do (in its own captures,
    else its reference pose)."""
    gait = _gait_of(source_world, source, contacts.up)
    own = gait.flat(contacts.touching)
    if isinstance(standing_on, Skeleton) or standing_on.frame_count < 2:
        return gait.relative(own, (0.0, 0.0))

    def flat() -> tuple[float, float]:
        captures = as_pose(standing_on)
        names = {target.skeleton.names[j]: c for c, j in target.canonical.items()}
        placed = forward_kinematics(captures)
        target_contacts = find_contacts(captures, names, world=placed)
        return _gait_of(placed, target, target_contacts.up).flat(target_contacts.touching)

    return gait.relative(own, _prepared(standing_on, "flat", flat, target))


PREPARED_TARGETS = 4  # targets whose preparation a process keeps (a batch retargets every take onto one)
_prepared_parts: OrderedDict[tuple[str, str, int], Any] = OrderedDict()


def _prepared(target: Clip | Pose | Skeleton, part: str, prepare: Callable[[], Any], figured: Any = None) -> Any:
    """``prepare()``: what a retarget measures on its target alone (its figure, how it stands, how flat its
    feet lie), kept by the target's content, so a batch onto one target prepares it once per worker.
    ``figured``: the figure the part is measured with (``None`` for the figure itself), part of the key."""
    if isinstance(target, Skeleton):
        return prepare()
    digest = hashlib.sha1(skeleton_fingerprint(target.skeleton).encode("ascii"))
    digest.update(np.ascontiguousarray(target.motion if isinstance(target, Clip) else target.rotations).tobytes())
    if isinstance(target, Pose):
        digest.update(np.ascontiguousarray(target.translations).tobytes())
    digest.update(repr((target.frame_time, target.unit_in_metres, target.up_axis)).encode("ascii"))
    key = (digest.hexdigest(), part, id(figured) if figured is not None else 0)
    if key in _prepared_parts:
        _prepared_parts.move_to_end(key)
        return _prepared_parts[key]
    value = prepare()
    _prepared_parts[key] = value
    while len(_prepared_parts) > 3 * PREPARED_TARGETS:
        _prepared_parts.popitem(last=False)
    return value


def skeleton_fingerprint(skeleton: Skeleton) -> str:
    """A skeleton's names, parents, offsets, rest rotations and channels, hashed."""
    digest = hashlib.sha1(repr((skeleton.names, skeleton.parents, skeleton.channels)).encode("utf-8"))
    digest.update(np.ascontiguousarray(skeleton.offsets).tobytes())
    digest.update(np.ascontiguousarray(skeleton.rest_rotations).tobytes())
    return digest.hexdigest()


def _gait_of(placed: World, figure: Figure, up: FloatArray) -> Gait:
    legs = [tuple(figure.canonical[f"{j}_{side}"] for j in bodies.LEG_JOINTS) for side in "lr"]
    return Gait.of(placed, [(a, b, c) for a, b, c in legs], figure.feet(), up)


def _mapping_warnings(*figures: Figure) -> list[str]:
    """The naming's limb-chain checks on each figure's mapping (a hand that does not end an arm...)."""
    return [f"{what} mapping: {warning}" for what, shape in zip(("source", "target"), figures)
            for warning in limb_chain_warnings(shape.skeleton, {shape.skeleton.names[j]: c
                                                                for c, j in shape.canonical.items()})]


def _unmapped_limbs(motion: Pose, source: Figure, target: Figure) -> list[str]:
    """Warnings naming each limb joint the source moves (by more than :data:`STILL` degrees against its
    first frame) that the target's mapping leaves out: it stays in the target's reference pose."""
    warnings = []
    for canonical in LIMB_JOINTS:
        if canonical in target.canonical or canonical not in source.canonical:
            continue
        turns = motion.rotations[:, source.canonical[canonical]]
        closeness = np.abs(turns @ turns[0]) if len(turns) else np.ones(1)
        largest = float(np.degrees(2.0 * np.arccos(np.clip(closeness.min(), -1.0, 1.0))))
        if largest > STILL:
            warnings.append(f"{canonical} moves in the source (up to {largest:.0f} degrees) but no target joint is "
                            "mapped to it: it stays in the target's reference pose (map it, or check the "
                            "target's mapping)")
    return warnings


def _axis_name(axis: FloatArray) -> str:
    """``+Y``, ``-Z``... for a signed coordinate axis."""
    index = int(np.argmax(np.abs(axis)))
    return ("+" if axis[index] > 0 else "-") + "XYZ"[index]


def canonical_index(skeleton: Skeleton, mapping: Mapping[str, str | None], what: str) -> dict[str, int]:
    """Canonical joint -> joint index for a mapping, checked: real names, no canonical joint twice,
    ancestors onto ancestors, and the joints a conversion needs (else :class:`MissingJointsError`)."""
    index: dict[str, int] = {}
    for name, canonical in mapping.items():
        if canonical is None:
            continue
        if name not in skeleton.names:
            raise ValueError(f"{what} mapping names {name!r}, which is not one of its joints")
        if canonical not in CANONICAL_PARENTS:
            raise ValueError(f"{what} mapping gives {name!r} the unknown canonical joint {canonical!r}")
        if canonical in index:
            raise ValueError(f"{what} mapping gives {canonical} to both {skeleton.names[index[canonical]]!r} "
                             f"and {name!r}")
        index[canonical] = skeleton.index(name)
    missing = [c for c in REQUIRED if c not in index]
    if not any(c in index for c in bodies.TOP_JOINTS):
        missing.append("head")
    if missing:
        raise MissingJointsError(what, missing)
    subtree = bodies.descendants(skeleton.parents)
    for canonical, joint in index.items():
        above = _mapped_above(canonical, index)
        if above is not None and joint not in subtree[index[above]]:
            raise ValueError(f"{what} mapping: {skeleton.names[joint]!r} ({canonical}) is not below "
                             f"{skeleton.names[index[above]]!r} ({above})")
    return index


def _canonical_children() -> dict[str, list[str]]:
    children: dict[str, list[str]] = {name: [] for name in CANONICAL_JOINTS}
    for name in CANONICAL_JOINTS:
        parent = CANONICAL_PARENTS[name]
        if parent is not None:
            children[parent].append(name)
    return children


def bone_ends(skeleton: Skeleton, index: dict[str, int]) -> dict[int, int]:
    """For each mapped joint but the hips, the mapped joint below it that its bone points at.

    That is the canonical child (``bone_toward`` where there are several: the
    neck over the clavicles, the middle finger over the others), or the first
    mapped joint further down the same canonical chain.
    """
    toward = bodies.reference_body().bone_toward
    children = _canonical_children()
    subtree = bodies.descendants(skeleton.parents)
    ends: dict[int, int] = {}
    for canonical, joint in index.items():
        if canonical == "hips":
            continue
        for option in toward.get(canonical) or children[canonical]:
            step: str | None = option
            while step is not None and step not in index:
                following = toward.get(step) or children[step]
                step = following[0] if following else None
            if step is not None and index[step] != joint and index[step] in subtree[joint]:
                ends[joint] = index[step]
                break
    return ends


def figure(source: Clip | Pose | Skeleton, mapping: Mapping[str, str | None] | None, what: str,
           reference: FloatArray | str | None = None, captures: Clip | Pose | None = None) -> Figure:
    """A skeleton (or a motion's, whose first frame gives the joints' translations) ready for a transfer.

    ``reference``: ``None`` for the automatic T-pose, ``"rest"`` for the rest
    pose, or world joint rotations ``(J, 3, 3)``.  The automatic T-pose twists
    each bone as the body moves in ``captures`` (by default the motion itself;
    see :mod:`..body.anatomy`); a bare skeleton keeps its rest's twists.
    """
    skeleton = source if isinstance(source, Skeleton) else source.skeleton
    if mapping is None:
        mapping = map_skeleton(skeleton)
    index = canonical_index(skeleton, mapping, what)
    scales = np.ones(skeleton.joint_count)
    if not isinstance(source, Skeleton) and source.frame_count:
        first = as_pose(source if isinstance(source, Pose) else Clip(skeleton, source.motion[:1], source.frame_time))
        translations = first.translations[0]
        scales = first.scale_values()[0]
    else:
        translations = skeleton.offsets.copy()
    rest_rotations, rest_positions = bodies.posed_geometry(skeleton, translations, scales)
    top = next(index[c] for c in bodies.TOP_JOINTS if c in index)
    hips = index["hips"]
    left = sum(rest_positions[index[f"{j}_l"]] - rest_positions[index[f"{j}_r"]] for j in bodies.LEG_JOINTS)
    up = rest_positions[top] - rest_positions[hips]
    leg = _leg_length(rest_positions, index)
    if not leg > 0 or np.linalg.norm(up) <= 1e-9 * leg or np.linalg.norm(np.cross(up, left)) <= 1e-9 * leg * leg:
        raise ValueError(f"{what}: its rest pose has no body to measure (legs of no length, or hips, head and "
                         "legs in one line); if its bone vectors are in the frames, pass a clip: its first "
                         "frame gives the bone vectors")
    body = bodies.body_axes(up, left)
    world = bodies.world_axes(bodies.world_up(up))
    ends = bone_ends(skeleton, index)
    if reference is None:
        t_pose = bodies.reference_body().joints
        names = {j: c for c, j in index.items()}
        bones = {j: (e, body.T @ (t_pose[names[e]] - t_pose[names[j]])) for j, e in ends.items()}
        captures = source if captures is None and not isinstance(source, Skeleton) else captures
        twists = {}
        if captures is not None and captures.frame_count:
            twists = {j: (own, body.T @ axis) for j, (own, axis) in twist_axes(captures, index).items()}
        reference = bodies.swing(rest_rotations, rest_positions, skeleton.parents, bones, twists)[0]
    elif isinstance(reference, str):
        reference = rest_rotations
    else:
        reference = np.asarray(reference, dtype=np.float64)
        if reference.shape != (skeleton.joint_count, 3, 3):
            raise ValueError(f"{what} reference pose must be ({skeleton.joint_count}, 3, 3) world rotations, "
                             f"got {reference.shape}")
    return Figure(skeleton, index, translations, scales, rest_rotations, rest_positions, ends, body, world,
                  reference, leg)


def _leg_length(positions: FloatArray, index: dict[str, int]) -> float:
    """Thigh + shin, averaged over both legs."""
    total = 0.0
    for side in "lr":
        hip, knee, ankle = (positions[index[f"{j}_{side}"]] for j in bodies.LEG_JOINTS)
        total += float(np.linalg.norm(knee - hip) + np.linalg.norm(ankle - knee))
    return total / 2


def _canonical_points(clip: Clip | Pose, source: Figure, method: str,
                      lengths: str) -> tuple[dict[str, FloatArray], dict[str, FloatArray]]:
    """Rest joint origins and leaf ends (metres) of the canonical skeleton for this source.

    The reference body's T-pose; for method 2 each mapped bone turned onto the
    direction of the same bone in the source's rest (in the source's body
    axes); with ``lengths="source"`` each mapped stretch as long as the
    source's.  The lowest point ends at height 0.
    """
    reference = bodies.reference_body()
    count = len(CANONICAL_JOINTS)
    leaves = list(reference.ends)
    parents = [CANONICAL_JOINTS.index(p) if (p := CANONICAL_PARENTS[n]) else -1 for n in CANONICAL_JOINTS]
    parents += [CANONICAL_JOINTS.index(n) for n in leaves]
    points = np.array([reference.joints[n] for n in CANONICAL_JOINTS] + [reference.ends[n] for n in leaves])
    if method == "lengths":
        _shape_like(points, parents, source)
    if lengths == "source":
        points = _size_like(points, parents, clip, source)
    points[:, 1] -= points[:, 1].min()
    return ({n: points[i] for i, n in enumerate(CANONICAL_JOINTS)},
            {n: points[count + k] for k, n in enumerate(leaves)})


def _shape_like(points: FloatArray, parents: list[int], source: Figure) -> None:
    """Turn each canonical bone the source maps onto the direction it has in the source's rest."""
    subtree = bodies.descendants(parents)
    joint_of = source.canonical
    canonical_of = {j: c for c, j in joint_of.items()}
    rest = source.rest_positions

    def turn(members: np.ndarray, pivot: int, end: int, start_joint: int, end_joint: int) -> None:
        centre = points[pivot].copy()
        direction = source.body @ (rest[end_joint] - rest[start_joint])
        line = points[end] - centre
        if np.linalg.norm(direction) > 0 and np.linalg.norm(line) > 0:
            points[members] = centre + (points[members] - centre) @ bodies.rotation_between(line, direction).T

    for i, name in enumerate(CANONICAL_JOINTS):
        if name == "hips" or name not in joint_of:
            continue
        start = _mapped_above(name, joint_of)
        assert start is not None  # the hips are always mapped
        above = CANONICAL_JOINTS.index(start)
        if source.ends.get(joint_of[start]) != joint_of[name]:  # not its parent's bone: point its branch
            turn(subtree[_path(parents, above, i)[0]], above, i, joint_of[start], joint_of[name])
        end = source.ends.get(joint_of[name])
        if end is not None:
            turn(subtree[i], i, CANONICAL_JOINTS.index(canonical_of[end]), joint_of[name], end)


def _size_like(points: FloatArray, parents: list[int], clip: Clip | Pose, source: Figure) -> FloatArray:
    """Points with every mapped stretch as long as the source's, in metres where the clip states its
    unit (else in units making the legs the reference body's); the rest scaled alike."""
    reference_leg = bodies.reference_body().leg_length()
    unit = clip.unit_in_metres or reference_leg / source.leg
    index = np.array(parents)
    offsets = points - np.where((index >= 0)[:, None], points[np.maximum(index, 0)], 0.0)
    factor = np.full(len(points), unit * source.leg / reference_leg)
    rest = source.rest_positions
    for name, joint in source.canonical.items():
        start = _mapped_above(name, source.canonical)
        if start is None:
            continue
        path = _path(parents, CANONICAL_JOINTS.index(start), CANONICAL_JOINTS.index(name))
        span = np.linalg.norm(offsets[path].sum(axis=0))
        if span > 0:
            factor[path] = unit * np.linalg.norm(rest[joint] - rest[source.canonical[start]]) / span
    for leaf in range(len(CANONICAL_JOINTS), len(points)):
        factor[leaf] = factor[parents[leaf]]
    offsets *= factor[:, None]
    sized = np.zeros_like(offsets)
    for i, parent in enumerate(parents):
        sized[i] = offsets[i] + (sized[parent] if parent >= 0 else 0.0)
    return sized


def _mapped_above(canonical: str, index: Mapping[str, int]) -> str | None:
    """The nearest canonical ancestor that is mapped."""
    above = CANONICAL_PARENTS[canonical]
    while above is not None and above not in index:
        above = CANONICAL_PARENTS[above]
    return above


def _path(parents: list[int], start: int, stop: int) -> list[int]:
    """The joints after ``start`` down to ``stop`` (``stop`` below ``start``)."""
    path = []
    while stop != start:
        path.append(stop)
        stop = parents[stop]
    return path[::-1]


def paired_joints(source: Figure, target: Figure) -> dict[int, int]:
    """Target joint -> source joint: same canonical joint, or same name where neither is mapped."""
    pairs = {joint: source.canonical[c] for c, joint in target.canonical.items() if c in source.canonical}
    source_mapped, target_mapped = source.paired(), target.paired()
    names = {name: j for j, name in enumerate(source.skeleton.names) if j not in source_mapped}
    for joint, name in enumerate(target.skeleton.names):
        if joint not in target_mapped and name in names:
            pairs[joint] = names[name]
    return pairs


@dataclass(frozen=True)
class _Linked:
    """A target world rotation ``A . W_s[source] . right``: a source joint's world rotation in the
    target's world axes (``A``), times a constant quaternion; kept unevaluated so that a child's rotation
    relative to it needs only the source's local rotations between the two."""

    source: int
    right: FloatArray


class _Source:
    """What a transfer reads of the source motion: the rotation between two joints (the product of the
    local rotations between them where one is the other's ancestor, so no world rotation is built), and
    the world rotation and position of the few joints that need them (their chains composed, cached)."""

    def __init__(self, pose: Pose) -> None:
        self.pose = pose
        self._world: dict[int, tuple[FloatArray, FloatArray]] = {}

    def world(self, joint: int) -> tuple[FloatArray, FloatArray]:
        """World quaternions ``(F, 4)`` and positions ``(F, 3)`` of ``joint``."""
        if joint not in self._world:
            chain = self.pose.skeleton.chain(joint)
            turns, places, _ = compose(list(range(-1, len(chain) - 1)),
                                       self.pose.rotations[:, chain].transpose(2, 1, 0),
                                       self.pose.translations[:, chain].transpose(2, 1, 0),
                                       self.pose.scale_values()[:, chain].T)
            self._world[joint] = turns[:, -1].T, places[:, -1].T
        return self._world[joint]

    def relative(self, upper: int, lower: int) -> FloatArray | None:
        """``conj(W[upper]) * W[lower]`` ``(F, 4)``; ``None`` when they are one joint."""
        if upper == lower:
            return None
        parents, local = self.pose.skeleton.parents, self.pose.rotations
        path = [lower]
        while parents[path[-1]] not in (upper, -1):
            path.append(parents[path[-1]])
        if parents[path[-1]] != upper:
            return rotations.quaternion_multiply(rotations.quaternion_conjugate(self.world(upper)[0]),
                                                 self.world(lower)[0])
        product = local[:, path[-1]]
        for joint in reversed(path[:-1]):
            product = rotations.quaternion_multiply(product, local[:, joint])
        return product


def _unpaired(skeleton: Skeleton, joint: int, reference_local: FloatArray, bone: dict[int, FloatArray]) -> FloatArray:
    """The constant local rotation of a target joint without a partner: its reference pose's, as far as its
    channels can hold it."""
    rest = skeleton.rest_rotations[joint]
    order = order_of(skeleton.channels[joint])
    if not order:
        return rest
    if len(order) < 3:
        return rest @ _held(skeleton.channels[joint], (rest.T @ reference_local[joint])[None], bone.get(joint))[0]
    return reference_local[joint]


def _transfer(motion: Pose, source: Figure, target: Figure, root: str, unit: float | None,
              up_axis: str, metadata: dict) -> Pose:
    """The motion on the target figure's skeleton (see the module docstring for the maths).

    Rotations are unit quaternions.  A fully driven joint's world rotation stays
    :class:`_Linked` (the source joint's between two constants), so its local
    rotation is the source's rotation between the two paired joints between two
    constants: one 4x4 product.  Joints without a partner hold a constant local
    rotation; hinges and joints with fewer than three channels are solved as
    matrices (what their axes can hold) from the source's world rotations.
    """
    HIPS_TRAVEL.check(root)
    skeleton = target.skeleton
    parents = skeleton.parents
    pairs = paired_joints(source, target)
    world_change = rotations.matrix_to_quaternion(target.world.T @ source.world)
    body_change = source.body.T @ target.body
    reference_local = _local(target.reference, parents)
    bone = _bone_vectors(target)
    hinge_of = _hinged_children(skeleton, pairs, bone)
    reading = _Source(motion)

    def linked(joint: int) -> _Linked:
        partner = pairs[joint]
        return _Linked(partner, rotations.matrix_to_quaternion(
            source.reference[partner].T @ body_change @ target.reference[joint]))

    def evaluated(rotation: _Linked | FloatArray) -> FloatArray:
        if isinstance(rotation, _Linked):
            return reading.world(rotation.source)[0] @ rotations.quaternion_product_matrix(world_change,
                                                                                           rotation.right)
        return rotation

    world: dict[int, _Linked | FloatArray] = {}  # quaternions (F, 4), or (1, 4) when constant
    local: dict[int, FloatArray] = {}
    solved = set()  # joints whose world rotation came from a matrix (its sign not continuous)
    shortfall: dict[int, FloatArray] = {}  # joint of fewer channels -> the world rotations it was to hold
    first_child = {parent: joint for joint, parent in reversed(list(enumerate(parents)))}

    def world_of(joint: int) -> FloatArray:
        return rotations.quaternion_to_matrix(evaluated(world[joint]))

    for joint, parent in enumerate(parents):
        rest = skeleton.rest_rotations[joint]
        order = order_of(skeleton.channels[joint])
        if joint in pairs:
            if len(order) == 3 and joint not in hinge_of:
                world[joint] = linked(joint)
                continue
            desired = rotations.quaternion_to_matrix(evaluated(linked(joint)))
        elif parent in shortfall and order:  # takes what its parent's channels could not hold
            desired = shortfall[parent] @ reference_local[joint]
        else:
            local[joint] = rotations.matrix_to_quaternion(_unpaired(skeleton, joint, reference_local, bone))[None]
            world[joint] = local[joint] if parent < 0 else _then(world[parent], local[joint])
            continue
        base = rest if parent < 0 else world_of(parent) @ rest
        if len(order) == 3:
            held = desired
        elif not order:
            held = np.broadcast_to(base, desired.shape)
        else:
            steps = largest_steps(desired)
            held = base @ _held(skeleton.channels[joint], np.swapaxes(base, -1, -2) @ desired, bone.get(joint), steps)
            if (joint not in pairs and joint == first_child[parent] and joint in bone
                    and len(order_of(skeleton.channels[parent])) == 1):
                rolled, held = _rolled(world_of(parent), skeleton.channels[parent], rest, skeleton.channels[joint],
                                       desired, bone[joint], steps)
                world[parent] = rotations.matrix_to_quaternion(rolled)
        if joint in hinge_of:
            child = hinge_of[joint]
            held = _twist_for_hinge(held, skeleton, target, child,
                                    rotations.quaternion_to_matrix(evaluated(linked(child))), bone[child])
        world[joint] = rotations.matrix_to_quaternion(held)
        solved.add(joint)
        if len(order) < 3:
            shortfall[joint] = desired
    return _posed(motion, source, target, root, pairs, _Solved(world, local, solved, reading, evaluated),
                  unit, up_axis, metadata)


@dataclass
class _Solved:
    """What :func:`_transfer` solved: each joint's world rotation (:class:`_Linked` or quaternions), the
    constant local ones, the joints solved as matrices, the source read and how a world rotation evaluates."""

    world: dict[int, _Linked | FloatArray]
    local: dict[int, FloatArray]
    solved: set[int]
    reading: _Source
    evaluated: Callable[[_Linked | FloatArray], FloatArray]


def _posed(motion: Pose, source: Figure, target: Figure, root: str, pairs: dict[int, int], solved: _Solved,
           unit: float | None, up_axis: str, metadata: dict) -> Pose:
    """The target's pose from the world rotations :func:`_transfer` solved: local rotations (continuous where
    solved as matrices) and the placed joints' translations."""
    skeleton, parents, world, local = target.skeleton, target.skeleton.parents, solved.world, solved.local
    frames = motion.frame_count
    turns = np.empty((frames, skeleton.joint_count, 4))
    for joint, parent in enumerate(parents):
        if joint in pairs or joint in solved.solved:
            local[joint] = (solved.evaluated(world[joint]) if parent < 0
                            else _relative(world[parent], world[joint], solved.reading, solved.evaluated))
        turns[:, joint] = local[joint]
        if joint in solved.solved or parent in solved.solved:
            turns[:, joint] = rotations.quaternion_continuity(turns[:, joint])
    moves = np.broadcast_to(target.translations, (frames, skeleton.joint_count, 3)).copy()
    for joint, placed in _placed(solved.reading, source, target, lambda j: solved.evaluated(world[j]), pairs,
                                 root).items():
        moves[:, joint] = placed
    scales = None if np.all(target.scales == 1.0) else np.broadcast_to(target.scales, turns.shape[:2]).copy()
    return Pose(skeleton.copy(), turns, moves, scales, motion.frame_time, motion.start_frame, unit, up_axis,
                metadata)


def _then(rotation: _Linked | FloatArray, local: FloatArray) -> _Linked | FloatArray:
    """A child's world rotation from its parent's and a constant local rotation ``(1, 4)``."""
    if isinstance(rotation, _Linked):
        return _Linked(rotation.source, rotations.quaternion_multiply(rotation.right, local[0]))
    return rotation @ rotations.quaternion_product_matrix(np.array([1.0, 0.0, 0.0, 0.0]), local[0])


def _relative(upper: _Linked | FloatArray, lower: _Linked | FloatArray, reading: _Source,
              evaluated: Callable[[_Linked | FloatArray], FloatArray]) -> FloatArray:
    """``conj(upper) * lower``: for two linked rotations, the source's rotation between their joints
    between the constants (the change of world axes cancels)."""
    if isinstance(upper, _Linked) and isinstance(lower, _Linked):
        back = rotations.quaternion_conjugate(upper.right)
        between = reading.relative(upper.source, lower.source)
        if between is None:
            return rotations.quaternion_multiply(back, lower.right)[None]
        return between @ rotations.quaternion_product_matrix(back, lower.right)
    return rotations.quaternion_multiply(rotations.quaternion_conjugate(evaluated(upper)), evaluated(lower))


def _local(rotations: FloatArray, parents: list[int]) -> FloatArray:
    """Local rotations ``(J, 3, 3)`` from world ones."""
    index = np.array(parents)
    parent = np.where((index >= 0)[:, None, None], rotations[np.maximum(index, 0)], np.eye(3))
    return np.swapaxes(parent, -1, -2) @ rotations


def _bone_vectors(target: Figure) -> dict[int, FloatArray]:
    """Each joint's bone in its own frame: towards its mapped end, else its first child away from it."""
    positions, rotations = target.rest_positions, target.rest_rotations
    size = float(np.ptp(positions, axis=0).max()) or 1.0
    vectors = {}
    for joint, children in enumerate(target.skeleton.child_lists()):
        ends = [target.ends[joint]] if joint in target.ends else children
        for end in ends:
            line = positions[end] - positions[joint]
            if np.linalg.norm(line) > 1e-9 * size:
                vectors[joint] = rotations[joint].T @ line
                break
    return vectors


def _hinged_children(skeleton: Skeleton, pairs: dict[int, int], bone: dict[int, FloatArray]) -> dict[int, int]:
    """Paired joints with three rotation channels -> their first child that is a paired one-axis hinge
    with a bone."""
    hinges: dict[int, int] = {}
    for joint, parent in enumerate(skeleton.parents):
        if (parent in pairs and parent not in hinges and len(order_of(skeleton.channels[joint])) == 1
                and joint in pairs and joint in bone and len(order_of(skeleton.channels[parent])) == 3):
            hinges[parent] = joint
    return hinges


def _angle_about(axis: FloatArray, start: FloatArray, toward: FloatArray) -> FloatArray:
    """The angle about unit ``axis`` that turns ``start`` nearest to ``toward`` (per frame)."""
    start = start - dot(start, axis)[..., None] * axis
    toward = toward - dot(toward, axis)[..., None] * axis
    return np.arctan2(dot(axis, np.cross(start, toward)), dot(start, toward))


def _held(layout: tuple[str, ...], local: FloatArray, bone: FloatArray | None,
          steps: FloatArray | None = None) -> FloatArray:
    """The frame rotations ``(F, 3, 3)`` a joint with one or two rotation channels holds for the wanted
    ``local`` ones (relative to its rest rotation).

    With a bone, the held rotation points it where ``local`` would (closed
    form, of the candidates the one nearest ``local``); the channels' own
    decomposition is kept where it points the bone as well.  Without a bone,
    the decomposition the channels would store.  The chosen channel angles
    turn at most :func:`.continuity.largest_steps` per frame (no spins where
    the wanted direction passes near a channel's axis), or ``steps`` ``(F - 1,)`` radians.
    """
    order = order_of(layout)
    rotation_layout = tuple(c for c in layout if c in ROTATION_CHANNELS)
    candidates = [np.radians(encode_joint(rotation_layout, local))]
    steps = largest_steps(local) if steps is None else steps
    if bone is None:
        return euler_to_matrix(continued(candidates[0], steps), order)
    axes = np.eye(3)[["XYZ".index(a) for a in order]]
    direction = bone / np.linalg.norm(bone)
    goal = local @ direction
    frames = local.shape[0]
    spun = np.broadcast_to(direction, (frames, 3))
    if len(order) == 1:
        candidates.append(_angle_about(np.broadcast_to(axes[0], (frames, 3)), spun, goal)[:, None])
        candidates.append(_twist(local, axes[0])[:, None])
    else:
        first, second = (np.broadcast_to(axis, (frames, 3)) for axis in axes)
        for inner in _angles_to_reach(second, spun, first, dot(goal, first))[:2]:
            outer = continued(_angle_about(first, axis_matrices(order[1], inner) @ direction, goal), steps)
            inner = _angle_about(second, spun, (axis_matrices(order[0], -outer) @ goal[..., None])[..., 0])
            candidates.append(np.stack([outer, inner], axis=-1))
    angles = np.stack(candidates)
    stacked = euler_to_matrix(angles, order)
    miss = np.linalg.norm(stacked @ direction - goal, axis=-1)
    chosen = angles[_best(miss, np.abs(stacked - local).max(axis=(-2, -1)), stacked), np.arange(frames)]
    return euler_to_matrix(continued(chosen, steps), order)


def _rolled(parent_world: FloatArray, parent_layout: tuple[str, ...], rest: FloatArray, layout: tuple[str, ...],
            desired: FloatArray, bone: FloatArray, steps: FloatArray) -> tuple[FloatArray, FloatArray]:
    """A one-channel parent's world rotations ``(F, 3, 3)`` turned further about its channel's axis, and
    what its child (of rest rotation ``rest``, holding what the parent could not: ``desired``) then holds,
    so the child's bone turns about itself as wanted: a forearm roll before a hand.

    Secant steps on the roll where the parent's axis lies along the child's bone
    (within :data:`ROLL_ALONG`), each kept only in frames it brings nearer: the
    first a half turn of the lacking twist (the child re-points its bone, so its
    twist follows the roll about twice as fast), then by the measured slope."""
    order = order_of(parent_layout)
    axis, direction = np.eye(3)["XYZ".index(order)], unit(bone)

    def hold(roll: FloatArray, frames: slice | np.ndarray = slice(None),
             limits: FloatArray = steps) -> tuple[FloatArray, FloatArray, FloatArray]:
        parent = parent_world[frames] @ axis_matrices(order, roll)
        base = parent @ rest
        held = base @ _held(layout, np.swapaxes(base, -1, -2) @ desired[frames], bone, limits)
        return parent, held, _twist(np.swapaxes(held, -1, -2) @ desired[frames], direction)

    roll = np.zeros(len(desired))
    parent, held, lacking = hold(roll)
    along = dot(parent @ axis, held @ direction)
    slope = np.where(np.abs(along) >= ROLL_ALONG, 2.0 * along, np.inf)  # lacking twist undone per radian of roll
    for _ in range(ROLLS):  # trials only in the frames still lacking, each frame alone (no limit on steps)
        frames = np.flatnonzero((np.abs(lacking) > ROLL_CLOSE) & np.isfinite(slope))
        if not frames.size:
            break
        step = lacking[frames] / slope[frames]
        nearer = hold(roll[frames] + step, frames, np.full(len(frames) - 1, np.pi))[2]
        better = np.abs(nearer) < np.abs(lacking[frames])
        measured = (lacking[frames] - nearer) / np.where(step != 0, step, 1.0)
        slope[frames] = np.where(better & (np.abs(measured) >= ROLL_ALONG), measured, slope[frames])
        roll[frames] = np.where(better, roll[frames] + step, roll[frames])
        lacking[frames] = np.where(better, nearer, lacking[frames])
    parent, held, _ = hold(continued(roll, steps))
    return parent, held


def _twist(turns: FloatArray, axis: FloatArray) -> FloatArray:
    """The angles ``(F,)`` of the rotations about unit ``axis`` nearest ``turns`` ``(F, 3, 3)`` (their
    twist about it): what a one-channel joint holds best of a turn it cannot point its bone with."""
    turns = rotations.matrix_to_quaternion(turns)
    sign = np.where(turns[:, 0] < 0, -1.0, 1.0)  # q and -q are one rotation
    return 2.0 * np.arctan2(sign * (turns[:, 1:] @ axis), sign * turns[:, 0])


def _best(miss: FloatArray, distance: FloatArray, candidates: FloatArray) -> FloatArray:
    """Per frame, the candidate (first axis of ``candidates`` ``(K, F, 3, 3)``) to hold.

    The smallest ``miss + TURN_COST * distance`` (both growing linearly with an
    angle): a hinge reaches exactly unless that takes a turn far larger than
    the miss (a limb almost straight and bent sideways, where exact solutions
    spin the bone from frame to frame), and never misses by ``LARGEST_MISS``
    more than the best.  Where that choice jumps between frames, the
    candidate nearest the previous frame's is kept instead while it costs at
    most ``JUMP_SLACK`` more (two mirror solutions of a two-axis joint trading
    places): solutions continuous in time.
    """
    cost = miss + TURN_COST * distance + np.where(miss > miss.min(axis=0) + LARGEST_MISS, np.inf, 0.0)
    choice = np.argmin(cost + 1e-9 * (miss > miss.min(axis=0) + 1e-9), axis=0)
    frames = np.arange(len(choice))
    usable = cost <= cost.min(axis=0) + JUMP_SLACK
    chosen = candidates[choice, frames]
    steps = np.abs(chosen[1:] - chosen[:-1]).max(axis=(-2, -1))
    settled = 0
    for start in np.flatnonzero(steps > JUMP) + 1:
        frame = max(int(start), settled)
        while frame < len(choice):
            gap = np.abs(candidates[:, frame] - candidates[choice[frame - 1], frame - 1]).max(axis=(-2, -1))
            nearest = int(np.argmin(np.where(usable[:, frame], gap, np.inf)))
            if nearest == choice[frame]:
                break
            choice[frame] = nearest
            frame += 1
        settled = frame + 1
    return choice


def _twist_for_hinge(parent_world: FloatArray, skeleton: Skeleton, target: Figure, hinge: int,
                     hinge_wanted: FloatArray, hinge_bone: FloatArray) -> FloatArray:
    """The parent's world rotations turned about its own bone (towards the hinge joint) so the
    hinge's one axis can point the hinge's bone where ``hinge_wanted`` points it.

    A hinge keeps a fixed angle between its axis and its bone, so the axis must
    come to that angle with the wanted bone direction: two turns do (closed
    form); of these and no turn at all, the one reaching best and leaving the
    axis nearest the wanted one is taken.  The parent's bone keeps its direction.
    """
    parent = skeleton.parents[hinge]
    rest_rotations, rest_positions = target.rest_rotations, target.rest_positions
    offset = rest_rotations[parent].T @ (rest_positions[hinge] - rest_positions[parent])
    if not np.linalg.norm(offset) > 0:
        return parent_world
    hinge_axis = np.eye(3)["XYZ".index(order_of(skeleton.channels[hinge]))]
    spin_axis = unit(parent_world @ offset)
    current = parent_world @ (skeleton.rest_rotations[hinge] @ hinge_axis)
    wanted_axis = hinge_wanted @ hinge_axis
    goal = unit(hinge_wanted @ hinge_bone)
    keep = float(hinge_axis @ hinge_bone / np.linalg.norm(hinge_bone))
    one, other, reachable = _angles_to_reach(spin_axis, current, goal, keep)
    nearest = _angle_about(spin_axis, current, wanted_axis)  # any turn reaches: the bones lie in one line
    angles = np.stack([np.zeros(len(goal))] + [np.where(reachable, angle, nearest) for angle in (one, other)])
    turns = np.stack([_rotations_about(spin_axis, angle) for angle in angles])
    axes = (turns @ current[..., None])[..., 0]
    choice = _best(np.abs(dot(axes, goal) - keep), np.linalg.norm(axes - wanted_axis, axis=-1), turns)
    steps = np.maximum(largest_steps(parent_world), largest_steps(hinge_wanted))
    return _rotations_about(spin_axis, continued(angles[choice, np.arange(len(choice))], steps)) @ parent_world


def _placed(reading: _Source, source: Figure, target: Figure, world: Callable[[int], FloatArray],
            pairs: dict[int, int], root: str) -> dict[int, FloatArray]:
    """Local translations ``(F, 3)`` of the joints that carry the hips (and paired joints above them)
    to where the source's are, in the target's world axes, scaled by the leg ratio (``root="scale"``);
    ``world`` gives the target's world rotations.

    Each such joint moves itself if it has translation channels, else its nearest
    ancestor that does; every other joint keeps its reference translation.
    """
    skeleton = target.skeleton
    parents = skeleton.parents
    hips = target.canonical["hips"]
    path = skeleton.chain(hips)
    local = {j: target.translations[j][None] for j in path}
    grown = np.cumprod(target.scales[path])  # the world scale along the path
    positions: dict[int, FloatArray] = {}
    for step, joint in enumerate(path):
        parent = parents[joint]
        positions[joint] = local[joint] if parent < 0 else positions[parent] + grown[step - 1] * (
            rotations.quaternion_rotate(world(parent), local[joint]))
    to_target = target.world.T @ source.world * (target.leg / source.leg if root != "keep" else 1.0)
    driven = [j for j in path if j in pairs]
    moves = [any(c in TRANSLATION_CHANNELS for c in layout) for layout in skeleton.channels]
    carried: dict[int, FloatArray] = {}
    for joint in driven:
        candidates = [j for j in skeleton.chain(joint)[::-1] if j == joint or j not in driven]
        carrier = next((j for j in candidates if moves[j] and j not in carried), None)
        if carrier is None:
            continue
        shift = reading.world(pairs[joint])[1] @ to_target.T - positions[joint]
        parent = parents[carrier]
        carried[carrier] = local[carrier] + (shift if parent < 0 else rotations.quaternion_rotate(
            rotations.quaternion_conjugate(world(parent)), shift) / grown[path.index(parent)])
        for below in path[path.index(carrier):]:
            positions[below] = positions[below] + shift
    return carried

