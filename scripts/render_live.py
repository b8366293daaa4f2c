"""The README's pictures of the live mix: real Blender renders, made headless with Workbench.

Imports the two bundled samples (``samples/walk_turn.bvh`` and ``samples/jog_wave.bvh``, so it runs on a
fresh clone), puts a live mix of them on ``walk_turn_live`` (``mocap.live_blend``) and draws the right
hand's envelope (``mocap.draw_envelope``). An armature and a bare curve render as nothing, so the rig gets
a body (:func:`give_body`: one tapered cylinder per bone, skinned rigidly to it) and the envelope a bevel
(:func:`dress_envelope`: thin paths, the current mix's path thicker); a floor, a sun and a camera complete
the stage. Each picture is ``scene.frame_set`` (the live handler poses the rig) and one Workbench render.

    .venv/bin/python scripts/render_live.py [OUT_DIR] [--size WIDTHxHEIGHT]   (default docs/images, 640x360)
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
MIXES = (0.2, 0.8)
FRAMES = (40, 90)
BODY_COLOUR = (0.5, 0.78, 0.55, 1.0)  # sage: told apart from the grey floor, the sky and the paths
FLOOR_COLOUR = (0.32, 0.33, 0.35, 1.0)


def give_body(bpy, armature, thickness: float = 0.2):
    """A mesh body for ``armature``: per bone a tapered cylinder along it (radius ``thickness`` of its length
    at the head, 0.6 of that at the tail, at least 3% of the rig's height so short bones still show),
    its vertices weighted fully to that bone, deformed by an Armature modifier. Returns the mesh object."""
    import bmesh
    from mathutils import Matrix

    bones = [bone for bone in armature.data.bones if bone.length > 0.0]
    height = max(bone.head_local.z for bone in bones) - min(bone.head_local.z for bone in bones)
    body = bpy.data.objects.new(f"{armature.name}_body", bpy.data.meshes.new(f"{armature.name}_body"))
    mesh = bmesh.new()
    weights = mesh.verts.layers.deform.verify()
    along_y = Matrix.Rotation(-math.pi / 2, 4, "X")  # create_cone builds along Z; bones point along Y
    for index, bone in enumerate(bones):
        body.vertex_groups.new(name=bone.name)
        radius = max(thickness * bone.length, 0.03 * height)
        place = bone.matrix_local @ Matrix.Translation((0.0, bone.length / 2, 0.0)) @ along_y
        made = bmesh.ops.create_cone(mesh, cap_ends=True, segments=10, radius1=radius, radius2=0.6 * radius,
                                     depth=bone.length, matrix=place)
        for vertex in made["verts"]:
            vertex[weights][index] = 1.0
    mesh.to_mesh(body.data)
    mesh.free()
    for polygon in body.data.polygons:
        polygon.use_smooth = True
    body.data.materials.append(flat_material(bpy, "mocap_render_body", BODY_COLOUR))
    body.parent = armature
    body.modifiers.new("Armature", "ARMATURE").object = armature
    armature.users_collection[0].objects.link(body)
    return body


def flat_material(bpy, name: str, colour: tuple[float, float, float, float]):
    """A material Workbench shows in ``colour`` (its viewport colour; EEVEE its base colour)."""
    material = bpy.data.materials.get(name) or bpy.data.materials.new(name)
    material.diffuse_color = colour
    return material


def dress_envelope(curve_object, depth: float, highlight: float = 2.5) -> None:
    """Give the envelope curve a round bevel of ``depth`` so it renders; the current mix's path (material
    index 1) ``highlight`` times as thick."""
    curve = curve_object.data
    curve.bevel_depth, curve.bevel_resolution, curve.use_fill_caps = depth, 2, True
    for spline in curve.splines:
        radius = highlight if spline.material_index == 1 else 1.0
        spline.points.foreach_set("radius", [radius] * len(spline.points))


def stage(bpy, subject, ground) -> object:
    """A floor under the box ``ground`` ((x0, y0), (x1, y1)), a sun and a camera aimed at ``subject``'s first
    bone by a Track To constraint; returns the camera."""
    scene = bpy.context.scene
    floor = bpy.data.objects.new("floor", bpy.data.meshes.new("floor"))
    (x0, y0), (x1, y1) = ground
    floor.data.from_pydata([(x0, y0, 0), (x1, y0, 0), (x1, y1, 0), (x0, y1, 0)], [], [(0, 1, 2, 3)])
    floor.data.materials.append(flat_material(bpy, "mocap_render_floor", FLOOR_COLOUR))
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.rotation_euler = (math.radians(40), 0.0, math.radians(30))
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    camera.data.lens = 32
    for obj in (floor, sun, camera):
        scene.collection.objects.link(obj)
    aim = camera.constraints.new("TRACK_TO")
    aim.target, aim.subtarget = subject, subject.data.bones[0].name
    aim.track_axis, aim.up_axis = "TRACK_NEGATIVE_Z", "UP_Y"
    scene.camera = camera
    return camera


def set_up_render(bpy, width: int, height: int) -> None:
    """Workbench and material colours: the solid viewport's look, rendered.  No shadows: at a figure's real
    size (metres) Workbench's shadow greys the paths over the floor out of their colours."""
    scene = bpy.context.scene
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = width, height, 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.image_settings.compression = 100
    shading = scene.display.shading
    shading.light, shading.color_type = "STUDIO", "MATERIAL"
    shading.show_shadows, shading.show_cavity = False, False
    scene.display.render_aa = "8"
    scene.view_settings.view_transform = "Standard"  # the materials' colours as given
    world = bpy.data.worlds.get("render") or bpy.data.worlds.new("render")
    world.color = (0.9, 0.92, 0.95)
    scene.world = world


def build_live_mix(bpy, mix: float = MIXES[0]):
    """The bundled walk and jog imported, live-mixed on ``walk_turn_live`` with the right hand's envelope;
    returns the live target."""
    for name in ("walk_turn", "jog_wave"):
        bpy.ops.import_anim.mocap_bvh(filepath=str(SAMPLES / f"{name}.bvh"), update_scene_range=True)
    bpy.ops.mocap.live_blend(clip_a="walk_turn", clip_b="jog_wave", mix=mix)
    live = bpy.context.object
    bpy.ops.mocap.draw_envelope(joint="hand_r", mixes=11)
    return live


def render_live(bpy, out: Path, width: int = 640, height: int = 360, mixes=MIXES, frames=FRAMES) -> list[Path]:
    """Build the scene in the current file and render every (mix, frame) into ``out``; returns the PNGs."""
    from mathutils import Vector

    live = build_live_mix(bpy, mixes[0])
    figure = live.dimensions.z
    give_body(bpy, live)
    settings = live.mocap_live
    set_up_render(bpy, width, height)
    corners = [settings.envelope.matrix_world @ Vector(corner) for corner in settings.envelope.bound_box]
    low = [min(c[axis] for c in corners) - 30 * figure for axis in (0, 1)]  # to the horizon
    high = [max(c[axis] for c in corners) + 30 * figure for axis in (0, 1)]
    camera = stage(bpy, live, (low, high))
    camera.data.clip_end = 100 * figure
    scene = bpy.context.scene
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for mix in mixes:
        settings.mix = mix  # re-poses the rig and redraws the envelope, this mix's path highlighted
        dress_envelope(settings.envelope, figure * max(0.003, 0.6 / height))  # half a pixel or more
        for frame in frames:
            scene.frame_set(frame)
            hips = live.matrix_world @ live.pose.bones[0].head
            camera.location = hips + figure * Vector((1.4, -2.0, 1.5))
            scene.render.filepath = str(out / f"live_mix_{round(100 * mix):02d}_frame_{frame:03d}.png")
            bpy.ops.render.render(write_still=True)
            written.append(Path(scene.render.filepath))
            fewer_colours(written[-1])
    return written


def fewer_colours(path: Path, colours: int = 96) -> None:
    """Rewrite the PNG with a palette of ``colours`` (a third of the bytes) when Pillow is installed."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colours, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def main() -> None:
    arguments = sys.argv[1:]
    size = "640x360"
    if "--size" in arguments:
        at = arguments.index("--size")
        size = arguments[at + 1]
        del arguments[at:at + 2]
    width, height = (int(n) for n in size.split("x"))
    out = Path(arguments[0] if arguments else ROOT / "docs" / "images").resolve()
    sys.path.insert(0, str(ROOT))
    import bpy

    import mocap_addon

    mocap_addon.register()
    bpy.ops.wm.read_homefile(use_empty=True)
    started = time.process_time(), time.perf_counter()
    written = render_live(bpy, out, width, height)
    cpu, wall = time.process_time() - started[0], time.perf_counter() - started[1]
    for path in written:
        print(f"{path} {path.stat().st_size // 1024} KB", flush=True)
    print(f"{len(written)} renders at {width}x{height}: {cpu:.1f} s CPU, {wall:.1f} s wall", flush=True)
    os._exit(0)  # bpy 4.5 can hang at exit


if __name__ == "__main__":
    main()
