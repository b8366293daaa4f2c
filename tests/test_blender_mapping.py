"""Bone Mapping in real Blender: imports fill it, the panel draws, operators detect, save and load presets."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mocap_addon.core import load
from mocap_addon.core.naming import REQUIRED_JOINTS, builtin_presets, explain_mapping, map_skeleton, missing_joints
from tests.conftest import CORPUS, REPO, SAMPLES

pytestmark = pytest.mark.blender
SAMPLE = SAMPLES / "walk_turn.bvh"


def imported(bpy, path):
    operator = {".bvh": bpy.ops.import_anim.mocap_bvh, ".htr": bpy.ops.import_anim.mocap_htr,
                ".amc": bpy.ops.import_anim.mocap_amc}[path.suffix.lower()]
    assert operator(filepath=str(path)) == {"FINISHED"}
    return bpy.context.object


def stored(obj) -> dict[str, str | None]:
    return {entry.name: entry.canonical or None for entry in obj.data.mocap_mapping}


IMPORTS = [SAMPLE, CORPUS / "htr" / "gpr450_xbot_walk_m_mixamo.com.htr", CORPUS / "asf_amc" / "fm_01_01.amc"]


@pytest.mark.parametrize("path", [pytest.param(p, id=p.suffix, marks=pytest.mark.skipif(
    not p.is_file(), reason="../shared/corpus is absent")) for p in IMPORTS])
def test_every_import_fills_the_mapping(addon, path):
    obj = imported(addon, path)
    skeleton = load(path).skeleton
    mapping = stored(obj)
    assert list(mapping) == skeleton.names == [bone.name for bone in obj.data.bones]
    assert mapping == map_skeleton(skeleton)
    assert not missing_joints(mapping, REQUIRED_JOINTS)
    rules = {entry.name: entry.rule for entry in obj.data.mocap_mapping}
    assert rules == explain_mapping(skeleton)


class Recorder:
    """Stands in for a UILayout: records what a draw call asks for."""

    def __init__(self, calls: list):
        self.calls = calls

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return self
        return call


def draw_panel(bpy) -> list:
    from mocap_addon.blender.tools.mapping import VIEW3D_PT_mocap_mapping

    calls: list = []
    panel = type("Drawn", (), {"layout": Recorder(calls)})()
    VIEW3D_PT_mocap_mapping.draw(panel, bpy.context)
    return calls


def test_panel_polls_for_armatures_and_draws_the_list_and_missing_joints(addon):
    bpy = addon
    from mocap_addon.blender.tools.mapping import MOCAP_UL_bone_mapping, VIEW3D_PT_mocap_mapping

    assert not VIEW3D_PT_mocap_mapping.poll(bpy.context)
    obj = imported(bpy, SAMPLE)
    assert VIEW3D_PT_mocap_mapping.poll(bpy.context) and VIEW3D_PT_mocap_mapping.bl_category == "Mocap"
    calls = draw_panel(bpy)
    assert ("template_list", ("MOCAP_UL_bone_mapping", "", obj.data, "mocap_mapping", obj.data,
                              "mocap_mapping_index"), {"rows": 8}) in calls
    operators = [c[1][0] for c in calls if c[0] in ("operator", "operator_menu_enum")]
    assert operators == ["mocap.map_bones", "mocap.load_mapping_preset", "mocap.save_mapping_preset"]
    assert ("label", (), {"text": "All required joints mapped", "icon": "CHECKMARK"}) in calls
    entry = obj.data.mocap_mapping["LeftForeArm"]
    entry.canonical = ""
    calls = draw_panel(bpy)
    assert ("label", (), {"text": "Required joints missing:", "icon": "ERROR"}) in calls
    assert ("label", (), {"text": "lower_arm_l"}) in calls
    # The list marks mapped, folded and unmapped bones differently.
    icons = {}
    for name in ("Hips", "LeftForeArm", "TailTip"):
        item_calls: list = []
        MOCAP_UL_bone_mapping.draw_item(None, bpy.context, Recorder(item_calls), obj.data,
                                        obj.data.mocap_mapping[name], 0, obj.data, "mocap_mapping")
        icons[name] = next(c[2]["icon"] for c in item_calls if c[0] == "label")
    assert icons == {"Hips": "BONE_DATA", "LeftForeArm": "QUESTION", "TailTip": "REMOVE"}


def test_hand_edits_stay_injective_and_detect_restores(addon):
    bpy = addon
    obj = imported(bpy, SAMPLE)
    detected = stored(obj)
    entries = obj.data.mocap_mapping
    entries["LeftArm"].canonical = "lower_arm_l"  # was LeftForeArm's
    assert entries["LeftArm"].rule == "set by hand" and entries["LeftForeArm"].canonical == ""
    entries["Spine"].canonical = "not_a_joint"
    assert entries["Spine"].canonical == ""
    from mocap_addon.blender.bridge.bone_mapping import armature_mapping

    edited = armature_mapping(obj)
    assert edited["LeftArm"] == "lower_arm_l" and edited["LeftForeArm"] is None
    assert bpy.ops.mocap.map_bones() == {"FINISHED"}
    assert stored(obj) == detected


def test_presets_save_and_load_in_the_user_folder(addon, tmp_path, monkeypatch):
    bpy = addon
    from mocap_addon.blender.tools import mapping as tool

    monkeypatch.setattr(tool, "presets_folder", lambda *args, **kwargs: tmp_path)
    obj = imported(bpy, SAMPLE)
    obj.data.mocap_mapping["Spine"].canonical = "spine_02"  # a hand edit worth keeping
    assert bpy.ops.mocap.save_mapping_preset(name="My rig") == {"FINISHED"}
    saved = json.loads((tmp_path / "My_rig.json").read_text())
    assert saved["name"] == "My rig" and saved["joints"]["Spine"] == "spine_02"
    assert saved["joints"]["TailTip"] is None and len(saved["joints"]) == len(obj.data.bones)
    assert bpy.ops.mocap.map_bones() == {"FINISHED"}
    assert obj.data.mocap_mapping["Spine"].canonical != "spine_02"
    items = [item[0] for item in tool._preset_choices(None, bpy.context)]
    assert "USER:My_rig" in items and "BUILTIN:mixamo" in items
    assert bpy.ops.mocap.load_mapping_preset(preset="USER:My_rig") == {"FINISHED"}
    assert obj.data.mocap_mapping["Spine"].canonical == "spine_02"
    assert obj.data.mocap_mapping["Spine"].rule == "preset My rig"
    bad = tmp_path / "bad.json"
    bad.write_text('{"joints": {"Hips": "pelvis"}}')
    before = stored(obj)
    with pytest.raises(RuntimeError, match="'pelvis' is not a canonical joint"):
        bpy.ops.mocap.load_mapping_preset(filepath=str(bad))
    assert stored(obj) == before


def test_hostile_presets_and_names_sharing_a_file_are_refused(addon, tmp_path, monkeypatch):
    """Issue 26: a nested preset, a list where a name goes, a FIFO: one-line reports, the mapping kept;
    "My.Rig" after "My Rig" (one file) is refused unless Overwrite is ticked."""
    bpy = addon
    from mocap_addon.blender.tools import mapping as tool

    monkeypatch.setattr(tool, "presets_folder", lambda *args, **kwargs: tmp_path)
    obj = imported(bpy, SAMPLE)
    before = stored(obj)
    (tmp_path / "deep.json").write_text("[" * 10_000 + "]" * 10_000)
    (tmp_path / "list.json").write_text('{"joints": {"Hips": ["hips"]}}')
    os.mkfifo(tmp_path / "fifo.json")
    for name, words in (("deep.json", "nested too deeply"), ("list.json", "is not a canonical joint name"),
                        ("fifo.json", "not a regular file")):
        with pytest.raises(RuntimeError, match=words) as caught:
            bpy.ops.mocap.load_mapping_preset(filepath=str(tmp_path / name))
        assert "Traceback" not in str(caught.value)
    assert stored(obj) == before
    assert bpy.ops.mocap.save_mapping_preset(name="My Rig") == {"FINISHED"}
    with pytest.raises(RuntimeError, match=r"already saved as My_Rig\.json"):
        bpy.ops.mocap.save_mapping_preset(name="My.Rig")
    assert json.loads((tmp_path / "My_Rig.json").read_text())["name"] == "My Rig"
    assert bpy.ops.mocap.save_mapping_preset(name="My.Rig", overwrite=True) == {"FINISHED"}
    assert json.loads((tmp_path / "My_Rig.json").read_text())["name"] == "My.Rig"


def test_builtin_preset_maps_a_rig_built_in_blender(addon):
    bpy = addon
    obj = build_rig(bpy, MIXAMO_RIG)
    assert bpy.ops.mocap.load_mapping_preset(preset="BUILTIN:mixamo") == {"FINISHED"}
    mapping = stored(obj)
    assert mapping["mixamorig:LeftShoulder"] == "clavicle_l" and mapping["mixamorig:RightUpLeg"] == "upper_leg_r"
    assert obj.data.mocap_mapping["mixamorig:Hips"].rule == f"preset {builtin_presets()['mixamo'].name}"


def test_mapping_survives_saving_and_reopening_the_blend(addon, tmp_path):
    bpy = addon
    obj = imported(bpy, SAMPLE)
    obj.data.mocap_mapping["Neck"].canonical = "neck_02"
    before = stored(obj)
    path = tmp_path / "mapped.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    assert "walk_turn" not in bpy.data.objects
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects["walk_turn"]
    assert stored(obj) == before and obj.data.mocap_mapping["Neck"].rule == "set by hand"


# Bones of rigs built in Blender: (name, parent, head) in armature space (Z up, facing -Y, left on +X).
MIXAMO_RIG = [("mixamorig:Hips", None, (0, 0, 1.0)), ("mixamorig:Spine", "mixamorig:Hips", (0, 0, 1.1)),
              ("mixamorig:Spine1", "mixamorig:Spine", (0, 0, 1.2)),
              ("mixamorig:Spine2", "mixamorig:Spine1", (0, 0, 1.3)),
              ("mixamorig:Neck", "mixamorig:Spine2", (0, 0, 1.45)), ("mixamorig:Head", "mixamorig:Neck", (0, 0, 1.55))]
for _word, _x in (("Left", 1), ("Right", -1)):
    MIXAMO_RIG += [
        (f"mixamorig:{_word}Shoulder", "mixamorig:Spine2", (0.05 * _x, 0, 1.4)),
        (f"mixamorig:{_word}Arm", f"mixamorig:{_word}Shoulder", (0.17 * _x, 0, 1.4)),
        (f"mixamorig:{_word}ForeArm", f"mixamorig:{_word}Arm", (0.45 * _x, 0, 1.4)),
        (f"mixamorig:{_word}Hand", f"mixamorig:{_word}ForeArm", (0.7 * _x, 0, 1.4)),
        (f"mixamorig:{_word}UpLeg", "mixamorig:Hips", (0.09 * _x, 0, 0.95)),
        (f"mixamorig:{_word}Leg", f"mixamorig:{_word}UpLeg", (0.09 * _x, 0, 0.5)),
        (f"mixamorig:{_word}Foot", f"mixamorig:{_word}Leg", (0.09 * _x, 0, 0.08)),
        (f"mixamorig:{_word}ToeBase", f"mixamorig:{_word}Foot", (0.09 * _x, -0.12, 0.0)),
    ]


def build_rig(bpy, bones, name="rig"):
    """An armature made with edit bones (no import record), active and selected."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    heads = {bone: np.array(head, dtype=float) for bone, _, head in bones}
    children = {parent for _, parent, _ in bones if parent}
    for bone, parent, head in bones:
        edit = data.edit_bones.new(bone)
        edit.head = head
        below = [heads[b] for b, p, _ in bones if p == bone]
        edit.tail = below[0] if below else heads[bone] + np.array([0, 0, 0.05])
        if bone not in children and parent:
            edit.tail = heads[bone] + 0.5 * (heads[bone] - heads[parent])
    for bone, parent, _ in bones:
        if parent:
            data.edit_bones[bone].parent = data.edit_bones[parent]
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def test_rig_built_in_blender_is_detected_with_sides_from_its_rest_pose(addon):
    """Mixamo names in Blender's axes; then the same rig with the side words removed (the right chains
    named ``.001``) and then mirrored: sides come from the rest pose, in Blender's frame."""
    bpy = addon
    from mocap_addon.blender.bridge.bone_mapping import armature_mapping

    obj = build_rig(bpy, MIXAMO_RIG)
    assert len(obj.data.mocap_mapping) == 0
    mapping = armature_mapping(obj)
    assert len(obj.data.mocap_mapping) == len(MIXAMO_RIG)  # detected, and stored
    expected = {"mixamorig:Hips": "hips", "mixamorig:Spine2": "spine_04", "mixamorig:Head": "head",
                "mixamorig:LeftShoulder": "clavicle_l", "mixamorig:RightArm": "upper_arm_r",
                "mixamorig:LeftForeArm": "lower_arm_l", "mixamorig:RightFoot": "foot_r",
                "mixamorig:LeftToeBase": "toes_l"}
    assert {bone: mapping[bone] for bone in expected} == expected
    for mirror in (1, -1):
        renamed = [(strip_side(bone), parent and strip_side(parent), (x * mirror, y, z))
                   for bone, parent, (x, y, z) in MIXAMO_RIG]
        mapping = armature_mapping(build_rig(bpy, renamed, name=f"sideless{mirror}"))
        left, right = ("", ".001") if mirror == 1 else (".001", "")
        assert mapping[f"mixamorig:ForeArm{left}"] == "lower_arm_l"
        assert mapping[f"mixamorig:ForeArm{right}"] == "lower_arm_r"
        assert mapping[f"mixamorig:UpLeg{left}"] == "upper_leg_l" and mapping[f"mixamorig:ToeBase{right}"] == "toes_r"


def strip_side(bone: str) -> str:
    """The bone's name without its side word; the right one gets Blender's duplicate suffix instead."""
    if "Left" in bone:
        return bone.replace("Left", "")
    return bone.replace("Right", "") + ".001" if "Right" in bone else bone


RIGIFY_METARIG = """
import json, os, sys
import bpy
import addon_utils
sys.path.insert(0, sys.argv[1])
import mocap_addon
mocap_addon.register()
addon_utils.enable("rigify", default_set=False)
bpy.ops.object.armature_human_metarig_add()
from mocap_addon.blender.bridge.bone_mapping import armature_mapping
print("MAPPING", json.dumps(armature_mapping(bpy.context.object)), flush=True)
os._exit(0)  # bpy 4.2 crashes tearing Rigify down at interpreter exit
"""


def test_rigify_metarig_is_mapped_like_its_preset(addon):
    """Blender's own Rigify human metarig (spine = hips, spine.004 = neck, spine.006 = head); in a
    separate process, since the Rigify add-on does not unload cleanly from every bpy wheel."""
    result = subprocess.run([sys.executable, "-c", RIGIFY_METARIG, str(REPO)], capture_output=True, text=True,
                            check=False, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("MAPPING "))
    mapping = json.loads(line[len("MAPPING "):])
    preset = builtin_presets()["rigify"]
    listed = {bone: preset.lookup(bone)[1] for bone in mapping if preset.lookup(bone)[0]}
    assert len(listed) == 67 and {bone: mapping[bone] for bone in listed} == listed


def test_user_presets_live_in_the_extension_user_directory(addon):
    from mocap_addon.blender.tools.mapping import presets_folder

    folder = presets_folder("bl_ext.user_default.mocap_io.mocap_addon.blender.tools", create=False)
    assert folder.parts[-4:] == (".user", "user_default", "mocap_io", "presets") and "extensions" in folder.parts
    plain = presets_folder("mocap_addon.blender.tools", create=False)
    assert plain.parts[-2:] == ("mocap_io", "presets") and "config" in plain.parts


def test_hand_edits_survive_added_and_renamed_bones(addon):
    """Issue 21, item 2: hand edits stay for bones that still exist, a renamed bone keeps its entry,
    a new bone is detected."""
    from mocap_addon.blender.bridge.bone_mapping import armature_mapping

    bpy = addon
    obj = imported(bpy, SAMPLE)
    entries = obj.data.mocap_mapping
    assert entries["Chest"].canonical == "spine_04"
    entries["Chest"].canonical = "spine_03"  # the spine set by hand
    entries["Tail"].canonical = ""  # a hand edit to nothing
    entries["Neck"].canonical = "neck_02"
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    edit_bones["LeftArm"].name = "arm_upper_twin"  # a name detection would not read as the upper arm
    edit_bones["Neck"].name = "neck_renamed"
    finger = edit_bones.new("LeftHandIndex1")
    finger.head = edit_bones["LeftHand"].tail
    finger.tail = finger.head + (edit_bones["LeftHand"].tail - edit_bones["LeftHand"].head)
    finger.parent = edit_bones["LeftHand"]
    bpy.ops.object.mode_set(mode="OBJECT")
    mapping = armature_mapping(obj)
    assert set(mapping) == {bone.name for bone in obj.data.bones}
    assert mapping["Chest"] == "spine_03" and entries["Chest"].rule == "set by hand"
    assert mapping["Tail"] is None and entries["Tail"].rule == "set by hand"
    assert mapping["neck_renamed"] == "neck_02" and entries["neck_renamed"].rule == "set by hand"
    assert mapping["arm_upper_twin"] == "upper_arm_l"  # renamed: its entry, though its new name says nothing
    assert mapping["LeftHandIndex1"] == "index_01_l"  # new: detected
    assert mapping["LeftForeArm"] == "lower_arm_l" and mapping["Spine"] == "spine_01"
    # Stored again under the new names: a second look changes nothing.
    assert armature_mapping(obj) == mapping
    # A bone removed takes its entry with it; the rest stay.
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.remove(obj.data.edit_bones["LeftHandIndex1"])
    bpy.ops.object.mode_set(mode="OBJECT")
    assert armature_mapping(obj) == {name: joint for name, joint in mapping.items() if name != "LeftHandIndex1"}


def test_load_mapping_preset_without_a_preset_refuses(addon):
    """Issue 21, item 7: no preset chosen is not the first built-in one."""
    bpy = addon
    obj = imported(bpy, SAMPLE)
    before = stored(obj)
    with pytest.raises(RuntimeError, match="choose a preset"):
        bpy.ops.mocap.load_mapping_preset()
    assert stored(obj) == before and obj.data.mocap_mapping["Hips"].rule != "preset 3ds Max Biped"
    assert bpy.ops.mocap.load_mapping_preset(preset="BUILTIN:biped") == {"FINISHED"}
