"""Generate the bundled sample clip ``samples/walk_turn.bvh``.

A 23-joint humanoid walks in a circle for four seconds at 30 fps.  It uses
several rotation orders, a root heading that wraps past ±180° (written wrapped,
as many exporters do), a shoulder swinging through the middle-angle limit, and
an End Site on every leaf.  Run: ``python scripts/make_sample.py [OUT]``.
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


def main() -> None:
    default = Path(__file__).resolve().parents[1] / "samples" / "walk_turn.bvh"
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    target.parent.mkdir(parents=True, exist_ok=True)
    save(make_clip(), target, precision=4)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
