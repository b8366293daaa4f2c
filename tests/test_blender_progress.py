"""Blender's progress indicator around the operators that can run for seconds (issue 21, item 9):
multi-file import, retarget, blend (time warping included) and key reduction."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import SAMPLES

pytestmark = pytest.mark.blender


@pytest.fixture
def shown(addon, monkeypatch):
    """What the operators show: ("begin", total), ("update", value) and ("end",) in order."""
    from mocap_addon.blender.bridge.progress import Progress

    calls: list[tuple] = []
    enter, update, leave = Progress.__enter__, Progress.update, Progress.__exit__

    def begin(self):
        calls.append(("begin", self.total))
        return enter(self)

    def step(self, value):
        calls.append(("update", value))
        update(self, value)

    def end(self, *exc):
        leave(self, *exc)
        calls.append(("end",))

    monkeypatch.setattr(Progress, "__enter__", begin)
    monkeypatch.setattr(Progress, "update", step)
    monkeypatch.setattr(Progress, "__exit__", end)
    return calls


def check(calls: list[tuple], total: float = 1.0) -> None:
    """One begin, updates rising from 0 to ``total``, one end."""
    assert calls[0] == ("begin", total) and calls[-1] == ("end",)
    values = [call[1] for call in calls if call[0] == "update"]
    assert len(values) >= 3 and values == sorted(values) and values[0] >= 0 and values[-1] == pytest.approx(total)
    assert [call[0] for call in calls].count("begin") == 1 and [call[0] for call in calls].count("end") == 1


def test_multi_file_import_shows_progress_per_file(addon, shown, tmp_path):
    bpy = addon
    names = ["a.bvh", "b.bvh", "c.bvh"]
    for name in names:
        shutil.copy(SAMPLES / "walk_turn.bvh", tmp_path / name)
    assert bpy.ops.import_anim.mocap_bvh(directory=str(tmp_path), files=[{"name": n} for n in names]) == {"FINISHED"}
    check(shown, total=3)
    assert {1, 2} <= {value for kind, *rest in shown if kind == "update" for value in rest}  # each file's start


def test_retarget_and_reduction_show_progress(addon, shown):
    from tests.test_blender_retarget import build_rig, import_sample, select

    bpy = addon
    source = import_sample(bpy)
    rig = build_rig(bpy, "rig")
    shown.clear()
    select(bpy, source, rig)
    assert bpy.ops.mocap.retarget() == {"FINISHED"}
    check(shown)
    shown.clear()
    assert bpy.ops.mocap.reduce_keys() == {"FINISHED"}
    check(shown)


def test_blend_with_time_warping_shows_progress_and_ends_it_when_it_fails(addon, shown):
    bpy = addon
    for name in ("walk_turn.bvh", "jog_wave.bvh"):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLES / name)) == {"FINISHED"}
    shown.clear()
    assert bpy.ops.mocap.blend(clip_a="walk_turn", clip_b="jog_wave", align="DTW", root="HEADING") == {"FINISHED"}
    check(shown)
    shown.clear()
    with pytest.raises(RuntimeError, match="past b's last frame"):
        bpy.ops.mocap.blend(clip_a="walk_turn", clip_b="jog_wave", align="DTW", offset=5000)
    assert shown[0] == ("begin", 1.0) and shown[-1] == ("end",) and ("update", 1.0) not in shown
