"""The layers as the layout tells them: no import cycle anywhere in ``mocap_addon``, the core never imports the
Blender layer, and the File-menu operators (``blender/files``) and sidebar tools (``blender/tools``) stand on the
shared bridge, never on each other.  Read statically from the source: every import counts, inside functions
and under ``if TYPE_CHECKING:`` too (a type-only import is a dependency a reader has to follow all the same)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = "mocap_addon"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement: at module level, in functions, and under ``if TYPE_CHECKING:``."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def imported_modules(name: str, source: str, modules: set[str], is_package: bool) -> set[str]:
    """The modules of ``modules`` that ``name``'s ``source`` imports (``from pkg import sub`` names ``pkg.sub``)."""
    found = set()
    for node in _imports(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        else:
            target = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                target = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))
            if target in modules:
                found |= {f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names}
    return found


def import_graph(root: Path, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, for every ``.py`` file under ``root / package``."""
    paths = {module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}
    return {name: imported_modules(name, path.read_text(encoding="utf-8"), set(paths), path.name == "__init__.py")
            for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import loops (``[a, b, …, a]``), one for each import that leads back to a module still being followed."""
    found: list[list[str]] = []
    state: dict[str, str] = {}

    def follow(module: str, path: list[str]) -> None:
        state[module] = "open"
        path.append(module)
        for following in sorted(graph[module]):
            if state.get(following) == "open":
                found.append(path[path.index(following):] + [following])
            elif following not in state:
                follow(following, path)
        path.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            follow(module, [])
    return found


def imports_between(graph: dict[str, set[str]], source: str, target: str) -> list[str]:
    """``a -> b`` for every module under ``source`` importing one under ``target`` (packages by dotted prefix)."""
    def within(module: str, prefix: str) -> bool:
        return module == prefix or module.startswith(prefix + ".")

    return [f"{a} -> {b}" for a in sorted(graph) if within(a, source) for b in sorted(graph[a]) if within(b, target)]


GRAPH = import_graph(REPO)


def test_the_graph_sees_the_package():
    assert {"mocap_addon.core.model", "mocap_addon.blender.files.base", "mocap_addon.blender.tools.blend"} <= set(GRAPH)
    assert "mocap_addon.blender.bridge.read_rig" in GRAPH["mocap_addon.blender.bridge.write_rig"]
    assert {"mocap_addon.blender.files", "mocap_addon.blender.tools"} <= GRAPH["mocap_addon.blender"]


def test_no_import_cycle():
    assert cycles(GRAPH) == []


def test_core_never_imports_the_blender_layer():
    assert imports_between(GRAPH, "mocap_addon.core", "mocap_addon.blender") == []


def test_file_operators_and_sidebar_tools_do_not_import_each_other():
    assert imports_between(GRAPH, "mocap_addon.blender.files", "mocap_addon.blender.tools") == []
    assert imports_between(GRAPH, "mocap_addon.blender.tools", "mocap_addon.blender.files") == []


def test_the_checks_catch_what_they_look_for(tmp_path):
    package = tmp_path / "pkg"
    for name, source in {
        "__init__.py": "from . import a\n",
        "a.py": "def f():\n    from .sub.b import g\n",  # a lazy import counts
        "sub/__init__.py": "",
        "sub/b.py": "from ..a import f\nimport pkg.c\n",
        "c.py": "from pkg import sub\n",
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\nelse:\n    import pkg.c\n",
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.c"] == {"pkg.sub"} and graph["pkg.sub.b"] == {"pkg.a", "pkg.c"}
    assert graph["pkg.d"] == {"pkg.a", "pkg.c"}  # what only type checkers read counts too
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.a"]]
    assert imports_between(graph, "pkg.sub", "pkg.c") == ["pkg.sub.b -> pkg.c"]
    assert cycles({"x": {"y"}, "y": set()}) == []
