"""Decontamination: no kept training skeleton is equivalent to a test skeleton (equivalence checker)."""

from __future__ import annotations

import pytest

pytest.importorskip("scipy")

from mlx26.core.simplify import equivalent  # noqa: E402
from mlx26.core.sr.decontam import TestSetIndex, default_test_index  # noqa: E402
from mlx26.core.sr.sampler import PriorConfig, skeletons  # noqa: E402


def _check(n_train, n_test, seed, use_equiv=True):
    cfg = PriorConfig(max_ops=4, max_vars=2)
    test = list(skeletons(n_test, seed=seed, cfg=cfg))
    train = list(skeletons(n_train, seed=seed + 1, cfg=cfg))
    index = TestSetIndex(test, use_equiv=use_equiv)
    kept = [s for s in train if not index.contaminated(s)]
    dropped = [s for s in train if s not in kept]
    assert dropped, "the seeded stream should contain test skeletons (else the check is vacuous)"
    for s in kept:
        for q in test:
            assert not equivalent(s, q, allow_renaming=True, n_challenges=2), (s, q)
    # and what was dropped really is a test skeleton (up to renaming)
    for s in dropped[:10]:
        assert any(equivalent(s, q, allow_renaming=True) for q in test), s
    return index.stats


@pytest.mark.slow
def test_seeded_stream_keeps_nothing_equivalent_to_a_test_skeleton():
    # with the opt-in checker layer (the hash layers alone miss e.g. x1 + c*(x1 + c) ~ c*x1 + c)
    stats = _check(120, 8, seed=11)
    assert stats["checked"] == 120 and stats["dropped"] > 0


def test_hash_layers_drop_renamed_and_engine_simplifiable_copies():
    test = ["+ * <constant> sin x1 <constant>".split(), "* x1 exp x2".split()]
    index = TestSetIndex(test)
    for s in ["+ * <constant> sin x2 <constant>",  # renamed
              "* x2 exp x1",  # renamed, commuted
              "+ + * <constant> sin x1 <constant> <constant>",  # constants merge
              "* / * x1 x2 x2 exp x2",  # x1*x2/x2 -> x1 (sound cancellation)
              "+ * <constant> sin x1 * 2 <constant>"]:  # constant subtree
        assert index.contaminated(s.split()), s
    for s in ["+ * <constant> cos x1 <constant>", "* x1 exp pow2 x2", "sin x1"]:
        assert not index.contaminated(s.split()), s
    assert index.stats["dropped"] == 5


def test_known_gap_of_the_hash_layers_is_closed_by_the_checker_layer():
    test = ["+ * <constant> x1 <constant>".split()]
    gap = "+ x1 * <constant> + x1 <constant>".split()  # (1 + c)*x1 + c^2: the engine does not expand
    assert equivalent(gap, test[0])
    assert not TestSetIndex(test).contaminated(gap)
    assert TestSetIndex(test, use_equiv=True).contaminated(gap)


def test_benchmark_formulas_and_their_renamings_are_dropped():
    index = default_test_index()
    assert index.n_test == 24
    # Nguyen-10 2*sin(x1)*cos(x2) as a skeleton, with swapped variables
    assert index.contaminated("* * <constant> sin x2 cos x1".split())
    assert index.contaminated("sqrt x1".split())  # Nguyen-8
    assert index.contaminated("pow x2 x1".split())  # Nguyen-11 renamed
    assert not index.contaminated("sin pow2 x1".split())


def test_training_pool_excludes_heldout_and_benchmarks():
    from mlx26.core.sr.train import TrainConfig, build_pool, heldout_problems

    pool, stats = build_pool(TrainConfig(pool=400), PriorConfig())
    held = [p.skeleton for p in heldout_problems()]
    index = default_test_index(held)
    assert stats["pool_kept"] == len(pool) < 400
    assert not any(index.contaminated(s) for s in pool)
    assert stats["data_hash"].startswith("sha256:")
