"""Fast numeric realisation of prefix skeletons for constant fitting (part of ``mlx26 sr``).

Flash-ANSR (Saegert & Köthe, ICML 2026, arXiv 2602.08885) fits the constants of thousands of
candidate skeletons per problem; calling the simplify engine's token-by-token ``evaluate`` inside
every Levenberg–Marquardt residual would dominate the run time. Here a skeleton is compiled once
into a numpy expression string (``eval`` of our own generated code over a fixed namespace), with
the same semantics as ``mlx26.core.simplify.ops.evaluate``: non-finite values become nan.
Tested against ``evaluate`` on random skeletons (tests/sr/test_expr.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlx26.core.simplify.ops import ARITY, CONSTANT, is_var, number_value

_UNARY = {"neg": "np.negative({})", "inv": "np.reciprocal({})", "abs": "np.abs({})", "pow2": "np.square({})",
          "pow3": "(({0})*({0})*({0}))", "pow1_2": "np.sqrt({})", "sqrt": "np.sqrt({})", "exp": "np.exp({})",
          "log": "np.log({})", "sin": "np.sin({})", "cos": "np.cos({})", "tan": "np.tan({})",
          "asin": "np.arcsin({})", "acos": "np.arccos({})", "atan": "np.arctan({})", "sinh": "np.sinh({})",
          "cosh": "np.cosh({})", "tanh": "np.tanh({})"}
_BINARY = {"+": "np.add({}, {})", "-": "np.subtract({}, {})", "*": "np.multiply({}, {})",
           "/": "np.divide({}, {})", "pow": "_pow({}, {})"}


def _pow(a, b):
    out = np.power(a, b)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, out)


def _finite(v):
    v = np.asarray(v, dtype=float)
    return np.where(np.isfinite(v), v, np.nan)


def n_constants(prefix: list[str]) -> int:
    return sum(1 for t in prefix if t == CONSTANT)


def to_code(prefix: list[str]) -> str:
    """numpy source of a prefix skeleton over ``X`` (columns) and ``c`` (constants, prefix order)."""
    stack: list[str] = []
    k = n_constants(prefix)
    for tok in reversed(prefix):
        ar = ARITY.get(tok)
        if ar is None:
            if tok == CONSTANT:
                k -= 1
                stack.append(f"c[{k}]")
            elif is_var(tok):
                stack.append(f"X[:, {int(tok[1:]) - 1}]")
            else:
                stack.append(repr(float(number_value(tok))))
        elif ar == 1:
            stack.append("_finite(" + _UNARY[tok].format(stack.pop()) + ")")
        else:
            a = stack.pop()
            b = stack.pop()
            stack.append("_finite(" + _BINARY[tok].format(a, b) + ")")
    if len(stack) != 1:
        from mlx26.core.simplify.errors import ExpressionError

        raise ExpressionError("wrong prefix arity")
    return stack[0]


_CACHE: dict[tuple[str, ...], Callable] = {}


def compile_skeleton(prefix: list[str]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``f(X, c) -> y`` (length n, nan where undefined) for a prefix skeleton (memoised)."""
    key = tuple(prefix)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    if len(_CACHE) > 200_000:
        _CACHE.clear()
    code = to_code(prefix)
    fn = eval(compile(f"lambda X, c: {code}", "<skeleton>", "eval"),  # noqa: S307 - our own generated code
              {"np": np, "_pow": _pow, "_finite": _finite})

    def f(X: np.ndarray, c: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = fn(X, c)
        out = np.asarray(out, dtype=float)
        return np.broadcast_to(out, (X.shape[0],)).copy() if out.ndim == 0 or out.shape[0] != X.shape[0] else out

    _CACHE[key] = f
    return f
