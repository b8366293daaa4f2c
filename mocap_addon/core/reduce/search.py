"""Key reduction with a guaranteed bound on every bone's world-space error.

An imported clip has a key per frame on every curve.  :func:`reduce_keys`
chooses, joint by joint, the frames that keep a key, such that playing the
kept keys back the way Blender interpolates LINEAR F-curves (quaternion
components lerped and the result normalised, Euler angles lerped one by one,
locations and scales lerped) puts every bone's head and tail within
``tolerance * figure height`` of the original at every original frame, in
world space, whole chains included.

1. Shared frames: one set of frames for every joint, each segment as long as
   true forward kinematics of every head and tail allows (greedy, many
   windows searched side by side).  Joints that never move keep their first
   and last frames only.
2. Per joint, leaves first: the tolerance left at each frame for the points a
   joint moves (the bound minus a bound on their present error) is spent on
   that joint: its keys are dropped, cheapest first, while turning it by
   ``θ`` (which moves a point ``r`` away by at most ``2 r sin(θ/2)``) stays
   within what is left.  Joints of one height have disjoint subtrees and are
   done together.
3. Verification with true forward kinematics at every frame; where a point is
   out of bounds, its whole chain gets a key at that frame, until none is.

Curves that are constant, or straight between kept keys, then lose the keys
that change nothing (:func:`curve_keys`).  numpy throughout, no per-frame loops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from . import rotations
from .kinematics import compose, joint_transform, place_translation, rest_bones, rest_pose
from .model import MOVE_CHANNELS, SCALE_CHANNEL, Clip
from .rotations import FloatArray

IntArray = NDArray[np.int64]
Fits = Callable[[IntArray, IntArray], NDArray[np.bool_]]
Span = tuple[IntArray, IntArray, FloatArray]  # frames either side and the weight of the right one

DEFAULT_TOLERANCE = 0.002  # of the figure's rest height: 3.6 mm on a 1.8 m figure
STRAIGHT = 1e-9  # a key this near (relative to its curve's size) the line through its neighbours changes nothing
_WINDOW = 64  # frames per greedy window (windows run side by side)
_CHUNK = 4096  # frames per forward-kinematics batch (bounds temporary memory)


@dataclass
class EulerKeys:
    """Rotations keyed as Euler angles: of ``pre[j] @ R @ post[j]`` in ``orders[j]`` (our order names),
    with ``R`` the joint's local rotation (rest @ frame) and angles made continuous over time."""

    orders: list[str]
    pre: FloatArray  # (J, 3, 3)
    post: FloatArray  # (J, 3, 3)


@dataclass
class Reduction:
    """The frames (indices into the clip) that keep a key, per joint, and what was measured.

    A joint's rotation, location and scale curves key the same frames, before
    :func:`curve_keys` drops what each curve does not need.  Lengths are in
    the clip's units.
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


def reduce_keys(clip: Clip, tolerance: float = DEFAULT_TOLERANCE, euler: EulerKeys | None = None,
                tails: FloatArray | None = None) -> Reduction:
    """The frames each joint must keep so no bone head or tail moves more than
    ``tolerance`` (a fraction of :func:`figure_height`) from the clip, at any frame.

    Rotations are modelled as keyed quaternions, or as ``euler`` describes.
    ``tails`` ``(J, 3)`` are the bones' rest tails in file axes (default
    :func:`default_tails`).  A tolerance of 0 or less keeps every frame.
    """
    tails = default_tails(clip) if tails is None else np.asarray(tails, dtype=np.float64)
    height = figure_height(clip, tails)
    motion = _Motion(clip, euler, tails)
    frame_count = clip.frame_count
    # Float32 keys and Blender's float32 evaluation add about this much; keep it in reserve.
    reserve = 1e-6 * (float(np.abs(motion.original).max(initial=0.0)) + height)
    bound = tolerance * height - reserve
    if bound <= 0 or frame_count < 3:
        everything = [np.arange(frame_count) for _ in range(motion.joint_count)]
        keys = frame_count * sum(len(motion.curves(j)) + (2 if motion.scale_row[j] >= 0 else 0)
                                 for j in range(motion.joint_count))
        return Reduction(everything, height, max(tolerance * height, 0.0), 0.0, keys, keys)
    shared = _greedy(_windows(frame_count), motion.shared_fits(bound))
    ends = np.array([0, frame_count - 1])
    frames = [ends if still else shared.copy() for still in motion.still]
    error = motion.errors(shared)  # the same as ``frames``: still joints are constant
    for level in motion.levels_leaves_first():
        frames = motion.relax(level[~motion.still[level]], frames, error, bound)
    frames, worst = motion.verify(frames, bound)
    return _result(motion, frames, height, tolerance * height, worst)


def default_tails(clip: Clip) -> FloatArray:
    """Rest tails ``(J, 3)`` of the bones an import builds, in file axes (up: the file's)."""
    vectors = clip.metadata.get("bone_vectors")
    return rest_bones(clip.skeleton, _up_vector(clip.up_axis),
                      None if vectors is None else np.asarray(vectors, dtype=np.float64))[1]


def bone_points(clip: Clip, tails: FloatArray, frames: list[IntArray] | None = None) -> FloatArray:
    """World heads then tails ``(F, 2J, 3)`` of every bone at every frame (file axes and units).

    ``tails`` are the rest tails in file axes.  With ``frames``, the pose is the one
    played back from keys at those frames only, per joint (quaternion keys:
    components lerped and normalised; translations and scales lerped).
    """
    skeleton = clip.skeleton
    count, everywhere = skeleton.joint_count, np.arange(clip.frame_count)
    rotation = np.empty((count, clip.frame_count, 3, 3))
    translation = np.empty((count, clip.frame_count, 3))
    scale = clip.local_scales()
    scale = np.ones((count, clip.frame_count)) if scale is None else np.ascontiguousarray(scale.T)
    for joint in range(count):
        rotation[joint], translation[joint] = joint_transform(clip, joint)
        if frames is not None:
            keyed = rotations.quaternion_continuity(rotations.matrix_to_quaternion(rotation[joint]))
            rotation[joint] = rotations.quaternion_to_matrix(interpolate(keyed, frames[joint], everywhere))
            translation[joint] = interpolate(translation[joint], frames[joint], everywhere)
            scale[joint] = interpolate(scale[joint], frames[joint], everywhere)
    world, heads, world_scale = compose(skeleton.parents, rotation, translation, scale)
    rest_rotations, rest_heads = rest_pose(skeleton)
    vectors = np.einsum("jba,jb->ja", rest_rotations, tails - rest_heads)
    ends = heads + np.einsum("jfab,jb->jfa", world, vectors) * world_scale[..., None]
    return np.concatenate([heads, ends]).transpose(1, 0, 2)


def figure_height(clip: Clip, tails: FloatArray | None = None) -> float:
    """The figure's height in its rest pose, along the file's up axis (file units).

    Heads and tails (``tails``, default :func:`default_tails`) count.  A rest
    pose whose joints all coincide (HTR files that keep the pose in the frames)
    is replaced by the first frame; a figure lying down (less tall than a
    quarter of its largest extent) is measured along its largest extent.
    """
    skeleton = clip.skeleton
    tails = default_tails(clip) if tails is None else tails
    heads = rest_pose(skeleton)[1]
    points = np.concatenate([heads, tails])
    if clip.frame_count and float(np.ptp(heads, axis=0).max(initial=0.0)) <= 1e-9 * (1 + np.abs(heads).max()):
        points = bone_points(Clip(skeleton, clip.motion[:1], clip.frame_time), tails)[0]
    extents = np.ptp(points, axis=0)
    upright = float(extents @ np.abs(_up_vector(clip.up_axis)))
    largest = float(extents.max(initial=0.0))
    height = upright if upright >= 0.25 * largest else largest
    return height if height > 0 else 1.0


def curve_keys(values: FloatArray, frames: IntArray) -> IntArray:
    """Of the keys at ``frames`` on a curve with ``values`` (one per clip frame), those that matter:
    one key for a constant curve, none inside a straight run (both within :func:`_straightness`)."""
    if len(values) and np.ptp(values) <= _straightness(values[None])[0, 0]:
        return frames[:1]
    return _unbent(values[None], frames)


def _straightness(curves: FloatArray) -> FloatArray:
    """How far ``(k, 1)`` from straight a value of each curve ``(k, F)`` may be and still change
    nothing: :data:`STRAIGHT` of the curve's size (range plus magnitude), or of 1 for tiny curves
    (rounding noise on a constant component must not count as a bend)."""
    size = np.ptp(curves, axis=1) + np.abs(curves).max(axis=1, initial=0.0) + 1.0
    return STRAIGHT * size[:, None]


def _unbent(curves: FloatArray, frames: IntArray) -> IntArray:
    """The keys at ``frames`` left when those inside runs where every curve ``(k, F)`` is straight
    go: dropping them changes none of the curves (beyond :func:`_straightness`)."""
    if len(frames) < 3:
        return frames
    tolerance = _straightness(curves)
    slope = np.diff(curves[:, frames], axis=1) / np.diff(frames)
    keep = np.ones(len(frames), dtype=bool)
    keep[1:-1] = (np.abs(np.diff(slope, axis=1)) * np.diff(frames)[1:] > tolerance).any(axis=0)
    # A run loses its inside keys only if every value in it lies on the chord between its ends.
    ends = np.flatnonzero(keep)
    for run in np.flatnonzero(np.diff(ends) > 1):
        start, stop = frames[ends[run]], frames[ends[run + 1]]
        chord = np.linspace(curves[:, start], curves[:, stop], stop - start + 1, axis=1)
        if (np.abs(curves[:, start:stop + 1] - chord) > tolerance).any():
            keep[ends[run] + 1:ends[run + 1]] = True
    return frames[keep]


def interpolate(values: FloatArray, frames: IntArray, at: IntArray) -> FloatArray:
    """Linear interpolation at frames ``at`` of the keys ``values[frames]`` (held beyond the ends)."""
    left, right, weight = _spans(frames, at)
    share = weight.reshape((-1,) + (1,) * (values.ndim - 1))
    return np.asarray(values[left] * (1.0 - share) + values[right] * share, dtype=np.float64)


def _up_vector(axis: str) -> FloatArray:
    up = np.zeros(3)
    up["XYZ".index(axis.lstrip("-+").upper())] = -1.0 if axis.startswith("-") else 1.0
    return up


def _spans(frames: IntArray, at: IntArray) -> Span:
    """For each frame in ``at``: the kept frames either side and the weight of the right one."""
    if len(frames) == 1:
        same = np.full(len(at), frames[0], dtype=np.int64)
        return same, same, np.zeros(len(at))
    right_index = np.clip(np.searchsorted(frames, at), 1, len(frames) - 1)
    left, right = frames[right_index - 1], frames[right_index]
    weight: FloatArray = np.clip((at - left) / (right - left), 0.0, 1.0)
    return left, right, weight


def _interior(starts: IntArray, ends: IntArray, with_end: bool = False
              ) -> tuple[IntArray, IntArray, FloatArray, IntArray]:
    """The frames strictly inside each segment (and its end, ``with_end``): segment index, frame,
    weight of the end, and the offset of each non-empty segment's first frame (for ``reduceat``)."""
    lengths = np.maximum(ends - starts - (0 if with_end else 1), 0)
    segment = np.repeat(np.arange(len(starts)), lengths)
    offsets = np.cumsum(lengths) - lengths
    frames = starts[segment] + 1 + np.arange(int(lengths.sum())) - offsets[segment]
    weight = (frames - starts[segment]) / (ends - starts)[segment]
    return segment, frames, weight, offsets[lengths > 0]


def _segment_worst(ratio: FloatArray, offsets: IntArray, filled: NDArray[np.bool_]) -> FloatArray:
    """Largest ``ratio`` per segment; ``filled`` marks the segments that have frames (others: 0)."""
    worst = np.zeros(len(filled))
    if len(ratio):
        worst[filled] = np.maximum.reduceat(ratio, offsets)
    return worst


def _windows(frame_count: int, width: int = _WINDOW) -> tuple[IntArray, IntArray]:
    starts = np.arange(0, frame_count - 1, width, dtype=np.int64)
    return starts, np.minimum(starts + width, frame_count - 1)


def _greedy(windows: tuple[IntArray, IntArray], fits: Fits) -> IntArray:
    """Keys over each window ``[start, end]``: from each key, the furthest next key that ``fits``.

    ``fits(a, b)`` says for each segment from ``a`` to ``b`` whether its inside
    frames stay within bounds (one-frame segments have none).  Each step tries
    the last segment's length, doubles it while it fits, then bisects; all
    windows take their steps together.  Returns the sorted keys, window ends included.
    """
    starts, ends = windows
    current = starts.copy()
    length = np.full(len(starts), 2, dtype=np.int64)
    found = [starts, ends]
    while True:
        lanes = np.flatnonzero(current < ends)
        if not len(lanes):
            break
        a, end = current[lanes], ends[lanes]
        good = np.minimum(a + 1, end)
        bad = np.full(len(lanes), -1, dtype=np.int64)
        probe = np.minimum(a + np.maximum(length[lanes], 2), end)
        testing = good < end
        while testing.any():
            which = np.flatnonzero(testing)
            ok = fits(a[which], probe[which])
            good[which[ok]] = probe[which[ok]]
            bad[which[~ok]] = probe[which[~ok]]
            testing[which[~ok]] = False
            testing &= good < end
            probe = np.minimum(a + 2 * (probe - a), end)
        searching = bad > good + 1
        while searching.any():
            which = np.flatnonzero(searching)
            middle = (good[which] + bad[which]) // 2
            ok = fits(a[which], middle)
            good[which[ok]] = middle[ok]
            bad[which[~ok]] = middle[~ok]
            searching = bad > good + 1
        length[lanes] = good - a
        current[lanes] = good
        found.append(good)
    return np.unique(np.concatenate(found))


def _stack(spans: list[Span]) -> Span:
    """Per-joint spans as ``(J, n)`` arrays."""
    return np.array([x[0] for x in spans]), np.array([x[1] for x in spans]), np.array([x[2] for x in spans])


def _cheaper(price: FloatArray, tie: FloatArray, neighbour: IntArray) -> NDArray[np.bool_]:
    """Whether each price is below its neighbour's (none: ``-1``), ties broken by ``tie``."""
    other = np.where(neighbour >= 0, price[neighbour], np.inf)
    return (price < other) | ((price == other) & (tie < np.where(neighbour >= 0, tie[neighbour], 2.0)))


def _lerp(series: FloatArray, rows: IntArray, left: IntArray, right: IntArray, weight: FloatArray) -> FloatArray:
    """``series[:, rows, left]`` towards ``series[:, rows, right]`` by ``weight`` (indices broadcast);
    ``series`` is component-major, ``(k, rows, frames)``.  Gathers by one flat index (faster)."""
    flat = series.reshape(series.shape[0], -1)
    base = rows * series.shape[2]
    return np.take(flat, base + left, axis=1) * (1 - weight) + np.take(flat, base + right, axis=1) * weight


def _multiply(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton products of component-major quaternions ``(4, ...)``."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def _rotate(q: FloatArray, v: FloatArray) -> FloatArray:
    """Vectors ``(3, ...)`` turned by unit quaternions ``(w, u)`` ``(4, ...)``:
    ``v + 2 w cross(u, v) + 2 cross(u, cross(u, v))``."""
    w, u = q[0], q[1:]
    c = np.array([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]])
    cc = np.array([u[1] * c[2] - u[2] * c[1], u[2] * c[0] - u[0] * c[2], u[0] * c[1] - u[1] * c[0]])
    return v + 2 * (w * c + cc)


def _chord(a: FloatArray, b: FloatArray) -> FloatArray:
    """``2 sin(θ/2)`` for the angle ``θ`` between unit quaternions ``(4, ...)``: how far a point
    at distance 1 from the joint moves between the two rotations."""
    d2 = np.minimum(((a - b) ** 2).sum(axis=0), ((a + b) ** 2).sum(axis=0))
    return np.sqrt(d2 * np.maximum(4.0 - d2, 0.0))


def _length(v: FloatArray) -> FloatArray:
    return np.sqrt((v * v).sum(axis=0))


class _Motion:
    """A clip's keyed values and the original positions of its bones' heads and tails.

    Arrays are component-major (``(k, joints, frames)``): quaternion products and
    forward kinematics are then a few dozen elementwise operations per depth of
    the hierarchy.  Points are every head, and the tails that are not also a
    child's head.
    """

    def __init__(self, clip: Clip, euler: EulerKeys | None, tails: FloatArray) -> None:
        skeleton = clip.skeleton
        self.parents = np.array(skeleton.parents, dtype=np.int64)
        self.joint_count = count = skeleton.joint_count
        self.frame_count = frames = clip.frame_count
        self.euler = euler
        if euler is not None:
            self.orders = np.array(euler.orders)
            self.pre = rotations.matrix_to_quaternion(np.linalg.inv(euler.pre)).T  # (4, J)
            self.post = rotations.matrix_to_quaternion(np.linalg.inv(euler.post)).T
        self.values = np.empty((3 if euler else 4, count, frames))
        self.offsets = np.zeros((3, count, 1))
        moving: dict[int, FloatArray] = {}
        scaled: dict[int, FloatArray] = {}
        rests = rotations.matrix_to_quaternion(skeleton.rest_rotations)
        for joint, layout in enumerate(skeleton.channels):
            translation = place_translation(skeleton, joint, clip.joint_translations(joint))
            if euler is None:
                local = clip.joint_quaternions(joint) @ rotations.quaternion_product_matrix(rests[joint])
                keyed = rotations.quaternion_continuity(local)
            else:
                rotation = skeleton.rest_rotations[joint] @ clip.joint_rotations(joint)
                keyed = rotations.euler_continuity(rotations.matrix_to_euler(
                    euler.pre[joint] @ rotation @ euler.post[joint], euler.orders[joint]))
            self.values[:, joint] = keyed.T
            if frames:
                self.offsets[:, joint, 0] = translation[0]
            if any(c in MOVE_CHANNELS for c in layout):
                moving[joint] = translation.T
            scale = clip.channel_values(joint, SCALE_CHANNEL)
            if scale is not None and np.abs(scale - 1.0).max(initial=0.0) > 1e-9:
                scaled[joint] = scale
        # Per joint, its row in ``translations`` / ``scales`` (-1: constant).
        self.moving = np.array(sorted(moving), dtype=np.int64)
        self.translation_row = np.full(count, -1, dtype=np.int64)
        self.translation_row[self.moving] = np.arange(len(self.moving))
        self.translations = np.zeros((3, len(self.moving), frames))
        for row, joint in enumerate(self.moving):
            self.translations[:, row] = moving[joint]
        self.scaled = np.array(sorted(scaled), dtype=np.int64)
        self.scale_row = np.full(count, -1, dtype=np.int64)
        self.scale_row[self.scaled] = np.arange(len(self.scaled))
        self.scales = np.array([scaled[j] for j in self.scaled]).reshape(1, len(self.scaled), frames)
        # Joints whose keyed values never change need their first and last keys only.
        def spread(series: FloatArray) -> FloatArray:
            return (series.max(axis=-1, initial=-np.inf) - series.min(axis=-1, initial=np.inf)).max(axis=0)

        self.still = np.ones(count, dtype=bool)
        if frames:
            self.still = spread(self.values) <= STRAIGHT * (1 + np.abs(self.values).max())
            self.still[self.moving] &= spread(self.translations) == 0
            self.still[self.scaled] &= spread(self.scales) == 0
        rest_rotations, rest_heads = rest_pose(skeleton)
        vectors = np.einsum("jba,jb->ja", rest_rotations, tails - rest_heads)
        self._structure(vectors)
        self.tail_vectors = vectors[self.tail_joints].T[:, :, None]
        self.original = np.empty((3, len(self.point_joint), frames))
        # World scales are kept only for clips that scale joints (1 everywhere otherwise).
        self.world_scale = np.ones((count, frames)) if len(self.scaled) else None
        for start in range(0, frames, _CHUNK):
            at = np.arange(start, min(start + _CHUNK, frames))
            self.original[:, :, at], scale = self.points(at)
            if self.world_scale is not None:
                self.world_scale[:, at] = scale

    def _structure(self, tail_vectors: FloatArray) -> None:
        """Which tails to check, each joint's affected points (rows of ``original``), and the
        joints' depths and heights above their deepest leaf."""
        count = self.joint_count
        size = max(float(np.abs(tail_vectors).max(initial=0.0)), float(np.abs(self.offsets).max(initial=0.0)), 1e-300)
        child_head = np.zeros(count, dtype=bool)
        for joint, parent in enumerate(self.parents):
            if parent >= 0 and self.translation_row[joint] < 0 and \
                    np.abs(tail_vectors[parent] - self.offsets[:, joint, 0]).max() <= 1e-12 * size:
                child_head[parent] = True
        self.tail_joints = np.flatnonzero(~child_head)
        self.point_joint = np.concatenate([np.arange(count), self.tail_joints])
        tail_row = np.full(count, -1, dtype=np.int64)
        tail_row[self.tail_joints] = count + np.arange(len(self.tail_joints))
        subtree: list[list[int]] = [[j] for j in range(count)]
        self.height = np.zeros(count, dtype=np.int64)
        self.depth = np.zeros(count, dtype=np.int64)
        for joint, parent in enumerate(self.parents):
            self.depth[joint] = 0 if parent < 0 else self.depth[parent] + 1
        for joint in range(count - 1, -1, -1):
            parent = self.parents[joint]
            if parent >= 0:
                subtree[parent] += subtree[joint]
                self.height[parent] = max(self.height[parent], self.height[joint] + 1)
        self.affected = []
        for joint in range(count):
            heads = [d for d in subtree[joint] if d != joint or self.translation_row[joint] >= 0]
            ends = [int(tail_row[d]) for d in subtree[joint] if tail_row[d] >= 0]
            self.affected.append(np.array(heads + ends, dtype=np.int64))
        self.by_depth = [np.flatnonzero(self.depth == d) for d in range(int(self.depth.max(initial=0)) + 1)]

    def curves(self, joint: int) -> FloatArray:
        """A joint's keyed curves ``(k, F)``: rotation values, then translation and scale if it has them."""
        parts = [self.values[:, joint]]
        if self.translation_row[joint] >= 0:
            parts.append(self.translations[:, self.translation_row[joint]])
        if self.scale_row[joint] >= 0:
            parts.append(self.scales[:, self.scale_row[joint]])
        return np.concatenate(parts)

    def levels_leaves_first(self) -> list[IntArray]:
        """Joints grouped by height above their deepest leaf; joints of one group never
        contain one another, so their subtrees are disjoint."""
        return [np.flatnonzero(self.height == h) for h in range(int(self.height.max(initial=0)) + 1)]

    def chain(self, joint: int) -> list[int]:
        """The joint and its ancestors."""
        chain = []
        while joint >= 0:
            chain.append(joint)
            joint = int(self.parents[joint])
        return chain

    # -- evaluation ----------------------------------------------------------------------------

    def local(self, joints: IntArray, values: FloatArray) -> FloatArray:
        """Unit local quaternions ``(4, ...)`` from keyed values ``(k, ...)`` of ``joints`` (broadcast):
        keyed quaternions normalised, as Blender does, or Euler angles turned into rotations."""
        if self.euler is None:
            return values / _length(values)
        joints = np.broadcast_to(joints, values.shape[1:])
        out = np.empty((4,) + values.shape[1:])
        orders = self.orders[joints]
        for order in np.unique(orders):
            rows = orders == order
            keyed = rotations.euler_to_quaternion(np.moveaxis(values[:, rows], 0, -1), str(order))
            out[:, rows] = _multiply(_multiply(self.pre[:, joints[rows]], np.moveaxis(keyed, -1, 0)),
                                     self.post[:, joints[rows]])
        return out

    def points(self, at: IntArray, span: Span | None = None) -> tuple[FloatArray, FloatArray]:
        """Points ``(3, P, n)`` and world scales ``(J, n)`` at frames ``at``: every joint interpolated
        over ``span`` (arrays ``(n,)``, the same for all, or ``(J, n)``), or exact if none is given."""
        count, n = self.joint_count, len(at)
        rows = np.arange(count)[:, None]

        def value(series: FloatArray, joints: IntArray) -> FloatArray:
            """``series`` ``(k, rows, F)``, whose rows belong to ``joints``, at the frames: ``(k, rows, n)``."""
            if span is None:
                return series[:, :, at]
            left, right, weight = span
            if left.ndim == 1:  # every joint the same frames: gathers along the frame axis only
                return np.take(series, left, axis=2) * (1 - weight) + np.take(series, right, axis=2) * weight
            return _lerp(series, np.arange(len(joints))[:, None], left[joints], right[joints], weight[joints])

        rotation = self.local(rows, value(self.values, np.arange(count)))
        translation = np.broadcast_to(self.offsets, (3, count, n)).copy()
        if len(self.moving):
            translation[:, self.moving] = value(self.translations, self.moving)
        scale = np.ones((count, n))
        if len(self.scaled):
            scale[self.scaled] = value(self.scales, self.scaled)[0]
        world = np.empty((4, count, n))
        heads = np.empty((3, count, n))
        roots = self.by_depth[0]
        world[:, roots], heads[:, roots] = rotation[:, roots], translation[:, roots]
        for joints in self.by_depth[1:]:
            parents = self.parents[joints]
            world[:, joints] = _multiply(world[:, parents], rotation[:, joints])
            moved = _rotate(world[:, parents], translation[:, joints])
            if len(self.scaled):
                moved *= scale[parents]
                scale[joints] *= scale[parents]
            heads[:, joints] = heads[:, parents] + moved
        ends = self.tail_joints
        tails = heads[:, ends] + _rotate(world[:, ends], self.tail_vectors) * scale[ends]
        return np.concatenate([heads, tails], axis=1), scale

    def distances(self, at: IntArray, span: Span | None = None) -> FloatArray:
        """Distance ``(P, n)`` of every point from the original at frames ``at``."""
        return _length(self.points(at, span)[0] - self.original[:, :, at])

    def errors(self, frames: list[IntArray] | IntArray) -> FloatArray:
        """True distance ``(P, F)`` of every point from the original, joints keyed at ``frames``
        (one array per joint, or one array for all)."""
        out = np.empty((len(self.point_joint), self.frame_count))
        for start in range(0, self.frame_count, _CHUNK):
            at = np.arange(start, min(start + _CHUNK, self.frame_count))
            span = _spans(frames, at) if isinstance(frames, np.ndarray) else _stack([_spans(f, at) for f in frames])
            out[:, at] = self.distances(at, span)
        return out

    # -- the three steps ------------------------------------------------------------------------

    def shared_fits(self, bound: float) -> Fits:
        """Segment test for shared frames: every joint interpolated from ``a`` to ``b``, true FK."""
        def worst(a: IntArray, b: IntArray) -> FloatArray:
            segment, at, weight, offsets = _interior(a, b)
            distance = np.empty(len(at))
            for start in range(0, len(at), _CHUNK):
                part = slice(start, start + _CHUNK)
                span = (a[segment[part]], b[segment[part]], weight[part])
                distance[part] = self.distances(at[part], span).max(axis=0)
            return _segment_worst(distance, offsets, b - a > 1)

        def fits(a: IntArray, b: IntArray) -> NDArray[np.bool_]:
            # The middle frame first (errors peak near it); only segments that pass it are checked whole.
            middle = (a + b) // 2
            ok = self.distances(middle, (a, b, (middle - a) / (b - a))).max(axis=0) <= bound
            ok[ok] = worst(a[ok], b[ok]) <= bound
            return ok
        return fits

    def relax(self, joints: IntArray, frames: list[IntArray], error: FloatArray, bound: float) -> list[IntArray]:
        """Drop keys of ``joints`` (their subtrees are disjoint) while their points stay within what
        they can still take, cheapest key first; ``error`` (a bound on each point's distance,
        ``(P, F)``) grows in place by what the dropped keys may add."""
        everywhere = np.arange(self.frame_count)
        count = len(joints)
        if not count:
            return frames
        left, right, weight = _stack([_spans(frames[joint], everywhere) for joint in joints])
        column = joints[:, None]
        current = self.local(column, _lerp(self.values, column, left, right, weight))
        translation_row, scale_row = self.translation_row[joints], self.scale_row[joints]
        current_translation = (_lerp(self.translations, np.maximum(translation_row, 0)[:, None], left, right, weight)
                               if (translation_row >= 0).any() else None)
        current_scale = (_lerp(self.scales, np.maximum(scale_row, 0)[:, None], left, right, weight)[0]
                         if (scale_row >= 0).any() else None)
        radius = np.zeros((count, self.frame_count))
        room = np.full((count, self.frame_count), bound)
        parent_scale = np.ones((count, self.frame_count))
        for row, joint in enumerate(joints):
            for point in self.affected[joint]:  # one point at a time: no (3, P, F) temporaries
                np.maximum(radius[row], _length(self.original[:, point] - self.original[:, joint]), out=radius[row])
                np.minimum(room[row], bound - error[point], out=room[row])
            if self.world_scale is not None and self.parents[joint] >= 0:
                parent_scale[row] = self.world_scale[self.parents[joint]]
        radius += 2 * bound  # points may already be up to ``bound`` away, and so may the joint
        np.maximum(room, 0.0, out=room)

        def moved(row: IntArray, at: IntArray, a: IntArray, b: IntArray, w: FloatArray) -> FloatArray:
            """How far the points of joint ``joints[row]`` may move at frames ``at`` if it is keyed
            at ``a`` and ``b`` instead of its present keys (turning ``θ`` moves a point ``r`` away by
            at most ``2 r sin(θ/2)``)."""
            joint = joints[row]
            keyed = self.local(joint, _lerp(self.values, joint, a, b, w))
            distance = _chord(keyed, current[:, row, at]) * radius[row, at]
            has = translation_row[row] >= 0
            if current_translation is not None and has.any():
                step = (_lerp(self.translations, translation_row[row[has]], a[has], b[has], w[has])
                        - current_translation[:, row[has], at[has]])
                distance[has] += _length(step) * parent_scale[row[has], at[has]]
            has = scale_row[row] >= 0
            if current_scale is not None and has.any():
                before = current_scale[row[has], at[has]]
                step = _lerp(self.scales, scale_row[row[has]], a[has], b[has], w[has])[0] - before
                distance[has] += np.abs(step) / np.abs(before) * radius[row[has], at[has]]
            return distance

        def share(row: IntArray, at: IntArray, a: IntArray, b: IntArray, w: FloatArray) -> FloatArray:
            use = moved(row, at, a, b, w)
            free = room[row, at]
            return np.where(use <= free, use / np.where(free > 0, free, 1.0), np.inf)

        def cost(row: IntArray, a: IntArray, b: IntArray, key: IntArray) -> FloatArray:
            """Per segment, the largest share of the room its inside frames would use.  The dropped
            key's own frame is tried first: where it overflows, the price is above 1 anyway."""
            price = share(row, key, a, b, (key - a) / (b - a))
            open_ = np.flatnonzero(price <= 1.0)
            segment, at, w, offsets = _interior(a[open_], b[open_])
            price[open_] = _segment_worst(share(row[open_][segment], at, a[open_][segment], b[open_][segment], w),
                                          offsets, b[open_] - a[open_] > 1)
            return price

        # A joint that fits with its first and last keys alone needs no search.
        ends = np.array([0, self.frame_count - 1])
        rows = np.arange(count)
        alone = cost(rows, np.zeros(count, dtype=np.int64), np.full(count, self.frame_count - 1),
                     np.full(count, self.frame_count // 2)) <= 1.0
        present = [ends if alone[row] else _unbent(self.curves(joint), frames[joint])
                   for row, joint in enumerate(joints)]
        # The joints' keys in one list, linked within each joint; drop the keys whose removal costs
        # least among their neighbours', re-pricing only the neighbours of what was dropped.
        keys = np.concatenate(present)
        owner = np.repeat(rows, [len(kept) for kept in present])
        index = np.arange(len(keys))
        first = np.r_[True, owner[1:] != owner[:-1]]
        last = np.r_[owner[1:] != owner[:-1], True]
        before, after = np.where(first, -1, index - 1), np.where(last, -1, index + 1)
        alive = np.ones(len(keys), dtype=bool)
        price = np.full(len(keys), np.inf)
        stale = (before >= 0) & (after >= 0)
        tie = (index * 2654435761 % 4294967296) / 4294967296.0  # a fixed shuffle to break ties
        while True:
            which = np.flatnonzero(stale & alive & (before >= 0) & (after >= 0))
            # Priced in batches of about _CHUNK * 16 frames inside, to bound temporary memory.
            inside = np.cumsum(keys[after[which]] - keys[before[which]])
            for batch in np.split(which, np.searchsorted(inside, np.arange(1, 1 + inside[-1] // (16 * _CHUNK))
                                                         * 16 * _CHUNK) if len(which) else []):
                price[batch] = cost(owner[batch], keys[before[batch]], keys[after[batch]], keys[batch])
            stale[:] = False
            inner = alive & (before >= 0) & (after >= 0)
            own = np.where(inner, price, np.inf)
            drop = np.flatnonzero(inner & (own <= 1.0) & _cheaper(own, tie, before) & _cheaper(own, tie, after))
            if not len(drop):
                break
            alive[drop] = False
            previous, following = before[drop], after[drop]
            after[previous], before[following] = following, previous
            stale[previous] = stale[following] = True
        result = list(frames)
        for row, joint in enumerate(joints):
            kept = keys[alive & (owner == row)]
            if len(kept) == len(frames[joint]):
                continue
            error[self.affected[joint]] += moved(np.full(self.frame_count, row), everywhere,
                                                 *_spans(kept, everywhere))
            result[joint] = kept
        return result

    def verify(self, frames: list[IntArray], bound: float) -> tuple[list[IntArray], float]:
        """Measure with true FK; key every frame where a point is out of bounds on its whole chain."""
        while True:
            error = self.errors(frames)
            worst = float(error.max(initial=0.0))
            if worst <= bound:
                return frames, worst
            extra: list[list[IntArray]] = [[] for _ in range(self.joint_count)]
            for point, row in enumerate(error > bound):
                if row.any():
                    for joint in self.chain(int(self.point_joint[point])):
                        extra[joint].append(np.flatnonzero(row))
            frames = [np.union1d(kept, np.concatenate(more)) if more else kept
                      for kept, more in zip(frames, extra)]


def _result(motion: _Motion, frames: list[IntArray], height: float, tolerance: float, worst: float) -> Reduction:
    """The reduction with its key counts, curve by curve as :func:`curve_keys` leaves them."""
    before = after = 0
    for joint, kept in enumerate(frames):
        curves = list(motion.curves(joint))
        if motion.scale_row[joint] >= 0:
            curves += [curves[-1]] * 2  # one uniform scale on three curves
        before += motion.frame_count * len(curves)
        after += sum(len(curve_keys(curve, kept)) for curve in curves)
    return Reduction(frames, height, tolerance, worst, before, after)
