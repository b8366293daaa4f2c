"""The retarget's target prepared once by content (core.retarget.transfer._prepared): the same results as
preparing it afresh, never a stale one for a target whose content changed."""

from __future__ import annotations

import numpy as np

from mocap_addon.core import load
from mocap_addon.core.retarget import transfer
from tests.conftest import SAMPLES


def test_a_target_prepared_once_gives_what_preparing_it_afresh_gives(monkeypatch):
    source, target = load(SAMPLES / "jog_wave.bvh"), load(SAMPLES / "walk_turn.bvh")
    transfer._prepared_parts.clear()
    afresh = transfer.retarget(source, target).motion
    calls = []
    original = transfer.figure
    monkeypatch.setattr(transfer, "figure", lambda *a, **k: calls.append(a[2]) or original(*a, **k))
    again = transfer.retarget(source, target).motion
    np.testing.assert_array_equal(again, afresh)
    assert calls == ["source"], "the target's figure came from the cache"
    # another object of the same content: still prepared; changed content: prepared again, not stale
    copy = target.copy()
    np.testing.assert_array_equal(transfer.retarget(source, copy).motion, afresh)
    assert calls == ["source"] * 2
    copy.motion[:, 1] += 5.0  # the figure stands 5 units higher in its captures
    moved = transfer.retarget(source, copy).motion
    assert calls == ["source", "source", "source", "target"]
    transfer._prepared_parts.clear()
    np.testing.assert_array_equal(moved, transfer.retarget(source, copy).motion)
