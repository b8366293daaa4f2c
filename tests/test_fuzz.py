"""A seeded fuzz campaign kept in the suite (see ``tests/fuzzing.py``; run more with ``python -m tests.fuzzing``)."""

from __future__ import annotations

import random

import pytest

from tests import fuzzing

CASES = 300


@pytest.mark.slow
def test_mutated_files_load_or_fail_cleanly_and_what_loads_round_trips():
    results = fuzzing.run(fuzzing.plan(CASES, seed=0))
    assert len(results) == CASES
    failures = {case: why for case, why in results.items() if why}
    assert not failures, "\n".join(f"{case}: {why}" for case, why in sorted(failures.items())[:20]) + (
        "\n(python -m tests.fuzzing --replay NAME:CASE --save FILE reproduces one)")


@pytest.mark.slow
def test_a_campaign_on_a_seed_never_tuned_on_finds_nothing():
    """Issue 26: another campaign (seed 2026, chosen before it was run), with the huge finite numbers."""
    results = fuzzing.run(fuzzing.plan(120, seed=2026))
    failures = {case: why for case, why in results.items() if why}
    assert not failures, "\n".join(f"{case}: {why}" for case, why in sorted(failures.items())[:20])


def test_cases_are_reproducible_and_reach_every_seed():
    plan = fuzzing.plan(60, seed=5)
    assert plan == fuzzing.plan(60, seed=5)
    names = {seed.name for seed in fuzzing.seeds()}
    assert {name for name, _ in plan} == names if len(names) <= 60 else set(names)
    seed = fuzzing.seeds()[0]
    assert fuzzing.case_files(seed, 7) == fuzzing.case_files(seed, 7)
    assert len({fuzzing.case_files(seed, case)[0] for case in range(40)}) > 30  # mutations differ


def test_mutations_change_the_file():
    rng = random.Random(3)
    data = fuzzing.seeds()[0].data
    changed = sum(fuzzing.mutate(data, rng) != data for _ in range(200))
    assert changed > 180


@pytest.mark.parametrize(("broken", "finding"), [
    ("read_bvh", "load raised KeyError"),
    ("write_bvh", "reading our own .bvh raised"),
    ("format_of", "error without a line"),
])
def test_the_checks_catch_what_they_look_for(broken, finding, monkeypatch, tmp_path):
    """Each kind of finding is reported: an unexpected exception, an unreadable output, an error without a line."""
    from mocap_addon.core import MocapFormatError, formats
    from mocap_addon.core.formats import bvh

    def raise_key_error(*args, **kwargs):
        raise KeyError("boom")

    def write_garbage(clip, path, **options):
        with open(path, "w") as handle:
            handle.write("HIERARCHY\nnonsense\n")

    def no_line(path):
        raise MocapFormatError("no line here", path, None)

    replacement = {"read_bvh": raise_key_error, "write_bvh": write_garbage, "format_of": no_line}[broken]
    monkeypatch.setattr(formats if broken == "format_of" else bvh, broken, replacement)
    seed = next(s for s in fuzzing.seeds() if s.name == "generated.bvh")
    outcome = fuzzing.check_case(seed, None, tmp_path)
    assert outcome is not None and outcome.startswith(finding), outcome


def test_a_child_that_dies_fails_its_cases():
    results = fuzzing.run_batch([("no such seed", 1), ("no such seed", 2)])
    assert set(results) == {"no such seed:1", "no such seed:2"}
    assert all(why and why.startswith("child process ended") for why in results.values())
