"""Suites (facts), recovery metrics against known truths, and the baselines' expression parsing."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("scipy")

from mlx26.core.sr import evaluate as E  # noqa: E402
from mlx26.core.sr.suites import suite  # noqa: E402


def test_nguyen_formulas_match_published_values():
    from mlx26.core.simplify import parse_infix
    from mlx26.core.simplify.ops import evaluate

    p = {q.name: q for q in suite("nguyen")}
    assert len(p) == 12 and len(suite("nguyen8")) == 8
    x = np.array([[0.5, 0.25]])
    # hand-computed values of Uy et al.'s formulas at (0.5, 0.25)
    expect = {"nguyen-1": 0.875, "nguyen-4": 0.984375, "nguyen-8": np.sqrt(0.5),
              "nguyen-10": 2 * np.sin(0.5) * np.cos(0.25), "nguyen-11": 0.5 ** 0.25,
              "nguyen-12": 0.0625 - 0.125 + 0.03125 - 0.25, "nguyen-7": np.log(1.5) + np.log(1.25)}
    for name, v in expect.items():
        assert evaluate(parse_infix(p[name].expression), x)[0] == pytest.approx(v)


def test_suite_points_lie_in_the_published_ranges():
    probs = E.suite_problems("nguyen", seed=0)
    for (_name, _truth, Xtr, _ytr, Xte, _yte), q in zip(probs, suite("nguyen"), strict=True):
        assert Xtr.shape == (20, q.n_vars) and Xte.shape == (20, q.n_vars)
        assert Xtr.min() >= q.low and Xtr.max() <= q.high
        assert not np.allclose(Xtr, Xte)


def test_metrics_recognise_the_truth_and_reject_a_near_miss():
    from mlx26.core.simplify.ops import evaluate

    (name, truth, Xtr, ytr, Xte, yte) = E.suite_problems("nguyen8")[0]
    m = E.metrics(truth, truth, lambda X: evaluate(truth, X), Xte, yte)
    assert m == {"fvu": 0.0, "numeric": True, "symbolic": True}
    near = "+ + pow3 x1 pow2 x1 * 1.001 x1".split()
    m = E.metrics(truth, near, lambda X: evaluate(near, X), Xte, yte)
    assert not m["numeric"] and not m["symbolic"]


def test_prior_only_on_synthetic_problems_runs_and_summarises():
    probs = E.suite_problems("synthetic", n=4)
    assert all(name.startswith("synthetic-") for name, *_ in probs)
    rows = E.run_ours(probs, None, "prior", 16)
    (s,) = E.summarise(rows)
    assert s["problems"] == 4 and s["method"] == "flash-ansr/prior"


def test_gplearn_program_translation():
    from mlx26.core.simplify.ops import evaluate
    from mlx26.core.sr.baselines import gplearn_prefix

    p = gplearn_prefix("add(mul(X0, X1), div(-0.5, sqrt(X0)))")
    assert p == "+ * x1 x2 / -0.5 sqrt abs x1".split()
    X = np.array([[4.0, 2.0]])
    assert evaluate(p, X)[0] == pytest.approx(8 - 0.25)


@pytest.mark.parametrize("name", ["pyoperon", "gplearn"])
def test_baselines_run_on_a_tiny_budget(name):
    pytest.importorskip({"pyoperon": "pyoperon", "gplearn": "gplearn"}[name])
    probs = E.suite_problems("nguyen8")[:1]
    (row,) = E.run_baseline(probs, name, budget="tiny")
    assert row["method"] == name and row["length"] >= 1 and np.isfinite(row["fvu"])
