"""Rotation maths vectorised over frames: Euler angles, matrices, quaternions.

Conventions used throughout the core:

* An Euler *order* is written in the order the channels are listed in a file,
  e.g. ``"ZXY"``.  The rotation it denotes is the product ``Rz @ Rx @ Ry``
  (BVH semantics).  Blender's ``mathutils`` names the same rotation ``'YXZ'``:
  its order string is the reverse of ours (see :func:`blender_order`).
* Angles are radians unless a function says otherwise.
* Quaternions are ``(w, x, y, z)``.
* Matrices act on column vectors.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

AXES = "XYZ"
ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
_CYCLIC = ("XYZ", "YZX", "ZXY")
_GIMBAL_EPS = 1e-9
_TAU = 2 * np.pi


def check_order(order: str) -> str:
    """Return ``order`` upper-cased if it is a valid Euler order of 1 to 3 distinct axes."""
    upper = order.upper()
    if not upper or len(upper) > 3 or len(set(upper)) != len(upper) or set(upper) - set(AXES):
        raise ValueError(f"not a rotation order: {order!r}")
    return upper


def listed_within(part: str, order: str) -> bool:
    """Whether the axes of ``part`` appear in ``order`` in the same sequence (``"ZX"`` in ``"ZYX"``):
    then ``part``'s rotation is ``order``'s with the other angles at zero."""
    remaining = iter(order)
    return all(axis in remaining for axis in part)


def blender_order(order: str) -> str:
    """Blender's name (``mathutils.Euler.order``) for our three-axis ``order``."""
    return check_order(order)[::-1]


def axis_matrices(axis: str, angles: ArrayLike) -> FloatArray:
    """Rotation matrices about one axis for an array of angles, shape ``angles.shape + (3, 3)``."""
    theta = np.asarray(angles, dtype=np.float64)
    c, s = np.cos(theta), np.sin(theta)
    out = np.zeros(theta.shape + (3, 3))
    i = AXES.index(axis.upper())
    j, k = (i + 1) % 3, (i + 2) % 3
    out[..., i, i] = 1.0
    out[..., j, j] = c
    out[..., k, k] = c
    out[..., k, j] = s
    out[..., j, k] = -s
    return out


def _mix(x: FloatArray | float, c: FloatArray, y: FloatArray | float, s: FloatArray) -> FloatArray | float:
    """``x * c + y * s``, skipping the terms whose factor is the constant 0."""
    if isinstance(x, float) and x == 0.0:
        return 0.0 if isinstance(y, float) and y == 0.0 else y * s
    if isinstance(y, float) and y == 0.0:
        return x * c
    return x * c + y * s


def euler_to_matrix(angles: ArrayLike, order: str) -> FloatArray:
    """Matrices for Euler ``angles`` (shape ``(..., len(order))``) in ``order``.

    Starting from the identity, each axis rotation multiplies in from the right,
    which only mixes two columns; the columns are kept as separate arrays, so
    the work is a few dozen contiguous elementwise operations.
    """
    order = check_order(order)
    a = np.asarray(angles, dtype=np.float64)
    if a.shape[-1] != len(order):
        raise ValueError(f"{len(order)} angles expected for order {order}, got {a.shape[-1]}")
    columns: list[list[FloatArray | float]] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    for n, axis in enumerate(order):
        angle = np.ascontiguousarray(a[..., n])
        c, s = np.cos(angle), np.sin(angle)
        i = AXES.index(axis)
        j, k = (i + 1) % 3, (i + 2) % 3
        col_j, col_k = columns[j], columns[k]
        columns[j] = [_mix(x, c, y, s) for x, y in zip(col_j, col_k)]
        columns[k] = [_mix(y, c, x, -s) for x, y in zip(col_j, col_k)]
    out = np.empty(a.shape[:-1] + (3, 3))
    for col, column in enumerate(columns):
        for row, value in enumerate(column):
            out[..., row, col] = value
    return out


def _nearest_rotation_elements(matrices: FloatArray, wanted: list[tuple[int, int]],
                               orthonormal: bool = False) -> list[FloatArray]:
    """Elements ``(row, column)`` of the rotations nearest matrices ``(..., 3, 3)`` already close to one.

    One step of the Björck iteration ``X (3I - X^T X) / 2`` converges quadratically
    to the orthogonal polar factor: an error ``e`` becomes about ``1.5 e^2``, so
    matrices within 1e-3 of a rotation (float32 keys: 1e-7) come out orthonormal
    to 1e-6 (1e-14).  Elementwise on contiguous arrays, only the elements asked for;
    ``orthonormal`` matrices (rotations to rounding) are read as they are.
    """
    x = np.ascontiguousarray(matrices.reshape(-1, 9).T).reshape(3, 3, -1)
    if orthonormal:
        return [x[row, col] for row, col in wanted]
    gram = {(a, b): x[0, a] * x[0, b] + x[1, a] * x[1, b] + x[2, a] * x[2, b] for a in range(3) for b in range(a, 3)}
    return [1.5 * x[row, col] - 0.5 * (x[row, 0] * gram[0, col] + x[row, 1] * gram[min(1, col), max(1, col)]
                                       + x[row, 2] * gram[col, 2])
            for row, col in wanted]


def matrix_to_euler(matrices: ArrayLike, order: str, *, orthonormal: bool = False) -> FloatArray:
    """Euler angles ``(..., 3)`` in ``order`` for rotation matrices ``(..., 3, 3)``.

    Each matrix is first replaced by the rotation nearest it (matrices read from
    float32 keys are rotations only to ~1e-7).  The first and middle angles come
    from the last axis' column; the last angle from the residual
    ``R_first^T @ M = R_middle @ R_last``, whose elements are of size 1 whatever
    the middle angle.  So near gimbal lock, where the first angle is
    ill-conditioned (its elements are of size cos(middle)), the last one absorbs
    its error and the angles still rebuild the matrix.  The middle angle lies in
    [-pi/2, pi/2]; at gimbal lock the last angle is 0.  ``orthonormal=True``
    says the matrices are rotations to rounding already (products of rotations),
    which skips that first step.
    """
    order = check_order(order)
    if len(order) != 3:
        raise ValueError("matrix_to_euler needs a three-axis order")
    matrices = np.asarray(matrices, dtype=np.float64)
    i, j, k = (AXES.index(c) for c in order)
    elements = _nearest_rotation_elements(matrices, [(i, k), (j, k), (k, k), (j, i), (j, j), (k, i), (k, j)],
                                          orthonormal)
    return _euler_from_elements(elements, order).reshape(matrices.shape[:-2] + (3,))


def _euler_from_elements(elements: list[FloatArray], order: str) -> FloatArray:
    """Euler angles ``(n, 3)`` from the elements ``(i, k), (j, k), (k, k), (j, i), (j, j), (k, i), (k, j)``
    of rotation matrices (``i, j, k`` the axes of ``order``), as :func:`matrix_to_euler` describes."""
    m_ik, m_jk, m_kk, m_ji, m_jj, m_ki, m_kj = elements
    sign = 1.0 if order in _CYCLIC else -1.0
    cos_middle = np.hypot(m_jk, m_kk)
    middle = np.arctan2(sign * m_ik, cos_middle)
    first = np.arctan2(-sign * m_jk, m_kk)
    locked = cos_middle <= _GIMBAL_EPS
    if np.any(locked):
        first[locked] = np.arctan2(sign * m_kj[locked], m_jj[locked])
    # Row j of the residual R_i(first)^T @ M = R_j(middle) @ R_k(last) holds cos(last) at column j
    # and sign * sin(last) at column i.
    c, s = np.cos(first), sign * np.sin(first)
    last = np.arctan2(sign * (c * m_ji + s * m_ki), c * m_jj + s * m_kj)
    return np.stack([first, middle, last], axis=-1)


def quaternion_to_matrix(quaternions: ArrayLike) -> FloatArray:
    """Matrices for quaternions ``(..., 4)`` (normalised first)."""
    q = np.asarray(quaternions, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    out = np.empty(q.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1 - 2 * (y * y + z * z)
    out[..., 0, 1] = 2 * (x * y - w * z)
    out[..., 0, 2] = 2 * (x * z + w * y)
    out[..., 1, 0] = 2 * (x * y + w * z)
    out[..., 1, 1] = 1 - 2 * (x * x + z * z)
    out[..., 1, 2] = 2 * (y * z - w * x)
    out[..., 2, 0] = 2 * (x * z - w * y)
    out[..., 2, 1] = 2 * (y * z + w * x)
    out[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def nearest_rotation(matrices: ArrayLike) -> FloatArray:
    """The rotations ``(..., 3, 3)`` nearest ``matrices`` (their orthogonal polar factors, by SVD).

    A rotation off by a small symmetric stretch ``R (I + E)``, as Blender's
    float32 rest matrices are, comes back as ``R`` exactly to first order in ``E``.
    """
    u, _, vt = np.linalg.svd(np.asarray(matrices, dtype=np.float64))
    flip = np.where(np.linalg.det(u @ vt) < 0, -1.0, 1.0)
    u[..., :, 2] *= flip[..., None]
    return u @ vt


def matrix_to_quaternion(matrices: ArrayLike) -> FloatArray:
    """Unit quaternions ``(..., 4)`` with ``w >= 0`` for rotation matrices ``(..., 3, 3)``.

    Shepperd's method: the largest of |w|, |x|, |y|, |z| comes from the diagonal,
    the other three from off-diagonal sums divided by it, so no component loses precision.
    """
    m = np.asarray(matrices, dtype=np.float64)
    shape = m.shape[:-2]
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = np.ascontiguousarray(m.reshape(-1, 9).T)
    squares = np.stack([1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22])
    best = np.argmax(squares, axis=0)
    is_w, is_x, is_y = best == 0, best == 1, best == 2
    sx, sy, sz = m21 - m12, m02 - m20, m10 - m01  # 4w * (x, y, z)
    xy, xz, yz = m01 + m10, m02 + m20, m12 + m21  # 4 * (xy, xz, yz)
    lead = np.take_along_axis(squares, best[None], axis=0)[0]
    w = np.where(is_w, lead, np.where(is_x, sx, np.where(is_y, sy, sz)))
    x = np.where(is_w, sx, np.where(is_x, lead, np.where(is_y, xy, xz)))
    y = np.where(is_w, sy, np.where(is_x, xy, np.where(is_y, lead, yz)))
    z = np.where(is_w, sz, np.where(is_x, xz, np.where(is_y, yz, lead)))
    norm = np.sqrt(w * w + x * x + y * y + z * z) * np.where(w < 0, -1.0, 1.0)
    return (np.stack([w, x, y, z], axis=-1) / norm[:, None]).reshape(*shape, 4)


def euler_to_quaternion(angles: ArrayLike, order: str) -> FloatArray:
    """Unit quaternions for Euler ``angles`` (shape ``(..., len(order))``) in ``order``.

    Each axis's half-angle quaternion multiplies in from the right; it has one
    vector component, so the product touches each component once and the
    components start as constants (as in :func:`euler_to_matrix`).
    """
    order = check_order(order)
    a = np.asarray(angles, dtype=np.float64)
    if a.shape[-1] != len(order):
        raise ValueError(f"{len(order)} angles expected for order {order}, got {a.shape[-1]}")
    w: FloatArray | float = 1.0
    vector: list[FloatArray | float] = [0.0, 0.0, 0.0]
    for n, axis in enumerate(order):
        half = 0.5 * np.ascontiguousarray(a[..., n])
        c, s = np.cos(half), np.sin(half)
        k = AXES.index(axis)
        i, j = (k + 1) % 3, (k + 2) % 3
        # (w, v) * (c, s e_k) = (w c - s v_k, c v + s w e_k + s v x e_k), with v x e_k = v_j e_i - v_i e_j
        w, vector[k], vector[i], vector[j] = (_mix(w, c, vector[k], -s), _mix(vector[k], c, w, s),
                                              _mix(vector[i], c, vector[j], s), _mix(vector[j], c, vector[i], -s))
    out = np.empty(a.shape[:-1] + (4,))
    for index, value in enumerate([w, *vector]):
        out[..., index] = value
    return out


def quaternion_to_euler(quaternions: ArrayLike, order: str) -> FloatArray:
    """Euler angles ``(..., 3)`` in ``order`` for quaternions ``(..., 4)`` (normalised first): as
    :func:`matrix_to_euler`, from only the matrix elements it reads, each straight from the quaternion."""
    order = check_order(order)
    if len(order) != 3:
        raise ValueError("quaternion_to_euler needs a three-axis order")
    q = np.asarray(quaternions, dtype=np.float64)
    flat = q.reshape(-1, 4)
    w, x, y, z = (flat[:, n] for n in range(4))
    squares = {0: x * x, 1: y * y, 2: z * z}
    twice = 2.0 / (w * w + squares[0] + squares[1] + squares[2])  # 2 / |q|^2 normalises the quaternion
    products = {(0, 1): x * y, (0, 2): x * z, (1, 2): y * z}
    turns = {0: w * x, 1: w * y, 2: w * z}

    def element(row: int, column: int) -> FloatArray:
        if row == column:
            return 1 - twice * (squares[(row + 1) % 3] + squares[(row + 2) % 3])
        sign = 1.0 if (column - row) % 3 == 2 else -1.0  # R[r, c] = 2 (q_r q_c - / + w q_other)
        return twice * (products[min(row, column), max(row, column)] + sign * turns[3 - row - column])

    i, j, k = (AXES.index(c) for c in order)
    elements = [element(row, column) for row, column in ((i, k), (j, k), (k, k), (j, i), (j, j), (k, i), (k, j))]
    return _euler_from_elements(elements, order).reshape(q.shape[:-1] + (3,))


def hamilton(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton products ``a * b`` of component-major quaternions ``(4, ...)`` (each component a
    contiguous array: the layout forward kinematics and key reduction work in)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def rotate(q: FloatArray, v: FloatArray) -> FloatArray:
    """Component-major vectors ``(3, ...)`` turned by unit quaternions ``(4, ...)``:
    ``v + 2w (u x v) + 2u x (u x v)`` with ``q = (w, u)``."""
    w, u = q[0], q[1:]
    c = np.array([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]])
    cc = np.array([u[1] * c[2] - u[2] * c[1], u[2] * c[0] - u[0] * c[2], u[0] * c[1] - u[1] * c[0]])
    return v + 2 * (w * c + cc)


def quaternion_multiply(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """Hamilton product ``a * b`` (rotation ``b`` first, then ``a``) of quaternions ``(..., 4)``."""
    qa, qb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    batch = np.broadcast_shapes(qa.shape[:-1], qb.shape[:-1])
    qa, qb = np.broadcast_to(qa, batch + (4,)), np.broadcast_to(qb, batch + (4,))
    return np.moveaxis(hamilton(np.moveaxis(qa, -1, 0), np.moveaxis(qb, -1, 0)), 0, -1)


def quaternion_rotate(quaternions: ArrayLike, vectors: ArrayLike) -> FloatArray:
    """Vectors ``(..., 3)`` turned by unit quaternions ``(..., 4)``."""
    q, v = np.asarray(quaternions, dtype=np.float64), np.asarray(vectors, dtype=np.float64)
    batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    q, v = np.broadcast_to(q, batch + (4,)), np.broadcast_to(v, batch + (3,))
    return np.moveaxis(rotate(np.moveaxis(q, -1, 0), np.moveaxis(v, -1, 0)), 0, -1)


def quaternion_conjugate(quaternions: ArrayLike) -> FloatArray:
    """``(w, -x, -y, -z)``: the inverse rotation of unit quaternions."""
    return np.asarray(quaternions, dtype=np.float64) * np.array([1.0, -1.0, -1.0, -1.0])


def quaternion_product_matrix(left: ArrayLike, right: ArrayLike = (1.0, 0.0, 0.0, 0.0)) -> FloatArray:
    """The ``(4, 4)`` matrix ``M`` with ``left * q * right == q @ M`` for quaternions ``q``:
    products with constant quaternions, for a whole array of ``q`` in one matrix product."""
    return quaternion_multiply(quaternion_multiply(left, np.eye(4)), right)


def quaternion_continuity(quaternions: ArrayLike, axis: int = 0) -> FloatArray:
    """Flip signs along ``axis`` (time) so consecutive quaternions lie in one hemisphere."""
    q = np.moveaxis(np.asarray(quaternions, dtype=np.float64), axis, 0)
    if q.shape[0] < 2:
        return np.moveaxis(q.copy(), 0, axis)
    dots = np.sum(q[1:] * q[:-1], axis=-1)
    steps = np.where(dots < 0, -1.0, 1.0)
    signs = np.concatenate([np.ones((1,) + steps.shape[1:]), np.cumprod(steps, axis=0)])
    return np.moveaxis(q * signs[..., None], 0, axis)


def slerp(a: ArrayLike, b: ArrayLike, t: ArrayLike) -> FloatArray:
    """Spherical interpolation from ``a`` to ``b`` at ``t``, always along the short arc.

    The weights are computed once per quaternion (the short arc's sign folded into ``b``'s), so the
    four components see two products and a sum; nearly equal rotations interpolate linearly.
    """
    qa = np.asarray(a, dtype=np.float64)
    qb = np.asarray(b, dtype=np.float64)
    weight = np.asarray(t, dtype=np.float64)
    dot = np.einsum("...i,...i->...", qa, qb)
    sign = np.where(dot < 0, -1.0, 1.0)
    angle = np.arccos(np.minimum(np.abs(dot), 1.0))
    sin_angle = np.sin(angle)
    near = sin_angle < 1e-6
    safe = np.where(near, 1.0, sin_angle)
    wa = np.where(near, 1.0 - weight, np.sin((1.0 - weight) * angle) / safe)
    wb = np.where(near, weight, np.sin(weight * angle) / safe) * sign
    out = wa[..., None] * qa + wb[..., None] * qb
    return out / np.sqrt(np.einsum("...i,...i->...", out, out))[..., None]


def _wrap(angles: FloatArray) -> FloatArray:
    return (angles + np.pi) % _TAU - np.pi


def _other_family(angles: FloatArray) -> FloatArray:
    """The other Euler triple of the same rotation: ``(a + pi, pi - b, c + pi)``."""
    return np.stack([angles[..., 0] + np.pi, np.pi - angles[..., 1], angles[..., 2] + np.pi], axis=-1)


def _off_turn(angles: FloatArray) -> FloatArray:
    """How far each angle is from a whole number of turns (``|_wrap(angles)|``, cheaper)."""
    return np.abs(angles - _TAU * np.rint(angles / _TAU))


def _unwrapped(angles: FloatArray) -> FloatArray:
    """``angles`` with whole turns added along the first axis so no step exceeds pi (in place)."""
    turns = np.rint(np.diff(angles, axis=0) / _TAU)
    angles[1:] -= _TAU * np.cumsum(turns, axis=0)
    return angles


def euler_continuity(angles: ArrayLike, reference: ArrayLike | None = None) -> FloatArray:
    """Make three-axis Euler angles ``(F, ..., 3)`` continuous along the first axis.

    Each frame takes, of the triples that give its rotation, the one nearest the
    frame before: the other family ``(a + pi, pi - b, c + pi)`` and any multiple
    of 2 pi on each angle.  The first frame is made nearest ``reference`` when given.
    Vectorised: the family choice is a cumulative parity, the wrapping a cumulative
    sum of whole turns.
    """
    e = np.asarray(angles, dtype=np.float64)
    if e.shape[0] == 0:
        return e.copy()
    start = e[:1] if reference is None else np.broadcast_to(np.asarray(reference, dtype=np.float64), e[:1].shape)
    previous = np.concatenate([start, e[:-1]])
    a, b, c = (e[..., n] for n in range(3))
    pa, pb, pc = (previous[..., n] for n in range(3))
    same = _off_turn(a - pa) + _off_turn(b - pb) + _off_turn(c - pc)
    other = _off_turn(a + np.pi - pa) + _off_turn(np.pi - b - pb) + _off_turn(c + np.pi - pc)
    toggle = other < same
    if reference is None:
        toggle[0] = False
    parity = (np.cumsum(toggle, axis=0) % 2).astype(bool)
    chosen = np.where(parity[..., None], _other_family(e), e)
    chosen[0] = start[0] + _wrap(chosen[0] - start[0])
    return _unwrapped(chosen)


def partial_euler(angles: ArrayLike, kept: int, reference: ArrayLike | None = None) -> FloatArray:
    """Three-axis angles ``(F, 3)`` for a joint that only has its first ``kept`` axes.

    Of the two families, each frame takes the one whose dropped angles are
    nearest zero (the other would need them at ±180°); then 360° wraps make the
    kept angles continuous, starting nearest ``reference`` when given.
    """
    e = np.asarray(angles, dtype=np.float64)
    flipped = _other_family(e)
    dropped = _off_turn(e[..., kept:]).sum(axis=-1)
    dropped_flipped = _off_turn(flipped[..., kept:]).sum(axis=-1)
    chosen = _wrap(np.where((dropped_flipped < dropped)[..., None], flipped, e))
    if chosen.shape[0] and reference is not None:
        start = np.asarray(reference, dtype=np.float64)
        chosen[0] = start + _wrap(chosen[0] - start)
    return _unwrapped(chosen) if chosen.shape[0] else chosen
