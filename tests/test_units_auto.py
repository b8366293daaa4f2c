"""The Unit option's Auto (issue 30, item 6): a file's unit read from its figure's size.

The oracle for a figure's height is not the guess's own measure (legs): it is the median over frames of
the figure's upright extent (its largest extent where it lies down), in metres once read.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocap_addon.core import load
from mocap_addon.core.body.stature import CANDIDATE_UNITS, guess_unit, in_unit, stature, with_guessed_unit
from mocap_addon.core.kinematics import world_positions
from mocap_addon.core.model import Clip, Skeleton
from mocap_addon.core.units import scale_lengths
from tests.conftest import CORPUS, SAMPLES

WALK = load(SAMPLES / "walk_turn.bvh")  # centimetres, stated nowhere
WALK_STATURE_CM = stature(WALK)


def height(clip: Clip) -> float:
    """Median over frames of the figure's upright (Y) extent, or its largest where it lies; in metres where the
    clip states its unit."""
    extents = np.ptp(world_positions(clip), axis=1)
    tallest = extents.max(axis=1)
    upright = np.where(extents[:, 1] >= 0.25 * tallest, extents[:, 1], tallest)
    return float(np.median(upright)) * (clip.unit_in_metres or 1.0)


def written_in(unit: float, metres_tall: float) -> Clip:
    """The walk as a figure ``metres_tall`` tall written in ``unit`` (metres per unit), its unit unstated."""
    assert WALK_STATURE_CM is not None
    return scale_lengths(WALK, metres_tall / (WALK_STATURE_CM * 0.01) * 0.01 / unit)


def test_the_walk_in_centimetres_is_read_in_centimetres():
    guess = guess_unit(WALK)
    assert guess.unit_in_metres == 0.01 and guess.warning is None
    assert guess.note == "unit guessed from the figure's size: read in centimetres: 1.67 m tall"
    assert 1.3 < height(with_guessed_unit(WALK)) < 1.5  # its frames: 1.41 m (the stature guess: 1.67)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(CANDIDATE_UNITS), st.floats(1.25, 2.15))
def test_every_standard_unit_is_found_for_any_human_height(candidate, metres_tall):
    name, unit = candidate
    guess = guess_unit(written_in(unit, metres_tall))
    assert guess.unit_in_metres == unit, name
    assert guess.stature is not None and guess.stature * unit == pytest.approx(metres_tall, rel=1e-6)


@settings(max_examples=20, deadline=None)
@given(st.floats(0.3, 3000.0))
def test_whatever_the_size_the_figure_comes_out_human(units_tall):
    """No standard unit fits: read at the scale that makes the figure 1.7 m tall, and said so."""
    clip = scale_lengths(WALK, units_tall / WALK_STATURE_CM)
    read = with_guessed_unit(clip)
    assert 1.2 <= stature(read) * read.unit_in_metres <= 2.2
    fits = [u for _, u in CANDIDATE_UNITS if 1.2 <= units_tall * u <= 2.2]
    if fits:
        assert read.unit_in_metres == fits[0] and not read.metadata.get("warnings")
    else:
        assert stature(read) * read.unit_in_metres == pytest.approx(1.7, rel=1e-9)
        [warning] = read.metadata["warnings"]
        assert warning.startswith("no standard unit makes this figure 1.2-2.2 m tall") and "1.7 m figure" in warning


def test_a_stated_unit_is_kept_while_it_gives_a_plausible_person():
    child = scale_lengths(WALK, 0.6)  # 1.0 m tall in centimetres: plausible, kept
    child.unit_in_metres = 0.01
    assert with_guessed_unit(child).unit_in_metres == 0.01 and not with_guessed_unit(child).metadata.get("warnings")
    giant = scale_lengths(WALK, 0.1 * 4.6 / 1.67 * 100)  # stated mm, 4.6 m tall (as the corpus's X-Bot HTRs)
    giant.unit_in_metres = 0.001
    read = with_guessed_unit(giant)
    [warning] = read.metadata["warnings"]
    assert warning.startswith("the file states mm, which makes the figure 4.6 m tall; ")
    assert stature(read) * read.unit_in_metres == pytest.approx(1.7)
    wrong = WALK.copy()
    wrong.unit_in_metres = 1.0  # cm values said to be metres: 167 m; the centimetres fit
    read = with_guessed_unit(wrong)
    assert read.unit_in_metres == 0.01
    assert read.metadata["warnings"] == ["the file states m, which makes the figure 167 m tall; read in centimetres: "
                                         "1.67 m tall"]


def test_a_skeleton_without_legs_keeps_its_files_unit():
    chain = Skeleton(["a", "b"], [-1, 0], np.array([[0, 0, 0], [0, 40.0, 0]]), [("tx", "ty", "tz", "rz", "rx", "ry"),
                                                                                  ("rz", "rx", "ry")],
                     [np.zeros((0, 3)), np.array([[0, 40.0, 0]])])
    clip = Clip(chain, np.zeros((3, 9)), 1 / 30)
    guess = guess_unit(clip)
    assert guess.unit_in_metres is None and guess.stature is None
    assert guess.note == "no hips and legs to measure: read at 1 unit = 1 m"
    clip.unit_in_metres = 0.001
    assert guess_unit(clip) == type(guess)(0.001, None)


def test_the_unit_option_reads_as_chosen():
    assert in_unit(WALK, "file").unit_in_metres is None
    assert in_unit(WALK, "in").unit_in_metres == 0.0254
    assert in_unit(WALK, "auto").unit_in_metres == 0.01
    with pytest.raises(ValueError, match="unit must be one of auto, file, m, cm, mm, in, ft"):
        in_unit(WALK, "furlong")


# Every human take of the corpus (non-human: a 2-joint chain, a 4-joint sine, the crab, the 7-joint tails).
HUMAN_TAKES = [
    ("asf_amc/fm_01_01.amc", "asf_amc/fm_01.asf"), ("asf_amc/fm_11_01.amc", "asf_amc/fm_11.asf"),
    ("asf_amc/vicon_male.walk-speed 4.AMC", "asf_amc/vicon_male.ASF"),
    *((f"bvh/{name}.bvh", None) for name in (
        "bandai_dataset-1_walk_normal_001", "bandai_dataset-1_dance-short_normal_001",
        "bandai_dataset-2_walk_elderly_004", "bvhio_example", "bvhpy_test_freebvh", "fm_cmu_01_01",
        "fm_pfnn_hierarchy", "ganim_Joe_Baseball-Milling-Idle-edited-keyframes", "ganim_Joe_traj-example",
        "ganim_Malcolm_Gangnam-Style", "ganim_Xia_normal", "lafan1res_Geno_bind")),
    *((f"htr/{name}", None) for name in (
        "gpr450_xbot_anim1.HTR", "gpr450_xbot_base.HTR", "gpr450_xbot_base_Take_001.htr",
        "gpr450_xbot_samba_mixamo.com.htr", "gpr450_xbot_walk_m_mixamo.com.htr"))]
WARNED = {"bvh/ganim_Malcolm_Gangnam-Style.bvh", "htr/gpr450_xbot_anim1.HTR", "htr/gpr450_xbot_base.HTR"}


def corpus_take(path: str, skeleton: str | None) -> Clip:
    if not (CORPUS / path).is_file():
        pytest.skip("../shared/corpus is absent")
    return load(CORPUS / path, skeleton=CORPUS / skeleton) if skeleton else load(CORPUS / path)


@pytest.mark.corpus
@pytest.mark.parametrize("path, skeleton", HUMAN_TAKES, ids=[path for path, _ in HUMAN_TAKES])
def test_every_human_take_of_the_corpus_stands_human_height(path, skeleton):
    clip = corpus_take(path, skeleton)
    read = with_guessed_unit(clip)
    assert 1.2 <= height(read) <= 2.2, height(read)
    assert bool(read.metadata.get("warnings")) == (path in WARNED)
    if clip.unit_in_metres is not None and path not in WARNED:
        assert read.unit_in_metres == clip.unit_in_metres  # a plausible stated unit is kept


@pytest.mark.corpus
def test_cmu_bvh_is_read_in_cmu_units_as_its_asf_states():
    """The cross-format oracle: CMU 01_01 as BVH (no unit) and as ASF/AMC (':units length 0.45')."""
    bvh = with_guessed_unit(corpus_take("bvh/fm_cmu_01_01.bvh", None))
    amc = corpus_take("asf_amc/fm_01_01.amc", "asf_amc/fm_01.asf")
    assert bvh.unit_in_metres == pytest.approx(amc.unit_in_metres, rel=1e-12)
