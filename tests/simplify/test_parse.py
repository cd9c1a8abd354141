"""Parser and printer: round trips, notation, precedence and clear errors on bad input."""

import numpy as np
import pytest
from mlx26.core.simplify import ExpressionError, parse_infix, parse_prefix, simplify, to_infix

ROUND_TRIP = [
    "x1*x2/x2", "sin(x1)**2", "x1 − x1", "-x1**2", "2^3^x1", "1.5e-3*x1 + 2E+2", "x3*sin(c+1)/(x3*x3)",
    "-(x1+x2)*x3", "x1*(1/x2)", "x1-(-2)", "pow(x1, x2)", "exp(-x1)/(x1-x2)", "x1 + (x2 + x3)",
    "(-x1)**2", "1/x1**2", "x1**-1", "x1 - (x2 - x3)", "x1/(x2/x3)", "x1*(x2*x3)", "(x1**x2)**x3",
    "sqrt(abs(x1)) + asin(tanh(x2))", "<constant>*x1 + pi - e", "x1**0.5 + x1**3", "-(-x1)", "x1 * -x2",
]


@pytest.mark.parametrize("s", ROUND_TRIP)
def test_round_trip(s):
    p1 = parse_infix(s)
    i1 = to_infix(p1)
    p2 = parse_infix(i1)
    assert p2 == p1
    assert to_infix(p2) == i1
    assert parse_prefix(" ".join(p1)) == p1


def test_notation_variants():
    assert parse_infix("x1 − x2") == parse_infix("x1 - x2") == ["-", "x1", "x2"]
    assert parse_infix("x1^x2") == parse_infix("x1**x2") == ["pow", "x1", "x2"]
    assert parse_infix("1.5e-3") == ["0.0015"]
    assert parse_infix("2.5E2*x1") == ["*", "250", "x1"]
    assert parse_infix("ln(x1)") == ["log", "x1"]
    assert parse_infix("c*x1") == parse_infix("<constant>*x1") == ["*", "<constant>", "x1"]


def test_precedence_and_unary_minus():
    assert parse_infix("-x1**2") == ["neg", "pow2", "x1"]
    assert parse_infix("-x1*x2") == ["*", "neg", "x1", "x2"]
    assert parse_infix("2**3**x1") == ["pow", "2", "pow", "3", "x1"]  # right associative
    assert parse_infix("x1 - x2 - x3") == ["-", "-", "x1", "x2", "x3"]  # left associative
    assert parse_infix("x1 + x2*x3") == ["+", "x1", "*", "x2", "x3"]
    assert parse_infix("x1**-x2") == ["pow", "x1", "neg", "x2"]
    assert parse_infix("-2") == ["-2"]
    assert parse_infix("-2**2") == ["neg", "pow2", "2"]


@pytest.mark.parametrize("bad, msg", [
    ("(x1 + x2", "unbalanced parentheses"),
    ("x1 + x2)", "unbalanced parentheses"),
    ("foo(x1)", "unknown function"),
    ("", "empty expression"),
    ("   ", "empty expression"),
    ("1e999", "not finite"),
    ("float('inf'", "unexpected character"),
    ("x1 +", "ends with an operator"),
    ("x1 x2", "missing operator"),
    ("sin x1", "must be followed by"),
    ("y + 1", "unknown symbol"),
    ("x1 $ x2", "unexpected character"),
    ("pow(x1)", "takes 2 argument"),
])
def test_bad_infix(bad, msg):
    with pytest.raises(ExpressionError, match=msg):
        parse_infix(bad)


@pytest.mark.parametrize("bad, msg", [
    (["+", "x1"], "wrong prefix arity"),
    (["x1", "x2"], "wrong prefix arity"),
    (["sin"], "wrong prefix arity"),
    ([], "empty expression"),
    (["+", "x1", "foo"], "unknown token"),
    (["*", "x1", "1e999"], "not finite"),
])
def test_bad_prefix(bad, msg):
    with pytest.raises(ExpressionError, match=msg):
        parse_prefix(bad)


def test_expression_error_is_value_error():
    assert issubclass(ExpressionError, ValueError)


def test_deep_input_is_clear_error_not_recursion():
    deep = "sin(" * 1001 + "x1" + ")" * 1001
    with pytest.raises(ExpressionError, match="too deep"):
        parse_infix(deep)
    with pytest.raises(ExpressionError, match="too deep"):
        parse_prefix(["neg"] * 1001 + ["x1"])
    with pytest.raises(ExpressionError, match="too deep"):
        parse_infix("-" * 1001 + "x1")
    # redundant parentheses do not deepen the tree
    assert parse_infix("(" * 5000 + "x1" + ")" * 5000) == ["x1"]


def test_depth_1000_is_handled():
    p = parse_infix("sin(" * 999 + "x1" + ")" * 999)
    assert len(p) == 1000
    assert len(to_infix(p)) > 1000
    assert simplify(["neg"] * 1000 + ["x1"]) == ["x1"]
    assert simplify(["+"] * 999 + ["x1"] * 1000) == ["*", "1000", "x1"]
    assert len(simplify(p)) == 1000


def test_second_pass_vocabulary():
    assert parse_infix("asinh(x1) + arccosh(x2) - atanh(x3)") == ["-", "+", "asinh", "x1", "acosh", "x2",
                                                                  "atanh", "x3"]
    # written odd roots are real roots on all reals (SimpliPy's pow1_3 / pow1_5)
    assert parse_infix("x1**(1/3)") == parse_infix("cbrt(x1)") == ["pow1_3", "x1"]
    assert parse_infix("x1**(1/5)") == ["pow1_5", "x1"] and parse_infix("x1**(1/4)") == ["pow1_4", "x1"]
    from mlx26.core.simplify import evaluate

    v = evaluate(["pow1_3", "x1"], np.array([[-8.0], [27.0]]))
    # to within an ulp: numpy's cbrt takes a different (SIMD or scalar libm) path by CPU and array layout, and
    # one of them returns 3.0000000000000004 for 27 on an AVX2-only machine
    np.testing.assert_allclose(v, [-2.0, 3.0], rtol=1e-15, atol=0)
    assert evaluate(["pow1_5", "x1"], np.array([[-32.0]]))[0] == pytest.approx(-2.0)
    assert np.isnan(evaluate(["pow1_4", "x1"], np.array([[-16.0]]))[0])
    for k in range(-10, 11):
        assert parse_infix(f"{k}*x1") in (["*", str(k), "x1"], ["*", "0", "x1"])
    assert parse_prefix("mult2 div3 pow4 x1") == ["mult2", "div3", "pow4", "x1"]
    assert evaluate(["mult3", "div2", "pow5", "x1"], np.array([[2.0]]))[0] == pytest.approx(48.0)


def test_nonfinite_literals():
    assert parse_infix("float('inf')*x1") == ["*", "inf", "x1"]
    assert parse_infix("-inf") == ["-inf"] and parse_infix("-(-inf)") == ["inf"]
    assert parse_prefix(["*", "x1", "float('nan')"]) == ["*", "x1", "nan"]
    assert parse_prefix(["+", "x1", "Infinity"]) == ["+", "x1", "inf"]
    for expr, want in [("1/inf + x1", ["x1"]), ("x1 + nan", ["nan"]), ("inf - inf", ["nan"]),
                       ("exp(-inf)*x1", ["0"]), ("x1*inf", ["nan"]), ("atan(inf)", ["1.5707963267948966"])]:
        assert simplify(parse_infix(expr)) == want, expr
    assert parse_infix(to_infix(["+", "x1", "-inf"])) == ["+", "x1", "-inf"]
