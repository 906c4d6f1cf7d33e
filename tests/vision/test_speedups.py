"""The site stage's shortcuts compute exactly what the plain expressions did."""

from __future__ import annotations

import numpy as np

from companion.vision.blas import limit_blas_threads
from companion.vision.sites import _lsum, _take
from companion.vision.strips import project_fast


def test_flat_gather_equals_fancy_indexing() -> None:
    rng = np.random.default_rng(3)
    cs = rng.normal(size=(7, 41, 3))
    rows = rng.integers(0, 41, size=(7, 5, 4))
    assert np.array_equal(_take(cs, rows), cs[np.arange(7)[:, None, None], rows])
    assert np.array_equal(_take(cs[..., 0].copy(), rows[:, 0]),
                          cs[np.arange(7)[:, None], rows[:, 0], 0])


def test_lateral_sum_equals_numpy_sum() -> None:
    x = np.random.default_rng(4).normal(size=(6, 50, 3, 3))
    assert np.array_equal(_lsum(x), np.sum(x, axis=2))
    assert np.array_equal(_lsum(x[..., 0]), x[..., 0].sum(-1))


def test_projection_matches_opencv() -> None:
    import cv2

    from companion.vision.geometry import Intrinsics, Pose

    K = np.array([[900.0, 0, 640], [0, 900.0, 360], [0, 0, 1]])
    intr = Intrinsics(K, np.array([0.05, -0.01, 0.0, 0.0, 0.0]), (1280, 720))
    pose = Pose(np.array([2.2, 0.1, 0.05]), np.array([10.0, -20.0, 900.0]), intr)
    pts = np.random.default_rng(5).uniform(-300, 300, size=(500, 3))
    ref = cv2.projectPoints(pts, pose.rvec, pose.tvec, K, intr.dist)[0].reshape(-1, 2)
    assert np.allclose(project_fast(pose, pts), ref, atol=1e-6)


def test_blas_limit_is_harmless() -> None:
    a = np.random.default_rng(6).normal(size=(300, 3))
    before = a @ a.T
    limit_blas_threads(1)
    assert np.array_equal(a @ a.T, before)


def test_the_scorers_single_precision_layer_is_the_double_one_within_a_hair() -> None:
    """The shipped network scorer computes its hidden layer in float32: its scores
    stay within 2e-5 of a point of the float64 expression (decisions are taken at
    margins of tenths of a point), in the layout the site reader hands it."""
    from companion.vision.settings import section
    from companion.vision.sites import FEATURES, Scorer

    scorer = Scorer.from_config(section("sites")["scorer"])
    assert scorer.hidden is not None
    W1, b1, w2 = scorer.hidden
    rng = np.random.default_rng(5)
    # feature-major storage, as _features builds it
    F = rng.normal(size=(len(FEATURES), 9, 31, 7)).transpose(1, 2, 3, 0)
    X = F[..., scorer.inv] / scorer.scale
    exact = X @ scorer.linear + np.tanh(X @ W1 + b1) @ w2
    got = scorer(F)
    assert got.dtype == np.float64 and got.shape == exact.shape
    assert float(np.abs(got - exact).max()) < 2e-5
    assert float(np.abs(got - exact).max()) > 0.0  # single precision, not the same sums
