"""Build and validate the extension zip with Blender's own extension tool from the bpy wheel.

    python scripts/build_extension.py [--output-dir dist]

Writes ``dist/<id>-<version>.zip`` (tests, scripts and dev files are excluded by
``[build] paths_exclude_pattern`` in ``blender_manifest.toml``) and prints its path.
Any Python runs it: one without the bpy wheel hands over to the project's venv
(``.venv``, made by ``bash scripts/env.sh``, or another ``.venv-bpy*``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANDED_OVER = "MOCAP_BUILD_HANDED_OVER"  # set for the venv's Python, so it never hands over again


def venv_python() -> Path | None:
    """The Python of the project's venv with the bpy wheel: ``.venv``'s, else another ``.venv-bpy*``'s."""
    candidates = [ROOT / ".venv" / "bin" / "python", *sorted(ROOT.glob(".venv-bpy*/bin/python"))]
    return next((python for python in candidates if python.is_file()), None)


def blender_ext_tool() -> Path:
    """``blender_ext.py`` inside the installed bpy wheel (bpy itself is not imported)."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or spec.origin is None:
        raise SystemExit("the bpy wheel is not installed in this Python: run `bash scripts/env.sh`, then "
                         "`.venv/bin/python scripts/build_extension.py`")
    found = sorted(Path(spec.origin).parent.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not found:
        raise SystemExit("Blender's extension tool is missing from the bpy wheel")
    return found[-1]


def build(output_dir: Path) -> Path:
    """Build the zip, validate it, and return its path."""
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    target = output_dir / f"{manifest['id']}-{manifest['version']}.zip"
    output_dir.mkdir(parents=True, exist_ok=True)
    tool = [sys.executable, str(blender_ext_tool())]
    subprocess.run([*tool, "build", "--source-dir", str(ROOT), "--output-filepath", str(target)], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([*tool, "validate", str(target)], check=True, stdout=subprocess.DEVNULL)
    return target


def main() -> None:
    python = venv_python()
    if importlib.util.find_spec("bpy") is None and python is not None and not os.environ.get(HANDED_OVER):
        os.execve(python, [str(python), __file__, *sys.argv[1:]], {**os.environ, HANDED_OVER: "1"})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "dist")
    print(build(parser.parse_args().output_dir))


if __name__ == "__main__":
    main()
