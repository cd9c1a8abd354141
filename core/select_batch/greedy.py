"""Greedy minibatch selection: PartitionSel and its baselines in one code path (Agrawal et al., ICML 2026).

B iterations of matching pursuit on the utility of :mod:`.utility`: the residual is
r = ∇U(w) = c − Qw; the feasible items are the unselected ones whose domain still has
capacity; the deterministic variant takes the feasible item with the largest r (ties: the
lowest index), the randomized one draws uniformly from the union of the per-domain
shortlists (each domain's top-r items, as many as its remaining capacity; our reading of the
upstream randomized mode). After each pick w ≥ 0 is refit on the support. The refit result
is kept only if it is at least as good as the previous weights padded with a zero (always
feasible), so the utility trace is non-decreasing by construction.

Methods (baselines reconstructed from their papers' descriptions, run through the same loop):

* ``partitionsel`` — the above under the partition-matroid budgets;
* ``independent`` — the same budgets with K made block-diagonal by domain, i.e. each domain
  selected on its own, blind to cross-domain redundancy;
* ``gradmatch`` — domain-agnostic non-negative OMP (GradMatch-style): one partition of
  capacity B;
* ``greats`` — GREATS-style greedy (Wang et al., 2024): unit weights, no refit, the gain of
  item i is η s_i − η² Σ_{j∈S} K_ij, domain-agnostic;
* ``random`` — uniform random items within each domain's budget.

The weights reported for every method are the refit of the *full* utility on its final set,
so ``utility`` compares the sets on one scale.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.select_batch.spec import BUDGETED, METHODS
from mlx26.core.select_batch.utility import QuadraticUtility


@dataclass
class Selection:
    """A selected minibatch: ``indices`` in pick order (rank 0 first) with their weights."""

    method: str
    indices: list[int]
    weights: list[float]
    trace: list[float]
    utility: float
    counts: dict[str, int]
    budgets: dict[str, int] | None
    conflicting_pairs: int
    seconds: float
    randomized: bool = False
    extra: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        return {"method": self.method, "size": len(self.indices), "utility": self.utility,
                "counts": self.counts, "budgets": self.budgets, "conflicting_pairs": self.conflicting_pairs,
                "selection_s": self.seconds, "randomized": self.randomized,
                "utility_trace": self.trace}


def select(util: QuadraticUtility, domains: Sequence[str], budget: int, method: str = "partitionsel",
           budgets: Mapping[str, int] | None = None, *, randomized: bool = False, seed: int = 0,
           refit: str = "auto") -> Selection:
    """Select ``budget`` items of the pool described by ``util`` and ``domains``.

    ``budgets`` ({domain: k_c}, Σ = budget) is needed by the budgeted methods (partitionsel,
    independent, random) and ignored by gradmatch and greats.
    """
    if method not in METHODS:
        raise InputError(f"Unknown method '{method}'.", "choose one of: " + ", ".join(METHODS))
    labels = list(domains)
    if len(labels) != util.n:
        raise InputError(f"{len(labels)} domain labels for {util.n} pool items.")
    if budget < 1 or budget > util.n:
        raise InputError(f"the budget {budget} must be between 1 and the pool size {util.n}.")
    names = sorted(set(labels))
    code = np.array([names.index(d) for d in labels])
    if method in BUDGETED:
        if budgets is None or sum(budgets.values()) != budget:
            raise InputError(f"method '{method}' needs per-domain budgets summing to {budget}.")
        capacity = np.array([int(budgets.get(d, 0)) for d in names])
        if np.any(capacity > np.bincount(code, minlength=len(names))):
            raise InputError("a per-domain budget exceeds that domain's pool items.")
    else:
        capacity = None
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    trace: list[float]
    if method == "random":
        assert capacity is not None
        order, trace = _random(code, capacity, rng), []
    elif method == "greats":
        order, trace = _greats(util, budget)
    else:
        work = util
        if method == "independent":
            same = code[:, None] == code[None, :]
            work = QuadraticUtility(util.c, np.where(same, util.Q, 0.0))
        part = code if capacity is not None else np.zeros_like(code)
        cap = capacity if capacity is not None else np.array([budget])
        order, trace = _matching_pursuit(work, part, cap, budget, randomized, rng, refit)
    support = np.array(order, dtype=int)
    weights = util.refit(support, method=refit)
    seconds = time.perf_counter() - start
    K = util.K if util.K is not None else util.Q
    sub = K[np.ix_(support, support)]
    conflicts = int(np.sum(np.triu(sub < 0, k=1)))
    counts = {d: int(np.sum(code[support] == i)) for i, d in enumerate(names)}
    return Selection(method=method, indices=[int(i) for i in order], weights=[float(x) for x in weights],
                     trace=[float(x) for x in trace], utility=util.value(weights, support), counts=counts,
                     budgets=dict(budgets) if method in BUDGETED and budgets is not None else None,
                     conflicting_pairs=conflicts, seconds=seconds, randomized=randomized)


def _matching_pursuit(util: QuadraticUtility, part: np.ndarray, capacity: np.ndarray, budget: int,
                      randomized: bool, rng: np.random.Generator, refit: str) -> tuple[list[int], list[float]]:
    remaining = capacity.astype(int).copy()
    chosen = np.zeros(util.n, dtype=bool)
    order: list[int] = []
    w = np.zeros(0)
    trace: list[float] = []
    for _ in range(budget):
        r = util.residual(w, np.array(order, dtype=int))
        feasible = ~chosen & (remaining[part] > 0)
        if randomized:
            pick = _shortlist_draw(r, part, feasible, remaining, rng)
        else:
            pick = int(np.argmax(np.where(feasible, r, -np.inf)))
        order.append(pick)
        chosen[pick] = True
        remaining[part[pick]] -= 1
        support = np.array(order, dtype=int)
        padded = np.append(w, 0.0)
        fitted = util.refit(support, w0=padded, method=refit)
        w = fitted if util.value(fitted, support) >= util.value(padded, support) else padded
        trace.append(util.value(w, support))
    return order, trace


def _shortlist_draw(r: np.ndarray, part: np.ndarray, feasible: np.ndarray, remaining: np.ndarray,
                    rng: np.random.Generator) -> int:
    shortlist: list[int] = []
    for p in np.flatnonzero(remaining > 0):
        items = np.flatnonzero(feasible & (part == p))
        top = items[np.argsort(-r[items], kind="stable")[: remaining[p]]]
        shortlist.extend(int(i) for i in top)
    return int(rng.choice(sorted(shortlist)))


def _greats(util: QuadraticUtility, budget: int) -> tuple[list[int], list[float]]:
    chosen = np.zeros(util.n, dtype=bool)
    load = np.zeros(util.n)  # Σ_{j∈S} Q_ij
    order: list[int] = []
    trace: list[float] = []
    value = 0.0
    diag = np.diag(util.Q)
    for _ in range(budget):
        gain = util.c - load - 0.5 * diag
        pick = int(np.argmax(np.where(chosen, -np.inf, gain)))
        value += float(gain[pick])
        order.append(pick)
        chosen[pick] = True
        load += util.Q[:, pick]
        trace.append(value)
    return order, trace


def _random(code: np.ndarray, capacity: np.ndarray, rng: np.random.Generator) -> list[int]:
    picked: list[int] = []
    for p, k in enumerate(capacity):
        items = np.flatnonzero(code == p)
        picked.extend(int(i) for i in rng.choice(items, size=int(k), replace=False))
    return [int(i) for i in rng.permutation(picked)]


def select_random(domains: Sequence[str], budgets: Mapping[str, int], rng: np.random.Generator) -> list[int]:
    """Uniform random items within each domain's budget (no features needed), in random order."""
    names = sorted(set(domains))
    code = np.array([names.index(d) for d in domains])
    return _random(code, np.array([int(budgets.get(d, 0)) for d in names]), rng)
