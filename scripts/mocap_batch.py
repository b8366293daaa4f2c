"""Headless batch import and export.

Import motion capture files into one .blend (one armature per file)::

    blender --background --python scripts/mocap_batch.py -- walk.bvh run.bvh out.blend
    python scripts/mocap_batch.py walk.bvh run.bvh out.blend          # with the bpy wheel

Export every armature of a .blend (one file per armature, format from the extension)::

    python scripts/mocap_batch.py scene.blend out_folder/ --format bvh

Put files (or every motion file in folders) on the canonical skeleton, or retarget them onto the skeleton
of another file, writing one file each into a folder (no Blender needed)::

    python scripts/mocap_batch.py takes/ out_folder/ --canonical [--method lengths] [--format htr]
    python scripts/mocap_batch.py walk.bvh run.bvh out_folder/ --retarget-onto character.htr

One line per file; the exit code is non-zero if any file failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="mocap_batch", description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="motion capture files, or one .blend to export from")
    parser.add_argument("output", help="the .blend to write, or a folder for exported files")
    parser.add_argument("--format", default="bvh", help="export format extension (default bvh)")
    parser.add_argument("--rotation-mode", default="QUATERNION", choices=("QUATERNION", "EULER"))
    parser.add_argument("--unit", default="AUTO", help="import/export unit preset (AUTO, M, CM, MM, IN, FT)")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--canonical", action="store_true", help="put every input on the canonical skeleton")
    parser.add_argument("--method", default="rotations", choices=("rotations", "lengths"),
                        help="canonical conversion method (default rotations)")
    parser.add_argument("--retarget-onto", metavar="FILE", help="retarget every input onto FILE's skeleton")
    return parser.parse_args(argv)


def script_arguments() -> list[str]:
    """Arguments after ``--`` inside Blender, else the command line's own."""
    if "--" in sys.argv:
        return sys.argv[sys.argv.index("--") + 1:]
    return sys.argv[1:] if not os.path.basename(sys.argv[0]).startswith("blender") else []


def import_files(bpy, options: argparse.Namespace) -> int:
    """Import every input into an empty scene and save the .blend; returns the number of failures."""
    bpy.ops.wm.read_homefile(use_empty=True)
    failures = 0
    for path in options.inputs:
        started = time.perf_counter()
        extension = Path(path).suffix.lower().lstrip(".")
        operator = getattr(bpy.ops.import_anim, f"mocap_{'amc' if extension == 'asf' else extension}", None)
        if operator is None:
            failures += 1
            print(f"FAIL {path}: unknown format {extension!r}")
            continue
        try:
            operator(filepath=os.path.abspath(path), unit=options.unit, scale=options.scale,
                     rotation_mode=options.rotation_mode)
        except RuntimeError as error:
            failures += 1
            print(f"FAIL {path}: {str(error).strip().splitlines()[-1]}")
            continue
        obj = bpy.context.object
        action = obj.animation_data.action
        first, last = (round(v) for v in action.frame_range)
        print(f"OK   {path}: {obj.name}, {len(obj.data.bones)} joints, frames {first}-{last}, "
              f"{time.perf_counter() - started:.2f} s")
    target = os.path.abspath(options.output)
    bpy.ops.wm.save_as_mainfile(filepath=target)
    print(f"saved {target}")
    return failures


def export_armatures(bpy, options: argparse.Namespace) -> int:
    """Export every armature of the input .blend into the output folder; returns the failures."""
    bpy.ops.wm.open_mainfile(filepath=os.path.abspath(options.inputs[0]))
    folder = Path(options.output)
    folder.mkdir(parents=True, exist_ok=True)
    operator = getattr(bpy.ops.export_anim, f"mocap_{options.format.lower()}")
    failures = 0
    armatures = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    for obj in armatures:
        bpy.context.view_layer.objects.active = obj
        target = folder / f"{obj.name}.{options.format.lower()}"
        started = time.perf_counter()
        try:
            operator(filepath=str(target), unit=options.unit, scale=options.scale)
        except RuntimeError as error:
            failures += 1
            print(f"FAIL {obj.name}: {str(error).strip().splitlines()[-1]}")
            continue
        print(f"OK   {obj.name} -> {target} ({time.perf_counter() - started:.2f} s)")
    if not armatures:
        print("FAIL no armature in the file")
        failures += 1
    return failures


MOTION_EXTENSIONS = (".bvh", ".htr", ".amc")


def motion_files(inputs: list[str]) -> list[Path]:
    """The inputs, with each folder replaced by the motion files in it."""
    found: list[Path] = []
    for name in inputs:
        path = Path(name)
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.suffix.lower() in MOTION_EXTENSIONS)
        else:
            found.append(path)
    return found


def convert_files(options: argparse.Namespace) -> int:
    """Canonical conversion or retargeting of every input into the output folder; returns the failures."""
    from mocap_addon.core import MocapFormatError, load, save
    from mocap_addon.core.retarget import retarget, to_canonical

    folder = Path(options.output)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        target = load(options.retarget_onto) if options.retarget_onto else None
    except (MocapFormatError, OSError, ValueError) as error:
        print(f"FAIL {options.retarget_onto}: {error}")
        return 1
    failures = 0
    for path in motion_files(options.inputs):
        started = time.perf_counter()
        written = folder / f"{path.stem}.{options.format.lower()}"
        try:
            clip = load(path)
            result = to_canonical(clip, method=options.method) if target is None else retarget(clip, target)
            save(result, written)
        except (MocapFormatError, OSError, ValueError) as error:
            failures += 1
            print(f"FAIL {path}: {error}")
            continue
        print(f"OK   {path} -> {written}: {result.skeleton.joint_count} joints, {result.frame_count} frames, "
              f"{time.perf_counter() - started:.2f} s")
    return failures


def main() -> int:
    options = arguments(script_arguments())
    if options.canonical or options.retarget_onto:
        return 1 if convert_files(options) else 0
    import bpy

    import mocap_addon

    mocap_addon.register()
    exporting = len(options.inputs) == 1 and options.inputs[0].lower().endswith(".blend")
    failures = export_armatures(bpy, options) if exporting else import_files(bpy, options)
    return 1 if failures else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave at once: inside the blender binary sys.exit would not set the exit code, and the
    # bpy 4.5 wheel can hang while tearing itself down at interpreter exit.
    os._exit(code)
