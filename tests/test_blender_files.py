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


def test_a_file_of_no_known_format_is_refused_in_one_line_and_the_rest_import(addon, tmp_path):
    bpy = addon
    shutil.copy(SAMPLE, tmp_path / "walk.bvh")
    (tmp_path / "notes.txt").write_text("not motion\n")
    with pytest.raises(RuntimeError) as caught:
        bpy.ops.import_anim.mocap_bvh(directory=str(tmp_path), files=[{"name": "notes.txt"}, {"name": "walk.bvh"}])
    errors = [line for line in str(caught.value).splitlines() if line.startswith("Error")]
    assert errors == ["Error: BVH import failed: notes.txt: unknown motion capture format '.txt'"]
    assert armatures(bpy) == {"walk": 120}


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


# Item 10: messages.

def test_import_messages_give_the_reason(addon, tmp_path):
    bpy = addon
    with pytest.raises(RuntimeError, match=f"BVH import failed: {tmp_path / 'absent.bvh'}: No such file or direct"):
        bpy.ops.import_anim.mocap_bvh(filepath=str(tmp_path / "absent.bvh"))
    with pytest.raises(RuntimeError, match=r"HTR import: no file selected$"):
        bpy.ops.import_anim.mocap_htr()
    with pytest.raises(RuntimeError, match=f"BVH import: no file selected in {tmp_path}"):
        bpy.ops.import_anim.mocap_bvh(directory=str(tmp_path), files=[{"name": ""}], filepath=str(tmp_path))


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
    from mocap_addon.blender.import_record import source_summary

    bpy = addon
    asf, _ = cmu_style_take(tmp_path)
    assert bpy.ops.import_anim.mocap_amc(filepath=str(tmp_path / asf)) == {"FINISHED"}
    assert "Info: Imported 01: 29 joints, skeleton only in" in capfd.readouterr().out
    assert source_summary(bpy.context.object) == ["AMC: 01.asf", "29 joints, skeleton only"]


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
