"""Headless batch import and export.

``scripts/mocap_batch.py`` is its command line (the blender binary or any Python with the bpy wheel).

Import motion capture files (or every motion file in folders) into one .blend (one armature per file;
an .asf picked with .amc files is their skeleton)::

    blender --background --python scripts/mocap_batch.py -- walk.bvh run.bvh out.blend
    python scripts/mocap_batch.py walk.bvh 01.asf 01_01.amc out.blend --unit cm     # with the bpy wheel
    python scripts/mocap_batch.py takes/ out.blend

Export every armature of a .blend (one file per armature, format from --format)::

    python scripts/mocap_batch.py scene.blend out_folder/ --format htr

Convert files (or every take in folders, recursively) into a folder, put them on the canonical skeleton,
or retarget them onto the skeleton of another file: one file each, mirroring the folders.  No Blender is
needed for that: it is the core's library batch (``python -m mocap_addon.core batch``), in parallel
(``--jobs``), and a rerun does only what is missing or changed (``--force`` redoes all)::

    python scripts/mocap_batch.py takes/ out_folder/ --format htr
    python scripts/mocap_batch.py takes/ out_folder/ --canonical [--method lengths] [--format htr]
    python scripts/mocap_batch.py walk.bvh run.bvh out_folder/ --retarget-onto character.htr [--feet free]
    python scripts/mocap_batch.py takes/ out_folder/ --retarget-onto rig.blend:Armature   # a rig in a .blend

Options are the File > Import / Export operators' own (names, choices and defaults are read from
them; an option left out keeps the operator's default).  One OK or FAIL line per input (or per
armature; SKIP for an armature without an action, which has nothing to export); the batch goes on
after a failure and the exit code is 1 if anything failed, 2 for bad arguments or a Python without bpy.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

# Operator properties offered on the command line (the rest are format-specific or UI-only).
IMPORT_OPTIONS = ("unit", "custom_unit", "scale", "axis_forward", "axis_up", "use_file_up_axis", "frame_start",
                  "fps_mode", "update_scene_range", "rotation_mode", "reduce_keys", "reduce_tolerance", "lenient")
EXPORT_OPTIONS = ("unit", "custom_unit", "scale", "axis_forward", "axis_up", "use_action_range", "precision",
                  "rotation_order", "use_import_layout")


def _choice(items: list[str]) -> Any:
    """An argparse type matching one of ``items`` whatever its case."""
    by_case = {item.lower(): item for item in items}

    def pick(text: str) -> str:
        if text.lower() not in by_case:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(items)}")
        return by_case[text.lower()]
    return pick


def _add_operator_option(parser: argparse.ArgumentParser, prop: Any) -> None:
    """A command-line option with the type, choices and help of the operator property ``prop``."""
    flag = "--" + prop.identifier.replace("_", "-")
    text = f"{prop.name}: {prop.description}".rstrip(": ")
    if prop.type == "BOOLEAN":
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                            help=f"{text} (default {'on' if prop.default else 'off'})")
    elif prop.type == "ENUM":
        items = [item.identifier for item in prop.enum_items]
        parser.add_argument(flag, type=_choice(items), default=None, metavar="|".join(items),
                            help=f"{text} (default {prop.default})")
    else:
        parser.add_argument(flag, type=int if prop.type == "INT" else float, default=None,
                            help=f"{text} (default {prop.default:g})")


def arguments(argv: list[str], bpy: Any) -> argparse.Namespace:
    from mocap_addon.blender.files import FORMATS
    from mocap_addon.blender.files.base import operator_properties
    from mocap_addon.core.cli.options import add_choice
    from mocap_addon.core.options import CANONICAL_FEET, CANONICAL_METHOD, FEET

    parser = argparse.ArgumentParser(prog="mocap_batch", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="motion capture files, or one .blend to export from")
    parser.add_argument("output", help="the .blend to write, or a folder for exported files")
    formats = [exporter.filename_ext.lstrip(".") for _, exporter in FORMATS]
    parser.add_argument("--format", type=_choice(formats), default=formats[0],
                        help=f"export format: {', '.join(formats)} (default {formats[0]})")
    importer, exporter = FORMATS[0]
    offered: dict[str, Any] = {}
    for idname, names in ((importer.bl_idname, IMPORT_OPTIONS), (exporter.bl_idname, EXPORT_OPTIONS)):
        properties = operator_properties(idname)
        offered.update({name: properties[name] for name in names if name not in offered})
    for prop in offered.values():
        _add_operator_option(parser, prop)
    parser.add_argument("--canonical", action="store_true",
                        help="put every input on the canonical skeleton, one file each in the output folder")
    add_choice(parser, CANONICAL_METHOD, help="with --canonical")
    parser.add_argument("--retarget-onto", metavar="FILE|RIG.blend:OBJECT",
                        help="retarget every input onto FILE's skeleton, or onto the armature OBJECT of a .blend "
                             "(with its bone mapping and reference pose), one file each in the output folder")
    add_choice(parser, FEET, default=None, help=f"default {FEET.default} for retargeting, "
                                                 f"{CANONICAL_FEET.default} for --canonical")
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes for folder work (default: the machine's cores)")
    parser.add_argument("--force", action="store_true",
                        help="folder work: redo every file, even those done by an earlier run")
    return parser.parse_args(argv)


def exporting(options: argparse.Namespace) -> bool:
    return len(options.inputs) == 1 and options.inputs[0].lower().endswith(".blend")


def converting(options: argparse.Namespace) -> bool:
    """Motion files into a folder (no Blender needed), rather than into a .blend."""
    into_folder = not exporting(options) and not options.output.lower().endswith(".blend")
    return bool(options.canonical or options.retarget_onto) or into_folder


def script_arguments() -> list[str]:
    """Arguments after ``--`` inside Blender, else the command line's own."""
    if "--" in sys.argv:
        return sys.argv[sys.argv.index("--") + 1:]
    return sys.argv[1:] if not os.path.basename(sys.argv[0]).startswith("blender") else []


def given(options: argparse.Namespace, idname: str) -> dict[str, Any]:
    """The options given on the command line that operator ``idname`` has."""
    from mocap_addon.blender.files.base import operator_properties

    properties = operator_properties(idname)
    return {name: value for name, value in vars(options).items() if value is not None and name in properties}


def operator(bpy: Any, idname: str) -> Any:
    module, name = idname.split(".")
    return getattr(getattr(bpy.ops, module), name)


def failure(error: BaseException) -> str:
    """One line for an error: an operator's last report line, the system's reason, or the message."""
    from mocap_addon.blender.files.base import reason

    if isinstance(error, RuntimeError):
        return str(error).strip().splitlines()[-1].removeprefix("Error: ")
    if isinstance(error, (OSError, ValueError)):  # MocapFormatError is a ValueError
        return reason(error)
    return f"{type(error).__name__}: {error}"


def import_one(bpy: Any, path: str, skeleton: str | None, options: argparse.Namespace) -> str:
    """Import one file with its format's operator; the OK line's text (raises on failure)."""
    from mocap_addon.blender.bridge.compat import id_property
    from mocap_addon.blender.bridge.read_rig import action_frames, armature_action
    from mocap_addon.blender.files import FORMATS
    from mocap_addon.core.formats import format_of

    extension = format_of(path)
    importer = next(importer for importer, _ in FORMATS if extension in importer.extensions)
    settings = given(options, importer.bl_idname)
    if skeleton is not None:
        settings["skeleton_path"] = os.path.abspath(skeleton)
    result = operator(bpy, importer.bl_idname)(filepath=os.path.abspath(path), **settings)
    if result != {"FINISHED"}:
        raise RuntimeError(f"import {', '.join(sorted(result)).lower()}")
    obj = bpy.context.object
    action = armature_action(obj)
    if action is None:
        return f"{obj.name}, {len(obj.data.bones)} joints, skeleton only"
    first, last = action_frames(action)
    reduced = id_property(action, "mocap_reduction")
    keys = f", keys {reduced['before']} -> {reduced['after']}, worst error {reduced['worst_error']:.3g}" \
        if reduced else ""
    return f"{obj.name}, {len(obj.data.bones)} joints, frames {first}-{last}{keys}"


def import_files(bpy: Any, options: argparse.Namespace) -> int:
    """Import every input into an empty scene and save the .blend; returns the number of failures."""
    from mocap_addon.core.formats import files_to_read

    bpy.ops.wm.read_homefile(use_empty=True)
    failures = 0
    inputs = []
    for name in options.inputs:
        found = motion_files(name)
        if not found:
            failures += 1
            print(f"FAIL {name}: " + ("no motion capture files in this folder" if os.path.exists(name)
                                      else "no such file or folder"))
        inputs += found
    jobs = dict(files_to_read(inputs))
    takes_of: dict[str, list[str]] = {}
    for take, skeleton in jobs.items():
        if skeleton is not None:
            takes_of.setdefault(skeleton, []).append(os.path.basename(take))
    for path in inputs:
        started = time.perf_counter()
        if path not in jobs:
            print(f"OK   {path}: skeleton of {', '.join(takes_of.get(path, []))}")
            continue
        try:
            done = import_one(bpy, path, jobs[path], options)
        except Exception as error:  # one line per file, then the next file
            failures += 1
            print(f"FAIL {path}: {failure(error)}")
            continue
        print(f"OK   {path}: {done}, {time.perf_counter() - started:.2f} s")
    target = os.path.abspath(options.output)
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        bpy.ops.wm.save_as_mainfile(filepath=target)
    except (OSError, RuntimeError) as error:
        print(f"FAIL {target}: {failure(error)}")
        return failures + 1
    print(f"saved {target}")
    return failures


def export_armatures(bpy: Any, options: argparse.Namespace) -> int:
    """Export every armature of the input .blend into the output folder; returns the failures."""
    source = os.path.abspath(options.inputs[0])
    folder = Path(options.output)
    try:
        bpy.ops.wm.open_mainfile(filepath=source)
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError) as error:
        print(f"FAIL {source}: {failure(error)}")
        return 1
    from mocap_addon.blender.bridge.read_rig import armature_action
    from mocap_addon.blender.files import FORMATS

    exporter = next(e for _, e in FORMATS if e.filename_ext == f".{options.format}")
    settings = given(options, exporter.bl_idname)
    armatures = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    if not armatures:
        print(f"FAIL {source}: no armature in the file")
        return 1
    failures = 0
    for obj in armatures:
        if armature_action(obj) is None:
            print(f"SKIP {obj.name}: no action (a skeleton only), nothing to export")
            continue
        target = folder / (obj.name.replace("/", "_").replace("\\", "_") + exporter.filename_ext)
        started = time.perf_counter()
        try:
            bpy.context.view_layer.objects.active = obj
            operator(bpy, exporter.bl_idname)(filepath=str(target), **settings)
        except Exception as error:  # one line per armature, then the next
            failures += 1
            print(f"FAIL {obj.name}: {failure(error)}")
            continue
        print(f"OK   {obj.name} -> {target} ({time.perf_counter() - started:.2f} s)")
    return failures


def motion_files(name: str) -> list[str]:
    """The input, or every take in it (recursive, as the library batch finds them) when it is a folder."""
    from mocap_addon.core.batch.plan import takes_in

    if not os.path.exists(name):
        return []
    return [source for source, _ in takes_in(name)] if os.path.isdir(name) else [name]


def rig_in_blend(target: str) -> tuple[str, str] | None:
    """``(blend, object)`` for a ``--retarget-onto`` of the form ``rig.blend:Object``, else ``None``."""
    blend, colon, name = target.partition(".blend:")
    return (blend + ".blend", name) if colon and name else None


def onto_rig(bpy: Any, blend: str, name: str, **options: Any) -> Any:
    """A function retargeting a clip onto the armature ``name`` of ``blend`` as ``mocap.retarget`` does: the
    armature's skeleton in its clip space (its pose, where it has an action), its bone mapping (hand edits
    included) and reference pose, and ``options`` (``feet``); the result is in the rig's unit (its import's,
    else Blender's metres)."""
    from mocap_addon.blender.bridge.armature import armature_named
    from mocap_addon.blender.bridge.bone_mapping import armature_mapping
    from mocap_addon.blender.bridge.read_rig import recorded, target_body
    from mocap_addon.blender.bridge.reference_pose import reference_rotations
    from mocap_addon.core.retarget.transfer import retarget

    if not os.path.isfile(blend):
        raise FileNotFoundError(f"{blend}: no such file")
    bpy.ops.wm.open_mainfile(filepath=os.path.abspath(blend))
    rig = armature_named(name)
    if rig is None:
        other = bpy.data.objects.get(name)
        raise ValueError(f"{blend}: {name!r} is a {other.type.lower()}, not an armature" if other is not None
                         else f"{blend} has no armature called {name!r}")
    target = target_body(rig)  # what the rig plays never changes the result (as mocap.retarget)
    mapping, reference = armature_mapping(rig), reference_rotations(rig)
    stored = recorded(rig)
    unit = 1.0 if stored is None else stored[1].get("unit_in_metres")

    def onto(clip: Any) -> Any:
        result = retarget(clip, target, target_mapping=mapping, target_reference=reference, **options)
        result.unit_in_metres = unit
        return result
    return onto


def batch_settings(options: argparse.Namespace) -> Any:
    """The core batch's settings for the script's options."""
    from mocap_addon.core.batch import Settings
    from mocap_addon.core.reduce import DEFAULT_TOLERANCE

    tolerance = DEFAULT_TOLERANCE if options.reduce_tolerance is None else options.reduce_tolerance
    reduce = tolerance if options.reduce_keys else None
    return Settings(to=options.format.lower(), canonical=options.canonical, method=options.method,
                    retarget_onto=options.retarget_onto, feet=options.feet, reduce=reduce,
                    unit="auto" if options.unit is None else options.unit.lower(),
                    precision=6 if options.precision is None else options.precision)


def convert_files(bpy: Any, options: argparse.Namespace) -> int:
    """Folder work: every input converted (canonical, retargeted) into the output folder, mirroring its
    folders; one OK or FAIL line per file, in input order.  Returns the failures.  Without a rig in a .blend
    it is the core's library batch (no Blender needed)."""
    from mocap_addon.core.batch import BatchError, run_batch

    settings = batch_settings(options)
    rig = rig_in_blend(options.retarget_onto or "")
    if rig is not None:
        return retarget_onto_rig(bpy, rig, settings, options)
    try:
        summary = run_batch(options.inputs, options.output, settings, jobs=options.jobs, force=options.force)
    except BatchError as error:
        print(f"FAIL {error}")
        return 1
    for line in summary.lines:
        if line["status"] == "error":
            print(f"FAIL {line['input']}: {line['error']}")
        elif line["status"] == "skipped":
            print(f"OK   {line['input']} -> {line['output']}: up to date")
        else:
            print(f"OK   {line['input']} -> {line['output']}: {line['written_joints']} joints, "
                  f"{line['frames']} frames, {line['seconds']:.2f} s")
    return summary.failed


def retarget_onto_rig(bpy: Any, rig: tuple[str, str], settings: Any, options: argparse.Namespace) -> int:
    """Every take retargeted onto an armature in a .blend (Blender reads its mapping and reference pose),
    written where the library batch would write it; returns the failures."""
    from mocap_addon.core import MocapFormatError, load, save
    from mocap_addon.core.batch.plan import plan
    from mocap_addon.core.cli.reduce_option import reduced

    try:
        convert = onto_rig(bpy, *rig, **({"feet": options.feet} if options.feet else {}))
        jobs = plan(options.inputs, options.output, settings.to)
    except (MocapFormatError, OSError, ValueError, RuntimeError) as error:
        print(f"FAIL {options.retarget_onto}: {failure(error)}")
        return 1
    failures = 0
    for job in jobs:
        started = time.perf_counter()
        try:
            if job.refused:
                raise ValueError(job.refused)
            result, _ = reduced(convert(load(job.source)), settings.reduce)
            os.makedirs(os.path.dirname(job.output), exist_ok=True)
            save(result, job.output, precision=settings.precision)
        except (MocapFormatError, OSError, ValueError) as error:
            failures += 1
            print(f"FAIL {job.source}: {failure(error)}")
            continue
        print(f"OK   {job.source} -> {job.output}: {result.skeleton.joint_count} joints, "
              f"{result.frame_count} frames, {time.perf_counter() - started:.2f} s")
    return failures


def run(bpy: Any) -> int:
    """The script's work inside Blender (or with the bpy wheel): the exit code."""
    import mocap_addon

    mocap_addon.register()
    try:
        options = arguments(script_arguments(), bpy)
    except SystemExit as stop:  # --help, or bad arguments (already explained by argparse)
        return stop.code if isinstance(stop.code, int) else 2
    if converting(options):
        return 1 if convert_files(bpy, options) else 0
    work = export_armatures if exporting(options) else import_files
    return 1 if work(bpy, options) else 0
