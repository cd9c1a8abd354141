"""Skeleton prior and point sampling of the training stream (``mlx26 sr sample``).

Flash-ANSR (Saegert & Köthe, ICML 2026, arXiv 2602.08885) trains on an endless stream of random
skeletons, each simplified by SimpliPy, with points sampled per skeleton. Reconstructed here:

* **Operator-count prior** (Lample & Charton, "Deep learning for symbolic mathematics", ICLR 2020,
  appendix C): the number of operators n is uniform in 1..``max_ops``; the tree shape is drawn
  uniformly among unary-binary trees with n internal nodes using their counts
  D(e, n) = D(e-1, n) + p1·D(e, n-1) + p2·D(e+1, n-1) (e empty slots, p1/p2 the unary/binary
  weight mass), then each node's operator from ``spec.OPERATOR_WEIGHTS``. The number of variables
  is uniform in 1..``max_vars``; a leaf is a variable (uniform among them) or ``<constant>``.
* **Simplification** by our engine (``mlx26.core.simplify.simplify``, sound mode,
  ``mask_constants=True``); skeletons that reduce to a constant, exceed ``max_len`` tokens or
  ``max_constants`` constants, or leave the model's vocabulary are rejected.
* **Points**: constants ~ ±U(0.5, 3); each variable's support is U(lo, lo + w) with lo ~ U(-5, 4),
  w ~ U(1, 6). Domain check: the skeleton must be finite on ≥ 90 % of the drawn points, with
  |y| < 1e6 and a non-degenerate spread; undefined points are dropped and redrawn; a skeleton
  failing ``tries`` draws is rejected. Our choices (ranges, weights), not the paper's exact ones.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from mlx26.core.simplify.ops import ARITY, is_var
from mlx26.core.sr import spec
from mlx26.core.sr.expr import compile_skeleton, n_constants


@dataclass
class PriorConfig:
    max_ops: int = 6
    max_vars: int = 3
    p_const: float = 0.3
    max_len: int = 24
    max_constants: int = 4
    operators: tuple[str, ...] = tuple(spec.OPERATOR_WEIGHTS)


def check_operators(operators) -> tuple[str, ...]:
    """Validate a user's operator list (names of ``spec.OPERATOR_WEIGHTS``)."""
    from mlx26.core.common.errors import InputError, unknown_name

    ops = tuple(dict.fromkeys(operators))
    for o in ops:
        if o not in spec.OPERATOR_WEIGHTS:
            raise unknown_name("operator", o, spec.OPERATOR_WEIGHTS)
    if not any(ARITY[o] == 2 for o in ops):
        raise InputError("--operators needs at least one binary operator", "add + or *")
    return ops


@lru_cache(maxsize=64)
def _counts(n_max: int, p1: float, p2: float) -> tuple[tuple[float, ...], ...]:
    # D[e][n] for e in 0..2n_max+1
    E = 2 * n_max + 2
    D = [[0.0] * (n_max + 1) for _ in range(E + 1)]
    for e in range(1, E + 1):
        D[e][0] = 1.0
    for n in range(1, n_max + 1):
        for e in range(1, E - n + 1):
            D[e][n] = D[e - 1][n] + p1 * D[e][n - 1] + p2 * D[e + 1][n - 1]
    return tuple(tuple(r) for r in D)


def random_skeleton(rng: random.Random, cfg: PriorConfig, n_vars: int | None = None) -> list[str]:
    """One raw (unsimplified) prefix skeleton from the operator-count prior."""
    una = [o for o in cfg.operators if ARITY[o] == 1]
    bina = [o for o in cfg.operators if ARITY[o] == 2]
    wu = [spec.OPERATOR_WEIGHTS[o] for o in una]
    wb = [spec.OPERATOR_WEIGHTS[o] for o in bina]
    p1 = sum(wu) / (sum(wu) + sum(wb)) if una else 0.0
    p2 = 1.0 - p1
    n = rng.randint(1, cfg.max_ops)
    D = _counts(cfg.max_ops, p1, p2)
    nv = n_vars or rng.randint(1, cfg.max_vars)
    out: list[str] = []
    e = 1

    def leaf() -> str:
        return spec.CONSTANT if rng.random() < cfg.p_const else f"x{rng.randint(1, nv)}"

    while n > 0:
        weights, choices = [], []
        for k in range(e):
            weights.append(p1 * D[e - k][n - 1])
            choices.append((k, 1))
            weights.append(p2 * D[e - k + 1][n - 1])
            choices.append((k, 2))
        k, a = rng.choices(choices, weights)[0]
        out.extend(leaf() for _ in range(k))
        out.append(rng.choices(una, wu)[0] if a == 1 else rng.choices(bina, wb)[0])
        e = e - k - 1 + a
        n -= 1
    out.extend(leaf() for _ in range(e))
    return out


def vocabulary() -> list[str]:
    """Decoder tokens after the specials: operators, variables, the placeholder, literals."""
    return [*spec.OPERATOR_WEIGHTS, *(f"x{i}" for i in range(1, spec.MAX_VARS + 1)), spec.CONSTANT,
            *spec.LITERALS]


def accept(prefix: list[str], cfg: PriorConfig) -> bool:
    vocab = set(vocabulary())
    return (0 < len(prefix) <= cfg.max_len and any(is_var(t) for t in prefix)
            and n_constants(prefix) <= cfg.max_constants and all(t in vocab for t in prefix))


def simplified_skeleton(raw: list[str], operators=None) -> list[str] | None:
    """The engine's simplification of a raw skeleton, variable-free subtrees folded to one constant.

    With ``operators`` (a user's restriction), a simplification that brings in another operator (``x1 + x1``
    -> ``2*x1`` under ``+`` only) is not taken: the folded raw skeleton is kept instead, so every result uses
    only the allowed operators.
    """
    from mlx26.core.simplify import simplify
    from mlx26.core.simplify.errors import ExpressionError

    try:
        s = simplify(raw, mode="sound", mask_constants=True)
    except ExpressionError:
        return None
    folded = fold_constant_subtrees(s)
    s = s if folded == s else simplify(folded, mode="sound", mask_constants=True)
    if operators is None or uses_only(s, operators):
        return s
    kept = fold_constant_subtrees(raw)
    return kept if uses_only(kept, operators) else None


def operator_restriction(operators) -> tuple[str, ...] | None:
    """None when every operator is allowed (the default prior: simplification may use any of them)."""
    return None if set(spec.OPERATOR_WEIGHTS) <= set(operators) else tuple(operators)


def uses_only(prefix: list[str], operators) -> bool:
    allowed = set(operators)
    return all(ARITY.get(t, 0) == 0 or t in allowed for t in prefix)


def fold_constant_subtrees(prefix: list[str]) -> list[str]:
    """Replace every variable-free subtree by one ``<constant>`` (the engine keeps e.g. ``pow3 <constant>``).

    A function of free constants is one free constant for SR (up to its range: ``pow2 c`` >= 0),
    so the model never has to learn several spellings of one constant.
    """
    out: list[tuple[str, bool]] = []  # built right to left: (tokens of the subtree, has_var)
    stack: list[tuple[list[str], bool]] = []
    for tok in reversed(prefix):
        a = ARITY.get(tok, 0)
        if a == 0:
            stack.append(([tok], is_var(tok)))
            continue
        kids = [stack.pop() for _ in range(a)]
        has_var = any(h for _, h in kids)
        if not has_var and any(spec.CONSTANT in t for t, _ in kids):
            stack.append(([spec.CONSTANT], False))
        else:
            stack.append(([tok] + [x for t, _ in kids for x in t], has_var))
    del out
    return stack[0][0] if len(stack) == 1 else prefix


def skeletons(n: int, seed: int = 0, cfg: PriorConfig | None = None, max_tries: int | None = None
              ) -> Iterator[list[str]]:
    """``n`` accepted simplified skeletons (duplicates allowed: the prior's own frequencies)."""
    cfg = cfg or PriorConfig()
    rng = random.Random(seed)
    done, tries = 0, 0
    limit = max_tries or 50 * n + 100
    while done < n and tries < limit:
        tries += 1
        s = simplified_skeleton(random_skeleton(rng, cfg), operators=operator_restriction(cfg.operators))
        if s is not None and accept(s, cfg):
            done += 1
            yield s


@dataclass
class Problem:
    skeleton: list[str]
    constants: np.ndarray
    X: np.ndarray  # (n, n_vars) support points
    y: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def n_vars(self) -> int:
        return self.X.shape[1]


def n_vars_of(prefix: list[str]) -> int:
    return max([int(t[1:]) for t in prefix if is_var(t)] or [1])


def sample_points(skeleton: list[str], rng: np.random.Generator, n_points: int = 64, tries: int = 8,
                  n_vars: int | None = None, low=None, high=None, constants=None) -> Problem | None:
    """Constants and points for one skeleton with the domain checks above (None if none pass)."""
    f = compile_skeleton(skeleton)
    nv = n_vars or n_vars_of(skeleton)
    k = n_constants(skeleton)
    for _ in range(tries):
        c = (np.asarray(constants, dtype=float) if constants is not None
             else rng.uniform(0.5, 3.0, size=k) * rng.choice([-1.0, 1.0], size=k))
        lo = np.asarray(low, dtype=float) * np.ones(nv) if low is not None else rng.uniform(-5.0, 4.0, size=nv)
        hi = (np.asarray(high, dtype=float) * np.ones(nv) if high is not None
              else lo + rng.uniform(1.0, 6.0, size=nv))
        X = rng.uniform(lo, hi, size=(2 * n_points, nv))
        y = f(X, c)
        ok = np.isfinite(y) & (np.abs(y) < 1e6)
        if ok[:n_points].mean() < 0.9 or ok.sum() < n_points:
            continue
        X, y = X[ok][:n_points], y[ok][:n_points]
        if np.std(y) < 1e-6 * max(1.0, float(np.mean(np.abs(y)))):
            continue
        return Problem(skeleton, c, X, y, lo, hi)
    return None


def problems(n: int, seed: int = 0, cfg: PriorConfig | None = None, n_points: int = 64,
             exclude=None, keep=None) -> list[Problem]:
    """``n`` (skeleton, constants, points) problems; ``exclude`` = a Decontaminator to drop test skeletons;
    ``keep(skeleton) -> bool`` filters the draws (None: all)."""
    cfg = cfg or PriorConfig()
    rng = np.random.default_rng(seed)
    out: list[Problem] = []
    for s in skeletons(10 * n + 100, seed=seed, cfg=cfg):
        if (keep is not None and not keep(s)) or (exclude is not None and exclude.contaminated(s)):
            continue
        p = sample_points(s, rng, n_points)
        if p is not None:
            out.append(p)
            if len(out) == n:
                break
    return out
