"""The Live panel in headless Blender: live mixes and retargets posed at every frame change equal what the
blend and retarget operators bake, bake themselves, survive saving, and cost little per frame."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tests.blender_helpers import Layout, extent, pose_heads
from tests.conftest import CORPUS, SAMPLES

pytestmark = pytest.mark.blender

WALK = CORPUS / "bvh" / "bandai_dataset-1_walk_normal_001.bvh"  # 195 frames
ELDERLY = CORPUS / "bvh" / "bandai_dataset-2_walk_elderly_004.bvh"  # 466 frames, same skeleton
A, B = WALK.stem, ELDERLY.stem
LIVE = f"{A}_live"
FRAMES = range(1, 196, 4)
TOLERANCE = 1e-4  # of the figure's height, as the issue asks


@pytest.fixture
def clips(addon):
    """Both walks imported and a live mix of them at 0.3 on <A>_live; returns bpy."""
    if not WALK.is_file():
        pytest.skip("../shared/corpus is absent")
    bpy = addon
    for path in (WALK, ELDERLY):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(path)) == {"FINISHED"}
    assert bpy.ops.mocap.live_blend(clip_a=A, clip_b=B, mix=0.3) == {"FINISHED"}
    assert bpy.context.object.name == LIVE
    return bpy


def heads(bpy, name, frames=FRAMES):
    return pose_heads(bpy, bpy.data.objects[name], frames)[0]


def baked(bpy, frames=FRAMES, **options):
    """Heads of mocap.blend's result for ``options`` (the live target's own options unless given)."""
    assert bpy.ops.mocap.blend(clip_a=A, clip_b=B, **options) == {"FINISHED"}
    return heads(bpy, f"{A}_blend", frames)


def error(x, y) -> float:
    return float(np.abs(x - y).max()) / extent(y)


@pytest.mark.parametrize("options", [{}, {"root": "HEADING", "feet": "FREE", "offset": 12},
                                     {"root": "A", "align": "DTW", "mask": "UPPER_BODY"}])
def test_the_live_pose_is_the_baked_blend_at_every_mix(clips, options):
    bpy = clips
    live = bpy.data.objects[LIVE]
    for name, value in options.items():
        setattr(live.mocap_live, name, value)
    for mix in (0.0, 0.3, 0.62, 1.0):
        live.mocap_live.mix = mix
        shown = heads(bpy, LIVE)
        assert error(shown, baked(bpy, mix=mix, **options)) <= TOLERANCE
    assert error(shown, heads(bpy, A)) > 100 * TOLERANCE  # mix 1 is not A: the comparison can fail


def test_a_keyed_mix_is_followed_frame_by_frame(clips):
    bpy = clips
    live = bpy.data.objects[LIVE]
    settings = live.mocap_live
    for frame, mix in ((1, 0.0), (100, 1.0), (195, 0.25)):
        settings.mix = mix
        live.keyframe_insert("mocap_live.mix", frame=frame)
    for frame in (1, 40, 100, 150):
        bpy.context.scene.frame_set(frame)
        mix = settings.mix  # the curve's value, as Blender shows it
        shown = heads(bpy, LIVE, [frame])
        assert error(shown, baked(bpy, [frame], mix=mix)) <= TOLERANCE
    assert 0.0 < bpy.data.objects[LIVE].mocap_live.mix < 1.0


def test_bake_live_writes_the_live_pose_and_keeps_the_previous_action(clips):
    bpy = clips
    live = bpy.data.objects[LIVE]
    live.mocap_live.mix = 0.45
    live.keyframe_insert("mocap_live.mix", frame=1)
    keyed = live.animation_data.action
    frames = range(1, 196)
    shown = heads(bpy, LIVE, frames)
    assert bpy.ops.mocap.bake_live() == {"FINISHED"}
    assert not live.mocap_live.enabled and live.animation_data.action != keyed
    assert keyed.name in bpy.data.actions and keyed.use_fake_user  # never lost
    assert np.abs(heads(bpy, LIVE, frames) - shown).max() <= 1e-5 * extent(shown)


def test_the_live_state_survives_saving_and_file_new_leaves_none(clips, tmp_path):
    from mocap_addon.blender.tools import live as live_tool

    bpy = clips
    bpy.data.objects[LIVE].mocap_live.mix = 0.71
    bpy.data.objects[LIVE].mocap_live.root = "HEADING"
    shown = heads(bpy, LIVE)
    path = tmp_path / "live.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    assert not live_tool._cache and LIVE not in bpy.data.objects
    bpy.context.scene.frame_set(10)  # the handler finds nothing to pose
    assert live_tool._on_frame_change in bpy.app.handlers.frame_change_pre
    bpy.ops.wm.open_mainfile(filepath=str(path))
    settings = bpy.data.objects[LIVE].mocap_live
    assert settings.enabled and settings.mix == pytest.approx(0.71) and settings.root == "HEADING"
    assert np.abs(heads(bpy, LIVE) - shown).max() <= 1e-5 * extent(shown)  # rebuilt after loading


def test_unregistering_removes_the_handlers(clips):
    import mocap_addon
    from mocap_addon.blender.tools import live as live_tool

    bpy = clips
    mocap_addon.unregister()
    try:
        handlers = bpy.app.handlers
        assert live_tool._on_frame_change not in handlers.frame_change_pre
        assert live_tool._on_load not in handlers.load_post and not live_tool._cache
    finally:
        mocap_addon.register()
    assert bpy.app.handlers.frame_change_pre.count(live_tool._on_frame_change) == 1


def test_the_envelope_is_the_cores_and_follows_the_options(clips):
    from mocap_addon.blender.bridge.blend_inputs import clip_to_world, prepare_blend
    from mocap_addon.core.blend import envelope

    bpy = clips
    live = bpy.data.objects[LIVE]
    assert bpy.ops.mocap.draw_envelope(joint="hand_r", mixes=11) == {"FINISHED"}
    curve = live.mocap_live.envelope
    assert curve.name == f"{LIVE}_envelope" and len(curve.data.splines) == 12

    def check():
        settings = live.mocap_live
        prepared = prepare_blend(bpy.data.objects[A], bpy.data.objects[B], settings)
        mixes = [*np.linspace(0.0, 1.0, 11), settings.mix]
        paths = envelope(prepared.a, prepared.b, "Hand_R", mixes, **prepared.options)
        world = clip_to_world(live)
        truth = paths @ world[:3, :3].T + world[:3, 3]
        for spline, path in zip(curve.data.splines, truth):
            points = np.array([p.co[:3] for p in spline.points])
            assert np.abs(points - path).max() <= TOLERANCE * extent(truth)
        assert [s.material_index for s in curve.data.splines] == [0] * 11 + [1]  # the current mix highlighted
        return truth

    before = check()
    live.mocap_live.offset = 30  # an option changed: redrawn
    after = check()
    live.mocap_live.mix = 0.8
    check()
    assert np.abs(before - after).max() > 100 * TOLERANCE * extent(before)


def test_live_retarget_is_the_baked_retarget_and_switches_source_without_baking(addon):
    if not WALK.is_file():
        pytest.skip("../shared/corpus is absent")
    bpy = addon
    names = []
    for path in (SAMPLES / "walk_turn.bvh", SAMPLES / "jog_wave.bvh", WALK, WALK):
        assert bpy.ops.import_anim.mocap_bvh(filepath=str(path)) == {"FINISHED"}
        names.append(bpy.context.object.name)
    walk, jog, target, twin = names
    frames = range(1, 121, 3)
    own = bpy.data.objects[target].animation_data.action
    assert bpy.ops.mocap.live_retarget(source=walk, target=target) == {"FINISHED"}
    settings = bpy.data.objects[target].mocap_live
    assert settings.kept == own and own.use_fake_user  # taken off, kept: it would hide the live pose
    for source in (walk, jog):
        settings.source = bpy.data.objects[source]
        for root, feet in (("SCALE", "PLANTED"), ("KEEP", "FREE")):
            actions = set(bpy.data.actions)
            settings.retarget_root, settings.retarget_feet = root, feet
            shown = heads(bpy, target, frames)
            assert set(bpy.data.actions) == actions  # previewed, nothing baked
            assert bpy.ops.mocap.retarget(source=source, target=twin, root=root, feet=feet) == {"FINISHED"}
            truth = heads(bpy, twin, frames)
            assert error(shown, truth) <= TOLERANCE
    assert bpy.ops.mocap.bake_live(target=target) == {"FINISHED"}
    assert np.abs(heads(bpy, target, frames) - shown).max() <= 1e-5 * extent(shown)


def test_failures_leave_the_scene_as_it_was(clips):
    bpy = clips
    objects = set(bpy.data.objects)
    with pytest.raises(RuntimeError, match="is one of the clips"):
        bpy.ops.mocap.live_blend(clip_a=A, clip_b=B, target=A)
    with pytest.raises(RuntimeError, match="no armature called"):
        bpy.ops.mocap.live_blend(clip_a=A, clip_b=B, target="nothing")
    with pytest.raises(RuntimeError, match="no bone for the joint"):
        bpy.ops.mocap.draw_envelope(joint="tail_tip")
    assert set(bpy.data.objects) == objects


def test_the_panel_draws_what_exists(clips):
    from mocap_addon.blender.tools.live import VIEW3D_PT_mocap_live

    bpy = clips
    drawn: list[str] = []
    VIEW3D_PT_mocap_live.draw(type("Panel", (), {"layout": Layout(bpy, drawn)})(), bpy.context)
    assert {"mix", "feet", "mocap.bake_live", "mocap.draw_envelope", "mocap.catch_game"} <= set(drawn)


def test_the_per_frame_cost_is_small(clips):
    """frame_set with the live mix enabled minus disabled (CPU time, best of alternating rounds); the
    issue's budget is 2 ms for a 31-joint rig (scripts/bench_live.py measures that rig; this one has 22)."""
    bpy = clips
    live, scene = bpy.data.objects[LIVE], bpy.context.scene
    frames = range(1, 196)
    best = {True: np.inf, False: np.inf}
    for _ in range(3):
        for enabled in (True, False):
            live.mocap_live.enabled = enabled
            started = time.process_time()
            for frame in frames:
                scene.frame_set(frame)
            best[enabled] = min(best[enabled], (time.process_time() - started) / len(frames))
    cost = 1e3 * (best[True] - best[False])
    print(f"live mix: {cost:.3f} ms per frame")
    assert cost < 10.0  # loose: a shared machine; the benchmark reports the real number


def test_the_live_catch_demo_scene(addon):
    """scripts/catch_demo.py's live scene: at the ball's arrival the hand has caught it (within reach)."""
    from mocap_addon.core.blend.catch import REACH
    from scripts.catch_demo import build_live_catch

    bpy = addon
    live, ball, flight = build_live_catch(bpy)
    assert live.mocap_live.enabled and live.mocap_live.mix == pytest.approx(flight.mix)
    hand = np.array(live.matrix_world @ live.pose.bones["RightHand"].head)
    distance = np.linalg.norm(hand - np.array(ball.matrix_world.translation))
    assert distance <= 1e-3 * live.dimensions.z < REACH * live.dimensions.z


def test_the_catch_game_operator_moves_the_mix_judges_and_ends(clips):
    """The modal operator's steps, driven by hand: Blender makes operators only from a window's events,
    so its methods run on a stand-in with stand-in events (a timer tick, arrow keys, the wheel, Esc)."""
    from types import SimpleNamespace

    from mocap_addon.blender.tools.live import MOCAP_OT_catch_game
    from mocap_addon.core.blend.catch import MIX_STEP

    bpy = clips
    live = bpy.data.objects[LIVE]

    class Game:
        joint = "hand_r"
        _timer = None
        start, modal, _end = MOCAP_OT_catch_game.start, MOCAP_OT_catch_game.modal, MOCAP_OT_catch_game._end

        def report(self, kind, text):
            self.said = text

    game, scene = Game(), bpy.context.scene
    context = SimpleNamespace(active_object=live, scene=scene, window_manager=None, area=None)
    assert game.start(context) and "catch_ball" in bpy.data.objects

    def event(kind, value="PRESS"):
        return game.modal(context, SimpleNamespace(type=kind, value=value))

    assert event("UP_ARROW") == {"RUNNING_MODAL"}
    assert live.mocap_live.mix == pytest.approx(0.3 + MIX_STEP)
    event("WHEELDOWNMOUSE")
    event("WHEELDOWNMOUSE")
    assert live.mocap_live.mix == pytest.approx(0.3 - MIX_STEP)
    for frame in range(1, 196):  # play: the ball flies, arrives, is judged, another is thrown
        scene.frame_set(frame)
        assert event("TIMER", "NOTHING") == {"PASS_THROUGH"}
    assert game._game.caught + game._game.missed >= 2  # balls judged, then thrown again
    assert event("ESC") == {"FINISHED"}
    assert "catch_ball" not in bpy.data.objects and "Catch game over" in game.said
