"""Every choice declared once (core/options.py): the core checks it, the command line and Blender offer it."""

from __future__ import annotations

import argparse
import inspect

import pytest

from mocap_addon.core import options
from mocap_addon.core.blend.mixing import blend
from mocap_addon.core.cli.main import main
from mocap_addon.core.cli.options import add_choice
from mocap_addon.core.formats.bvh import parse_bvh
from mocap_addon.core.options import FEET, HIPS_TRAVEL, ROOT_PATH, Choice, Item
from mocap_addon.core.retarget.transfer import retarget, to_canonical
from tests.conftest import SAMPLES

SAMPLE = SAMPLES / "walk_turn.bvh"

CHOICES = [value for value in vars(options).values() if isinstance(value, Choice)]


def test_every_choice_has_distinct_lowercase_ids_and_its_default_among_them():
    assert len(CHOICES) >= 10
    for choice in CHOICES:
        assert len(set(choice.ids)) == len(choice.ids) and all(i == i.lower() for i in choice.ids), choice
        assert choice.default in choice.ids and all(item.label and item.description for item in choice.items)


def test_a_choice_refuses_a_default_it_does_not_offer_and_names_its_ids_on_a_bad_value():
    with pytest.raises(ValueError, match="tilt must be one of up, down, got 'sideways'"):
        Choice("tilt", "Tilt", "", (Item("up", "Up", "x"), Item("down", "Down", "y")), "sideways")
    with pytest.raises(ValueError, match="feet must be one of planted, free, got 'PLANTED'"):
        FEET.check("PLANTED")


def test_retarget_and_blend_root_choices_are_distinct_declarations():
    assert HIPS_TRAVEL.ids[:2] == ("scale", "keep") and ROOT_PATH.ids == ("blend", "a", "b", "heading")
    assert HIPS_TRAVEL is not ROOT_PATH


def test_core_functions_default_to_the_declared_defaults():
    assert inspect.signature(retarget).parameters["feet"].default == FEET.default == "planted"
    assert inspect.signature(blend).parameters["feet"].default == FEET.default
    assert inspect.signature(to_canonical).parameters["feet"].default == options.CANONICAL_FEET.default == "free"
    assert inspect.signature(retarget).parameters["root"].default == HIPS_TRAVEL.default
    assert inspect.signature(blend).parameters["root"].default == ROOT_PATH.default


def test_core_functions_refuse_values_outside_the_declaration():
    clip = parse_bvh(SAMPLE.read_bytes())
    with pytest.raises(ValueError, match="feet must be one of planted, free"):
        retarget(clip, clip, feet="floating")
    with pytest.raises(ValueError, match="root must be one of blend, a, b, heading"):
        blend(clip, clip, 0.5, root="scale")
    with pytest.raises(ValueError, match="position_mode must be one of replace, add"):
        parse_bvh(SAMPLE.read_bytes(), position_mode="rotate")


def test_command_line_options_are_the_declared_ids_with_their_defaults():
    parser = argparse.ArgumentParser()
    add_choice(parser, ROOT_PATH)
    add_choice(parser, options.BVH_POSITIONS, default=None)
    action = {a.dest: a for a in parser._actions}
    assert tuple(action["root"].choices) == ROOT_PATH.ids and action["root"].default == ROOT_PATH.default == "heading"
    assert "--position-mode" in action["position_mode"].option_strings and action["position_mode"].default is None
    assert parser.parse_args(["--root", "heading"]).root == "heading"
    with pytest.raises(SystemExit):
        parser.parse_args(["--root", "HEADING"])


def test_canonical_command_offers_feet_as_blender_does(tmp_path, capsys):
    out = tmp_path / "out.bvh"
    assert main(["canonical", str(SAMPLE), str(out), "--feet", "planted"]) == 0
    with pytest.raises(SystemExit):
        main(["canonical", str(SAMPLE), str(out), "--feet", "sliding"])
    assert "argument --feet: invalid choice: 'sliding'" in capsys.readouterr().err
