"""The format registry: a format is its own modules plus one registry line.

A toy format registered here is read, sniffed, written, noted on and listed by
the core, its command line and the batch script without any of them naming it;
and no module outside a format's own ones names a registered format.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from mocap_addon.core import Clip, Skeleton, formats, load, save
from mocap_addon.core.batch import plan
from mocap_addon.core.cli.main import main as core_main
from mocap_addon.core.formats import FileFormat, files_to_read, format_of, motion_extensions, sniff, unit_note
from tests.conftest import REPO, SAMPLES

TOY = "tests_toy_format"


def _toy_module() -> types.ModuleType:
    """A format of its own: ``TOYMOCAP`` then one ``x y z`` row per frame; a ``.toyskel`` beside a
    ``.toy`` (same stem) names its root joint."""
    module = types.ModuleType(TOY)

    def read_toy(path, skeleton=None, fps=30.0):
        rows = np.loadtxt(path, skiprows=1, ndmin=2)
        root = Path(skeleton).read_text().strip() if skeleton else "root"
        return Clip(Skeleton([root], [-1], np.zeros((1, 3)), [("tx", "ty", "tz")]), rows, 1 / fps,
                    metadata={"format": "toy", "skeleton": skeleton})

    def read_toy_skeleton(path):
        root = Path(path).read_text().strip()
        return Clip(Skeleton([root], [-1], np.zeros((1, 3)), [("tx", "ty", "tz")]), np.zeros((0, 3)), 1 / 30)

    def write_toy(clip, path, precision=6):
        with open(path, "w") as handle:
            handle.write("TOYMOCAP\n")
            np.savetxt(handle, clip.motion[:, :3], fmt=f"%.{precision}f")

    def note(clip):
        return f"toy files keep no unit ({clip.unit_in_metres} m dropped)"

    def find_skeleton(path):
        return os.path.splitext(path)[0] + ".toyskel"

    module.__dict__.update(read_toy=read_toy, read_toy_skeleton=read_toy_skeleton, write_toy=write_toy,
                           note=note, find_skeleton=find_skeleton)
    return module


TOY_FORMAT = FileFormat("toy", "Toy", TOY, readers={".toy": "read_toy", ".toyskel": "read_toy_skeleton"},
                        writer="write_toy", signatures={".toy": ("TOYMOCAP",)}, unit_note="note",
                        up_axis_known=False, skeleton_extension=".toyskel", find_skeleton="find_skeleton")


@pytest.fixture
def toy(monkeypatch):
    """The toy format registered for one test (the registry as it was afterwards)."""
    monkeypatch.setitem(sys.modules, TOY, _toy_module())
    monkeypatch.setattr(formats, "FORMATS", dict(formats.FORMATS))
    formats.register(TOY_FORMAT)
    return TOY_FORMAT


def test_the_registry_holds_the_three_formats_as_their_modules_declare_them():
    registered = formats.file_formats()
    assert [f.key for f in registered] == ["bvh", "htr", "amc"]
    assert sorted(formats.FORMATS) == [".amc", ".asf", ".bvh", ".htr"]
    assert motion_extensions() == (".bvh", ".htr", ".amc")
    for file_format in registered:
        module = sys.modules[file_format.module]
        assert module.FORMAT is file_format
        for name in (*file_format.readers.values(), file_format.writer, file_format.unit_note):
            assert callable(getattr(module, name))
        assert set(file_format.signatures) <= set(file_format.extensions)
        assert (file_format.skeleton_extension is None) == (file_format.find_skeleton is None)
    assert [f.up_axis_known for f in registered] == [False, True, True]


def test_a_registered_format_is_read_sniffed_and_written(toy, tmp_path):
    path = tmp_path / "jump.toy"
    path.write_text("TOYMOCAP\n1 2 3\n4 5 6\n")
    disguised = tmp_path / "jump.txt"
    disguised.write_text(path.read_text())
    assert sniff(path) == ".toy" and format_of(disguised) == ".toy"
    clip = load(path, fps=60.0)
    assert clip.metadata["format"] == "toy" and clip.fps == 60.0
    np.testing.assert_array_equal(clip.motion, [[1, 2, 3], [4, 5, 6]])
    save(clip, tmp_path / "again.toy", precision=2)
    assert (tmp_path / "again.toy").read_text() == "TOYMOCAP\n1.00 2.00 3.00\n4.00 5.00 6.00\n"
    assert unit_note(clip, ".toy") == "toy files keep no unit (None m dropped)"


def test_registering_a_taken_extension_is_refused_whole(toy):
    rival = dataclasses.replace(toy, label="Rival", readers={".rival": "read_toy", ".bvh": "read_toy"})
    with pytest.raises(ValueError, match=r"^Rival: \.bvh already registered$"):
        formats.register(rival)
    assert ".rival" not in formats.FORMATS and formats.FORMATS[".bvh"].key == "bvh"


def test_a_skeleton_file_pairs_with_its_formats_motion_files(toy, tmp_path):
    for name, text in (("hop.toy", "TOYMOCAP\n0 0 0\n"), ("hop.toyskel", "Pelvis\n"), ("lone.toyskel", "Hips\n")):
        (tmp_path / name).write_text(text)
    take, skeleton, lone, walk = (str(tmp_path / n) for n in ("hop.toy", "hop.toyskel", "lone.toyskel", "w.bvh"))
    assert files_to_read([skeleton, take, lone, walk]) == [(take, skeleton), (lone, None), (walk, None)]
    assert load(take, skeleton=skeleton).skeleton.names == ["Pelvis"]
    assert load(lone).skeleton.names == ["Hips"]


def test_the_command_line_converts_to_a_registered_format_and_reports_its_unit_note(toy, tmp_path, capsys):
    target = tmp_path / "walk.toy"
    assert core_main(["convert", str(SAMPLES / "walk_turn.bvh"), str(target), "--unit", "cm"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "unit: toy files keep no unit (0.01 m dropped)"
    walk = load(SAMPLES / "walk_turn.bvh")
    np.testing.assert_allclose(load(target).motion, walk.motion[:, :3], atol=5e-7)


def test_the_library_batch_takes_a_registered_formats_motion_files_from_folders(toy, tmp_path):
    # The batch script's folder work is the core's library batch (core.batch).
    for name in ("b.toy", "b.toyskel", "a.bvh", "c.amc", "c.asf", "notes.txt"):
        (tmp_path / name).write_text("")
    jobs = plan([str(tmp_path)], str(tmp_path / "out"), "bvh")
    assert [job.name for job in jobs] == ["a.bvh", "b.toy", "c.amc"]
    assert jobs[2].skeleton == str(tmp_path / "c.asf")


# --- nothing outside a format's own modules names it ------------------------------------------------------

SOURCES = sorted((REPO / "mocap_addon").rglob("*.py")) + [REPO / "scripts" / "mocap_batch.py"]


def format_names_in(source: str, names: list[str]) -> list[str]:
    """The string constants of ``source`` that name one of ``names`` as code spells them: in lower
    case (``bvh``) or as an extension in any case (``.bvh``, ``*.HTR``), not inside a longer word
    (``io_anim_bvh``).  Docstrings and other bare strings are prose, and so are capitalised names
    in messages (``HTR's GlobalAxisofGravity``)."""
    tree = ast.parse(source)
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    alternatives = "|".join(map(re.escape, names))
    pattern = re.compile(rf"(?<![\w.])(?:{alternatives})(?![\w])|(?<![\w])\.(?i:{alternatives})(?![\w])")
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in prose and pattern.search(node.value)]


def module_path(name: str) -> Path:
    """The file or package folder of module ``name`` in the checkout."""
    base = REPO.joinpath(*name.split("."))
    return base if base.is_dir() else base.with_suffix(".py")


def imported_modules(path: Path) -> set[Path]:
    """The checkout's modules (files) that the module at ``path`` imports."""
    package = path.parent.relative_to(REPO).parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            parts = list(package[: len(package) - node.level + 1] if node.level else ())
            parts += node.module.split(".") if node.module else []
            for alias in node.names:
                for candidate in (REPO.joinpath(*parts, alias.name), REPO.joinpath(*parts)):
                    if candidate.with_suffix(".py").is_file():
                        found.add(candidate.with_suffix(".py"))
                    elif (candidate / "__init__.py").is_file():
                        found.add(candidate / "__init__.py")
    return found


def own_modules() -> set[Path]:
    """Every format's own modules: its core module (or package), its operator module in
    ``blender/files/`` (named alike), and the modules only those import (ASF's limit constraints)."""
    own = set()
    for file_format in formats.file_formats():
        core = module_path(file_format.module)
        own |= set(core.rglob("*.py")) if core.is_dir() else {core}
        own.add(REPO / "mocap_addon" / "blender" / "files" / f"{file_format.module.rsplit('.', 1)[1]}.py")
    importers: dict[Path, set[Path]] = {}
    for path in SOURCES:
        for imported in imported_modules(path):
            importers.setdefault(imported, set()).add(path)
    while True:
        more = {m for m, users in importers.items() if m not in own and users <= own}
        if not more:
            return own
        own |= more


def test_no_module_outside_a_formats_own_ones_names_a_format():
    names = sorted({n for f in formats.file_formats() for n in (f.key, *(e.lstrip(".") for e in f.extensions))})
    assert names == ["amc", "asf", "bvh", "htr"]
    own = own_modules()
    assert REPO / "mocap_addon" / "blender" / "files" / "constraints.py" in own
    found = {str(path.relative_to(REPO)): hits for path in SOURCES if path not in own
             and (hits := format_names_in(path.read_text(), names))}
    assert found == {}


def test_the_check_finds_format_names_in_code_but_not_in_prose():
    source = ('"""Reads .bvh files."""\n'
              'def f(clip, path):\n'
              '    """BVH or HTR."""\n'
              '    glob, addon, text = "*.HTR", "io_anim_bvh", "the up axis HTR states"\n'
              '    return clip.metadata.get("format") != "bvh" or path.endswith(".Asf")\n')
    assert format_names_in(source, ["bvh", "htr", "asf"]) == ["*.HTR", "bvh", ".Asf"]


@pytest.mark.blender
def test_each_format_has_one_operator_pair_that_agrees_with_its_core_module(blender):
    from mocap_addon.blender.files import FORMATS as OPERATORS

    registered = formats.file_formats()
    assert len(OPERATORS) == len(registered)
    for (importer, exporter), file_format in zip(OPERATORS, registered):
        assert importer.__module__.rsplit(".", 1)[1] == file_format.module.rsplit(".", 1)[1]
        assert importer.extensions == file_format.extensions
        assert importer.filename_ext == exporter.filename_ext == file_format.extensions[0]
        assert importer.format_label == exporter.format_label == file_format.label


def test_default_unit_is_what_a_format_that_states_none_expects_for_motion_from_another():
    from mocap_addon.core.formats import default_unit

    assert formats.FORMATS[".bvh"].expected_unit == "cm"
    assert default_unit(".bvh", "htr", 0.001) == 0.01 and default_unit(".bvh", "amc", 0.0254 / 0.45) == 0.01
    assert default_unit(".bvh", "bvh", 0.001) == 0.001  # a BVH's own unit stays
    assert default_unit(".bvh", "htr", None) is None  # an unknown unit cannot be converted
    assert default_unit(".htr", "bvh", 0.01) == 0.01 and default_unit(".amc", "htr", 0.001) == 0.001
