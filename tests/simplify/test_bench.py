"""Benchmark helper: runs end to end on a few rows; SymPy results are measured in our tokens."""

import pytest
from mlx26.core.simplify import bench, parse_infix, random_expressions, throughput

sympy = pytest.importorskip("sympy")


def test_sympy_round_trip_lengths():
    from mlx26.core.simplify.bench import sympy_prefix, to_sympy

    for s, n in [("x1 - x2", 3), ("x1/x2", 3), ("x1**2", 2), ("sqrt(x1)", 2), ("1/x1", 2), ("-2*x1", 3),
                 ("exp(x1)", 2), ("-x1", 2), ("x1*x2/(x3*x1)", 3)]:
        assert len(sympy_prefix(sympy.simplify(to_sympy(parse_infix(s))))) == n, s


def test_random_expressions_are_seeded():
    a = random_expressions(50, seed=3, max_ops=6)
    assert a == random_expressions(50, seed=3, max_ops=6)
    assert a != random_expressions(50, seed=4, max_ops=6)
    from mlx26.core.simplify.ops import ARITY

    assert all(1 <= sum(t in ARITY for t in e) <= 6 for e in a)


def test_bench_small_run():
    r = bench(n=12, seed=1, timeout=1.0)
    assert r["rows"] + r["undefined"] == 12
    for k in ("median_speed_ratio", "ours_len_ratio", "sympy_len_ratio", "ours_longer_rate",
              "sympy_longer_rate", "sympy_timeouts", "cores"):
        assert k in r
    assert r["ours_longer_rate"] == 0.0
    assert r["ours_len_ratio"] <= 1.0


def test_throughput_runs():
    t = throughput(n=600, seed=0, workers=2)
    assert t["n"] == 600 and t["expr_per_s"] > 0
