"""Canonical forms insensitive to variable renaming and constant values; high-precision re-evaluation.

Part of the reconstruction of Saegert & Köthe, "Breaking the Simplification Bottleneck in
Amortized Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885), which decontaminates
generated training skeletons against test formulas.  Ours (the paper's procedure is not
specified at this level):

* **functional signature of a variable**: the values of ``f`` on fixed probe points where that
  variable takes its own probe values and *every other variable the same shared value* — so the
  signature does not depend on what the other variables are called;
* **canonical variable order**: variables sorted by signature; ties (symmetric or numerically
  indistinguishable variables) are resolved by trying the permutations of the tied group and
  keeping the smallest resulting key.  Used by the decontamination keys and by
  ``equivalent(..., allow_renaming=True)`` (variables are matched by signature before any
  permutation is tried, so there is no cap on the number of variables);
* **functional image**: values of the masked skeleton (constants at one generic value) on a fixed
  grid after canonical renaming, normalised for an affine change ``a*f + b`` (centred, scaled by
  its spread, sign fixed) and quantised — a hash insensitive to renaming, to the constants'
  values, to operand order and to an overall scale and offset;
* ``evaluate_mp``: point-wise mpmath evaluation (80 digits) used by strict equivalence for the
  points where float64 overflows on one side only.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from mlx26.core.simplify.ops import ARITY, CONSTANT, evaluate, is_var, number_value

_SIG_N = 12
_SIG_RNG = np.random.default_rng(31337)
# shared value of the other variables, and the probed variable's own values (mixed signs, moderate)
_SIG_BASE = _SIG_RNG.uniform(0.3, 2.2, size=_SIG_N) * np.where(_SIG_RNG.random(_SIG_N) < 0.3, -1, 1)
_SIG_OWN = _SIG_RNG.uniform(0.3, 2.2, size=_SIG_N) * np.where(_SIG_RNG.random(_SIG_N) < 0.3, -1, 1)
_C_VALUE = 1.3746
MAX_TIE_PERMUTATIONS = 720


def variables(prefix: list[str]) -> list[str]:
    return sorted({t for t in prefix if is_var(t)}, key=lambda t: int(t[1:]))


def _q(v: np.ndarray, digits: int = 6) -> tuple:
    out = []
    for x in v:
        if not math.isfinite(x):
            out.append("u")
        elif x == 0:
            out.append("0")
        else:
            out.append(f"{x:.{digits - 1}e}")
    return tuple(out)


def signature(prefix: list[str], var: str, n_cols: int, digits: int = 6) -> tuple:
    """Values of ``prefix`` with ``var`` at its own probe values and all other variables shared."""
    X = np.repeat(_SIG_BASE[:, None], n_cols, axis=1)
    X[:, int(var[1:]) - 1] = _SIG_OWN
    return _q(evaluate(prefix, X, constants=_C_VALUE), digits)


def signatures(prefix: list[str], digits: int = 6) -> dict[str, tuple]:
    vs = variables(prefix)
    n = max([int(v[1:]) for v in vs] or [1])
    return {v: signature(prefix, v, n, digits) for v in vs}


def rename(prefix: list[str], mapping: dict[str, str]) -> list[str]:
    return [mapping.get(t, t) for t in prefix]


def tie_groups(sigs: dict[str, tuple]) -> list[list[str]]:
    """Variables grouped by equal signature, groups in signature order."""
    groups: dict[tuple, list[str]] = {}
    for v, s in sigs.items():
        groups.setdefault(s, []).append(v)
    return [groups[s] for s in sorted(groups)]


def canonical_orderings(prefix: list[str], limit: int = MAX_TIE_PERMUTATIONS):
    """Mappings {old name: x1..xk} consistent with the signature order (all orders of tied groups)."""
    groups = tie_groups(signatures(prefix))
    per = [list(itertools.permutations(g)) for g in groups]
    count = 0
    for combo in itertools.product(*per):
        order = [v for g in combo for v in g]
        yield {v: f"x{i + 1}" for i, v in enumerate(order)}
        count += 1
        if count >= limit:
            return


def canonical_skeleton(prefix: list[str], simplify_fn) -> list[str]:
    """The smallest (as text) simplified form over the signature-consistent canonical renamings."""
    best = None
    for m in canonical_orderings(prefix):
        s = simplify_fn(rename(prefix, m))
        k = " ".join(s)
        if best is None or k < best[0]:
            best = (k, s)
    return best[1] if best is not None else list(prefix)


def free_affine(prefix: list[str]) -> tuple[bool, bool]:
    """(free offset, free scale): does the skeleton end in ``... + <constant>`` (a bare constant
    term at the top) and is what remains a product with a bare ``<constant>`` factor?  Only such
    skeletons are compared up to ``a*f + b``: there a fitted constant absorbs the change, whereas
    ``sin(x1)`` is not the same skeleton as ``c*sin(x1) + c``."""
    from mlx26.core.simplify.parse import prefix_to_tree

    t = prefix_to_tree(prefix)
    shift = scale = False
    if isinstance(t, tuple) and t[0] in ("+", "-"):
        terms, stack = [], [t]
        while stack:
            u = stack.pop()
            if isinstance(u, tuple) and u[0] in ("+", "-"):
                stack.extend(u[1:])
            elif isinstance(u, tuple) and u[0] == "neg":
                stack.append(u[1])
            else:
                terms.append(u)
        if CONSTANT in terms:
            shift = True
            rest = [u for u in terms if u != CONSTANT]
            t = rest[0] if len(rest) == 1 else None
    while isinstance(t, tuple) and t[0] == "neg":
        t = t[1]
    if isinstance(t, tuple) and t[0] in ("*", "/"):
        factors, stack = [], [t]
        while stack:
            u = stack.pop()
            if isinstance(u, tuple) and u[0] in ("*", "/"):
                stack.extend(u[1:])
            else:
                factors.append(u)
        scale = CONSTANT in factors
    return shift, scale


def affine_image(prefix: list[str], grid: np.ndarray, digits: int = 6) -> bytes | None:
    """Quantised image of ``prefix`` on ``grid``; up to ``a*f + b`` where ``free_affine`` says the
    skeleton has a free offset/scale (None when undefined or, after normalising, constant)."""
    y = evaluate(prefix, grid, constants=_C_VALUE)
    fin = np.isfinite(y)
    if fin.sum() < 4:
        return None
    shift, scale = free_affine(prefix)
    v = y[fin]
    with np.errstate(all="ignore"):
        if shift:
            v = v - np.median(v)
        if scale:
            spread = np.max(np.abs(v))
            if not math.isfinite(spread) or spread <= 1e-12 * (1 + abs(float(np.median(y[fin])))):
                return None  # constant functions are left to the skeleton key
            v = v / spread
            first = v[np.argmax(np.abs(v) > 1e-6)]
            if first < 0:
                v = -v
            q = np.round(v * 10 ** (digits - 1))
        else:
            q = np.array([float(f"{x:.{digits}g}") for x in v])
    if not np.all(np.isfinite(q)):
        return None
    return bytes([shift, scale]) + fin.tobytes() + q.astype(np.float64).tobytes()


# ----------------------------------------------------------------------------- mpmath
def _mp_scale(k: int, divide: bool):
    return (lambda a: a / k) if divide else (lambda a: a * k)


def _mp_ops():
    import mpmath as mp

    def odd_root(k):
        return lambda a: mp.sign(a) * mp.root(abs(a), k)

    return {
        "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
        "pow": lambda a, b: mp.power(a, b), "neg": lambda a: -a, "inv": lambda a: 1 / a, "abs": abs,
        "pow2": lambda a: a**2, "pow3": lambda a: a**3, "pow4": lambda a: a**4, "pow5": lambda a: a**5,
        "pow1_2": mp.sqrt, "sqrt": mp.sqrt, "pow1_3": odd_root(3), "pow1_4": lambda a: mp.sqrt(mp.sqrt(a)),
        "pow1_5": odd_root(5), "exp": mp.exp, "log": mp.log, "sin": mp.sin, "cos": mp.cos, "tan": mp.tan,
        "asin": mp.asin, "acos": mp.acos, "atan": mp.atan, "sinh": mp.sinh, "cosh": mp.cosh, "tanh": mp.tanh,
        "asinh": mp.asinh, "acosh": mp.acosh, "atanh": mp.atanh,
        **{f"mult{k}": _mp_scale(k, False) for k in (2, 3, 4, 5)},
        **{f"div{k}": _mp_scale(k, True) for k in (2, 3, 4, 5)},
    }


_MP = None


def evaluate_mp(prefix: list[str], x: np.ndarray, constants: dict | float | None = None, dps: int = 80):
    """mpmath value of ``prefix`` at one point ``x`` (None where undefined: a domain error, a pole,
    a complex value, or a non-finite result even at ``dps`` digits)."""
    import mpmath as mp

    global _MP
    if _MP is None:
        _MP = _mp_ops()
    n_const = sum(1 for t in prefix if t == CONSTANT)
    ci = n_const
    stack: list = []
    with mp.workdps(dps):
        try:
            for tok in reversed(prefix):
                a = ARITY.get(tok)
                if a is None:
                    if tok == CONSTANT:
                        ci -= 1
                        c = constants if isinstance(constants, int | float) else (
                            (constants or {}).get(ci, 1.0) if isinstance(constants, dict) else 1.0)
                        stack.append(mp.mpf(float(c)))
                    elif is_var(tok):
                        j = int(tok[1:]) - 1
                        stack.append(mp.mpf(float(x[j])) if j < len(x) else None)
                    else:
                        stack.append(mp.mpf(number_value(tok)))
                    if stack[-1] is None or not mp.isfinite(stack[-1]):
                        return None
                    continue
                args = [stack.pop() for _ in range(a)]
                v = _MP[tok](*args)
                if isinstance(v, mp.mpc) or not mp.isfinite(v):
                    return None
                stack.append(v)
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        return stack[0]
