"""Contact sheets (``core.preview``) and ``python -m mocap_addon.core preview FILE OUT.png``."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from mocap_addon.core import load, world_positions
from mocap_addon.core.batch.preview import COLOURS, contact_sheet, stick_figures
from mocap_addon.core.cli.main import main
from mocap_addon.core.kinematics import end_site_positions
from mocap_addon.core.model import Clip
from mocap_addon.core.retarget.transfer import to_canonical
from tests.conftest import SAMPLES, corpus_files

WALK = SAMPLES / "walk_turn.bvh"


def test_six_moments_on_the_lowest_point_of_the_clip():
    clip = load(WALK)
    body = stick_figures(clip)
    assert body.frames.tolist() == [0, 24, 48, 71, 95, 119]  # first to last, evenly
    heads = world_positions(clip)
    ends = end_site_positions(clip)
    assert body.floor == pytest.approx(min(heads[..., 1].min(), min(e[..., 1].min() for e in ends if e.size)))
    sites = sum(len(s) for s in clip.skeleton.end_sites)
    assert body.segments.shape == (6, clip.skeleton.joint_count - 1 + sites, 2, 3)  # every bone and end site
    np.testing.assert_allclose(body.hips, heads[body.frames, 0])
    tips = {tuple(np.round(p, 9)) for p in body.segments[2, :, 1]}
    assert {tuple(np.round(p, 9)) for p in heads[48, 1:]} <= tips
    # The body's left, from its right hip to its left, lies in the floor's plane.
    names = clip.skeleton.names
    across = heads[0, names.index("LeftUpLeg")] - heads[0, names.index("RightUpLeg")]
    across[1] = 0
    np.testing.assert_allclose(body.left, across / np.linalg.norm(across), atol=1e-12)


def test_sides_follow_the_bone_mapping_and_the_rest_pose_stands_for_no_frames():
    canonical = to_canonical(load(WALK))
    rest = Clip(canonical.skeleton, np.zeros((0, canonical.motion.shape[1])), canonical.frame_time)
    body = stick_figures(rest)
    assert body.frames.tolist() == [0] and body.left.tolist() == [1.0, 0.0, 0.0]  # T-pose, +X left, Y up
    assert body.floor == pytest.approx(0.0, abs=1e-9)  # the canonical body stands on y = 0
    side = {canonical.skeleton.names[joint]: s for joint, s in zip(body.joints, body.sides)}
    assert side["hand_l"] == "l" and side["index_03_l"] == "l" and side["foot_r"] == "r" and side["head"] is None
    assert set(COLOURS) == {"l", "r", None}


@pytest.mark.corpus
def test_joints_above_the_hips_are_not_drawn():
    bandai = corpus_files("bvh", "bandai_dataset-1_walk_normal_001.bvh")
    if not bandai:
        pytest.skip("../shared/corpus is absent")
    clip = load(bandai[0])
    assert clip.skeleton.names[:2] == ["joint_Root", "Hips"]  # a ground node, then the body
    body = stick_figures(clip)
    heads = world_positions(clip)[body.frames]
    starts = body.segments[:, :, 0]
    assert not np.isclose(starts, heads[:, None, 0]).all(axis=-1).any()  # no bone from the ground node
    np.testing.assert_allclose(body.hips, heads[:, 1])


def test_the_preview_command_draws_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    target = tmp_path / "walk.png"
    assert main(["preview", str(WALK), str(target)]) == 0
    assert capsys.readouterr().out.strip() == f"{WALK} -> {target}"
    image = imread(target)
    assert image.shape[0] > 400 and image.shape[1] > 1.5 * image.shape[0]  # two rows of six
    assert image[..., :3].min() < 0.3 and np.median(image[..., :3]) > 0.95  # dark lines on white
    contact_sheet(load(WALK), tmp_path / "again.png", title="walk_turn.bvh")
    assert (tmp_path / "again.png").read_bytes() == target.read_bytes()  # the same picture each time


def test_the_preview_command_fails_in_one_line(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\n")
    assert main(["preview", str(bad), str(tmp_path / "bad.png")]) == 1
    assert capsys.readouterr().err.startswith("error: bad.bvh:3: ")
    for name in [n for n in sys.modules if n.split(".")[0] == "matplotlib"] + ["matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    assert main(["preview", str(WALK), str(tmp_path / "walk.png")]) == 2
    error = capsys.readouterr().err
    assert error == 'error: previews need matplotlib: pip install "mocap-addon[previews]" (or pip install matplotlib)\n'
    assert not (tmp_path / "walk.png").exists()


def test_the_library_pages_animation_is_the_side_view_in_int16(tmp_path):
    import base64
    import json

    from mocap_addon.core.batch.preview import SIDECAR_FPS, motion_sidecar

    clip = load(WALK)
    path = tmp_path / "walk.motion.js"
    motion_sidecar(clip, path)
    text = path.read_text()
    assert text.startswith("mocapMotion(document.currentScript, {") and text.endswith("});\n")
    sidecar = json.loads(text[text.index("{"):text.rindex("}") + 1])
    seconds = clip.frame_count * clip.frame_time
    assert sidecar["frames"] == round(seconds * SIDECAR_FPS)
    assert sidecar["fps"] == pytest.approx((sidecar["frames"] - 1) / seconds)
    points = np.frombuffer(base64.b64decode(sidecar["data"]), "<i2").reshape(sidecar["frames"], -1, 2, 2)
    body = stick_figures(clip, sidecar["frames"])
    assert points.shape[1] == len(body.sides) == len(sidecar["sides"])
    # heights above the floor, at the scale the header gives: feet on the floor, the tallest point at the top
    reach = float((body.segments @ body.up - body.floor).max()) / sidecar["tall"]
    height = body.segments @ body.up - body.floor
    np.testing.assert_allclose(points[..., 1] / 32767 * reach, height, atol=reach / 32767)
    assert points[..., 1].min() <= 40 and points[..., 1].max() == 32767
