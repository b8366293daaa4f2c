"""Generate the bundled sample clips ``samples/walk_turn.bvh`` and ``samples/jog_wave.bvh``.

``walk_turn``: a 23-joint humanoid walks in a circle for four seconds at 30 fps.
It uses several rotation orders, a root heading that wraps past ±180° (written
wrapped, as many exporters do), a shoulder swinging through the middle-angle
limit, and an End Site on every leaf.

``jog_wave``: another figure (Mixamo-style ``mixamorig:`` names, taller, three
spine joints, one rotation order) jogs straight ahead for four seconds at 30 fps
waving its right hand above its head: a second skeleton for the demo's mapping,
canonical conversion and blending.

Run: ``python scripts/make_sample.py [FOLDER]`` (default ``samples/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mocap_addon.core import Clip, Skeleton, save

FPS = 30
SECONDS = 4.0
ROOT_HEIGHT = 94.0

# name, parent, offset (cm, Y up, Z forward), rotation order, end site offset or None
JOINTS: list[tuple[str, str | None, tuple[float, float, float], str, tuple[float, float, float] | None]] = [
    ("Hips", None, (0.0, ROOT_HEIGHT, 0.0), "ZXY", None),
    ("Spine", "Hips", (0.0, 10.0, -1.0), "ZYX", None),
    ("Chest", "Spine", (0.0, 14.0, 0.0), "ZYX", None),
    ("Neck", "Chest", (0.0, 20.0, -1.0), "XYZ", None),
    ("Head", "Neck", (0.0, 9.0, 1.5), "XYZ", (0.0, 16.0, 0.0)),
    ("LeftShoulder", "Chest", (4.0, 16.0, -1.0), "YZX", None),
    ("LeftArm", "LeftShoulder", (14.0, 0.0, 0.0), "YXZ", None),
    ("LeftForeArm", "LeftArm", (28.0, 0.0, 0.0), "YXZ", None),
    ("LeftHand", "LeftForeArm", (25.0, 0.0, 0.0), "YXZ", (18.0, 0.0, 0.0)),
    ("RightShoulder", "Chest", (-4.0, 16.0, -1.0), "YZX", None),
    ("RightArm", "RightShoulder", (-14.0, 0.0, 0.0), "YXZ", None),
    ("RightForeArm", "RightArm", (-28.0, 0.0, 0.0), "YXZ", None),
    ("RightHand", "RightForeArm", (-25.0, 0.0, 0.0), "YXZ", (-18.0, 0.0, 0.0)),
    ("LeftUpLeg", "Hips", (9.0, -4.0, 0.0), "ZXY", None),
    ("LeftLeg", "LeftUpLeg", (0.0, -42.0, 0.0), "ZXY", None),
    ("LeftFoot", "LeftLeg", (0.0, -40.0, -2.0), "ZXY", None),
    ("LeftToeBase", "LeftFoot", (0.0, -6.0, 13.0), "ZXY", (0.0, 0.0, 7.0)),
    ("RightUpLeg", "Hips", (-9.0, -4.0, 0.0), "ZXY", None),
    ("RightLeg", "RightUpLeg", (0.0, -42.0, 0.0), "ZXY", None),
    ("RightFoot", "RightLeg", (0.0, -40.0, -2.0), "ZXY", None),
    ("RightToeBase", "RightFoot", (0.0, -6.0, 13.0), "ZXY", (0.0, 0.0, 7.0)),
    ("Tail", "Hips", (0.0, -2.0, -9.0), "XZY", None),
    ("TailTip", "Tail", (0.0, -8.0, -10.0), "XZY", (0.0, -4.0, -6.0)),
]


def make_clip() -> Clip:
    """The sample clip: channel values from closed-form curves (degrees, centimetres)."""
    names = [j[0] for j in JOINTS]
    frames = int(SECONDS * FPS)
    t = np.arange(frames) / FPS
    phase = 2 * np.pi * t / 1.1  # one stride per 1.1 s
    heading = np.degrees(2 * np.pi * t / 3.0) + 150.0  # 480° over the clip: passes +180 twice
    columns: dict[str, dict[str, np.ndarray]] = {name: {} for name in names}

    def rotate(name: str, x: np.ndarray | float = 0.0, y: np.ndarray | float = 0.0,
               z: np.ndarray | float = 0.0) -> None:
        columns[name].update({"rx": x + 0 * t, "ry": y + 0 * t, "rz": z + 0 * t})

    radius = 150.0
    angle = np.radians(heading - 150.0)
    columns["Hips"].update({"tx": radius * np.sin(angle), "ty": ROOT_HEIGHT + 2.0 * np.cos(2 * phase),
                            "tz": radius * (1 - np.cos(angle))})
    rotate("Hips", x=3.0 * np.sin(2 * phase), y=(heading + 180.0) % 360.0 - 180.0, z=4.0 * np.sin(phase))
    rotate("Spine", x=4.0 + 2.0 * np.sin(2 * phase), y=-6.0 * np.sin(phase))
    rotate("Chest", x=2.0, y=-8.0 * np.sin(phase), z=-2.0 * np.sin(phase))
    rotate("Neck", x=-5.0 + 3.0 * np.sin(2 * phase), y=10.0 * np.sin(0.5 * phase))
    rotate("Head", x=4.0 * np.sin(phase + 1.0), y=20.0 * np.sin(0.5 * phase + 0.3))
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        swing = np.sin(phase + (0.0 if sign > 0 else np.pi))
        rotate(f"{side}Shoulder", z=sign * 5.0 * swing)
        # The arm rises above the horizontal and back: the middle angle crosses ±90°.
        rotate(f"{side}Arm", x=35.0 * swing, y=sign * (60.0 + 45.0 * np.sin(0.5 * phase)), z=-sign * 70.0)
        rotate(f"{side}ForeArm", y=-sign * (25.0 + 20.0 * np.maximum(swing, 0.0)))
        rotate(f"{side}Hand", x=10.0 * swing, z=sign * 8.0)
        leg = np.sin(phase + (np.pi if sign > 0 else 0.0))
        rotate(f"{side}UpLeg", x=-30.0 * leg, z=sign * 3.0)
        rotate(f"{side}Leg", x=30.0 + 30.0 * np.sin(phase + (np.pi if sign > 0 else 0.0) - 1.2))
        rotate(f"{side}Foot", x=-10.0 * leg)
        rotate(f"{side}ToeBase", x=15.0 * np.maximum(-leg, 0.0))
    rotate("Tail", x=20.0 * np.sin(phase), z=35.0 * np.sin(2 * phase))
    rotate("TailTip", x=25.0 * np.sin(phase - 0.8), z=40.0 * np.sin(2 * phase - 0.8))

    layouts, motion = [], []
    for name, _, _, order, _ in JOINTS:
        layout = (("tx", "ty", "tz") if name == "Hips" else ()) + tuple(f"r{a.lower()}" for a in order)
        layouts.append(layout)
        motion += [columns[name][c] for c in layout]
    skeleton = Skeleton(
        names=names,
        parents=[-1 if p is None else names.index(p) for _, p, _, _, _ in JOINTS],
        offsets=np.array([o for _, _, o, _, _ in JOINTS]),
        channels=layouts,
        end_sites=[np.array([e]) if e else np.zeros((0, 3)) for *_, e in JOINTS],
        position_replaces_offset=np.array([name == "Hips" for name in names]),
    )
    return Clip(skeleton, np.stack(motion, axis=1), 1.0 / FPS)


JOG_ROOT_HEIGHT = 101.0
JOG_ORDER = "ZYX"

# name (without the namespace), parent, offset (cm, Y up, Z forward), end site offset or None
JOG_JOINTS: list[tuple[str, str | None, tuple[float, float, float], tuple[float, float, float] | None]] = [
    ("Hips", None, (0.0, JOG_ROOT_HEIGHT, 0.0), None),
    ("Spine", "Hips", (0.0, 10.0, 0.5), None),
    ("Spine1", "Spine", (0.0, 12.0, 0.0), None),
    ("Spine2", "Spine1", (0.0, 13.5, -0.5), None),
    ("Neck", "Spine2", (0.0, 16.0, -1.0), None),
    ("Head", "Neck", (0.0, 10.0, 2.0), (0.0, 19.0, 0.0)),
    ("LeftShoulder", "Spine2", (5.0, 12.0, -1.0), None),
    ("LeftArm", "LeftShoulder", (13.0, 0.0, 0.0), None),
    ("LeftForeArm", "LeftArm", (30.0, 0.0, 0.0), None),
    ("LeftHand", "LeftForeArm", (26.0, 0.0, 0.0), (19.0, 0.0, 0.0)),
    ("RightShoulder", "Spine2", (-5.0, 12.0, -1.0), None),
    ("RightArm", "RightShoulder", (-13.0, 0.0, 0.0), None),
    ("RightForeArm", "RightArm", (-30.0, 0.0, 0.0), None),
    ("RightHand", "RightForeArm", (-26.0, 0.0, 0.0), (-19.0, 0.0, 0.0)),
    ("LeftUpLeg", "Hips", (10.0, -6.0, 0.0), None),
    ("LeftLeg", "LeftUpLeg", (0.0, -45.0, 0.0), None),
    ("LeftFoot", "LeftLeg", (0.0, -44.0, -2.0), None),
    ("LeftToeBase", "LeftFoot", (0.0, -6.0, 14.0), (0.0, 0.0, 8.0)),
    ("RightUpLeg", "Hips", (-10.0, -6.0, 0.0), None),
    ("RightLeg", "RightUpLeg", (0.0, -45.0, 0.0), None),
    ("RightFoot", "RightLeg", (0.0, -44.0, -2.0), None),
    ("RightToeBase", "RightFoot", (0.0, -6.0, 14.0), (0.0, 0.0, 8.0)),
]


def make_jog_clip() -> Clip:
    """The second sample: a jog straight along +Z, the right hand waving overhead (degrees, centimetres)."""
    names = [j[0] for j in JOG_JOINTS]
    frames = int(SECONDS * FPS)
    t = np.arange(frames) / FPS
    phase = 2 * np.pi * t / 0.72  # one stride per 0.72 s
    wave = np.sin(2 * np.pi * t / 0.9)
    angles: dict[str, tuple[np.ndarray | float, np.ndarray | float, np.ndarray | float]] = {}
    angles["Hips"] = (8.0 + 3.0 * np.sin(2 * phase), 6.0 * np.sin(phase), 3.0 * np.sin(phase))
    angles["Spine"] = (4.0, -5.0 * np.sin(phase), 0.0)
    angles["Spine1"] = (3.0, -5.0 * np.sin(phase), -2.0 * np.sin(phase))
    angles["Spine2"] = (2.0, -4.0 * np.sin(phase), 0.0)
    angles["Neck"] = (-8.0, 4.0 * np.sin(phase), 0.0)
    angles["Head"] = (-6.0 + 2.0 * np.sin(2 * phase), 0.0, 0.0)
    angles["LeftShoulder"] = (0.0, 0.0, -5.0)
    angles["LeftArm"] = (40.0 * np.sin(phase), 0.0, -70.0)
    angles["LeftForeArm"] = (0.0, -85.0 - 10.0 * np.sin(phase), 0.0)  # bent forward
    angles["LeftHand"] = (0.0, 0.0, 5.0)
    angles["RightShoulder"] = (0.0, 0.0, -15.0)  # raised
    angles["RightArm"] = (-10.0, 0.0, -55.0 - 8.0 * wave)  # up above the shoulder
    angles["RightForeArm"] = (0.0, 15.0, -45.0 - 30.0 * wave)  # waving side to side
    angles["RightHand"] = (0.0, 10.0 * wave, 0.0)
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        leg = np.sin(phase + (np.pi if sign > 0 else 0.0))
        angles[f"{side}UpLeg"] = (-45.0 * leg - 10.0, 0.0, sign * 2.0)
        angles[f"{side}Leg"] = (55.0 + 45.0 * np.sin(phase + (np.pi if sign > 0 else 0.0) - 1.4), 0.0, 0.0)
        angles[f"{side}Foot"] = (-15.0 * leg, 0.0, 0.0)
        angles[f"{side}ToeBase"] = (20.0 * np.maximum(-leg, 0.0), 0.0, 0.0)
    speed = 250.0  # cm/s
    position = {"tx": 2.0 * np.sin(phase), "ty": JOG_ROOT_HEIGHT - 1.0 + 4.0 * np.cos(2 * phase),
                "tz": speed * t}
    layouts, motion = [], []
    for name, *_ in JOG_JOINTS:
        layout = (("tx", "ty", "tz") if name == "Hips" else ()) + tuple(f"r{a.lower()}" for a in JOG_ORDER)
        layouts.append(layout)
        for channel in layout:
            values = position[channel] if channel in position else angles[name]["xyz".index(channel[1])]
            motion.append(values + 0 * t)
    skeleton = Skeleton(
        names=[f"mixamorig:{name}" for name in names],
        parents=[-1 if p is None else names.index(p) for _, p, _, _ in JOG_JOINTS],
        offsets=np.array([o for _, _, o, _ in JOG_JOINTS]),
        channels=layouts,
        end_sites=[np.array([e]) if e else np.zeros((0, 3)) for *_, e in JOG_JOINTS],
        position_replaces_offset=np.array([name == "Hips" for name in names]),
    )
    return Clip(skeleton, np.stack(motion, axis=1), 1.0 / FPS)


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "samples"
    folder.mkdir(parents=True, exist_ok=True)
    for name, clip in (("walk_turn", make_clip()), ("jog_wave", make_jog_clip())):
        target = folder / f"{name}.bvh"
        save(clip, target, precision=4)
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
