"""Rigs animated through controls: the deform bones follow control bones (Rigify's generated rigs, or any rig
whose user names which control moves which deform bone).

A retarget onto such a rig is computed on its *driven* bones, the skeleton the
controls move (Rigify's ORG bones, the metarig's), as onto any rig; the
result is then keyed on the controls.  A control follows its driven bone
rigidly, as it does at rest::

    control (armature space, frame f)  C(f) = D(f) @ D_rest^-1 @ C_rest
    control basis                      = (A_rest^-1 @ C_rest)^-1 @ (A(f)^-1 @ C(f))

where ``D`` is the driven bone and ``A`` the control's anchor: its nearest
ancestor whose pose is known (another control keyed here, or a driven bone),
reached through helper bones that hold still relative to it (Rigify's MCH
bones, with the rig's follow switches set so that they do).  A control with
no anchor hangs from the armature (its helpers at rest) and is keyed with its
location.  Everything is numpy over frames; keys go through
:func:`.write_rig.write_action`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from ...core import Pose, Skeleton, rotations
from ...core.body.footing import rotations_about
from ...core.kinematics import forward_kinematics
from .armature import armature_data, pose_bones
from .compat import id_property
from .conversion import DEFAULT_AXES, conversion_matrix
from .import_record import FRAME_TIME
from .read_rig import armature_action, rest_matrices, rest_points, skeleton_of_bones
from .write_rig import keep_action, write_action

CONTROLS_PROPERTY = "mocap_controls"  # a user's control mapping (JSON text) on the armature data

# Rigify's human rig: each metarig bone (its ORG copy is driven) and its FK controls; a limb control lists the
# names Rigify versions give it (the first the rig has is used).
# The torso control is the spine's pivot (the head of spine.002, where spine.001 ends): it follows spine.001.
# The neck control spans spine.004 and spine.005; spine.005 has none but is driven (the metarig's neck).
RIGIFY_SPINE = {"spine": ["spine_fk"], "spine.001": ["torso", "spine_fk.001"], "spine.002": ["spine_fk.002"],
                "spine.003": ["spine_fk.003"], "spine.004": ["neck"], "spine.005": [], "spine.006": ["head"]}
RIGIFY_LIMB = {"shoulder": ["shoulder"], "upper_arm": ["upper_arm_fk"], "forearm": ["forearm_fk"],
               "hand": ["hand_fk"], "thigh": ["thigh_fk"], "shin": ["shin_fk"], "foot": ["foot_fk"],
               "toe": ["toe_fk", "toe"]}
RIGIFY_LIMB_PARENTS = ("upper_arm_parent", "thigh_parent")  # the limbs' switch holders (IK_FK, FK_limb_follow)
RIGIFY_IK = {"hand": ["hand_ik"], "foot": ["foot_ik"], "toe": ["toe_ik"]}
RIGIFY_POLES = {"upper_arm_ik_target": ("upper_arm", "forearm"), "thigh_ik_target": ("thigh", "shin")}


@dataclass
class ControlRig:
    """Which control bones move which driven bones, and the rig's switches that make the controls rule."""

    name: str  # "Rigify" or where the mapping came from
    controls: dict[str, list[str]]  # driven bone -> its controls
    switches: dict[tuple[str, str], float] = field(default_factory=dict)  # (pose bone, custom property) -> value
    # Pole controls placed in the bending plane of a two-bone chain: pole -> (upper, lower) driven bones.
    poles: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def driven(self) -> list[str]:
        return list(self.controls)


def is_rigify(obj: bpy.types.Object) -> bool:
    """Whether ``obj`` is a rig Rigify generated (its ``rig_id``, ORG and DEF bones, FK controls)."""
    bones = armature_data(obj).bones
    return (id_property(armature_data(obj), "rig_id") is not None and "ORG-spine" in bones and "DEF-spine" in bones
            and any(bone.name.endswith("_fk.L") for bone in bones))


def rigify_controls(obj: bpy.types.Object, ik: bool = False) -> ControlRig:
    """The built-in control mapping of a generated Rigify rig, for the bones it has: its FK controls, and with
    ``ik`` its IK controls too (hands, feet, toes, poles) with the limbs switched to IK."""
    bones = armature_data(obj).bones
    table = {bone: [[c] for c in names] for bone, names in RIGIFY_SPINE.items()}
    for side in (".L", ".R"):
        table.update({f"{bone}{side}": [[f"{c}{side}" for c in names]] for bone, names in RIGIFY_LIMB.items()})
        if ik:
            for bone, names in RIGIFY_IK.items():
                table[f"{bone}{side}"].append([f"{c}{side}" for c in names])
    controls: dict[str, list[str]] = {}
    for bone, choices in table.items():
        found = [next((n for n in names if n in bones), None) for names in choices]
        if f"ORG-{bone}" in bones and all(found):
            controls[f"ORG-{bone}"] = [str(n) for n in found]
    switches = {(f"{parent}{side}", "IK_FK"): 0.0 if ik else 1.0 for parent in RIGIFY_LIMB_PARENTS
                for side in (".L", ".R")}
    if ik:  # the knee and elbow turn towards their poles; hands, feet and poles hang from the root (1)
        switches.update({(f"{parent}{side}", key): value for parent in RIGIFY_LIMB_PARENTS for side in (".L", ".R")
                         for key, value in (("pole_vector", 1.0), ("IK_parent", 1.0), ("pole_parent", 1.0))})
    switches.update({(f"{parent}{side}", "FK_limb_follow"): 0.0 for parent in RIGIFY_LIMB_PARENTS
                     for side in (".L", ".R")})
    # The neck and head follow the chest (their rotation not mixed with the torso's): what FK keys assume.
    switches.update({("torso", "neck_follow"): 1.0, ("torso", "head_follow"): 1.0})
    posed = pose_bones(obj)
    poles = {f"{pole}{side}": (f"ORG-{upper}{side}", f"ORG-{lower}{side}") for pole, (upper, lower) in
             RIGIFY_POLES.items() for side in (".L", ".R")} if ik else {}
    return ControlRig("Rigify", controls, {(bone, key): value for (bone, key), value in switches.items()
                                           if bone in posed and id_property(posed[bone], key) is not None},
                      {pole: chain for pole, chain in poles.items()
                       if pole in bones and all(b in controls for b in chain)})


def parse_controls(text: str, origin: str) -> ControlRig:
    """A control mapping from JSON: ``{"controls": {driven bone: control or [controls]}, "switches":
    {pose bone: {property: value}}}`` (``switches`` optional; a bare ``{driven: control}`` is the same)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{origin}: not a control mapping ({error})") from error
    if not isinstance(data, dict):
        raise ValueError(f"{origin}: a control mapping is a JSON object")
    table = data.get("controls", data)
    switches = data.get("switches", {}) if "controls" in data else {}
    if not isinstance(table, dict) or not all(isinstance(v, (str, list)) for v in table.values()):
        raise ValueError(f"{origin}: 'controls' maps each deform bone to a control bone or a list of them")
    return ControlRig(origin, {str(k): [v] if isinstance(v, str) else [str(c) for c in v] for k, v in table.items()},
                      {(str(bone), str(key)): float(value) for bone, values in switches.items()
                       for key, value in values.items()})


def load_controls(path: str | Path) -> ControlRig:
    """A control mapping preset file (:func:`parse_controls`)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"cannot read the control mapping {file}: {error.strerror or error}") from error
    return parse_controls(text, file.name)


def store_controls(obj: bpy.types.Object, rig: ControlRig) -> None:
    """Keep a user's control mapping on the armature, so later retargets onto it use it."""
    switches: dict[str, dict[str, float]] = {}
    for (bone, key), value in rig.switches.items():
        switches.setdefault(bone, {})[key] = value
    armature_data(obj)[CONTROLS_PROPERTY] = json.dumps({"controls": rig.controls, "switches": switches})


def control_rig(obj: bpy.types.Object, ik: bool = False) -> ControlRig | None:
    """How ``obj`` is animated through controls: its stored mapping, else Rigify's built-in one for a
    generated Rigify rig (with its IK controls where ``ik``), else ``None`` (its bones are keyed directly)."""
    stored = id_property(armature_data(obj), CONTROLS_PROPERTY)
    if stored:
        return parse_controls(str(stored), f"{obj.name}'s control mapping")
    return rigify_controls(obj, ik) if is_rigify(obj) else None


def check_controls(obj: bpy.types.Object, rig: ControlRig) -> None:
    """Raise ``ValueError`` naming the bones of ``rig`` that ``obj`` lacks."""
    bones = armature_data(obj).bones
    missing = [b for driven, controls in rig.controls.items() for b in (driven, *controls) if b not in bones]
    if missing:
        raise ValueError(f"{obj.name} has no bone {', '.join(repr(b) for b in dict.fromkeys(missing))} "
                         f"of the control mapping ({rig.name})")
    if not rig.controls:
        raise ValueError(f"the control mapping ({rig.name}) names no bones of {obj.name}")


def driven_skeleton(obj: bpy.types.Object, rig: ControlRig) -> Skeleton:
    """The driven bones as a skeleton in clip space (the exporters' default axes, Blender units), as
    ``read_rig.armature_skeleton`` makes one of a plain rig.  A bone hangs from its nearest ancestor among them,
    else from the one whose tail its head touches (Rigify's spine bones hang from controls)."""
    bones = armature_data(obj).bones
    names = rig.driven
    heads, tails = rest_points(obj, names)
    size = float(np.ptp(np.concatenate([heads, tails]), axis=0).max())
    parents = []
    for joint, name in enumerate(names):
        ancestor = next((b.name for b in bones[name].parent_recursive if b.name in rig.controls), None)
        if ancestor is None:
            gaps = np.linalg.norm(tails - heads[joint], axis=1)
            gaps[joint] = np.inf
            ancestor = names[int(np.argmin(gaps))] if gaps.min() <= 1e-4 * size else None
        parents.append(-1 if ancestor is None else names.index(ancestor))
    order = _parents_first(parents)
    names, heads, tails = [names[j] for j in order], heads[order], tails[order]
    parents = [-1 if parents[j] < 0 else order.index(parents[j]) for j in order]
    if parents.count(-1) != 1:
        roots = [n for n, p in zip(names, parents) if p < 0]
        raise ValueError(f"the driven bones of {obj.name} are not one skeleton: {', '.join(roots[:5])} hang from "
                         "none of the others")
    return skeleton_of_bones(names, parents, heads, tails, conversion_matrix(*DEFAULT_AXES).T, [p < 0 for p in parents])


def _parents_first(parents: list[int]) -> list[int]:
    depth = [0] * len(parents)
    for joint in range(len(parents)):
        node, steps = joint, 0
        while parents[node] >= 0 and steps <= len(parents):
            node, steps = parents[node], steps + 1
        depth[joint] = steps
    return sorted(range(len(parents)), key=lambda j: depth[j])


def _rest(obj: bpy.types.Object, names: list[str]) -> np.ndarray:
    """The named bones' rest matrices ``(J, 4, 4)`` in armature space (``read_rig.rest_matrices``)."""
    orientations, heads = rest_matrices(obj, names)
    matrices = np.zeros((len(names), 4, 4))
    matrices[:, :3, :3], matrices[:, :3, 3], matrices[:, 3, 3] = orientations, heads, 1.0
    return matrices


def driven_world(obj: bpy.types.Object, pose: Pose) -> dict[str, np.ndarray]:
    """Each driven bone's armature-space matrices ``(F, 4, 4)`` for ``pose`` on :func:`driven_skeleton`."""
    world = forward_kinematics(pose)
    conversion = conversion_matrix(*DEFAULT_AXES)
    rest = _rest(obj, pose.skeleton.names)
    matrices = np.zeros((pose.frame_count, pose.skeleton.joint_count, 4, 4))
    matrices[..., :3, :3] = conversion @ world.rotations @ conversion.T @ rest[:, :3, :3]
    matrices[..., :3, 3] = world.positions @ conversion.T
    matrices[..., 3, 3] = 1.0
    return {name: matrices[:, joint] for joint, name in enumerate(pose.skeleton.names)}


def control_bases(obj: bpy.types.Object, rig: ControlRig, driven: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each control's ``matrix_basis`` ``(F, 4, 4)`` so that the driven bones take their armature-space
    matrices ``driven`` ``(F, 4, 4)`` (see the module's docstring)."""
    known: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # bone -> (rest, posed (F, 4, 4))
    bones = armature_data(obj).bones
    heads = {name: np.array(bones[name].head_local) for name in rig.controls}
    size = float(np.ptp(np.array(list(heads.values())), axis=0).max(initial=0.0))
    for name, controls in rig.controls.items():
        rest = _rest(obj, [name])[0]
        known[name] = (rest, driven[name])
        following = driven[name] @ np.linalg.inv(rest)
        for control in controls:
            control_rest = _rest(obj, [control])[0]
            posed = following @ control_rest
            tail = np.array(bones[control].tail_local)
            reached = next((other for other, head in heads.items() if np.linalg.norm(head - tail) <= 1e-4 * size),
                           None)
            if reached is not None:  # a control spanning several driven bones ends where the last one does
                posed = _aimed(posed, np.linalg.inv(control_rest) @ np.append(tail, 1.0), driven[reached][:, :3, 3])
            known[control] = (control_rest, posed)
    for pole, (upper, lower) in rig.poles.items():
        known[pole] = (_rest(obj, [pole])[0], _pole(obj, pole, upper, lower, known))
    bases = {}
    for control in [c for controls in rig.controls.values() for c in controls] + list(rig.poles):
        rest, posed = known[control]
        anchor = next((b.name for b in bones[control].parent_recursive if b.name in known), None)
        if anchor is None:
            bases[control] = np.linalg.inv(rest) @ posed
        else:
            anchor_rest, anchor_posed = known[anchor]
            bases[control] = np.linalg.inv(np.linalg.inv(anchor_rest) @ rest) @ np.linalg.inv(anchor_posed) @ posed
    return bases


def _aimed(posed: np.ndarray, tail: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """``posed`` ``(F, 4, 4)`` turned about its head by the least rotation taking its ``tail`` (homogeneous,
    in the bone's own frame) onto ``goal`` ``(F, 3)``."""
    head = posed[:, :3, 3]
    now, wanted = (posed @ tail)[:, :3] - head, goal - head
    axis = np.cross(now, wanted)
    size = np.linalg.norm(axis, axis=1)
    angle = np.arctan2(size, np.sum(now * wanted, axis=1))
    turn = rotations_about(np.where(size[:, None] > 1e-12, axis / np.maximum(size, 1e-300)[:, None], [1.0, 0, 0]),
                           np.where(size > 1e-12, angle, 0.0))
    aimed = posed.copy()
    aimed[:, :3, :3] = turn @ posed[:, :3, :3]
    return aimed


def _pole(obj: bpy.types.Object, pole: str, upper: str, lower: str,
          known: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The pole control's armature-space matrices ``(F, 4, 4)``: its rest orientation, at its rest distance
    from the middle joint (``lower``'s head), in the chain's bending plane on the side the joint bends to
    (where the chain is nearly straight: its rest offset turned with ``upper``)."""
    rest = _rest(obj, [pole])[0]
    (upper_rest, upper_posed), (lower_rest, lower_posed) = known[upper], known[lower]
    offset = rest[:3, 3] - lower_rest[:3, 3]
    tail = np.linalg.inv(lower_rest) @ np.append(np.array(armature_data(obj).bones[lower].tail_local), 1.0)
    start, joint, end = upper_posed[:, :3, 3], lower_posed[:, :3, 3], (lower_posed @ tail)[:, :3]
    line = end - start
    along = np.sum((joint - start) * line, axis=1) / np.maximum(np.sum(line * line, axis=1), 1e-300)
    bend = joint - (start + along[:, None] * line)
    turned = upper_posed[:, :3, :3] @ np.linalg.inv(upper_rest[:3, :3]) @ offset
    size = np.linalg.norm(bend, axis=1, keepdims=True)
    bent = size > 1e-3 * np.linalg.norm(line, axis=1, keepdims=True)
    direction = np.where(bent, bend / np.maximum(size, 1e-300), turned / np.linalg.norm(offset))
    posed = np.repeat(rest[None], len(joint), axis=0)
    posed[:, :3, 3] = joint + np.linalg.norm(offset) * direction
    return posed


def _location_axes(bone: bpy.types.Bone) -> np.ndarray:
    """What turns a location along the bone's own rest axes into the axes its ``location`` uses: its own
    (Local Location), else its parent's rest axes (armature axes for a bone without parent)."""
    if bone.use_local_location:
        return np.eye(3)
    own = np.array(bone.matrix_local)[:3, :3]
    parent = np.array(bone.parent.matrix_local)[:3, :3] if bone.parent is not None else np.eye(3)
    return parent.T @ own


def key_controls(obj: bpy.types.Object, rig: ControlRig, pose: Pose, *, name: str) -> bpy.types.Action:
    """A new action on ``obj`` keying the controls of ``rig`` so that its driven bones take ``pose`` (on
    :func:`driven_skeleton`), one key per frame from the pose's ``start_frame``; the rig's switches are set.
    The action and the one it replaces are kept (``write_rig.keep_action``)."""
    if not pose.frame_count:
        raise ValueError("the motion has no frames to write")
    bases = control_bases(obj, rig, driven_world(obj, pose))
    bones = armature_data(obj).bones
    names = list(bases)
    moving = [not any(b.name in bases or b.name in rig.controls for b in bones[n].parent_recursive) for n in names]

    def keys() -> Iterator[tuple[np.ndarray, np.ndarray, None]]:
        for control in names:
            basis = bases[control]
            turns = rotations.matrix_to_quaternion(rotations.nearest_rotation(basis[:, :3, :3]))
            yield turns, basis[:, :3, 3] @ _location_axes(bones[control]).T, None

    replaced = armature_action(obj)
    frames = pose.start_frame + np.arange(pose.frame_count, dtype=np.float64)
    action = write_action(obj, name, names, frames, "KEEP", ["XYZ"] * len(names), moving, keys())
    action[FRAME_TIME] = pose.frame_time
    keep_action(action)
    if replaced is not None:
        keep_action(replaced)
    for (bone, key), value in rig.switches.items():
        current = id_property(pose_bones(obj)[bone], key)
        pose_bones(obj)[bone][key] = type(current)(value) if isinstance(current, (bool, int)) else value
    return action
