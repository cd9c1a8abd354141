"""Exact values, risk invariants, MC agreement, monotonicity and W1 properties of core/rationality.

Reference values: V*(start) of the deterministic cliff is -13 (13 steps of -1 along the cliff edge,
a closed form); the slippery values and Taxi's mean are the issue's stated reference figures.
"""

import numpy as np
import pytest

pytest.importorskip("gymnasium")
from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.rationality import bounds, mdp, risk  # noqa: E402


@pytest.fixture(scope="module")
def cliff():
    return mdp.from_gym("CliffWalking-v1")


@pytest.mark.parametrize("eps, expected", [(0.0, -13.0), (0.1, -20.708), (0.25, -33.247)])
def test_cliff_v_star(cliff, eps, expected):
    v = mdp.solve(cliff, eps, 100)
    assert v.V[0, 36] == pytest.approx(expected, abs=5e-4)


def test_taxi_mean_v_star():
    taxi = mdp.from_gym("Taxi-v4")
    v = mdp.solve(taxi, 0.0, 200)
    assert abs(taxi.mu0 @ v.V[0] - 7.93) <= 0.01


def test_rational_policy_has_zero_risk_and_any_policy_nonnegative(cliff):
    P, R = mdp.slip(cliff, 0.0)
    v = mdp.backward_induction(P, R, cliff.D, 100)
    assert risk.expected_risk(v, P, cliff.D, cliff.mu0, risk.greedy(v)).risk == pytest.approx(0.0, abs=1e-9)
    rng = np.random.default_rng(0)
    for _ in range(5):
        pi = rng.integers(0, 4, cliff.n_states)
        assert risk.expected_risk(v, P, cliff.D, cliff.mu0, pi).risk >= 0


def test_risk_equals_regret(cliff):
    P, R = mdp.slip(cliff, 0.2)
    v = mdp.backward_induction(P, R, cliff.D, 60)
    pi = risk.greedy(mdp.solve(cliff, 0.0, 60))
    r = risk.expected_risk(v, P, cliff.D, cliff.mu0, pi, R)
    assert r.risk == pytest.approx(cliff.mu0 @ v.V[0] - r.value, rel=1e-9)


def test_ties_are_sets(cliff):
    v = mdp.solve(cliff, 0.0, 100)
    sets = mdp.rational_sets(v)[0]
    tied = np.flatnonzero(sets.sum(axis=1) > 1)
    assert tied.size > 0
    s = tied[0]
    for a in np.flatnonzero(sets[s]):  # any action in the set costs nothing at t=0
        assert risk.discrepancy(v)[0, s, a] == 0.0


@pytest.mark.parametrize("env_id, eps", [("FrozenLake-v1", 0.1), ("CliffWalking-v1", 0.1)])
def test_exact_risk_matches_monte_carlo(env_id, eps):
    m = mdp.from_gym(env_id)
    H = 50
    P, R = mdp.slip(m, eps)
    v = mdp.backward_induction(P, R, m.D, H)
    pi = np.random.default_rng(1).integers(0, m.n_actions, m.n_states)
    exact = risk.expected_risk(v, P, m.D, m.mu0, pi).risk
    s, a = risk.sample_trajectories(P, m.D, m.mu0, pi, 10_000, H, np.random.default_rng(0))
    mc = risk.trajectory_risks(v, s, a).mean()
    assert exact > 0 and abs(mc - exact) / exact < 0.02


def test_cliff_training_optimal_risk_monotone_in_eps_train(cliff):
    """Deployed on the deterministic cliff, the eps_train-optimal policy's risk never decreases with eps_train."""
    P, R = mdp.slip(cliff, 0.0)
    v = mdp.backward_induction(P, R, cliff.D, 100)
    risks = [risk.expected_risk(v, P, cliff.D, cliff.mu0, risk.greedy(mdp.solve(cliff, e, 100))).risk
             for e in (0.0, 0.1, 0.3, 0.5, 0.7)]
    assert all(b >= a - 1e-9 for a, b in zip(risks, risks[1:], strict=False))


@pytest.mark.parametrize("metric", ["grid", "discrete"])
def test_w1_zero_iff_equal_and_linear(cliff, metric):
    C = bounds.ground_metric(cliff, metric)
    assert bounds.w1_slip(cliff, 0.2, 0.2, C).max() == 0.0
    w1 = bounds.w1_slip(cliff, 0.0, 0.1, C)
    assert w1.max() > 0
    np.testing.assert_allclose(bounds.w1_slip(cliff, 0.1, 0.4, C), 3 * w1, rtol=1e-12)


def test_closed_form_w1_agrees_with_pot():
    pytest.importorskip("ot")
    lake = mdp.from_gym("FrozenLake-v1")  # slippery base: neither side a point mass → POT
    C = bounds.ground_metric(lake, "grid")
    P1, _ = mdp.slip(lake, 0.0)
    P2, _ = mdp.slip(lake, 0.3)
    via_pot = bounds.w1_kernels(P1, P2, C, "pot")
    np.testing.assert_allclose(bounds.w1_slip(lake, 0.0, 0.3, C, "pot"), via_pot, atol=1e-9)
    cliff = mdp.from_gym("CliffWalking-v1")  # deterministic base: closed form == POT
    Cc = bounds.ground_metric(cliff, "grid")
    np.testing.assert_allclose(bounds.w1_slip(cliff, 0.0, 0.3, Cc, "closed"),
                               bounds.w1_kernels(*[mdp.slip(cliff, e)[0] for e in (0.0, 0.3)], Cc, "pot"), atol=1e-9)


@pytest.mark.parametrize("eps_train, eps_deploy, mix", [(0.0, 0.1, 0.0), (0.3, 0.05, 0.2), (0.1, 0.5, 0.5)])
def test_extrinsic_bound_holds(cliff, eps_train, eps_deploy, mix):
    from mlx26.core.rationality import sweep

    pi = np.random.default_rng(2).integers(0, 4, cliff.n_states)
    r = sweep.score(cliff, pi, eps_train, eps_deploy, 60, episodes=50, mu_deploy=mdp.init_mixture(cliff, mix))
    assert r["extrinsic_bound"] >= abs(r["extrinsic"]) and r["extrinsic_bound_holds"]
    assert r["gap"] == pytest.approx(r["extrinsic"] + r["intrinsic"])


def test_bad_inputs(cliff):
    with pytest.raises(InputError, match="in \\[0, 1\\]"):
        mdp.slip(cliff, 1.5)
    with pytest.raises(InputError, match="positive"):
        mdp.backward_induction(cliff.P, cliff.R, cliff.D, 0)
    with pytest.raises(InputError, match="transition table"):
        mdp.from_gym("CartPole-v1")
    with pytest.raises(InputError, match="Did you mean"):
        mdp.from_gym("CliffWalkin-v1")


def test_one_seed_reads_no_direction():
    from mlx26.core.rationality.sweep import _direction

    assert _direction(-5.0, -5.0, 1) == "inconclusive (n < 2)"
    assert _direction(-5.0, -1.0, 5) == "reduces" and _direction(1.0, 2.0, 5) == "increases"
    assert _direction(-1.0, 2.0, 5) == "inconclusive"
