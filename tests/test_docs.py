"""What the README and the scripts' own comments say agrees with what the project runs (issue 21, item 10)."""

from __future__ import annotations

import re

from tests.conftest import REPO


def test_blender_versions_named_in_examples_are_the_ones_ci_runs():
    ci = (REPO / ".ci" / "run").read_text()
    tested = set(re.search(r'OTHER_BLENDERS:-([0-9. ]+)\}', ci).group(1).split()) | {"5.0.1"}
    for path in (REPO / "README.md", *sorted((REPO / "scripts").glob("*.sh")), REPO / ".ci" / "run"):
        named = set(re.findall(r"BPY_VERSION=([0-9.]+)", path.read_text()))
        assert named <= tested, f"{path.name} names {sorted(named - tested)}; CI runs {sorted(tested)}"
        assert set(re.findall(r"\.venv-bpy([0-9]+\.[0-9]+\.[0-9]+)", path.read_text())) <= tested, path.name


def test_readme_says_how_to_build_the_extension_with_any_python():
    readme = (REPO / "README.md").read_text()
    assert "python scripts/build_extension.py" in readme and ".venv/bin/python" in readme
