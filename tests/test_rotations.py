"""Rotation maths against Blender's mathutils, plus continuity and slerp properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mocap_addon.core import rotations as r

ORDERS = r.ORDERS
AXES = r.AXES
RNG = np.random.default_rng(7)
RANDOM_ANGLES = RNG.uniform(-np.pi, np.pi, (40, 3))
GIMBAL_ANGLES = np.array([[a, s * np.pi / 2, c] for a in (-2.0, 0.3, 1.1) for c in (-0.7, 0.0, 2.5) for s in (1, -1)])


@pytest.fixture(scope="module")
def mathutils():
    pytest.importorskip("bpy")
    import mathutils

    return mathutils


def by_axis(angles, order):
    """Angles listed in ``order`` rearranged as (x, y, z), the way mathutils.Euler holds them."""
    return np.asarray(angles)[..., [order.index(axis) for axis in "XYZ"]]


def blender_euler(mathutils, angles, order):
    return mathutils.Euler(by_axis(angles, order), r.blender_order(order))


def reference_matrices(mathutils, angles, order):
    return np.array([np.array(blender_euler(mathutils, a, order).to_matrix()) for a in angles])


@pytest.mark.blender
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("angles", [RANDOM_ANGLES, GIMBAL_ANGLES], ids=["random", "gimbal"])
def test_euler_to_matrix_matches_mathutils(mathutils, order, angles):
    np.testing.assert_allclose(r.euler_to_matrix(angles, order), reference_matrices(mathutils, angles, order),
                               atol=1e-6)


@pytest.mark.blender
@pytest.mark.parametrize("order", ORDERS)
def test_order_means_product_in_listed_order(order):
    angles = np.array([0.3, -0.5, 1.2])
    expected = np.eye(3)
    for axis, angle in zip(order, angles):
        expected = expected @ r.axis_matrices(axis, angle)
    np.testing.assert_allclose(r.euler_to_matrix(angles, order), expected, atol=1e-14)
    assert r.axis_matrices("Z", np.pi / 2) @ np.array([1, 0, 0]) == pytest.approx([0, 1, 0])


@pytest.mark.blender
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("angles", [RANDOM_ANGLES, GIMBAL_ANGLES], ids=["random", "gimbal"])
def test_matrix_to_euler_matches_mathutils(mathutils, order, angles):
    matrices = r.euler_to_matrix(angles, order)
    ours = r.matrix_to_euler(matrices, order)
    np.testing.assert_allclose(r.euler_to_matrix(ours, order), matrices, atol=1e-9)
    theirs = np.array([tuple(mathutils.Matrix(m.tolist()).to_euler(r.blender_order(order))) for m in matrices])
    theirs = theirs[:, [AXES.index(axis) for axis in order]]
    np.testing.assert_allclose(reference_matrices(mathutils, theirs, order), matrices, atol=1e-5)
    # mathutils picks either of the two Euler families; ours keeps the middle angle in [-90°, 90°].
    assert np.all(np.abs(ours[:, 1]) <= np.pi / 2 + 1e-12)


@pytest.mark.blender
@pytest.mark.parametrize("order", ORDERS)
def test_quaternions_match_mathutils(mathutils, order):
    angles = np.concatenate([RANDOM_ANGLES, GIMBAL_ANGLES])
    ours = r.euler_to_quaternion(angles, order)
    theirs = np.array([tuple(blender_euler(mathutils, a, order).to_quaternion()) for a in angles])
    same_sign = np.sign(np.sum(ours * theirs, axis=1))[:, None]
    np.testing.assert_allclose(ours * same_sign, theirs, atol=1e-6)
    matrices = r.quaternion_to_matrix(ours)
    np.testing.assert_allclose(matrices, reference_matrices(mathutils, angles, order), atol=1e-6)
    back = r.matrix_to_quaternion(matrices)
    np.testing.assert_allclose(np.abs(np.sum(back * ours, axis=1)), 1.0, atol=1e-12)
    assert np.all(back[:, 0] >= 0)


@pytest.mark.blender
def test_slerp_matches_mathutils_and_takes_the_short_arc(mathutils):
    a = r.euler_to_quaternion([0.2, 0.4, -0.1], "XYZ")
    b = r.euler_to_quaternion([2.5, -1.0, 0.9], "XYZ")
    for far in (b, -b):  # -b is the same rotation in the other hemisphere
        for t in (0.0, 0.25, 0.5, 0.9, 1.0):
            ours = r.slerp(a, far, t)
            theirs = np.array(tuple(mathutils.Quaternion(a).slerp(mathutils.Quaternion(far), t)))
            assert abs(np.dot(ours, theirs)) == pytest.approx(1.0, abs=1e-6)
    half = r.slerp(a, -b, 0.5)
    angle_to_a = 2 * np.arccos(min(1.0, abs(np.dot(half, a))))
    angle_ab = 2 * np.arccos(min(1.0, abs(np.dot(a, b))))
    assert angle_to_a == pytest.approx(angle_ab / 2, abs=1e-9)


def test_slerp_is_vectorised_and_handles_identical_inputs():
    q = r.euler_to_quaternion(RANDOM_ANGLES, "ZXY")
    out = r.slerp(q, q, np.linspace(0, 1, len(q)))
    np.testing.assert_allclose(np.abs(np.sum(out * q, axis=1)), 1.0, atol=1e-12)


def test_quaternion_continuity_keeps_one_hemisphere():
    q = r.euler_to_quaternion(np.stack([np.linspace(0, 6 * np.pi, 200)] * 3, axis=1), "ZXY")
    q[::3] *= -1
    fixed = r.quaternion_continuity(q)
    assert np.all(np.sum(fixed[1:] * fixed[:-1], axis=1) > 0)
    np.testing.assert_allclose(np.abs(np.sum(fixed * q, axis=1)), 1.0)


def test_knee_example_becomes_a_small_step():
    # The seeds' mixer halved these raw angles and kicked the leg: they are one smooth motion.
    raw = np.radians([[6.75, 82.53, -1.32], [-164.05, 86.21, 170.61]])
    fixed = r.euler_continuity(raw)
    step = np.degrees(np.abs(fixed[1] - fixed[0]))
    assert step.max() < 15.0
    for order in ORDERS:
        np.testing.assert_allclose(r.euler_to_matrix(fixed, order), r.euler_to_matrix(raw, order), atol=1e-12)


@pytest.mark.parametrize("order", ORDERS)
def test_euler_continuity_through_gimbal_and_past_180(order):
    t = np.linspace(0, 1, 400)[:, None]
    smooth = np.hstack([4 * np.pi * t, np.pi / 2 * np.sin(3 * np.pi * t) * 1.3, -3 * np.pi * t + 0.2])
    matrices = r.euler_to_matrix(smooth, order)
    decomposed = r.matrix_to_euler(matrices, order)
    fixed = r.euler_continuity(decomposed)
    np.testing.assert_allclose(r.euler_to_matrix(fixed, order), matrices, atol=1e-9)
    steps = np.abs(np.diff(fixed, axis=0))
    naive = np.abs(np.diff(decomposed, axis=0))
    assert naive.max() > np.pi  # the raw decomposition does flip
    near_gimbal = np.abs(np.cos(decomposed[:, 1])) < 0.05
    calm = ~(near_gimbal[1:] | near_gimbal[:-1])
    assert steps[calm].max() < 0.1


def test_euler_continuity_reference_sets_the_start():
    angles = np.radians([[170.0, 10.0, -170.0]])
    fixed = r.euler_continuity(angles, reference=np.radians([-190.0, 10.0, 190.0]))
    np.testing.assert_allclose(np.degrees(fixed[0]), [-190.0, 10.0, 190.0], atol=1e-9)


angle_triples = arrays(np.float64, (5, 3), elements=st.floats(-20.0, 20.0, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(angles=angle_triples, order=st.sampled_from(ORDERS))
def test_round_trips_keep_the_rotation(angles, order):
    matrices = r.euler_to_matrix(angles, order)
    np.testing.assert_allclose(r.euler_to_matrix(r.matrix_to_euler(matrices, order), order), matrices, atol=1e-7)
    quaternions = r.euler_to_quaternion(angles, order)
    np.testing.assert_allclose(r.quaternion_to_matrix(quaternions), matrices, atol=1e-12)
    np.testing.assert_allclose(r.euler_to_matrix(r.quaternion_to_euler(quaternions, order), order), matrices,
                               atol=1e-8)
    np.testing.assert_allclose(r.quaternion_to_matrix(r.matrix_to_quaternion(matrices)), matrices, atol=1e-12)
    np.testing.assert_allclose(r.euler_to_matrix(r.euler_continuity(angles), order), matrices, atol=1e-8)


@pytest.mark.parametrize("bad", ["", "XX", "XYZW", "ABC"])
def test_bad_orders_are_refused(bad):
    with pytest.raises(ValueError):
        r.check_order(bad)


@pytest.mark.parametrize("order", ["XY", "ZX", "Y", "YZ"])
def test_partial_orders_keep_the_dropped_axes_at_zero(order):
    # A two-channel joint past 90° on its second axis: the three-axis decomposition lands in the
    # family with the dropped angle at 180°; the partial reading must pick the other family.
    rng = np.random.default_rng(5)
    angles = np.cumsum(rng.uniform(-0.2, 0.2, (200, len(order))), axis=0) + np.radians(123.0)
    matrices = r.euler_to_matrix(angles, order)
    full = order + "".join(a for a in "XYZ" if a not in order)
    kept = r.partial_euler(r.matrix_to_euler(matrices, full), len(order))
    np.testing.assert_allclose(kept[:, len(order):], 0.0, atol=1e-9)
    np.testing.assert_allclose(r.euler_to_matrix(kept[:, : len(order)], order), matrices, atol=1e-9)
    assert np.abs(np.diff(kept, axis=0)).max() < 0.5


def nearest_rotations(matrices: np.ndarray) -> np.ndarray:
    """The rotation nearest each matrix (the orthogonal polar factor, from the SVD)."""
    u, _, vt = np.linalg.svd(matrices)
    return u @ vt


@pytest.mark.parametrize("order", ORDERS)
def test_matrix_to_euler_near_gimbal_lock_rebuilds_the_nearest_rotation(order):
    # Matrices read from float32 keys sit within ~1e-7 of a rotation.  With the middle angle 1e-7 to
    # 1e-2 rad from ±90°, taking the first and last angles from elements of size cos(middle)
    # magnifies that error up to 10^7-fold; the angles must still rebuild the nearest rotation.
    rng = np.random.default_rng(11)
    count = 4000
    gap = 10.0 ** rng.uniform(-7, -2, count)
    middle = rng.choice([-1.0, 1.0], count) * (np.pi / 2 - gap)
    angles = np.column_stack([rng.uniform(-np.pi, np.pi, count), middle, rng.uniform(-np.pi, np.pi, count)])
    noisy = r.euler_to_matrix(angles, order) + rng.uniform(-1e-7, 1e-7, (count, 3, 3))
    rebuilt = r.euler_to_matrix(r.matrix_to_euler(noisy, order), order)
    assert np.abs(rebuilt - nearest_rotations(noisy)).max() < 1e-6
    float32 = r.euler_to_matrix(angles, order).astype(np.float32).astype(np.float64)
    rebuilt = r.euler_to_matrix(r.matrix_to_euler(float32, order), order)
    assert np.abs(rebuilt - nearest_rotations(float32)).max() < 1e-6


@pytest.mark.parametrize("order", ORDERS)
def test_exact_rotations_may_skip_the_projection(order):
    """``orthonormal=True`` (products of rotations) gives the same angles, gimbal lock included; on a
    matrix that is not a rotation the projection is what rebuilds the nearest one."""
    rng = np.random.default_rng(12)
    angles = rng.uniform(-np.pi, np.pi, (500, 3))
    angles[::50, 1] = np.pi / 2
    matrices = r.euler_to_matrix(angles, order) @ r.euler_to_matrix(rng.uniform(-3, 3, (500, 3)), "XYZ")
    found = r.matrix_to_euler(matrices, order, orthonormal=True)
    np.testing.assert_allclose(r.euler_to_matrix(found, order), matrices, atol=1e-12)
    np.testing.assert_allclose(found, r.matrix_to_euler(matrices, order), atol=1e-9)
    stretched = matrices @ np.diag([1.0, 1.002, 0.998])  # not a rotation (nor a multiple of one)
    assert np.abs(r.euler_to_matrix(r.matrix_to_euler(stretched, order), order) - matrices).max() < 1e-5
    assert not np.allclose(r.matrix_to_euler(stretched, order, orthonormal=True), found, atol=1e-5)


def test_nearest_rotation_undoes_a_small_stretch():
    rng = np.random.default_rng(8)
    rotation = r.euler_to_matrix(rng.uniform(-3, 3, (50, 3)), "ZXY")
    stretch = rng.normal(0, 1e-4, (50, 3, 3))
    stretched = rotation @ (np.eye(3) + stretch + np.swapaxes(stretch, 1, 2))  # symmetric: float32-like rests
    nearest = r.nearest_rotation(stretched)
    assert np.abs(nearest - rotation).max() < 1e-7  # second order in the stretch
    np.testing.assert_allclose(nearest @ np.swapaxes(nearest, 1, 2), np.broadcast_to(np.eye(3), (50, 3, 3)),
                               atol=1e-12)
    assert np.all(np.linalg.det(r.nearest_rotation(-rotation)) > 0)  # always a proper rotation


@pytest.mark.blender
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("angles", [RANDOM_ANGLES, GIMBAL_ANGLES], ids=["random", "gimbal"])
def test_quaternion_to_euler_matches_mathutils(mathutils, order, angles):
    """Straight from (scaled, signed) quaternions to angles: the rotation mathutils gives for them."""
    quaternions = r.euler_to_quaternion(angles, order) * RNG.choice([-2.0, 0.5, 1.0], (len(angles), 1))
    found = r.quaternion_to_euler(quaternions, order)
    expected = np.array([np.array(mathutils.Quaternion(q).normalized().to_matrix()) for q in quaternions])
    np.testing.assert_allclose(r.euler_to_matrix(found, order), expected, atol=1e-6)  # mathutils is float32
    np.testing.assert_allclose(found, r.matrix_to_euler(r.quaternion_to_matrix(quaternions), order), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(first=arrays(np.float64, (5, 4), elements=st.floats(-1, 1)), second=arrays(np.float64, (5, 4),
       elements=st.floats(-1, 1)), vectors=arrays(np.float64, (5, 3), elements=st.floats(-10, 10)))
def test_quaternion_products_and_turns_are_matrix_products(first, second, vectors):
    norms = np.linalg.norm(first, axis=1) > 0.1
    first, second = first[norms], second[norms]
    second = np.where(np.linalg.norm(second, axis=1, keepdims=True) > 0.1, second, [1.0, 0.0, 0.0, 0.0])
    first, second = first / np.linalg.norm(first, axis=1, keepdims=True), second / np.linalg.norm(second, axis=1,
                                                                                              keepdims=True)
    np.testing.assert_allclose(r.quaternion_to_matrix(r.quaternion_multiply(first, second)),
                               r.quaternion_to_matrix(first) @ r.quaternion_to_matrix(second), atol=1e-12)
    turned = r.quaternion_rotate(first, vectors[norms])
    np.testing.assert_allclose(turned, (r.quaternion_to_matrix(first) @ vectors[norms][..., None])[..., 0],
                               atol=1e-10)
    np.testing.assert_allclose(r.rotate(first.T, vectors[norms].T), turned.T, atol=1e-10)
