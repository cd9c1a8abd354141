"""Skeleton prior, constant folding, point sampling, and the numpy compiler against the engine's evaluate."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("scipy")

from mlx26.core.simplify import simplify  # noqa: E402
from mlx26.core.simplify.ops import ARITY, evaluate, is_var  # noqa: E402
from mlx26.core.sr import sampler  # noqa: E402
from mlx26.core.sr.expr import compile_skeleton, n_constants  # noqa: E402


def _n_ops(prefix):
    return sum(1 for t in prefix if t in ARITY)


def test_raw_skeletons_are_complete_trees_with_the_drawn_operator_count():
    rng = random.Random(0)
    cfg = sampler.PriorConfig(max_ops=5)
    counts = Counter()
    for _ in range(2000):
        s = sampler.random_skeleton(rng, cfg)
        pending = 1
        for t in s:
            pending += ARITY.get(t, 0) - 1
            assert pending >= 0 or t is s[-1]
        assert pending == 0
        counts[_n_ops(s)] += 1
    # n uniform in 1..max_ops: each count near 400 (binomial sd ≈ 18)
    assert set(counts) == {1, 2, 3, 4, 5}
    assert all(abs(c - 400) < 100 for c in counts.values()), counts


def test_tree_shapes_follow_lample_charton_counts():
    # With one operator the prior is p1 / (p1 + p2) unary — the exact D(e, n) recursion value.
    cfg = sampler.PriorConfig(max_ops=1)
    una = sum(w for o, w in sampler.spec.OPERATOR_WEIGHTS.items() if ARITY[o] == 1)
    tot = sum(sampler.spec.OPERATOR_WEIGHTS.values())
    rng = random.Random(1)
    frac = np.mean([ARITY[sampler.random_skeleton(rng, cfg)[0]] == 1 for _ in range(4000)])
    p1 = una / tot
    assert abs(frac - p1) < 4 * math.sqrt(p1 * (1 - p1) / 4000)
    D = sampler._counts(3, 0.4, 0.6)
    assert D[1][1] == pytest.approx(0.4 + 0.6)  # one op on one slot: unary or binary, leaves fixed
    assert D[2][0] == 1.0 and D[0][2] == 0.0


def test_skeletons_are_simplified_accepted_and_deterministic():
    a = list(sampler.skeletons(200, seed=3))
    assert a == list(sampler.skeletons(200, seed=3))
    assert a != list(sampler.skeletons(200, seed=4))
    cfg = sampler.PriorConfig()
    for s in a:
        assert sampler.accept(s, cfg)
        assert any(is_var(t) for t in s)
        assert simplify(s, mode="sound", mask_constants=True) == s  # a fixed point of the engine


def test_constant_subtrees_fold_to_one_placeholder():
    f = sampler.fold_constant_subtrees
    assert f("/ x1 pow3 <constant>".split()) == "/ x1 <constant>".split()
    assert f("+ x1 * 2 <constant>".split()) == "+ x1 <constant>".split()
    assert f("+ x1 sin x2".split()) == "+ x1 sin x2".split()
    assert f("* 2 x1".split()) == "* 2 x1".split()  # literal-only subtrees stay (no placeholder in them)


def test_points_pass_the_domain_check_and_match_the_engine():
    rng = np.random.default_rng(0)
    for s in sampler.skeletons(60, seed=5):
        p = sampler.sample_points(s, rng, 32)
        if p is None:
            continue
        assert p.X.shape == (32, sampler.n_vars_of(s)) and np.all(np.isfinite(p.y))
        assert np.all((p.X >= p.low) & (p.X <= p.high))
        ref = evaluate(s, p.X, constants=dict(enumerate(p.constants)))
        np.testing.assert_allclose(p.y, ref, rtol=1e-12, atol=1e-12)


def test_log_skeleton_never_yields_points_outside_its_domain():
    rng = np.random.default_rng(1)
    p = sampler.sample_points(["log", "x1"], rng, 40, tries=50)
    assert p is not None and np.all(p.X > 0)


def test_compiled_skeletons_equal_the_engine_evaluator():
    rng = np.random.default_rng(2)
    for s in [*sampler.skeletons(300, seed=6), "pow x1 x2".split(), "- neg x1 inv x2".split()]:
        X = rng.uniform(-3, 3, size=(40, 3))
        c = rng.normal(size=n_constants(s)) * 2
        a = evaluate(s, X, constants=dict(enumerate(c)))
        b = compile_skeleton(s)(X, c)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12)


def test_operator_validation():
    from mlx26.core.common.errors import InputError

    assert sampler.check_operators(["+", "sin", "+"]) == ("+", "sin")
    with pytest.raises(InputError, match="Unknown operator 'sinh'"):
        sampler.check_operators(["+", "sinh"])
    with pytest.raises(InputError, match="binary"):
        sampler.check_operators(["sin"])
