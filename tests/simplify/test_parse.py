"""Parser and printer: round trips, notation, precedence and clear errors on bad input."""

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
    ("nan", "non-finite"),
    ("x1 + inf", "non-finite"),
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
    (["*", "x1", "nan"], "non-finite"),
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
