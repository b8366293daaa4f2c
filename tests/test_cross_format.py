"""Across formats: every corpus file through every chain of two conversions keeps its size in metres."""

from __future__ import annotations

import numpy as np
import pytest

from mocap_addon.core import Clip, load, save, world_positions
from tests.conftest import corpus_files

TARGETS = (".bvh", ".htr", ".amc")
SOURCES = [*corpus_files("bvh", "*.bvh"), *corpus_files("htr", "*.htr", "*.HTR"),
           *corpus_files("asf_amc", "*.amc", "*.AMC")]
SOURCES = [f for f in SOURCES if "JSON_not_bvh" not in f.name]
FRAMES = 3  # units do not depend on the motion: the first frames keep the test quick


def size(clip: Clip, names: list[str]) -> float:
    """The extent over the clip's frames of the joints called ``names`` (ASF renames the root and
    adds joints where bones start elsewhere), in the clip's own units."""
    skeleton = clip.skeleton
    index = [0 if n == names[0] else skeleton.index(n.replace(" ", "_")) for n in names]
    return float(np.ptp(world_positions(clip)[:, index].reshape(-1, 3), axis=0).max())


def through(clip: Clip, extension: str, folder) -> Clip:
    """``clip`` written as ``extension`` and read back.  A BVH states no unit: as a user would, say the
    unit it was written in."""
    target = folder / f"step{extension}"
    save(clip, target)
    again = load(target)
    if extension == ".bvh":
        assert again.unit_in_metres is None
        again.unit_in_metres = clip.unit_in_metres
    return again


@pytest.mark.parametrize("path", [pytest.param(f, id=f.name) for f in SOURCES]
                         or [pytest.param(None, marks=pytest.mark.skip(reason="../shared/corpus is absent"))])
def test_every_chain_of_two_keeps_the_size_in_metres(path, tmp_path):
    clip = load(path)
    clip.motion = clip.motion[:FRAMES]
    unit = clip.unit_in_metres or 1.0  # a file that states no unit: one unit is a metre (Blender's reading)
    names = clip.skeleton.names
    metres = size(clip, names) * unit
    for first in TARGETS:
        middle = through(clip, first, tmp_path)
        steps = [(middle, first)] + [(through(middle, second, tmp_path), f"{first} -> {second}") for second in TARGETS]
        for result, route in steps:
            assert (result.unit_in_metres is None) == (clip.unit_in_metres is None) or result.unit_in_metres == 1.0
            got = size(result, names) * (result.unit_in_metres or 1.0)
            assert got == pytest.approx(metres, rel=1e-6), f"{path.name} -> {route}: {got} m, not {metres} m"
