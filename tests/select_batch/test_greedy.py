"""Greedy selection: textbook NN-OMP equality, monotone utility, exact budgets, baselines, synthetic acceptance."""

from __future__ import annotations

import numpy as np
import pytest
from mlx26.core.select_batch import QuadraticUtility, allocate_budgets, select
from mlx26.core.select_batch.budgets import domain_counts
from mlx26.core.select_batch.synthetic import make_pool
from scipy.optimize import nnls


def _nn_omp(A: np.ndarray, b: np.ndarray, k: int) -> tuple[list[int], np.ndarray]:
    """Textbook non-negative OMP (Bruckstein, Elad & Zibulevsky 2008): pick the column most
    positively correlated with the residual, refit by NNLS on the support, repeat."""
    support: list[int] = []
    x = np.zeros(0)
    residual = b.copy()
    for _ in range(k):
        corr = A.T @ residual
        corr[support] = -np.inf
        j = int(np.argmax(corr))
        if corr[j] <= 0:
            break
        support.append(j)
        x, _ = nnls(A[:, support], b)
        residual = b - A[:, support] @ x
    return support, x


@pytest.mark.parametrize("seed", range(8))
def test_one_partition_deterministic_equals_nn_omp(seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((30, 60))
    b = rng.standard_normal(30)
    k = 6
    ref, x = _nn_omp(A, b, k)
    assert len(ref) == k  # the reference did not stop early on these draws
    util = QuadraticUtility(c=A.T @ b, Q=A.T @ A)
    sel = select(util, ["one"] * 60, k, "partitionsel", {"one": k})
    assert sel.indices == ref
    np.testing.assert_allclose(sel.weights, x, atol=1e-7)
    # F(S) = ½‖b‖² − ½‖b − A_S x‖²
    assert sel.utility == pytest.approx(0.5 * b @ b - 0.5 * np.sum((b - A[:, ref] @ x) ** 2), rel=1e-9)


@pytest.mark.parametrize("randomized", [False, True])
@pytest.mark.parametrize(("seed", "budget"), [(0, 12), (1, 30), (2, 70)])  # 70 > 64: the FISTA refit path
def test_utility_trace_non_decreasing_and_budgets_exact(seed, budget, randomized):
    pool = make_pool(seed, sizes=(70, 50, 30))
    util = QuadraticUtility.from_features(pool.G, pool.anchors, eta=0.5)
    budgets = allocate_budgets(domain_counts(pool.domains), budget)
    sel = select(util, pool.domains, budget, "partitionsel", budgets, randomized=randomized, seed=seed)
    assert len(sel.trace) == budget and len(set(sel.indices)) == budget
    assert np.all(np.diff(sel.trace) >= -1e-6)
    assert sel.counts == budgets
    assert min(sel.weights) >= 0


def test_budgeted_methods_hit_budgets_and_agnostic_ones_may_not():
    pool = make_pool(3)
    util = QuadraticUtility.from_features(pool.G, pool.anchors)
    budgets = allocate_budgets(domain_counts(pool.domains), 15, "equal")
    for method in ("partitionsel", "independent", "random"):
        assert select(util, pool.domains, 15, method, budgets).counts == budgets
    for method in ("gradmatch", "greats"):
        sel = select(util, pool.domains, 15, method)
        assert sum(sel.counts.values()) == 15 and sel.budgets is None


def test_independent_equals_per_domain_runs():
    pool = make_pool(4)
    util = QuadraticUtility.from_features(pool.G, pool.anchors, eta=0.3)
    budgets = allocate_budgets(domain_counts(pool.domains), 12)
    joint = select(util, pool.domains, 12, "independent", budgets)
    labels = np.array(pool.domains)
    expected = set()
    for domain, k in budgets.items():
        idx = np.flatnonzero(labels == domain)
        sub = QuadraticUtility(util.c[idx], util.Q[np.ix_(idx, idx)])
        alone = select(sub, [domain] * len(idx), k, "partitionsel", {domain: k})
        expected |= {int(idx[i]) for i in alone.indices}
    assert set(joint.indices) == expected


def test_greats_matches_brute_force_unit_weight_greedy():
    pool = make_pool(5, sizes=(20, 15, 10))
    util = QuadraticUtility.from_features(pool.G, pool.anchors, eta=0.7)
    chosen: list[int] = []
    for _ in range(7):
        def gain(i, chosen=chosen):
            w = np.zeros(util.n)
            w[chosen] = 1
            before = util.value(w)
            w[i] = 1
            return util.value(w) - before
        chosen.append(max((i for i in range(util.n) if i not in chosen), key=gain))
    assert select(util, pool.domains, 7, "greats").indices == chosen


def test_conflicting_pairs_counted_by_definition():
    pool = make_pool(6)
    util = QuadraticUtility.from_features(pool.G, pool.anchors)
    sel = select(util, pool.domains, 20, "gradmatch")
    G = pool.G[sel.indices]
    brute = sum(1 for i in range(20) for j in range(i + 1, 20) if G[i] @ G[j] < 0)
    assert sel.conflicting_pairs == brute


def test_randomized_is_seeded_and_random_baseline_too():
    pool = make_pool(7)
    util = QuadraticUtility.from_features(pool.G, pool.anchors)
    budgets = allocate_budgets(domain_counts(pool.domains), 10)
    for method, kw in (("partitionsel", {"randomized": True}), ("random", {})):
        a = select(util, pool.domains, 10, method, budgets, seed=1, **kw)
        b = select(util, pool.domains, 10, method, budgets, seed=1, **kw)
        c = [select(util, pool.domains, 10, method, budgets, seed=s, **kw).indices for s in range(2, 8)]
        assert a.indices == b.indices and any(x != a.indices for x in c)


def test_synthetic_acceptance_over_40_seeds():
    """U(domain-agnostic) ≥ U(PartitionSel) ≥ U(independent) on average; PS > independent in ≥ 90 % of seeds."""
    ps, ind, agn = [], [], []
    for seed in range(40):
        pool = make_pool(seed)
        util = QuadraticUtility.from_features(pool.G, pool.anchors, eta=0.1)
        budgets = allocate_budgets(domain_counts(pool.domains), 12)
        ps.append(select(util, pool.domains, 12, "partitionsel", budgets).utility)
        ind.append(select(util, pool.domains, 12, "independent", budgets).utility)
        agn.append(select(util, pool.domains, 12, "gradmatch").utility)
    assert np.mean(agn) >= np.mean(ps) >= np.mean(ind)
    assert np.mean(np.array(ps) > np.array(ind)) >= 0.9


def test_bad_arguments():
    util = QuadraticUtility(c=np.ones(3), Q=np.eye(3))
    with pytest.raises(ValueError, match="Unknown method"):
        select(util, ["a"] * 3, 2, "omp")
    with pytest.raises(ValueError, match="budgets summing to 2"):
        select(util, ["a"] * 3, 2, "partitionsel", {"a": 1})
    with pytest.raises(ValueError, match="between 1 and the pool size"):
        select(util, ["a"] * 3, 4, "gradmatch")
    with pytest.raises(ValueError, match="2 domain labels"):
        select(util, ["a"] * 2, 1, "gradmatch")
