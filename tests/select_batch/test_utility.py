"""The quadratic utility: the issue's formula from its definition, and the two refit solvers."""

from __future__ import annotations

import numpy as np
import pytest
from mlx26.core.select_batch import QuadraticUtility


def test_value_matches_the_definition():
    rng = np.random.default_rng(0)
    G, A = rng.standard_normal((9, 5)), rng.standard_normal((3, 5))
    eta = 0.37
    w = np.abs(rng.standard_normal(9))
    util = QuadraticUtility.from_features(G, A, eta)
    expected = 0.0
    for i in range(9):
        s_i = np.mean([G[i] @ a for a in A])
        expected += w[i] * (eta * s_i + 0.5 * eta**2 * (G[i] @ G[i]))
    expected -= 0.5 * eta**2 * sum(w[i] * w[j] * (G[i] @ G[j]) for i in range(9) for j in range(9))
    assert util.value(w) == pytest.approx(expected, rel=1e-12)
    support = np.array([1, 4, 6])
    assert util.value(w[support], support) == pytest.approx(
        util.value(np.where(np.isin(np.arange(9), support), w, 0.0)), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_nnls_and_fista_agree_and_satisfy_kkt(seed):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((100, 40))
    util = QuadraticUtility.from_features(G, rng.standard_normal((2, 40)), eta=0.2)
    support = np.arange(80)
    a = util.refit(support, method="nnls")
    b = util.refit(support, method="fista")
    assert util.value(b, support) == pytest.approx(util.value(a, support), rel=1e-6)
    grad = util.c[support] - util.Q[np.ix_(support, support)] @ a
    assert np.all(a >= 0)
    assert np.all(np.abs(grad[a > 1e-9]) < 1e-6) and np.all(grad[a <= 1e-9] < 1e-6)


def test_dimension_mismatch_and_bad_eta():
    with pytest.raises(ValueError, match="dimension 4 but the validation features have 3"):
        QuadraticUtility.from_features(np.ones((2, 4)), np.ones((1, 3)))
    with pytest.raises(ValueError, match="η"):
        QuadraticUtility.from_features(np.ones((2, 4)), np.ones((1, 4)), eta=0)
