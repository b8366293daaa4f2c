"""File operators as a user drives them: mixed selections, incomplete files, messages, menus, panel, renames."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from mocap_addon.core import MocapFormatError, load, save, world_positions
from mocap_addon.core.formats import format_of
from tests.blender_helpers import extent, ids
from tests.conftest import CORPUS, SAMPLES
from tests.test_acclaim import AMC as ACCLAIM_AMC
from tests.test_acclaim import ASF as ACCLAIM_ASF

pytestmark = pytest.mark.blender
SAMPLE = SAMPLES / "walk_turn.bvh"
ACCLAIM = CORPUS / "asf_amc"


def armatures(bpy) -> dict[str, int]:
    """Armature name -> frames in its action (0 without one)."""
    found = {}
    for obj in bpy.data.objects:
        if obj.type == "ARMATURE":
            action = obj.animation_data.action if obj.animation_data else None
            found[obj.name] = 0 if action is None else round(action.frame_range[1] - action.frame_range[0]) + 1
    return found


def cmu_style_take(folder) -> tuple[str, str]:
    """The sample as ASF/AMC named like CMU's: ``01.asf`` with ``01_01.amc``."""
    save(load(SAMPLE), folder / "01_01.amc")
    (folder / "01_01.asf").rename(folder / "01.asf")
    return "01.asf", "01_01.amc"


def short_bvh(folder, rows_kept: int):
    """The sample with its last rows cut, its ``Frames:`` line unchanged (120)."""
    lines = SAMPLE.read_text().splitlines()
    motion = lines.index("MOTION")
    path = folder / "short.bvh"
    path.write_text("\n".join(lines[:motion + 3 + rows_kept]) + "\n")
    return path


def record(obj) -> dict:
    return json.loads(obj.data["mocap_skeleton"])


# Item 7: selections across formats.

@pytest.mark.parametrize("operator", ["mocap_amc", "mocap_bvh", "mocap_htr"])
def test_an_asf_selected_with_its_amc_is_its_skeleton_whichever_operator(addon, tmp_path, operator):
    bpy = addon
    asf, amc = cmu_style_take(tmp_path)
    result = getattr(bpy.ops.import_anim, operator)(directory=str(tmp_path), files=[{"name": asf}, {"name": amc}])
    assert result == {"FINISHED"}
    assert armatures(bpy) == {"01_01": 120}


@pytest.mark.skipif(not ACCLAIM.is_dir(), reason="../shared/corpus is absent")
def test_corpus_skeletons_selected_with_their_takes(addon):
    bpy = addon
    files = [{"name": n} for n in ("fm_01.asf", "fm_01_01.amc", "vicon_male.ASF", "vicon_male.walk-speed 4.AMC")]
    assert bpy.ops.import_anim.mocap_amc(directory=str(ACCLAIM), files=files) == {"FINISHED"}
    assert armatures(bpy) == {"fm_01_01": 2751, "vicon_male.walk-speed 4": 537}


def test_each_format_is_read_by_its_own_reader_with_its_options(addon, tmp_path):
    bpy = addon
    shutil.copy(SAMPLE, tmp_path / "walk.bvh")
    save(load(SAMPLE), tmp_path / "walk_htr.htr")
    asf, amc = cmu_style_take(tmp_path)
    names = ["walk.bvh", "walk_htr.htr", asf, amc]
    assert bpy.ops.import_anim.mocap_bvh(directory=str(tmp_path), files=[{"name": n} for n in names],
                                         frame_start=5) == {"FINISHED"}
    assert armatures(bpy) == {"walk": 120, "walk_htr": 120, "01_01": 120}
    assert [record(bpy.data.objects[n])["format"] for n in ("walk", "walk_htr", "01_01")] == ["bvh", "htr", "amc"]
    assert bpy.data.objects["walk_htr"].animation_data.action.frame_range[0] == 5  # shared options apply
    # An option both formats have follows the operator; one it lacks takes its format's default.
    bpy.ops.wm.read_homefile(use_empty=True)
    short = short_bvh(tmp_path, 100)
    with pytest.raises(RuntimeError, match=r"BVH import failed: short.bvh:.*Frames: says 120 but 100 rows"):
        bpy.ops.import_anim.mocap_amc(directory=str(tmp_path), files=[{"name": short.name}])
    assert bpy.ops.import_anim.mocap_amc(directory=str(tmp_path), files=[{"name": short.name}],
                                         lenient=True) == {"FINISHED"}
    assert armatures(bpy) == {"short": 100}


def test_a_file_of_no_known_format_is_refused_in_one_line_and_the_rest_import(addon, tmp_path, capfd):
    bpy = addon
    shutil.copy(SAMPLE, tmp_path / "walk.bvh")
    (tmp_path / "notes.txt").write_text("not motion\n")
    capfd.readouterr()
    assert bpy.ops.import_anim.mocap_bvh(directory=str(tmp_path), files=[{"name": "notes.txt"},
                                                                          {"name": "walk.bvh"}]) == {"FINISHED"}
    warnings = [line for line in capfd.readouterr().out.splitlines() if line.startswith("Warning")]
    assert warnings == ["Warning: BVH import failed: notes.txt: unknown motion capture format '.txt'",
                        "Warning: BVH import: 1 of 2 files imported; refused: notes.txt"]
    assert armatures(bpy) == {"walk": 120}


def test_partial_success_finishes_with_warnings_and_total_failure_is_an_error(addon, tmp_path, capfd):
    """Issue 21, item 5: one bad file among several is a warning naming it; only nothing imported is an error."""
    bpy = addon
    for name in ("a.bvh", "b.bvh"):
        shutil.copy(SAMPLE, tmp_path / name)
    text = SAMPLE.read_text().replace("OFFSET", "OFFSET x", 1)
    (tmp_path / "broken.bvh").write_text(text)
    (tmp_path / "broken_too.htr").write_text("not an htr file\n")
    names = ["a.bvh", "broken.bvh", "b.bvh", "broken_too.htr"]
    capfd.readouterr()
    assert bpy.ops.import_anim.mocap_bvh(directory=str(tmp_path), files=[{"name": n} for n in names]) == {"FINISHED"}
    out = capfd.readouterr().out
    assert "Error" not in out
    warnings = [line for line in out.splitlines() if line.startswith("Warning")]
    assert len(warnings) == 3 and warnings[0].startswith("Warning: BVH import failed: broken.bvh:4: ")
    assert warnings[-1] == "Warning: BVH import: 2 of 4 files imported; refused: broken.bvh, broken_too.htr"
    assert armatures(bpy) == {"a": 120, "b": 120}
    assert {o.name for o in bpy.context.selected_objects} == {"a", "b"} and bpy.context.object.name == "b"
    before = ids(bpy)
    with pytest.raises(RuntimeError) as caught:
        bpy.ops.import_anim.mocap_bvh(directory=str(tmp_path), files=[{"name": "broken.bvh"},
                                                                       {"name": "broken_too.htr"}])
    errors = [line for line in str(caught.value).splitlines() if line.startswith("Error")]
    assert len(errors) == 2 and "broken.bvh:4" in errors[0] and "broken_too.htr" in errors[1]
    assert ids(bpy) == before


# Item 9: incomplete BVH.

def test_incomplete_bvh_loads_what_is_there_with_a_warning(addon, tmp_path, capfd):
    bpy = addon
    short = short_bvh(tmp_path, 100)
    with pytest.raises(MocapFormatError, match="Frames: says 120 but 100 rows follow"):
        load(short)  # the core stays strict unless asked
    assert load(short, strict=False).frame_count == 100
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(short)) == {"FINISHED"}
    assert "Warning: short.bvh: Frames: says 120 but 100 rows follow" in capfd.readouterr().out
    obj = bpy.context.object
    assert armatures(bpy) == {"short": 100}
    assert record(obj)["metadata"]["warnings"] == ["Frames: says 120 but 100 rows follow"]
    before = ids(bpy)
    with pytest.raises(RuntimeError, match=r"short.bvh:.*Frames: says 120 but 100 rows follow"):
        bpy.ops.import_anim.mocap_bvh(filepath=str(short), lenient=False)
    assert ids(bpy) == before


def test_a_bvh_cut_in_the_middle_of_a_row_loads_its_whole_rows(addon, tmp_path, capfd):
    """Issue 21, item 6: Load Incomplete Files drops a last row cut short, and says so."""
    bpy = addon
    path = short_bvh(tmp_path, 101)
    text = path.read_text().rstrip("\n")
    path.write_text(text[:text.rindex("\n") + 20])  # row 101 cut after 20 characters
    values = len(path.read_text().splitlines()[-1].split())
    clip = load(SAMPLE)
    channels = int(clip.skeleton.channel_starts()[-1])
    row_line = len(text.splitlines())
    with pytest.raises(RuntimeError, match=f"short.bvh:{row_line}: expected {channels} values in frame 101, "
                                           f"found {values}"):
        bpy.ops.import_anim.mocap_bvh(filepath=str(path), lenient=False)
    capfd.readouterr()
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(path)) == {"FINISHED"}
    out = capfd.readouterr().out
    assert (f"Warning: short.bvh: line {row_line}: frame 101 is cut short ({values} of {channels} values): "
            "dropped") in out
    assert "Warning: short.bvh: Frames: says 120 but 100 rows follow" in out
    assert armatures(bpy) == {"short": 100}


# Item 10: messages.

def test_import_messages_give_the_reason(addon, tmp_path):
    bpy = addon
    with pytest.raises(RuntimeError, match=f"BVH import failed: {tmp_path / 'absent.bvh'}: No such file or direct"):
        bpy.ops.import_anim.mocap_bvh(filepath=str(tmp_path / "absent.bvh"))
    with pytest.raises(RuntimeError, match=r"HTR import: no file selected$"):
        bpy.ops.import_anim.mocap_htr()
    with pytest.raises(RuntimeError, match=f"BVH import: no file selected in {tmp_path}"):
        bpy.ops.import_anim.mocap_bvh(directory=str(tmp_path), files=[{"name": ""}], filepath=str(tmp_path))


def test_hostile_files_are_refused_at_once_with_their_line(addon, tmp_path):
    """Issue 26: a FIFO blocks nothing; a finite but huge value (1e308) is refused with its line before
    anything computes from it (Reduce Keys used to spin for ever on the NaN it became)."""
    import os
    import time

    from tests.test_htr import GOOD as HTR

    bpy = addon
    os.mkfifo(tmp_path / "fifo.bvh")
    with pytest.raises(RuntimeError, match=r"fifo.bvh.*not a regular file \(a FIFO\)"):
        bpy.ops.import_anim.mocap_bvh(filepath=str(tmp_path / "fifo.bvh"))
    (tmp_path / "huge.htr").write_text(HTR.replace("1 2 0 0 0 0 0 1", "1 1e308 0 0 0 0 0 1"))
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"huge.htr:22: .*'1e308' is too large \(the limit is 1e\+09\)"):
        bpy.ops.import_anim.mocap_htr(filepath=str(tmp_path / "huge.htr"), reduce_keys=True)
    assert time.monotonic() - started < 10
    assert not [obj for obj in bpy.data.objects if obj.type == "ARMATURE"]


def test_export_messages_and_file_names(addon, tmp_path):
    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE))
    target = tmp_path / "missing" / "walk.bvh"
    with pytest.raises(RuntimeError) as caught:
        bpy.ops.export_anim.mocap_bvh(filepath=str(target))
    assert f"BVH export failed: {target}: No such file or directory" in str(caught.value)
    assert ".tmp-" not in str(caught.value)
    # Another format's extension is refused: the BVH exporter writes BVH only.
    with pytest.raises(RuntimeError, match=r"walk\.htr: the BVH exporter writes \.bvh files, not \.htr"):
        bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "walk.htr"))
    assert not any(tmp_path.iterdir())
    # A name without the format's extension gets it, as the file browser adds it.
    for name, written in (("walk", "walk.bvh"), ("walk.v2", "walk.v2.bvh"), ("upper.BVH", "upper.BVH")):
        assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / name)) == {"FINISHED"}
        assert format_of(tmp_path / written) == ".bvh" and load(tmp_path / written).frame_count == 120
    assert bpy.ops.export_anim.mocap_htr(filepath=str(tmp_path / "take")) == {"FINISHED"}
    assert load(tmp_path / "take.htr").frame_count == 120
    assert sorted(p.name for p in tmp_path.iterdir()) == ["take.htr", "upper.BVH", "walk.bvh", "walk.v2.bvh"]


def test_export_needs_an_armature_and_says_so(addon):
    bpy = addon
    with pytest.raises(RuntimeError, match="Select the armature to export"):
        bpy.ops.export_anim.mocap_bvh(filepath="/tmp/never.bvh")


# Item 12: menu entries.

class _Layout:
    """Stands in for a menu's layout and records the operator entries drawn."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []

    def operator(self, idname: str, text: str = "", **_: object) -> None:
        self.entries.append((idname, text))

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: None


def menu_entries(bpy, menu) -> dict[str, list[tuple[str, str]]]:
    """Operator entries each module appended to ``menu`` draws: module name -> (idname, text)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for draw in getattr(menu.draw, "_draw_funcs", []):
        host = type("Host", (), {"layout": _Layout()})()
        draw(host, bpy.context)
        found.setdefault(draw.__module__.split(".")[0], []).extend(host.layout.entries)
    return found


@pytest.mark.parametrize("menu", ["TOPBAR_MT_file_import", "TOPBAR_MT_file_export"])
def test_menu_labels_differ_from_blenders_own_bvh_entries(addon, menu):
    import addon_utils

    bpy = addon
    addon_utils.enable("io_anim_bvh", default_set=True)
    entries = menu_entries(bpy, getattr(bpy.types, menu))
    theirs = {text for _, text in entries["io_anim_bvh"]}
    ours = [text for _, text in entries["mocap_addon"]]
    assert theirs == {"Motion Capture (.bvh)"}
    assert ours == ["Mocap I/O BVH (.bvh)", "Mocap I/O HTR (.htr)", "Mocap I/O ASF/AMC (.amc/.asf)"]
    assert not theirs & set(ours)


# Item 13: panel and renamed bones.

def test_panel_shows_no_frame_rate_for_a_skeleton_only_asf(addon, tmp_path, capfd):
    from mocap_addon.blender.bridge.read_rig import source_summary

    bpy = addon
    asf, _ = cmu_style_take(tmp_path)
    assert bpy.ops.import_anim.mocap_amc(filepath=str(tmp_path / asf)) == {"FINISHED"}
    assert "Info: Imported 01: 29 joints, skeleton only in" in capfd.readouterr().out
    # The sample's centimetres were saved stating metres (its clip knew no unit): Unit Auto disbelieves a
    # 167 m figure, reads centimetres and says so.
    assert source_summary(bpy.context.object) == [
        "ASF/AMC: 01.asf", "29 joints, skeleton only",
        "warning: the file states m, which makes the figure 167 m tall; read in centimetres: 1.67 m tall"]


def renamed_export(bpy, tmp_path, path, extension: str, renames: dict[str, str]):
    """Import ``path``, rename bones, export as ``extension``: (clip as read, clip as written)."""
    getattr(bpy.ops.import_anim, f"mocap_{extension}")(filepath=str(path))
    obj = bpy.context.object
    for old, new in renames.items():
        obj.data.bones[old].name = new
    target = tmp_path / f"renamed.{extension}"
    assert getattr(bpy.ops.export_anim, f"mocap_{extension}")(filepath=str(target)) == {"FINISHED"}
    return load(path), load(target)


def test_renamed_bones_export_under_their_new_names(addon, tmp_path):
    bpy = addon
    clip = load(SAMPLE)
    # Every bone renamed, and two swapped: bones are matched by place, not by their old names.
    renames = {name: f"rig_{name}" for name in clip.skeleton.names}
    renames.update({"LeftArm": "RightArm", "RightArm": "LeftArm"})
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE))
    obj = bpy.context.object
    for name in clip.skeleton.names:
        obj.data.bones[name].name = f"tmp_{name}"
    for name in clip.skeleton.names:
        obj.data.bones[f"tmp_{name}"].name = renames[name]
    target = tmp_path / "renamed.bvh"
    assert bpy.ops.export_anim.mocap_bvh(filepath=str(target)) == {"FINISHED"}
    written = load(target)
    assert written.skeleton.names == [renames[n] for n in clip.skeleton.names]
    assert written.skeleton.channels == clip.skeleton.channels
    truth = world_positions(clip)
    assert np.abs(world_positions(written) - truth).max() <= 1e-3 + 1e-5 * extent(truth)


@pytest.mark.skipif(not ACCLAIM.is_dir(), reason="../shared/corpus is absent")
def test_renamed_asf_bones_keep_their_limits(addon, tmp_path):
    bpy = addon
    original, written = renamed_export(bpy, tmp_path, ACCLAIM / "fm_01_01.amc", "amc",
                                       {"lfemur": "LeftUpLeg", "rfemur": "RightUpLeg"})
    assert "LeftUpLeg" in written.skeleton.names and "lfemur" not in written.skeleton.names
    limits = written.metadata["asf"]["limits"]
    assert limits["LeftUpLeg"] == original.metadata["asf"]["limits"]["lfemur"] == [[-160, 20], [-70, 70], [-60, 70]]
    truth = world_positions(original)
    assert np.abs(world_positions(written) - truth).max() <= 1e-3 + 1e-5 * extent(truth)


def test_a_removed_bone_points_to_exporting_the_armature_as_it_is(addon, tmp_path):
    bpy = addon
    bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE))
    obj = bpy.context.object
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.remove(obj.data.edit_bones["LeftHand"])
    bpy.ops.object.mode_set(mode="OBJECT")
    with pytest.raises(RuntimeError, match=r"bones removed or re-parented since import \(LeftHand\): switch off "
                                           "Original Layout"):
        bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "cut.bvh"))
    assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "cut.bvh"), use_import_layout=False) == {"FINISHED"}
    cut = load(tmp_path / "cut.bvh")
    clip = load(SAMPLE)
    kept = [clip.skeleton.names.index(n) for n in cut.skeleton.names]
    assert "LeftHand" not in cut.skeleton.names and len(kept) == clip.skeleton.joint_count - 1
    truth = world_positions(clip)[:, kept]
    assert np.abs(world_positions(cut) - truth).max() <= 1e-3 + 1e-5 * extent(truth)


def test_import_into_a_linked_collection_is_refused_by_poll(addon, tmp_path):
    bpy = addon
    shelf = bpy.data.collections.new("Shelf")
    bpy.data.libraries.write(str(tmp_path / "library.blend"), {shelf})
    bpy.data.collections.remove(shelf)
    with bpy.data.libraries.load(str(tmp_path / "library.blend"), link=True) as (_, linked):
        linked.collections = ["Shelf"]
    bpy.context.scene.collection.children.link(linked.collections[0])
    view_layer = bpy.context.view_layer
    view_layer.active_layer_collection = view_layer.layer_collection.children["Shelf"]
    with pytest.raises(RuntimeError, match="Collection 'Shelf' is linked from a library"):
        bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE))
    view_layer.active_layer_collection = view_layer.layer_collection
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE)) == {"FINISHED"}


# Issue 21, item 1: bones Blender 4.2 and 4.5 would drop (shorter than 1e-6) get a minimum length;
# the import record keeps the file's own values, so export writes them back.

# test_acclaim's hand-written skeleton with a dofless bone of 1e-7 between its two bones.
TINY_BONE_ASF = ACCLAIM_ASF.replace(":hierarchy", """  begin
     id 3
     name tiny
     direction 0 1 0
     length 1e-07
     axis 0 0 0 XYZ
  end
:hierarchy""").replace("    upper lower", "    upper tiny\n    tiny lower")


def zero_offset_bvh(offset: str) -> str:
    """Three joints and an End Site, every OFFSET zero but the Spine's (``offset``)."""
    return f"""HIERARCHY
ROOT Hips
{{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {{
    OFFSET {offset}
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Head
    {{
      OFFSET 0 0 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {{
        OFFSET 0 0 0
      }}
    }}
  }}
}}
MOTION
Frames: 2
Frame Time: 0.0333333
0 0 0 0 0 0 0 0 0 0 0 0
1 2 3 10 0 0 20 0 0 0 30 0
"""


def asf_bone_lengths(path) -> dict[str, float]:
    """Each bone's ``length`` as written in an ASF's ``:bonedata``."""
    blocks = path.read_text().split(":bonedata")[1].split(":hierarchy")[0].split("begin")[1:]
    fields = [dict(line.split(None, 1) for line in block.splitlines() if len(line.split()) > 1) for block in blocks]
    return {f["name"]: float(f["length"]) for f in fields}


def bones_at_least(obj, minimum: float) -> None:
    lengths = {bone.name: bone.length for bone in obj.data.bones}
    assert min(lengths.values()) >= minimum * (1 - 1e-5), lengths


def test_a_1e7_bone_imports_with_a_minimum_length_and_exports_its_own(addon, tmp_path):
    bpy = addon
    (tmp_path / "tiny.asf").write_text(TINY_BONE_ASF)
    (tmp_path / "tiny.amc").write_text(ACCLAIM_AMC)
    from tests.blender_helpers import check_import_and_round_trip

    check_import_and_round_trip(bpy, tmp_path / "tiny.amc", "amc", tmp_path)  # poses equal the file's
    obj = bpy.data.objects["tiny"]
    assert [bone.name for bone in obj.data.bones] == ["root", "upper", "tiny", "lower"]
    assert asf_bone_lengths(tmp_path / "tiny.asf")["tiny"] == 1e-7
    bones_at_least(obj, 1e-4)
    # The file's own value (to the writer's precision, as a core round trip), not the rig's 1e-4 m.
    assert asf_bone_lengths(tmp_path / "out.asf")["tiny"] == pytest.approx(1e-7, rel=1e-6)


@pytest.mark.parametrize("offset", ["0 0 0", "0 1e-8 0"])
def test_a_bvh_of_zero_offsets_imports(addon, tmp_path, offset):
    bpy = addon
    path = tmp_path / "zero.bvh"
    path.write_text(zero_offset_bvh(offset))
    from tests.blender_helpers import check_import_and_round_trip

    clip, exported = check_import_and_round_trip(bpy, path, "bvh", tmp_path)
    assert [bone.name for bone in bpy.context.object.data.bones] == ["Hips", "Spine", "Head"]
    bones_at_least(bpy.context.object, 1e-4)
    np.testing.assert_array_equal(exported.skeleton.offsets, clip.skeleton.offsets)
    np.testing.assert_array_equal(exported.skeleton.end_sites[2], clip.skeleton.end_sites[2])


@pytest.mark.skipif(not (CORPUS / "htr").is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("name", ["gpr450_xbot_anim1.HTR", "gpr450_xbot_base.HTR"])
def test_our_asf_export_of_the_xbot_imports_again(addon, tmp_path, name):
    bpy = addon
    assert bpy.ops.import_anim.mocap_htr(filepath=str(CORPUS / "htr" / name)) == {"FINISHED"}
    assert bpy.ops.export_anim.mocap_amc(filepath=str(tmp_path / "xbot.amc")) == {"FINISHED"}
    lengths = asf_bone_lengths(tmp_path / "xbot.asf")
    assert min(lengths.values()) < 1e-2  # dofless bones of about 1e-6 m (9e-6 of the file's unit)
    assert bpy.ops.import_anim.mocap_amc(filepath=str(tmp_path / "xbot.amc")) == {"FINISHED"}
    obj = bpy.context.object
    clip = load(tmp_path / "xbot.amc")
    assert [bone.name for bone in obj.data.bones] == clip.skeleton.names
    bones_at_least(obj, 1e-4)
    from tests.blender_helpers import blender_axes, pose_heads

    frames = range(1, clip.frame_count + 1, max(clip.frame_count // 20, 1))
    heads, _ = pose_heads(bpy, obj, frames)
    truth = blender_axes(world_positions(clip)[np.array(frames) - 1]) * clip.unit_in_metres
    assert np.abs(heads - truth).max() <= 1e-5 * extent(truth)
    assert bpy.ops.export_anim.mocap_amc(filepath=str(tmp_path / "again.amc")) == {"FINISHED"}
    assert asf_bone_lengths(tmp_path / "again.asf") == pytest.approx(lengths, rel=1e-6, abs=1e-9)


# Issue 21, item 3: BVH, which cannot state a unit, is written in centimetres for motion from files
# that stated theirs; any unit the exporter writes can be read back.

def heads_in_metres(bpy, obj, frames) -> np.ndarray:
    from tests.blender_helpers import pose_heads

    return pose_heads(bpy, obj, frames)[0]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("path, importer", [(CORPUS / "htr" / "gpr450_xbot_walk_m_mixamo.com.htr", "mocap_htr"),
                                            (CORPUS / "asf_amc" / "fm_11_01.amc", "mocap_amc")])
def test_bvh_export_of_an_htr_or_asf_import_is_in_centimetres(addon, tmp_path, capfd, path, importer):
    bpy = addon
    assert getattr(bpy.ops.import_anim, importer)(filepath=str(path)) == {"FINISHED"}
    source = bpy.context.object
    frames = [1, 10, 20]
    truth = heads_in_metres(bpy, source, frames)
    capfd.readouterr()
    assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "out.bvh")) == {"FINISHED"}
    assert "lengths written in the clip's unit, cm" in capfd.readouterr().out
    clip, written = load(path), load(tmp_path / "out.bvh")
    ratio = extent(world_positions(written)) / extent(world_positions(clip))
    assert ratio == pytest.approx(clip.unit_in_metres / 0.01, rel=1e-6)  # mm: 0.1, CMU's 1/0.45 inch: 5.64
    # Read back as centimetres, by ours and by Blender's own importer, the figure is where it was.
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(tmp_path / "out.bvh"), unit="CM") == {"FINISHED"}
    assert np.abs(heads_in_metres(bpy, bpy.context.object, frames) - truth).max() < 1e-5 * extent(truth)
    assert bpy.ops.import_anim.bvh(filepath=str(tmp_path / "out.bvh"), global_scale=0.01) == {"FINISHED"}
    theirs = bpy.context.object
    assert extent(heads_in_metres(bpy, theirs, frames)) == pytest.approx(extent(truth), rel=1e-4)
    # The option stays: From File's old reading (the source's unit) is one choice away.
    assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / "own.bvh"), unit="CUSTOM",
                                         custom_unit=clip.unit_in_metres) == {"FINISHED"}
    own = load(tmp_path / "own.bvh")
    assert extent(world_positions(own)) == pytest.approx(extent(world_positions(clip)), rel=1e-6)


def test_bvh_export_of_a_bvh_import_keeps_the_files_unit(addon, tmp_path):
    bpy = addon
    clip = load(SAMPLE)
    for unit in ("AUTO", "MM"):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), unit=unit) == {"FINISHED"}
        assert bpy.ops.export_anim.mocap_bvh(filepath=str(tmp_path / f"{unit}.bvh")) == {"FINISHED"}
        np.testing.assert_allclose(load(tmp_path / f"{unit}.bvh").skeleton.offsets, clip.skeleton.offsets,
                                   atol=1e-6)


def test_every_unit_the_exporter_writes_reads_back(addon, tmp_path):
    """A Unit choice for each of the core's units and a free Metres per Unit (CMU's 1/0.45 inch)."""
    from mocap_addon.blender.bridge.conversion import IMPORT_UNIT_ITEMS, UNIT_ITEMS
    from mocap_addon.core.units import UNIT_CHOICES

    bpy = addon
    assert [item[0] for item in UNIT_ITEMS] == ["AUTO", *(u.upper() for u in UNIT_CHOICES), "CUSTOM"]
    assert [item[0] for item in IMPORT_UNIT_ITEMS] == ["AUTO", "FILE", *(u.upper() for u in UNIT_CHOICES), "CUSTOM"]
    for operator, items in ((bpy.ops.import_anim.mocap_bvh, IMPORT_UNIT_ITEMS),
                            (bpy.ops.export_anim.mocap_bvh, UNIT_ITEMS)):
        assert [item.identifier for item in operator.get_rna_type().properties["unit"].enum_items] == \
            [item[0] for item in items]
    assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLE), unit="CM") == {"FINISHED"}
    frames = [1, 60]
    truth = heads_in_metres(bpy, bpy.context.object, frames)
    cmu = 0.0254 / 0.45
    for unit, custom in [(u.upper(), 1.0) for u in UNIT_CHOICES] + [("CUSTOM", cmu)]:
        bpy.context.view_layer.objects.active = bpy.data.objects["walk_turn"]
        target = tmp_path / f"{unit}.bvh"
        assert bpy.ops.export_anim.mocap_bvh(filepath=str(target), unit=unit, custom_unit=custom) == {"FINISHED"}
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(target), unit=unit, custom_unit=custom) == {"FINISHED"}
        again = heads_in_metres(bpy, bpy.context.object, frames)
        assert np.abs(again - truth).max() < 1e-5 * extent(truth), unit
