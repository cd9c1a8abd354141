"""dp-mix science core: closed-form costs, reference mechanisms, samplers, compare, cross-check."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from mlx26.core import dp_mix
from mlx26.core.dp_mix import calibrate, compare, sample, secure_rng
from mlx26.core.dp_mix.costs import multi_costs
from mlx26.core.dp_mix.mixture import multi_mixture, quasi_mixture
from mlx26.core.dp_mix.quasi import quasi_costs, quasi_pdf
from mlx26.core.dp_mix.references import (
    laplace_costs,
    staircase_costs,
    staircase_gamma_l1,
    staircase_gamma_l2,
    staircase_optimal_costs,
    truncated_laplace_costs,
    truncated_laplace_params,
)
from scipy.integrate import quad
from scipy.optimize import minimize_scalar


def _moments(pdf, lo, hi, points):
    m0 = quad(pdf, lo, hi, points=points, limit=500)[0]
    m1 = quad(lambda x: abs(x) * pdf(x), lo, hi, points=points, limit=500)[0]
    m2 = quad(lambda x: x * x * pdf(x), lo, hi, points=points, limit=500)[0]
    return m0, m1, m2


@pytest.mark.parametrize(("sigma", "eps", "K"), [(0.36, 1.0, 20), (0.25, 4.0, 6), (1.3, 0.5, 30)])
def test_multi_costs_match_quadrature(sigma, eps, K):
    mix = multi_mixture(sigma, eps, K)
    pts = list(np.arange(-K, K + 1, 1.0))
    m0, m1, m2 = _moments(lambda x: float(mix.pdf(np.array([x]))[0]), -K - 15 * sigma, K + 15 * sigma, pts)
    l1, l2 = multi_costs(sigma, eps, K)
    assert m0 == pytest.approx(1.0, abs=1e-9)
    assert l1 == pytest.approx(m1, rel=1e-7)
    assert l2 == pytest.approx(m2, rel=1e-7)


@pytest.mark.parametrize(("sigma", "eps", "D"), [(3.7, 1.0, 1.0), (0.3, 2.0, 1.0), (0.5, 4.0, 2.0), (0.05, 300.0, 1.0)])
def test_quasi_costs_and_density_match_quadrature(sigma, eps, D):
    pdf = lambda x: float(quasi_pdf(np.array([x]), sigma, eps, D)[0])  # noqa: E731
    lim = D + 15 * sigma
    m0, m1, m2 = _moments(pdf, -lim, lim, [-D, 0.0, D])
    l1, l2 = quasi_costs(sigma, eps, D)
    assert m0 == pytest.approx(1.0, abs=1e-9)
    assert l1 == pytest.approx(m1, rel=1e-7)
    assert l2 == pytest.approx(m2, rel=1e-7)
    # the mixture representation used by the checker is the same density
    mix = quasi_mixture(sigma / D, eps, 1.0)
    xs = np.linspace(-lim, lim, 101) / D
    assert np.allclose(mix.pdf(xs) / D, quasi_pdf(xs * D, sigma, eps, D), rtol=1e-12, atol=0)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 4.0, 10.0, 20.0])
def test_staircase_optimal_gammas_and_closed_forms(eps):
    r1 = minimize_scalar(lambda g: staircase_costs(eps, g)[0], bounds=(0, 1), method="bounded",
                         options={"xatol": 1e-12})
    r2 = minimize_scalar(lambda g: staircase_costs(eps, g)[1], bounds=(0, 1), method="bounded",
                         options={"xatol": 1e-12})
    l1, l2, g1, g2 = staircase_optimal_costs(eps)
    assert l1 <= r1.fun * (1 + 1e-12) and l2 <= r2.fun * (1 + 1e-12)
    assert g1 == pytest.approx(staircase_gamma_l1(eps)) and g2 == pytest.approx(staircase_gamma_l2(eps))
    b = math.exp(-eps)
    # Geng & Viswanath: minimum amplitude D e^{eps/2} / (e^eps - 1); minimum power formula
    assert l1 == pytest.approx(math.exp(eps / 2) / math.expm1(eps), rel=1e-10)
    assert l2 == pytest.approx((2 ** (-2 / 3) * b ** (2 / 3) * (1 + b) ** (2 / 3) + b) / (1 - b) ** 2, rel=1e-10)
    assert l1 <= laplace_costs(eps)[0] and l2 <= laplace_costs(eps)[1]


def test_staircase_costs_match_quadrature():
    eps, g = 1.3, 0.3
    b = math.exp(-eps)
    a = (1 - b) / (2 * (g + (1 - g) * b))

    def f(x):
        k = math.floor(x)
        return a * b**k * (1.0 if x - k < g else b)

    m1 = 2 * sum(quad(lambda x: x * f(x), k, k + g)[0] + quad(lambda x: x * f(x), k + g, k + 1)[0] for k in range(60))
    m2 = 2 * sum(quad(lambda x: x * x * f(x), k, k + g)[0] + quad(lambda x: x * x * f(x), k + g, k + 1)[0]
                 for k in range(60))
    assert staircase_costs(eps, g) == pytest.approx((m1, m2), rel=1e-9)


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-5), (0.5, 1e-3), (700.0, 1e-12)])
def test_truncated_laplace(eps, delta):
    lam, A = truncated_laplace_params(eps, delta)
    a = A / lam
    # delta at shift D: mass of [A - D, A] under B e^{-x/lam} equals delta exactly
    B = 1.0 / (2 * lam * -math.expm1(-a))
    at_d = B * lam * math.exp(-a) * math.expm1(eps) if eps < 700 else delta
    assert at_d == pytest.approx(delta, rel=1e-9)
    l1, l2 = truncated_laplace_costs(eps, delta)
    if eps < 10:
        assert l1 == pytest.approx(2 * quad(lambda x: x * B * math.exp(-x / lam), 0, A)[0], rel=1e-9)
        assert l2 == pytest.approx(2 * quad(lambda x: x * x * B * math.exp(-x / lam), 0, A)[0], rel=1e-9)
    assert l1 <= laplace_costs(eps)[0] and math.isfinite(l2)


# ----- sampling ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("mech", "eps", "delta"), [("multi", 1.0, 1e-5), ("multi", 4.0, 1e-5),
                                                    ("quasi", 1.0, 1e-5), ("quasi", 4.0, 1e-5),
                                                    ("quasi", 20.0, 1e-3), ("gaussian", 1.0, 1e-5)])
def test_monte_carlo_moments(mech, eps, delta):
    m = calibrate(mech, eps, delta, sensitivity=2.0)
    z = sample(m, 200_000, np.random.default_rng(12345))
    n = z.size
    assert abs(z.mean()) < 3 * z.std() / math.sqrt(n)
    a = np.abs(z)
    assert abs(a.mean() - m.l1) < 3 * a.std() / math.sqrt(n)
    q = z * z
    assert abs(q.mean() - m.l2) < 3 * q.std() / math.sqrt(n)


def test_quasi_sampler_distribution():
    m = calibrate("quasi", 4.0, 1e-5)
    z = sample(m, 200_000, np.random.default_rng(7))
    edges = np.linspace(-3, 3, 31)
    counts, _ = np.histogram(z, edges)
    mix = quasi_mixture(m.sigma, 4.0)
    probs = np.exp(mix.log_mass(edges[:-1], edges[1:]))
    expected = probs * z.size
    chi2 = np.sum((counts - expected) ** 2 / np.maximum(expected, 1))
    assert chi2 < 2 * 30  # 30 bins


def test_secure_rng_and_sample_validation():
    a, b = secure_rng(), secure_rng()
    assert isinstance(a, np.random.Generator)
    assert a.random() != b.random()
    m = calibrate("gaussian", 1.0, 1e-5)
    with pytest.raises(ValueError, match="n"):
        sample(m, -1, a)
    with pytest.raises(ValueError, match="rng"):
        sample(m, 3, 42)
    assert sample(m, 0, a).shape == (0,)


# ----- compare ----------------------------------------------------------------------------------
def test_compare_rows():
    rows = {r["mechanism"]: r for r in compare(4.0, 1e-5)}
    assert set(rows) == {"multi", "quasi", "gaussian", "laplace", "truncated-laplace", "staircase"}
    g = rows["gaussian"]
    assert g["l1_ratio_to_gaussian"] == 1.0 and g["gap_closed_l1"] == 0.0
    assert rows["staircase"]["gap_closed_l1"] == pytest.approx(1.0) and rows["staircase"]["gap_closed_l2"] == 1.0
    assert 0.5 < rows["multi"]["gap_closed_l1"] < 1.0
    assert rows["multi"]["l1_ratio_to_gaussian"] < rows["quasi"]["l1_ratio_to_gaussian"] < 1.0
    for r in rows.values():
        assert "eps" not in r and "delta" not in r  # the CLI adds the grid point's own keys


# ----- dp-accounting cross-check -------------------------------------------------------------------
def test_crosscheck_dp_accounting():
    pytest.importorskip("dp_accounting")
    g = calibrate("gaussian", 1.0, 1e-5)
    assert dp_mix.crosscheck_dp_accounting("gaussian", g.sigma, 1.0) == pytest.approx(1e-5, rel=1e-9)
    q = calibrate("quasi", 4.0, 1e-5)
    detail = dp_mix.crosscheck_dp_accounting("quasi", q.sigma, 4.0, detail=True)
    row = detail["rows"][-1]
    assert row["delta_dp_accounting"] == pytest.approx(row["delta_ours"], rel=1e-3)
    m = calibrate("multi", 4.0, 1e-5)
    detail = dp_mix.crosscheck_dp_accounting("multi", m.sigma, 4.0, K=m.K, detail=True)
    for row in detail["rows"]:  # binning and optimistic rounding can only lower delta
        assert row["delta_dp_accounting_optimistic"] <= row["delta_ours"] * (1 + 1e-6)
    assert detail["rows"][0]["rel_diff"] < 0.05
    with pytest.raises(ValueError, match="delta"):
        dp_mix.crosscheck_dp_accounting("multi", m.sigma, 4.0)


def test_crosscheck_without_dp_accounting(monkeypatch):
    for name in [n for n in sys.modules if n == "dp_accounting" or n.startswith("dp_accounting.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    with pytest.raises(ImportError, match="dp-accounting"):
        dp_mix.crosscheck_dp_accounting("gaussian", 3.7, 1.0)
