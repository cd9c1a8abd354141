"""SmartThinker's per-group reward: the case analysis, the worked example, invariants, baselines."""

import itertools
import random
from fractions import Fraction

import numpy as np
import pytest
from mlx26.core.common.errors import InputError
from mlx26.core.smartthinker import rewards as R

WORKED_L = [100, 120, 300, 400, 90, 500, 250, 350]
WORKED_A = [1, 1, 1, 0, 0, 1, 0, 1]


def test_worked_example_against_an_independent_computation():
    L, a = np.array(WORKED_L, float), np.array(WORKED_A, bool)
    # independent: numpy population variances decide the branch; exact fractions for alpha
    assert np.var(L[a]) > np.var(L)  # sigma_c^2 > sigma_a^2 → l_opt = min L = 90
    pen = [Fraction(x - 90) if c else Fraction(0) for x, c in zip(WORKED_L, WORKED_A, strict=True)]
    acc = Fraction(sum(WORKED_A), len(WORKED_A))
    alpha = (1 - acc) / (max(p for p, c in zip(pen, WORKED_A, strict=True) if c) - sum(pen) / len(pen) + Fraction(1, 10**6))
    res = R.smartthinker(WORKED_L, [bool(c) for c in WORKED_A])
    assert res.l_opt == 90
    assert res.alpha == pytest.approx(float(alpha), rel=1e-12)
    assert res.alpha == pytest.approx(0.00127, abs=5e-6)
    mean = sum(res.rewards) / len(res.rewards)
    assert res.rewards[WORKED_L.index(500)] == pytest.approx(mean, abs=1e-6)
    assert mean == pytest.approx(0.4788, abs=1e-4)
    assert [res.rewards[i] for i, c in enumerate(WORKED_A) if not c] == [0.0, 0.0, 0.0]


def test_all_correct_gives_min_length_and_alpha_zero():
    res = R.smartthinker([80, 60, 120], [True, True, True])
    assert res.l_opt == 60 and res.alpha == 0 and res.rewards == (1.0, 1.0, 1.0)


def test_none_correct_gives_max_length_and_zero_rewards():
    res = R.smartthinker([80, 60, 120], [False, False, False])
    assert res.l_opt == 120 and res.alpha == 0 and res.rewards == (0.0, 0.0, 0.0)


def test_equal_variances_exact_cases():
    # σ_c² = σ_a² exactly, μ_c = μ_a: the "else" side of μ_c < μ_a → min L
    assert R.optimal_length([10, 30, 10, 30], [True, True, False, False]) == 10
    # σ_c² = σ_a² with μ_c ≠ μ_a: search small integer groups for both signs of μ_c − μ_a
    found_lt = found_gt = False
    for lengths in itertools.product(range(1, 9), repeat=4):
        correct = [True, True, False, False]
        vc, va = np.var(lengths[:2]), np.var(lengths)
        if lengths[0] != lengths[1] and abs(vc - va) < 1e-12:
            mc, ma = np.mean(lengths[:2]), np.mean(lengths)
            l_opt = R.optimal_length(list(lengths), correct)
            if mc < ma:
                assert l_opt == max(lengths)
                found_lt = True
            elif mc > ma:
                assert l_opt == min(lengths)
                found_gt = True
    assert found_lt and found_gt


def test_single_correct_response_is_not_penalised():
    res = R.smartthinker([80, 60, 120, 90], [False, True, False, False])
    # σ_c² = 0 < σ_a²: l_opt = (0·μ_a − σ_a²·μ_c)/(0 − σ_a²) = μ_c, the correct length itself
    assert res.l_opt == 60
    assert res.rewards == (0.0, 1.0, 0.0, 0.0)
    res = R.smartthinker([80, 200, 120, 90], [False, True, False, False])  # the longest is the correct one
    assert res.l_opt == 200 and res.rewards[1] == 1.0


def test_correct_variance_above_all_variance_gives_min_length():
    lengths, correct = [10, 100, 50, 55], [True, True, False, False]
    assert np.var([10, 100]) > np.var(lengths)
    res = R.smartthinker(lengths, correct)
    assert res.l_opt == 10 and res.penalties == (0.0, 90.0, 0.0, 0.0)


def test_interior_optimum_is_the_closed_form():
    lengths, correct = [40, 50, 60, 200, 210, 20], [True, True, True, False, False, False]
    L, a = np.array(lengths, float), np.array(correct)
    vc, va, mc, ma = np.var(L[a]), np.var(L), L[a].mean(), L.mean()
    expected = np.clip((vc * ma - va * mc) / (vc - va), L.min(), L.max())
    assert R.optimal_length(lengths, correct) == pytest.approx(expected)
    assert L.min() < expected < L.max()


def _random_group(rng, n):
    return [rng.randint(5, 400) for _ in range(n)], [rng.random() < 0.5 for _ in range(n)]


def test_permutation_invariance_and_group_mean_guarantee():
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(2, 10)
        lengths, correct = _random_group(rng, n)
        res = R.smartthinker(lengths, correct)
        perm = list(range(n))
        rng.shuffle(perm)
        res_p = R.smartthinker([lengths[i] for i in perm], [correct[i] for i in perm])
        assert res_p.l_opt == pytest.approx(res.l_opt) and res_p.alpha == pytest.approx(res.alpha)
        assert res_p.rewards == pytest.approx([res.rewards[i] for i in perm])
        assert all(r == 0.0 for r, c in zip(res.rewards, correct, strict=True) if not c)  # wrong responses: reward 0
        if 0 < sum(correct) < n:
            mean = sum(res.rewards) / n
            worst = min(r for r, c in zip(res.rewards, correct, strict=True) if c)
            assert worst >= mean - 1e-6


@pytest.mark.parametrize("method", ["kimi", "arora", "l1-exact", "l1-max", "thinkprune", "none"])
def test_baselines_are_permutation_invariant(method):
    rng = random.Random(1)
    kw = {"target": 150.0} if method in ("l1-exact", "l1-max", "thinkprune") else {}
    for _ in range(50):
        lengths, correct = _random_group(rng, 6)
        perm = rng.sample(range(6), 6)
        a = R.group_reward(method, lengths, correct, **kw).rewards
        b = R.group_reward(method, [lengths[i] for i in perm], [correct[i] for i in perm], **kw).rewards
        assert b == pytest.approx([a[i] for i in perm])


def test_baseline_formulas():
    k = R.kimi([10, 20, 30], [True, True, False])
    assert k.rewards == pytest.approx((1.5, 1.0, -0.5))  # λ = 0.5, 0, -0.5; wrong: min(0, λ)
    assert R.kimi([10, 10], [True, False]).rewards == (1.0, 0.0)
    ar = R.arora([10, 30, 5], [True, True, False])  # μ_c 20, σ_c 10 → z = ∓1
    sig = 1 / (1 + np.exp(-1.0))
    assert ar.rewards == pytest.approx((1 - 0.2 * (1 - sig), 1 - 0.2 * sig, 0.0))
    assert R.l1_exact([100, 300], [True, True], 200).rewards == pytest.approx((1 - 0.03, 1 - 0.03))
    assert R.l1_max([100, 3000], [True, True], 200).rewards == pytest.approx((0.53, 0.0))
    assert R.thinkprune([100, 300], [True, True], 200).rewards == (1.0, 0.0)
    assert R.accuracy_only([5, 6], [True, False]).rewards == (1.0, 0.0)


def test_score_rows_keeps_order_and_warns_on_single_groups():
    rows = [(1, {"g": "a", "length": 10, "correct": "true"}), (2, {"g": "b", "length": 5, "correct": 1}),
            (3, {"g": "a", "length": 30, "correct": "no"})]
    out = R.score_rows(rows, "smartthinker", group_key="g")
    assert [r["g"] for r in out.rows] == ["a", "b", "a"] and out.groups == 2
    assert out.rows[1]["alpha"] == 0 and out.rows[1]["reward"] == 1.0
    assert len(out.warnings) == 1 and "'b'" in out.warnings[0]


@pytest.mark.parametrize("row, needle", [
    ({"group": 1, "length": 0, "correct": 1}, "row 7: 'length' must be a positive"),
    ({"group": 1, "length": -3, "correct": 1}, "row 7: 'length' must be a positive"),
    ({"group": 1, "length": float("nan"), "correct": 1}, "row 7: 'length' must be a positive"),
    ({"group": 1, "length": "long", "correct": 1}, "row 7: 'length' must be a number"),
    ({"group": 1, "length": 5, "correct": "maybe"}, "row 7: 'correct' must be boolean-like"),
    ({"group": 1, "length": 5, "correct": 2}, "row 7: 'correct' must be boolean-like"),
    ({"length": 5, "correct": 1}, "row 7 has no 'group' field"),
])
def test_bad_rows_name_the_row(row, needle):
    with pytest.raises(InputError, match=needle.replace("(", r"\(")):
        R.score_rows([(7, row)], "smartthinker")


def test_parameter_checks():
    with pytest.raises(InputError, match="needs --target-length"):
        R.check_params("l1-exact", None, None)
    with pytest.raises(InputError, match="Did you mean 'smartthinker'"):
        R.check_params("smartthinkr", None, None)
    with pytest.raises(InputError, match="does not apply"):
        R.check_params("smartthinker", None, 0.1)
