"""The Retarget panel's operators in headless Blender: any rig follows the source's limbs."""

from __future__ import annotations

import numpy as np
import pytest

from tests.blender_helpers import armature_from_bones, ids, pose_heads
from tests.conftest import SAMPLES

pytestmark = pytest.mark.blender

SAMPLE = SAMPLES / "walk_turn.bvh"
FRAMES = range(1, 121)
# A rig made in Blender: Z up, facing -Y, arms 45 degrees down (A-pose), every bone rolled (Mixamo names here).
DOWN = np.array([np.cos(np.radians(45)), 0.0, -np.sin(np.radians(45))])
RIG = [  # name, parent, head, tail
    ("Hips", None, (0, 0, 1.0), (0, 0, 1.1)),
    ("Spine", "Hips", (0, 0, 1.1), (0, 0, 1.25)),
    ("Spine1", "Spine", (0, 0, 1.25), (0, 0.01, 1.4)),
    ("Spine2", "Spine1", (0, 0.01, 1.4), (0, 0, 1.5)),
    ("Neck", "Spine2", (0, 0, 1.5), (0, -0.02, 1.6)),
    ("Head", "Neck", (0, -0.02, 1.6), (0, -0.02, 1.8)),
    ("LeftShoulder", "Spine2", (0.03, 0, 1.45), (0.17, 0, 1.47)),
    ("LeftArm", "LeftShoulder", (0.17, 0, 1.47), tuple(np.add((0.17, 0, 1.47), 0.3 * DOWN))),
    ("LeftForeArm", "LeftArm", tuple(np.add((0.17, 0, 1.47), 0.3 * DOWN)),
     tuple(np.add((0.17, 0, 1.47), 0.57 * DOWN))),
    ("LeftHand", "LeftForeArm", tuple(np.add((0.17, 0, 1.47), 0.57 * DOWN)),
     tuple(np.add((0.17, 0, 1.47), 0.67 * DOWN))),
    ("LeftUpLeg", "Hips", (0.1, 0, 1.0), (0.11, 0, 0.55)),
    ("LeftLeg", "LeftUpLeg", (0.11, 0, 0.55), (0.1, 0.01, 0.1)),
    ("LeftFoot", "LeftLeg", (0.1, 0.01, 0.1), (0.1, -0.12, 0.02)),
    ("LeftToeBase", "LeftFoot", (0.1, -0.12, 0.02), (0.1, -0.18, 0.02)),
]
SEGMENTS = [(f"{side}{a}", f"{side}{b}") for side in ("Left", "Right")
            for a, b in (("Arm", "ForeArm"), ("ForeArm", "Hand"), ("UpLeg", "Leg"), ("Leg", "Foot"))]


# The same rig under other conventions' names (Unreal mannequin, Rigify metarig); Mixamo's are RIG's own.
CONVENTIONS = {
    "mixamo": {},
    "unreal": {"Hips": "pelvis", "Spine": "spine_01", "Spine1": "spine_02", "Spine2": "spine_03", "Neck": "neck_01",
               "Head": "head", "Shoulder": "clavicle_{s}", "Arm": "upperarm_{s}", "ForeArm": "lowerarm_{s}",
               "Hand": "hand_{s}", "UpLeg": "thigh_{s}", "Leg": "calf_{s}", "Foot": "foot_{s}", "ToeBase": "ball_{s}"},
    "rigify": {"Hips": "spine", "Spine": "spine.001", "Spine1": "spine.002", "Spine2": "spine.003",
               "Neck": "spine.004", "Head": "spine.006", "Shoulder": "shoulder.{S}", "Arm": "upper_arm.{S}",
               "ForeArm": "forearm.{S}", "Hand": "hand.{S}", "UpLeg": "thigh.{S}", "Leg": "shin.{S}",
               "Foot": "foot.{S}", "ToeBase": "toe.{S}"},
}


def bone_name(convention: str, name: str) -> str:
    """RIG's Mixamo-style ``name`` in ``convention`` (Mixamo's carry the ``mixamorig:`` prefix)."""
    if convention == "mixamo":
        return f"mixamorig:{name}"
    side = "Left" if name.startswith("Left") else "Right" if name.startswith("Right") else ""
    pattern = CONVENTIONS[convention][name[len(side):]]
    return pattern.format(s=side[:1].lower(), S=side[:1])


def build_rig(bpy, name: str = "mixamo", convention: str = "mixamo") -> object:
    """The RIG above with its right side mirrored and random rolls, named in ``convention``."""
    rng = np.random.default_rng(11)
    mirrored = [(n.replace("Left", "Right"), p and p.replace("Left", "Right"), (-h[0], *h[1:]), (-t[0], *t[1:]))
                for n, p, h, t in RIG if n.startswith("Left")]
    return armature_from_bones(bpy, name, [(bone_name(convention, n), p and bone_name(convention, p), h, t,
                                            rng.uniform(-np.pi, np.pi)) for n, p, h, t in RIG + mirrored])


def directions(bpy, obj, convention: str | None = None) -> np.ndarray:
    """Unit limb segment directions ``(F, 8, 3)``; bones named in ``convention`` (``None``: RIG's plain names)."""
    heads, names = pose_heads(bpy, obj, FRAMES)
    index = {n: names.index(n if convention is None else bone_name(convention, n)) for pair in SEGMENTS for n in pair}
    lines = np.stack([heads[:, index[b]] - heads[:, index[a]] for a, b in SEGMENTS], axis=1)
    return lines / np.linalg.norm(lines, axis=-1, keepdims=True)


def import_sample(bpy) -> object:
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE))
    return bpy.context.object


@pytest.mark.parametrize("convention", list(CONVENTIONS))
def test_a_rolled_a_pose_rig_follows_the_source_limbs(addon, convention):
    bpy = addon
    source = import_sample(bpy)
    target = build_rig(bpy, "mixamo", convention)
    assert bpy.ops.mocap.retarget(source=source.name, target=target.name, feet="FREE") == {"FINISHED"}
    action = target.animation_data.action
    assert action.name == f"{source.animation_data.action.name} on {target.name}"
    assert action.frame_range[:] == (1.0, 120.0)
    wanted, got = directions(bpy, source), directions(bpy, target, convention)
    cosine = np.sum(wanted * got, axis=-1)
    assert cosine.min() >= 0.9999  # same facing (-Y): no change of axes at all


def test_to_canonical_operator_makes_a_canonical_armature(addon):
    from mocap_addon.core.naming import CANONICAL_JOINTS

    bpy = addon
    source = import_sample(bpy)
    assert bpy.ops.mocap.to_canonical(method="LENGTHS") == {"FINISHED"}
    canonical = bpy.context.object
    assert canonical.name == "walk_turn_canonical" and canonical is not source
    assert sorted(b.name for b in canonical.data.bones) == sorted(CANONICAL_JOINTS)
    assert canonical.animation_data.action.frame_range[:] == (1.0, 120.0)
    heads, names = pose_heads(bpy, canonical, FRAMES)
    got = np.stack([heads[:, names.index(b)] - heads[:, names.index(a)] for a, b in
                    [("upper_arm_l", "lower_arm_l"), ("lower_arm_l", "hand_l"), ("upper_leg_l", "lower_leg_l"),
                     ("lower_leg_l", "foot_l"), ("upper_arm_r", "lower_arm_r"), ("lower_arm_r", "hand_r"),
                     ("upper_leg_r", "lower_leg_r"), ("lower_leg_r", "foot_r")]], axis=1)
    got /= np.linalg.norm(got, axis=-1, keepdims=True)
    bpy.context.view_layer.objects.active = source
    assert np.sum(directions(bpy, source) * got, axis=-1).min() >= 0.9999
    legs = np.linalg.norm(heads[0, names.index("lower_leg_l")] - heads[0, names.index("upper_leg_l")])
    assert legs == pytest.approx(0.245 * 1.75, rel=1e-4)  # metres, the reference thigh


def test_failures_leave_the_scene_as_it_was(addon):
    bpy = addon
    source = import_sample(bpy)
    legless = build_rig(bpy, "legless")
    bpy.context.view_layer.objects.active = legless
    bpy.ops.object.mode_set(mode="EDIT")
    for bone in [b for b in legless.data.edit_bones if "Leg" in b.name or "Foot" in b.name or "Toe" in b.name]:
        legless.data.edit_bones.remove(bone)
    bpy.ops.object.mode_set(mode="OBJECT")
    before = ids(bpy)
    with pytest.raises(RuntimeError, match="no joint mapped to upper_leg_l"):
        bpy.ops.mocap.retarget(source=source.name, target=legless.name)
    with pytest.raises(RuntimeError, match="no armature called 'nothing'"):
        bpy.ops.mocap.retarget(source=source.name, target="nothing")
    legless.animation_data_create()
    legless.animation_data.action = source.animation_data.action
    bpy.context.view_layer.objects.active = legless
    with pytest.raises(RuntimeError, match="Canonical conversion failed"):
        bpy.ops.mocap.to_canonical()
    assert ids(bpy) == before


def test_reference_pose_is_what_the_rig_stands_in_for_the_source_t_pose(addon):
    """Store the A-pose rest as the rig's reference pose: its arms then hang 45 degrees below where the
    automatic T-pose puts them, at every frame; storing a T-pose made by hand changes nothing."""
    bpy = addon
    source = import_sample(bpy)
    target = build_rig(bpy)
    bpy.ops.mocap.retarget(source=source.name, target=target.name, feet="FREE")
    automatic = directions(bpy, target, "mixamo")
    target.animation_data.action = None
    for pose_bone in target.pose.bones:
        pose_bone.matrix_basis.identity()
    bpy.context.view_layer.objects.active = target
    assert bpy.ops.mocap.set_reference_pose() == {"FINISHED"}
    bpy.ops.mocap.retarget(source=source.name, target=target.name, feet="FREE")
    from_rest = directions(bpy, target, "mixamo")
    # Each limb bone turns by the angle between its rest direction and its T-pose one (arms out, legs down).
    heads = {name.replace("mixamorig:", ""): np.array(bone.head_local) for name, bone in target.data.bones.items()}
    expected = []
    for a, b in SEGMENTS:
        rest = heads[b] - heads[a]
        t_pose = [1.0 if a.startswith("Left") else -1.0, 0.0, 0.0] if "Arm" in a else [0.0, 0.0, -1.0]
        expected.append(np.degrees(np.arccos(rest @ t_pose / np.linalg.norm(rest))))
    assert expected[0] == pytest.approx(45.0) and 1.0 < expected[2] < 2.0
    angle = np.degrees(np.arccos(np.clip(np.sum(automatic * from_rest, axis=-1), -1, 1)))
    np.testing.assert_allclose(angle, np.broadcast_to(expected, angle.shape), atol=0.01)
    target.animation_data.action = None
    for pose_bone in target.pose.bones:
        pose_bone.matrix_basis.identity()
    for side, sign in (("Left", -1.0), ("Right", 1.0)):  # raise the arms by hand into a T-pose
        pose_bone = target.pose.bones[f"mixamorig:{side}Arm"]
        pose_bone.rotation_mode = "XYZ"
        bpy.context.view_layer.update()
        from mathutils import Matrix

        turn = Matrix.Rotation(sign * np.radians(45), 4, "Y")
        pose_bone.matrix = Matrix.Translation(pose_bone.head) @ turn @ Matrix.Translation(-pose_bone.head) \
            @ pose_bone.matrix
    bpy.ops.mocap.set_reference_pose()
    bpy.ops.mocap.retarget(source=source.name, target=target.name, feet="FREE")
    by_hand = directions(bpy, target, "mixamo")
    arms, legs = [0, 1, 4, 5], [2, 3, 6, 7]
    assert np.sum(automatic * by_hand, axis=-1)[:, arms].min() >= 0.99999  # arms: the automatic T-pose's
    assert np.sum(from_rest * by_hand, axis=-1)[:, legs].min() >= 0.99999  # legs: left at rest
    bpy.ops.mocap.set_reference_pose(clear=True)
    assert "mocap_reference_pose" not in target.data


def test_the_stored_bone_mapping_is_used(addon):
    """A hand edit in the Bone Mapping panel (here: the rig's hips unmapped) is what retargeting reads."""
    from mocap_addon.blender.bridge.bone_mapping import armature_mapping, store_mapping

    bpy = addon
    source = import_sample(bpy)
    target = build_rig(bpy, "edited", "unreal")
    mapping = armature_mapping(target)
    assert mapping["pelvis"] == "hips"
    store_mapping(target, {**mapping, "pelvis": None}, {})
    with pytest.raises(RuntimeError, match="target has no joint mapped to hips"):
        bpy.ops.mocap.retarget(source=source.name, target=target.name, feet="FREE")


def test_planted_feet_stand_on_the_rigs_floor(addon):
    """A real walk onto the rig (bare, its rest on its floor) with the default Feet: Planted: the ankles
    stand at the rest's ankle height while the walk's feet are planted, and slide no more than its own."""
    from dataclasses import replace

    from mocap_addon.core import load
    from mocap_addon.core.body.contacts import find_contacts
    from tests.conftest import CORPUS

    walk = CORPUS / "bvh" / "bandai_dataset-2_walk_elderly_004.bvh"
    if not walk.is_file():
        pytest.skip("../shared/corpus is absent")
    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(walk))
    source = bpy.context.object
    target = build_rig(bpy)
    assert bpy.ops.mocap.retarget(source=source.name, target=target.name) == {"FINISHED"}
    frames = range(1, load(walk).frame_count + 1)
    heads, names = pose_heads(bpy, target, frames)
    ankles = heads[:, [names.index("mixamorig:LeftFoot"), names.index("mixamorig:RightFoot")]]
    leg = 0.45 + 0.45  # the rig's thigh + shin, about
    contacts = find_contacts(load(walk))
    down = contacts.touching[..., 0]
    rest_ankle = 0.1 - 0.02  # LeftFoot's head above the rig's lowest point (the toe)
    assert abs(np.median(ankles[..., 2][down]) - rest_ankle) < 0.03 * leg
    points = np.stack([ankles, ankles], axis=2)
    on_rig = replace(contacts, points=points, up=np.array([0.0, 0.0, 1.0]), leg=leg,
                     touching=contacts.touching & down[..., None])
    assert on_rig.slide() <= 1.1 * contacts.slide() + 0.0005


def test_knees_and_elbows_bend_about_the_rigs_own_axes(addon):
    """Bandai's walk (every bone along its parent's +X at rest) through the operator onto Xia's imported
    walk (a rig with an action: its captures): the rig's knees and elbows bend about the axes of its own
    bones they bend about in its captures (within 3 degrees with the feet planted)."""
    from mocap_addon.blender.bridge.read_rig import armature_pose
    from mocap_addon.core.body.anatomy import angle_between, hinge_axes
    from tests.conftest import CORPUS

    walk, rig = CORPUS / "bvh" / "bandai_dataset-1_walk_normal_001.bvh", CORPUS / "bvh" / "ganim_Xia_normal.bvh"
    if not (walk.is_file() and rig.is_file()):
        pytest.skip("../shared/corpus is absent")
    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(walk))
    source = bpy.context.object
    bpy.ops.import_anim.mocap_bvh(filepath=str(rig))
    target = bpy.context.object
    own = hinge_axes(armature_pose(target))
    assert bpy.ops.mocap.retarget(source=source.name, target=target.name) == {"FINISHED"}
    for hinge, axis in hinge_axes(armature_pose(target)).items():
        assert angle_between(axis, own[hinge]) < 3.0, hinge


def select(bpy, *objects) -> None:
    """Select ``objects`` only, the last one active (as a click, then shift-clicks, leave them)."""
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in objects)
    bpy.context.view_layer.objects.active = objects[-1]


def test_retarget_defaults_to_the_selection(addon):
    """Issue 21, item 7: the active armature is the target, the other selected one the source."""
    bpy = addon
    source = import_sample(bpy)
    target = build_rig(bpy, "rig")
    build_rig(bpy, "bystander")  # not selected: not a candidate
    select(bpy, source, target)
    assert bpy.ops.mocap.retarget(feet="FREE") == {"FINISHED"}
    action = target.animation_data.action
    assert action.name == f"{source.animation_data.action.name} on rig"
    by_selection = directions(bpy, target, "mixamo")
    assert bpy.ops.mocap.retarget(source=source.name, target=target.name, feet="FREE") == {"FINISHED"}
    np.testing.assert_allclose(directions(bpy, target, "mixamo"), by_selection, atol=1e-6)
    np.testing.assert_allclose(by_selection, directions(bpy, source), atol=2e-3)  # the limbs follow
    before = ids(bpy)
    select(bpy, target)
    with pytest.raises(RuntimeError, match=r"select the source armature, then the target \(active\)"):
        bpy.ops.mocap.retarget()
    select(bpy, source, bpy.data.objects["bystander"], target)  # two others: which one is meant?
    with pytest.raises(RuntimeError, match="select the source armature"):
        bpy.ops.mocap.retarget()
    assert ids(bpy) == before


def test_enum_properties_are_the_core_choices_upper_case_and_to_canonical_has_feet(addon):
    import bpy

    from mocap_addon.core.options import ALIGNMENT, CANONICAL_FEET, FEET, HIPS_TRAVEL, ROOT_PATH

    def offered(idname: str, name: str):
        module, operator = idname.split(".")
        prop = getattr(getattr(bpy.ops, module), operator).get_rna_type().properties[name]
        return tuple(item.identifier for item in prop.enum_items), prop.default

    upper = lambda choice: (tuple(i.upper() for i in choice.ids), choice.default.upper())  # noqa: E731
    assert offered("mocap.to_canonical", "feet") == upper(CANONICAL_FEET) == (("PLANTED", "FREE"), "FREE")
    assert offered("mocap.retarget", "feet") == upper(FEET) and offered("mocap.retarget", "root") == upper(HIPS_TRAVEL)
    assert offered("mocap.blend", "root") == upper(ROOT_PATH) and offered("mocap.blend", "align") == upper(ALIGNMENT)
    assert "canonical_feet" in bpy.context.scene.mocap_retarget.bl_rna.properties
