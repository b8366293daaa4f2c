"""Key reduction with a guaranteed bound on every bone's world-space error.

An imported motion has a key per frame on every curve.  :func:`reduce_keys`
chooses, joint by joint, the frames that keep a key, such that playing the
kept keys back the way Blender interpolates LINEAR F-curves (quaternion
components lerped and the result normalised, Euler angles lerped one by one,
locations and scales lerped) puts every bone's head and tail within
``tolerance * figure height`` of the original at every original frame, in
world space, whole chains included.  The pieces: :mod:`.keyed` (what the
curves hold and how they play back), :mod:`.points` (the bones' heads and
tails, by forward kinematics), :mod:`.search` (the three steps) and
:mod:`.curves` (single curves: the keys that change nothing go,
:func:`curve_keys`).  numpy throughout, no per-frame loops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model import Clip
from ..pose import Pose, as_pose
from ..rotations import FloatArray
from .curves import IntArray, curve_keys, interpolate
from .keyed import EulerKeys, Keyed, played_back
from .points import BonePoints, bone_points, default_tails, figure_height
from .search import relax, shared_frames, verify

__all__ = ["DEFAULT_TOLERANCE", "EulerKeys", "Reduction", "bone_points", "curve_keys", "default_tails",
           "figure_height", "interpolate", "played_back", "reduce_keys"]

DEFAULT_TOLERANCE = 0.002  # of the figure's rest height: 3.6 mm on a 1.8 m figure


@dataclass
class Reduction:
    """The frames (indices into the motion) that keep a key, per joint, and what was measured.

    A joint's rotation, location and scale curves key the same frames, before
    :func:`curve_keys` drops what each curve does not need.  Lengths are in
    the motion's units.
    """

    frames: list[IntArray]
    height: float
    tolerance: float
    worst_error: float
    keys_before: int
    keys_after: int

    @property
    def kept_fraction(self) -> float:
        return self.keys_after / max(self.keys_before, 1)

    def summary(self) -> str:
        return (f"keys {self.keys_before} -> {self.keys_after} ({100 * self.kept_fraction:.1f} %), "
                f"worst error {self.worst_error / self.height:.2e} of the height "
                f"(bound {self.tolerance / self.height:.2e})")


def reduce_keys(motion: Clip | Pose, tolerance: float = DEFAULT_TOLERANCE, euler: EulerKeys | None = None,
                tails: FloatArray | None = None) -> Reduction:
    """The frames each joint must keep so no bone head or tail moves more than
    ``tolerance`` (a fraction of :func:`figure_height`) from the motion, at any frame.

    Rotations are modelled as keyed quaternions, or as ``euler`` describes.
    ``tails`` ``(J, 3)`` are the bones' rest tails in file axes (default
    :func:`default_tails`).  A tolerance of 0 or less keeps every frame.
    """
    if not math.isfinite(tolerance):
        raise ValueError(f"the tolerance must be a finite number, not {tolerance!r}")
    pose = as_pose(motion)
    tails = default_tails(pose) if tails is None else np.asarray(tails, dtype=np.float64)
    height = figure_height(motion, tails)
    keyed = Keyed(pose, euler)
    points = BonePoints(keyed, pose, tails)
    if not (math.isfinite(height) and np.isfinite(points.original).all()):
        raise ValueError("cannot reduce keys: the motion's bone positions are not finite numbers")
    frame_count = pose.frame_count
    # Float32 keys and Blender's float32 evaluation add about this much; keep it in reserve.
    reserve = 1e-6 * (float(np.abs(points.original).max(initial=0.0)) + height)
    bound = tolerance * height - reserve
    if bound <= 0 or frame_count < 3:
        everything = [np.arange(frame_count) for _ in range(keyed.joint_count)]
        keys = frame_count * sum(keyed.curve_count(j) for j in range(keyed.joint_count))
        return Reduction(everything, height, max(tolerance * height, 0.0), 0.0, keys, keys)
    shared = shared_frames(points, bound)
    ends = np.array([0, frame_count - 1])
    frames = [ends if still else shared.copy() for still in keyed.still]
    error = points.errors(shared)  # the same as ``frames``: still joints are constant
    for level in points.levels_leaves_first():
        frames = relax(points, level[~keyed.still[level]], frames, error, bound)
    frames, worst = verify(points, frames, bound)
    return _result(keyed, frames, height, tolerance * height, worst)


def _result(keyed: Keyed, frames: list[IntArray], height: float, tolerance: float, worst: float) -> Reduction:
    """The reduction with its key counts, curve by curve as :func:`curve_keys` leaves them."""
    before = after = 0
    for joint, kept in enumerate(frames):
        curves = list(keyed.curves(joint))
        if keyed.scale_row[joint] >= 0:
            curves += [curves[-1]] * 2  # one uniform scale on three curves
        before += keyed.frame_count * len(curves)
        after += sum(len(curve_keys(curve, kept)) for curve in curves)
    return Reduction(frames, height, tolerance, worst, before, after)
