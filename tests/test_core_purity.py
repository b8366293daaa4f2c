"""The core must run without Blender: no module under mocap_addon/core may import it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BLENDER_MODULES = {"bpy", "mathutils", "bpy_extras", "bmesh"}
CORE = REPO / "mocap_addon" / "core"


def blender_imports(source: str) -> list[str]:
    """Top-level names of Blender modules imported anywhere in ``source`` (functions included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [n for n in names if n.split(".")[0] in BLENDER_MODULES]
    dynamic = [node for node in ast.walk(ast.parse(source))
               if isinstance(node, ast.Constant) and node.value in BLENDER_MODULES]
    return found + [f"string {node.value!r}" for node in dynamic]


@pytest.mark.parametrize("module", sorted(CORE.rglob("*.py")), ids=lambda p: p.name)
def test_core_module_imports_no_blender(module: Path):
    assert blender_imports(module.read_text()) == []


def test_the_check_catches_imports():
    assert blender_imports("def f():\n    import bpy\n") == ["bpy"]
    assert blender_imports("from mathutils import Matrix") == ["mathutils"]
    assert blender_imports("import bpy_extras.io_utils as x") == ["bpy_extras.io_utils"]
    assert blender_imports("importlib.import_module('bmesh')") == ["string 'bmesh'"]
    assert blender_imports("import numpy") == []


def test_importing_core_loads_no_blender_module():
    code = ("import sys, mocap_addon.core, mocap_addon.core.cli.main\n"
            "import mocap_addon.core.formats.bvh, mocap_addon.core.formats\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(BLENDER_MODULES)!r}))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
