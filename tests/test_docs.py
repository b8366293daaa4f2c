"""What the README and the scripts' own comments say agrees with what the project runs (issue 21, item 10)."""

from __future__ import annotations

import re

import pytest

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


# --- the documentation site (docs/, mkdocs.yml) -----------------------------------------------------------------

DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(page) -> list[str]:
    return FENCE.findall(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", [p for p in [*PAGES, REPO / "README.md"] if python_blocks(p)],
                         ids=lambda p: p.name)
def test_every_python_example_of_a_page_runs(page, tmp_path, monkeypatch):
    """A page's blocks run in order in one namespace, from a folder holding the samples (as the repository's
    root does), so an example that no longer matches the code fails here."""
    (tmp_path / "samples").symlink_to(REPO / "samples")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for number, block in enumerate(python_blocks(page), start=1):
        exec(compile(block, f"{page.name} (python block {number})", "exec"), namespace)


def test_the_example_runner_sees_the_blocks_and_fails_on_a_broken_one(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n```sh\nls\n```\n\n```python\nassert x == 2\n```\n")
    blocks = python_blocks(page)
    assert blocks == ["x = 1\n", "assert x == 2\n"]
    namespace: dict = {}
    exec(blocks[0], namespace)
    with pytest.raises(AssertionError):
        exec(blocks[1], namespace)


def test_readme_is_short_and_every_page_is_in_the_site_navigation():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 300
    navigation = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert [p.name for p in PAGES if f" {p.name}" not in navigation] == []


def test_every_picture_is_shown_and_every_picture_shown_exists():
    shown = {match for page in PAGES for match in re.findall(r"\]\((images/[^)]+)\)", page.read_text())}
    shown |= set(re.findall(r"\]\(docs/(images/[^)]+)\)", (REPO / "README.md").read_text()))
    present = {f"images/{p.name}" for p in (DOCS / "images").glob("*.png")}
    assert shown == present
    for name in present:
        assert (DOCS / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
