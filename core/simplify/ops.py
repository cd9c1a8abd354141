"""Operator table, token classes and numeric evaluation for the expression simplifier.

Reconstructs the operator vocabulary of Saegert & Köthe, "Breaking the Simplification
Bottleneck in Amortized Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885): prefix
token lists over variables ``x1..xn``, the skeleton placeholder ``<constant>``, numeric
literals and a fixed table of unary/binary operators.  The table below is ours: each entry
gives the arity, a vectorised numpy realisation (used by the evaluator, the miner and the
equivalence checker) and a scalar realisation (used by constant folding).  Extending the
vocabulary means adding one ``Op`` to ``OPERATORS``.

Second pass (issue 35): SimpliPy's wider vocabulary as we reconstruct it — ``asinh``,
``acosh``, ``atanh``, real odd roots ``pow1_3``/``pow1_5`` (defined on all reals), ``pow1_4``,
``pow4``/``pow5``, the scalings ``mult2..mult5``/``div2..div5`` and the literals ``inf``,
``-inf``, ``nan``; ``FIRST_PASS_OPERATORS`` is the table the shipped rules were mined over.

Evaluation semantics ("undefined"): any non-finite intermediate (nan from a domain error,
±inf from a pole or an overflow) makes the value at that point undefined (nan), and an
undefined operand always yields an undefined result (also for ``pow(nan, 0)``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mlx26.core.simplify.errors import ExpressionError

CONSTANT = "<constant>"
NAMED_LITERALS = {"pi": math.pi, "e": math.e}
_VAR_RE = re.compile(r"^x[1-9][0-9]*$")
_WILD_RE = re.compile(r"^_[0-9]+$")
_NUM_RE = re.compile(r"^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def _s_inv(a: float) -> float:
    return 1.0 / a


def _s_pow(a: float, b: float) -> float:
    return math.pow(a, b)


def _s_sqrt(a: float) -> float:
    return math.sqrt(a)


def _s_log(a: float) -> float:
    return math.log(a)


def _np_oddroot(k: int) -> Callable:
    """Real k-th root for odd k: defined on all reals (``(-8)**(1/3) = -2``), like ``np.cbrt``."""
    if k == 3:
        return np.cbrt

    def f(a):
        a = np.asarray(a, dtype=float)
        return np.sign(a) * np.abs(a) ** (1.0 / k)

    return f


def _s_oddroot(k: int) -> Callable:
    def f(a: float) -> float:
        r = abs(a) ** (1.0 / k)
        if k == 3:
            r = float(np.cbrt(a))
            return r
        return math.copysign(r, a)

    return f


def _s_root4(a: float) -> float:
    return math.sqrt(math.sqrt(a))


def _np_root4(a):
    return np.sqrt(np.sqrt(a))


def _scaling(k: int, divide: bool) -> tuple[Callable, Callable]:
    """numpy and scalar realisations of SimpliPy's ``multK`` / ``divK`` tokens."""
    if divide:
        return (lambda a: np.divide(a, float(k))), (lambda a: a / k)
    return (lambda a: np.multiply(a, float(k))), (lambda a: a * k)


def _s_acosh(a: float) -> float:
    return math.acosh(a)


def _s_atanh(a: float) -> float:
    return math.atanh(a)


@dataclass(frozen=True)
class Op:
    """One operator: token name, arity, numpy and scalar realisations, printing info."""

    name: str
    arity: int
    np_fn: Callable
    py_fn: Callable
    commutative: bool = False
    symbol: str | None = None  # infix symbol for binary operators
    precedence: int = 5  # infix precedence (5 = function call / atom)


OPERATORS: dict[str, Op] = {
    op.name: op
    for op in [
        Op("+", 2, np.add, lambda a, b: a + b, True, "+", 1),
        Op("-", 2, np.subtract, lambda a, b: a - b, False, "-", 1),
        Op("*", 2, np.multiply, lambda a, b: a * b, True, "*", 2),
        Op("/", 2, np.divide, lambda a, b: a / b, False, "/", 2),
        Op("pow", 2, np.power, _s_pow, False, "**", 4),
        Op("neg", 1, np.negative, lambda a: -a, precedence=3),
        Op("inv", 1, np.reciprocal, _s_inv),
        Op("abs", 1, np.abs, abs),
        Op("pow2", 1, np.square, lambda a: a * a, precedence=4),
        Op("pow3", 1, lambda a: a * a * a, lambda a: a * a * a, precedence=4),
        Op("pow1_2", 1, np.sqrt, _s_sqrt, precedence=4),
        Op("sqrt", 1, np.sqrt, _s_sqrt),
        Op("exp", 1, np.exp, math.exp),
        Op("log", 1, np.log, _s_log),
        Op("sin", 1, np.sin, math.sin),
        Op("cos", 1, np.cos, math.cos),
        Op("tan", 1, np.tan, math.tan),
        Op("asin", 1, np.arcsin, math.asin),
        Op("acos", 1, np.arccos, math.acos),
        Op("atan", 1, np.arctan, math.atan),
        Op("sinh", 1, np.sinh, math.sinh),
        Op("cosh", 1, np.cosh, math.cosh),
        Op("tanh", 1, np.tanh, math.tanh),
        # second pass (issue 35): SimpliPy's wider vocabulary
        Op("asinh", 1, np.arcsinh, math.asinh),
        Op("acosh", 1, np.arccosh, _s_acosh),
        Op("atanh", 1, np.arctanh, _s_atanh),
        Op("pow4", 1, lambda a: np.square(np.square(a)), lambda a: (a * a) * (a * a), precedence=4),
        Op("pow5", 1, lambda a: np.square(np.square(a)) * a, lambda a: (a * a) * (a * a) * a, precedence=4),
        Op("pow1_3", 1, _np_oddroot(3), _s_oddroot(3), precedence=4),
        Op("pow1_4", 1, _np_root4, _s_root4, precedence=4),
        Op("pow1_5", 1, _np_oddroot(5), _s_oddroot(5), precedence=4),
        *[Op(f"mult{k}", 1, *_scaling(k, False), precedence=2) for k in (2, 3, 4, 5)],
        *[Op(f"div{k}", 1, *_scaling(k, True), precedence=2) for k in (2, 3, 4, 5)],
    ]
}
ARITY: dict[str, int] = {name: op.arity for name, op in OPERATORS.items()}
UNARY = frozenset(n for n, a in ARITY.items() if a == 1)
BINARY = frozenset(n for n, a in ARITY.items() if a == 2)
# Operators of the first pass: the rule miner enumerates these by default, so the shipped rules
# (mined over exactly this table) regenerate byte-identically; the second-pass operators below are
# handled by the engine's arithmetic, by hand-written identities and by imported rule files.
FIRST_PASS_OPERATORS = ("+", "-", "*", "/", "pow", "neg", "inv", "abs", "pow2", "pow3", "pow1_2", "sqrt", "exp",
                        "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh")
# Aliases accepted by the infix parser in function-call position.
FUNCTION_ALIASES = {"ln": "log", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "exp": "exp",
                    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "arsinh": "asinh",
                    "arcosh": "acosh", "artanh": "atanh", "cbrt": "pow1_3"}
# Non-finite literals as SimpliPy spells them (reconstruction): ``inf``/``-inf``/``nan`` tokens, also
# written ``float('inf')`` etc.  They fold by IEEE arithmetic; see engine (``nan`` absorbs).
NONFINITE_LITERALS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
NONFINITE_SPELLINGS = {"inf": "inf", "+inf": "inf", "-inf": "-inf", "infinity": "inf", "-infinity": "-inf",
                       "nan": "nan", "-nan": "nan", "float('inf')": "inf", "float('-inf')": "-inf",
                       "float('nan')": "nan", 'float("inf")': "inf", 'float("-inf")': "-inf",
                       'float("nan")': "nan", "oo": "inf", "-oo": "-inf", "zoo": "nan"}


def is_var(tok: str) -> bool:
    return _VAR_RE.match(tok) is not None


def is_wild(tok: str) -> bool:
    return _WILD_RE.match(tok) is not None


def is_number(tok: str) -> bool:
    """Numeric literal token (including ``pi``, ``e`` and the non-finite ``inf``, ``-inf``, ``nan``)."""
    return tok in NAMED_LITERALS or tok in NONFINITE_LITERALS or _NUM_RE.match(tok) is not None


def is_nonfinite(tok: str) -> bool:
    return tok in NONFINITE_LITERALS


def number_value(tok: str) -> float:
    v = NAMED_LITERALS.get(tok)
    if v is None:
        v = NONFINITE_LITERALS.get(tok)
    return float(tok) if v is None else v


def format_number(v: float) -> str:
    """Canonical literal text: integers without a dot, everything else as ``repr``."""
    if not math.isfinite(v):
        raise ExpressionError("expression is undefined (a constant evaluates to a non-finite value)")
    if v == 0:
        return "0"
    if v == int(v) and abs(v) < 1e16:
        return str(int(v))
    return repr(float(v))


def format_value(v: float) -> str:
    """Like ``format_number`` but non-finite values become the ``inf``/``-inf``/``nan`` tokens."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return format_number(v)


def normalize_number(tok: str) -> str:
    if tok in NAMED_LITERALS or tok in NONFINITE_LITERALS:
        return tok
    try:
        v = float(tok)
    except ValueError as exc:  # pragma: no cover - guarded by the regex
        raise ExpressionError(f"bad numeric literal {tok!r}") from exc
    if not math.isfinite(v):
        raise ExpressionError(f"numeric literal {tok!r} is not finite")
    return format_number(v)


def check_token(tok: str) -> None:
    """Raise ExpressionError unless ``tok`` is a valid prefix token."""
    if tok in ARITY or tok == CONSTANT or is_var(tok) or is_number(tok):
        return
    raise ExpressionError(f"unknown token {tok!r}")


def fold_scalar(op: str, args: list[float]) -> float | None:
    """Scalar value of ``op(args)``; None when undefined (domain error, pole, overflow)."""
    fn = OPERATORS[op].py_fn
    try:
        with np.errstate(all="ignore"):
            v = fn(*args)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if isinstance(v, complex):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def evaluate(prefix: list[str], X: np.ndarray, constants: dict[int, float] | float | None = None,
             wild_values: dict[str, np.ndarray] | None = None, keep_inf: bool = False) -> np.ndarray:
    """Evaluate a prefix expression on points ``X`` (shape (n_points, n_vars)); nan = undefined.

    Variables ``x_i`` read column ``i-1`` of ``X`` (nan when the column is absent);
    ``<constant>`` occurrences take ``constants[k]`` for the k-th occurrence in prefix order
    (or one float for all; default 1.0); wildcards ``_k`` read ``wild_values``.
    ``keep_inf`` keeps numpy's raw ±inf/nan (the miner tells overflow from domain errors).
    Iterative: one reverse scan with a value stack.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    n_const = sum(1 for t in prefix if t == CONSTANT)
    const_idx = n_const
    stack: list[np.ndarray] = []
    with np.errstate(all="ignore"):
        for tok in reversed(prefix):
            arity = ARITY.get(tok)
            if arity is None:
                if tok == CONSTANT:
                    const_idx -= 1
                    if constants is None:
                        val = 1.0
                    elif isinstance(constants, int | float):
                        val = float(constants)
                    else:
                        val = float(constants.get(const_idx, 1.0))
                    stack.append(np.full(n, val))
                elif is_var(tok):
                    j = int(tok[1:]) - 1
                    stack.append(X[:, j].copy() if j < X.shape[1] else np.full(n, np.nan))
                elif wild_values is not None and tok in wild_values:
                    stack.append(np.asarray(wild_values[tok], dtype=float))
                else:
                    stack.append(np.full(n, number_value(tok)))
                continue
            fn = OPERATORS[tok].np_fn
            if arity == 1:
                a = stack.pop()
                out = fn(a)
            else:
                a = stack.pop()
                b = stack.pop()
                out = fn(a, b)
                if tok == "pow":
                    out = np.where(np.isnan(a) | np.isnan(b), np.nan, out)
            out = np.asarray(out, dtype=float)
            if not keep_inf:
                out[~np.isfinite(out)] = np.nan
            stack.append(out)
    if len(stack) != 1:
        raise ExpressionError("wrong prefix arity")
    return stack[0]
