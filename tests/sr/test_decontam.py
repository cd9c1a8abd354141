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


def test_seeded_stream_keeps_nothing_equivalent_to_a_test_skeleton():
    # with the checker layer (the hash layers alone miss e.g. x1 + c*(x1 + c) ~ c*x1 + c); the family-dimension
    # filter skipped most pairs, and the checker over every kept x test pair shows it skipped no equivalent one
    stats = _check(120, 8, seed=11)
    assert stats["checked"] == 120 and stats["dropped"] > 0
    assert stats["dropped_equiv"] > 0 and stats["dim_skipped"] > stats["equiv_checks"]


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

    pool, stats = build_pool(TrainConfig(pool=200), PriorConfig())
    held = [p.skeleton for p in heldout_problems()]
    index = default_test_index(held)
    assert stats["pool_kept"] == len(pool) < 200
    assert not any(index.contaminated(s) for s in pool)
    assert stats["data_hash"].startswith("sha256:")


def test_family_dimension_is_invariant_to_reparametrisation_and_counts_redundant_constants():
    from mlx26.core.sr.decontam import family_dim

    assert family_dim("+ x1 * <constant> + x1 <constant>".split()) == 2  # (1 + c)*x1 + c^2
    assert family_dim("+ * <constant> x1 <constant>".split()) == 2
    assert family_dim("* * <constant> <constant> x1".split()) == 1  # c*c*x1: one direction
    assert family_dim("+ + x1 <constant> <constant>".split()) == 1
    assert family_dim("* <constant> exp + x1 <constant>".split()) == 1  # c*exp(x1 + c) = c'*exp(x1)
    assert family_dim("sin x1".split()) == 0
    assert family_dim("log * <constant> - x1 x1".split()) is None  # nowhere defined: never rules a pair out


def test_dimension_filter_skips_only_pairs_the_checker_rejects():
    # pairs of different family dimension are never equivalent, so skipping them loses nothing
    from mlx26.core.sr.decontam import family_dim

    rng_pairs = [("+ x1 1", "+ x1 <constant>"), ("* <constant> + x1 * <constant> x2", "- x1 x2"),
                 ("+ + x3 * <constant> x1 <constant>", "+ + x1 x2 <constant>")]
    for a, b in rng_pairs:
        a, b = a.split(), b.split()
        assert family_dim(a) != family_dim(b)
        assert not equivalent(a, b, allow_renaming=True, n_challenges=2)
    index = TestSetIndex(["+ * <constant> x1 <constant>".split()], use_equiv=True)
    assert not index.contaminated("+ x1 1".split())
    assert index.stats["dim_skipped"] == 1 and index.stats["equiv_checks"] == 0


def test_heldout_set_has_no_affine_skeleton_so_training_keeps_lines():
    # an affine test skeleton would take every affine family of its variables out of the training pool
    from mlx26.core.sr.decontam import affine_in_variables
    from mlx26.core.sr.train import heldout_problems

    held = [p.skeleton for p in heldout_problems()]
    assert len(held) == 100 and not any(affine_in_variables(s) for s in held)
    assert affine_in_variables("* <constant> + * <constant> x3 <constant>".split())
    assert not affine_in_variables("* x1 x2".split()) and not affine_in_variables("* <constant> pow2 x1".split())
    index = default_test_index(held)
    for line in ("+ * <constant> x1 <constant>", "* <constant> x1", "+ + * <constant> x1 * <constant> x2 <constant>"):
        assert not index.contaminated(line.split()), line
