"""AC matching: hand-written identities fire inside larger sums/products, in any operand order."""

import itertools
import json
import random

import numpy as np
import pytest
from mlx26.core.simplify import evaluate, parse_infix, simplify, to_infix
from mlx26.core.simplify.miner import verify_points
from mlx26.core.simplify.ruleset import IDENTITY_RULES

# (identity pieces, extra pieces, a token the result must not contain, expected result pieces)
CASES = [
    (["sin(x1)**2", "cos(x1)**2"], ["x2", "exp(x3)"], "sin", "+"),
    (["3*sin(x1 + x2)**2", "3*cos(x1 + x2)**2"], ["x3", "log(x2)"], "cos", "+"),
    (["cosh(x1)**2", "-sinh(x1)**2"], ["x2*x3", "sin(x2)"], "cosh", "+"),
    (["exp(x1)", "exp(x2)"], ["x3", "sin(x3)", "x2"], None, "*"),
    (["abs(x1)", "abs(x2)"], ["x3", "cos(x3)"], None, "*"),
    (["sinh(x1)", "1/cosh(x1)"], ["x2", "exp(x3)"], "cosh", "*"),
]


def _join(pieces, op):
    if op == "+":
        return " + ".join(f"({p})" for p in pieces)
    return "*".join(f"({p})" for p in pieces)


@pytest.mark.parametrize("core, extra, absent, op", CASES)
def test_identity_inside_larger_expression_any_order(core, extra, absent, op):
    rng = random.Random(7)
    X = np.random.default_rng(3).uniform(-3, 3, size=(200, 3))
    pieces = core + extra
    outs = set()
    orders = list(itertools.permutations(range(len(pieces))))
    for perm in rng.sample(orders, min(12, len(orders))):
        text = _join([pieces[i] for i in perm], op)
        p = parse_infix(text)
        out = simplify(p)
        assert len(out) < len(p), text
        # on moderate points: cosh(x)**2 - sinh(x)**2 cancels catastrophically for large |x|
        y, z = evaluate(p, X), evaluate(out, X)
        fy = np.isfinite(y)
        assert fy.sum() > 50 and np.allclose(y[fy], z[fy], rtol=1e-8, atol=1e-8), (text, to_infix(out))
        if absent:
            assert absent not in out, (text, to_infix(out))
        outs.add(tuple(out))
    assert len(outs) == 1  # the same canonical result for every order


def test_ac_reports_exact_results():
    s = lambda e: to_infix(simplify(parse_infix(e)))  # noqa: E731
    assert s("x2 + cos(x1)**2 + exp(x3) + sin(x1)**2") == "x2 + exp(x3) + 1"
    assert s("x2*exp(x1)*sin(x3)*exp(x2)") == "x2*sin(x3)*exp(x1 + x2)"
    assert s("2*x3*cos(x1)*sin(x1)") == "x3*sin(2*x1)"
    assert s("cosh(x1+x2)**2 - x3 - sinh(x1+x2)**2") == "1 - x3"
    # sound mode keeps log(a) + log(b) apart (log(a*b) is also defined where a, b < 0); lossy joins them
    assert "log" in s("log(x1) + x2 + log(x3)") and s("log(x1) + x2 + log(x3)").count("log") == 2
    out = simplify(parse_infix("log(x1) + x2 + log(x3)"), mode="lossy")
    assert out.count("log") == 1


def test_every_identity_holds_numerically():
    rules = json.loads(IDENTITY_RULES.read_text())["rules"]
    rng = np.random.default_rng(11)
    full = verify_points(rng, 3000, 3, positive=False)
    pos = verify_points(rng, 3000, 3, positive=True)
    empty = np.zeros((3000, 0))
    for r in rules:
        lhs, rhs = r["lhs"].split(), r["rhs"].split()
        X = full if r["sound"] else pos
        w = {f"_{i}": X[:, i] for i in range(3)}
        y = evaluate(lhs, empty, wild_values=w)
        z = evaluate(rhs, empty, wild_values=w)
        # float64 cancellation (cosh(50)**2 - sinh(50)**2): the error scales with the terms' size,
        # measured by the same left side with every subtraction turned into an addition
        scale = np.abs(evaluate(["+" if t == "-" else t for t in lhs], empty, wild_values=w))
        fy = np.isfinite(y)
        assert fy.sum() > 100, r
        assert np.all(np.isfinite(z[fy])), r
        with np.errstate(all="ignore"):
            err = np.abs(y[fy] - z[fy]) - (1e-7 * np.abs(y[fy]) + 1e-9 + 1e-12 * np.nan_to_num(scale[fy], posinf=0))
        assert np.all(err <= 0), r
        if r["sound"]:  # the domain may grow only at float-overflow edges
            assert np.mean(~np.isfinite(y) & np.isfinite(z)) < 0.01, r


def test_identities_introduce_no_second_pass_operator():
    # consumers such as `sr` compile simplified skeletons with the first-pass operator table only
    from mlx26.core.simplify.ops import ARITY, FIRST_PASS_OPERATORS

    for r in json.loads(IDENTITY_RULES.read_text())["rules"]:
        new = {t for t in r["rhs"].split() if t in ARITY} - {t for t in r["lhs"].split() if t in ARITY}
        assert new <= set(FIRST_PASS_OPERATORS), r
