"""No function in ``mocap_addon`` longer than 80 lines (read with ``ast``, docstring and decorators included)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

LONGEST = 80


def long_functions(root: Path, longest: int = LONGEST) -> list[str]:
    """``path:line name (N lines)`` for every function or method under ``root`` longer than ``longest``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > longest:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_is_longer_than_80_lines():
    assert long_functions(REPO / "mocap_addon") == []


def test_the_check_counts_lines_of_nested_and_decorated_functions(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    body = "\n".join(f"        x{i} = {i}" for i in range(78))
    (package / "a.py").write_text(f"def short():\n    pass\n\n\nclass C:\n    @staticmethod\n    def long():\n{body}\n")
    assert long_functions(package) == [] and long_functions(package, 79) == ["pkg/a.py:7 long (80 lines)"]


def test_the_batch_script_is_a_thin_entry_point():
    """Its logic lives in the package (``mocap_addon.blender.batch``); the script only finds bpy and runs it."""
    script = (REPO / "scripts" / "mocap_batch.py").read_text(encoding="utf-8")
    assert len(script.splitlines()) <= 60 and "from mocap_addon.blender.batch import run" in script
