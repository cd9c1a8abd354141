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


def test_sympy_test_inputs_are_reextracted_and_simplified_soundly():
    from mlx26.core.simplify.bench import soundness_report, sympy_test_inputs

    rows = sympy_test_inputs(limit=80)
    assert len(rows) == 80  # parsed from the installed sympy package's own test files
    rep = soundness_report(rows)
    assert rep["unsound"] == 0 and rep["longer"] == 0 and rep["rows"] + rep["refused"] == 80


def test_soundness_report_catches_a_wrong_output():
    from mlx26.core.simplify.bench import sound_on_points

    p = parse_infix("sin(x1)**2 + cos(x1)**2")
    assert sound_on_points(p, ["1"])
    assert not sound_on_points(p, ["2"])
    assert sound_on_points(parse_infix("cosh(x1)**2 - sinh(x1)**2"), ["1"])  # decided at 80 digits


def test_decontam_recall_small():
    from mlx26.core.simplify.bench import decontam_recall

    r = decontam_recall(seed=1, per_formula=2, sympy_forms=False)
    assert r["respellings"] == 24 and r["near_misses"] > 50
    assert r["canonical_recall_respellings"] >= 0.95
    assert r["canonical_precision_near_misses"] == 1.0


def test_rules_contribution_counts():
    from mlx26.core.simplify.bench import rules_contribution

    r = rules_contribution(random_expressions(120, seed=2))
    assert r["rows"] > 100 and 0 <= r["mined_rules_shorten"] <= r["rows"]
    assert r["len_ratio_all"] <= r["len_ratio_no_rules"] + 1e-12
