"""Seeded random expression generator (soundness tests, benchmark, throughput runs).

Part of the reconstruction of Saegert & Köthe, "Breaking the Simplification Bottleneck in
Amortized Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885), whose benchmarks use
randomly sampled SR expressions.  Ours: a tree grown by expanding a uniformly chosen open
leaf ``k`` times (``k`` uniform in 1..``max_ops``) with an operator drawn from a fixed
weighted table, then leaves filled with variables ``x1..x{n_vars}``, literals and
constants (numeric values, or ``<constant>`` placeholders with ``constants="placeholder"``).
Deterministic for a seed (``random.Random``).
"""

from __future__ import annotations

import random

from mlx26.core.common.errors import InputError
from mlx26.core.simplify.ops import ARITY, CONSTANT
from mlx26.core.simplify.parse import tree_to_prefix

_OP_WEIGHTS = [
    ("+", 3.0), ("-", 2.0), ("*", 3.0), ("/", 2.0), ("pow", 0.4),
    ("neg", 0.8), ("inv", 0.6), ("abs", 0.4), ("pow2", 0.8), ("pow3", 0.4), ("pow1_2", 0.2),
    ("sqrt", 0.4), ("exp", 0.6), ("log", 0.6), ("sin", 0.8), ("cos", 0.8), ("tan", 0.3),
    ("asin", 0.2), ("acos", 0.2), ("atan", 0.3), ("sinh", 0.2), ("cosh", 0.2), ("tanh", 0.2),
    # second-pass vocabulary (SimpliPy's): inverse hyperbolics, real odd roots, pow4/pow5, scalings
    ("asinh", 0.15), ("acosh", 0.15), ("atanh", 0.15), ("pow1_3", 0.15), ("pow1_5", 0.05), ("pow1_4", 0.05),
    ("pow4", 0.1), ("pow5", 0.05), ("mult2", 0.05), ("div2", 0.05), ("mult3", 0.03), ("div3", 0.03),
]
_LITERALS = ["1", "2", "3", "-1", "0.5", "pi", "e", "0"]
_LIT_WEIGHTS = [4, 3, 1, 1, 1, 1, 1, 0.3]


def _numeric_constant(rng: random.Random) -> str:
    v = round(rng.uniform(-5.0, 5.0), 2)
    if v == 0:
        v = 1.25
    s = repr(v)
    return s[:-2] if s.endswith(".0") else s


def random_expression(rng: random.Random, max_ops: int = 10, n_vars: int = 3, constants: str = "numeric",
                      p_var: float = 0.6, p_const: float = 0.15) -> list[str]:
    """One random prefix expression (see module docstring)."""
    names = [o for o, _ in _OP_WEIGHTS]
    weights = [w for _, w in _OP_WEIGHTS]
    k = rng.randint(1, max_ops)
    # node = [op, children...] with None for an open leaf; grow iteratively
    root: list = [None]
    open_slots = [(root, 0)]
    for _ in range(k):
        idx = rng.randrange(len(open_slots))
        parent, pos = open_slots.pop(idx)
        op = rng.choices(names, weights)[0]
        node = [op] + [None] * ARITY[op]
        parent[pos] = node
        for j in range(ARITY[op]):
            open_slots.append((node, j + 1))
    # fill leaves
    for parent, pos in open_slots:
        r = rng.random()
        if r < p_var:
            parent[pos] = f"x{rng.randint(1, n_vars)}"
        elif r < p_var + p_const:
            parent[pos] = CONSTANT if constants == "placeholder" else _numeric_constant(rng)
        else:
            parent[pos] = rng.choices(_LITERALS, _LIT_WEIGHTS)[0]
    return tree_to_prefix(root[0])


def random_expressions(n: int, seed: int = 0, max_ops: int = 10, n_vars: int = 3,
                       constants: str = "numeric") -> list[list[str]]:
    """``n`` seeded random prefix expressions with 1..``max_ops`` operators over x1..x{n_vars}.

    ``constants``: "numeric" (random two-decimal numbers) or "placeholder" (``<constant>``).
    """
    if constants not in ("numeric", "placeholder"):
        raise InputError("constants must be 'numeric' or 'placeholder'")
    rng = random.Random(seed)
    return [random_expression(rng, max_ops, n_vars, constants) for _ in range(n)]
