"""Headless batch import and export: a thin entry point to :mod:`mocap_addon.blender.batch` (its notes
say what it does; ``--help`` lists the options)::

    blender --background --python scripts/mocap_batch.py -- walk.bvh run.bvh out.blend
    python scripts/mocap_batch.py takes/ out_folder/ --retarget-onto character.htr [--feet free]
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def without_bpy() -> str:
    """One line saying how to run the script, for a Python without the bpy module."""
    venv = ROOT / ".venv" / "bin" / "python"
    python = os.path.relpath(venv) if venv.is_file() else "the Python of the venv `bash scripts/env.sh` makes"
    return (f"mocap_batch: this Python ({sys.executable}) has no bpy module: run it with {python} "
            "(the bpy wheel), or inside Blender: blender --background --python scripts/mocap_batch.py -- ARGS")


def main() -> int:
    try:
        import bpy
    except ImportError:
        print(without_bpy(), file=sys.stderr)
        return 2
    from mocap_addon.blender.batch import run

    return run(bpy)


if __name__ == "__main__":
    code = 1
    try:
        code = main()
    except BaseException:  # say what broke, then still leave at once (below)
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # Leave at once: inside the blender binary sys.exit would not set the exit code, and the
        # bpy 4.5 wheel can hang (4.2 can crash) while tearing itself down at interpreter exit.
        os._exit(code)
