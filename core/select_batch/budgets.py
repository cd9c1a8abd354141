"""Per-domain budgets k_c of the partition matroid, Σ_c k_c = B (PartitionSel, Agrawal et al., ICML 2026).

The issue names three modes; the allocation rule for the first two is our reconstruction:

* ``proportional`` — k_c ∝ n_c (the domain's count in the pool);
* ``equal`` — k_c ∝ 1;
* a mapping {domain: k} given by the user — used as is, after checks.

``select-batch train`` adds ``curriculum`` (:func:`curriculum_weights`): upstream PartitionSEL's
adaptive budgets (``curr_budget``), b_c = B/C − (B/λ)·z_c with z the standardised per-domain
utility of the previous step's selection, so a domain whose anchors the last batch helped least gets
more of the next one. Upstream rounds and then moves single units at random until Σ = B; we give
the targets to the same largest-remainder rule as the other modes (deterministic).

For the first two, quotas are rounded by the largest-remainder (Hamilton) method; a domain
whose quota reaches its availability n_c is capped at n_c and the rest of the budget is
redistributed over the other domains by the same rule, until every quota fits. The total is
always exactly B. Ties in the remainders go to the larger weight, then to the domain that
comes first in sorted order, so the result is deterministic.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping

from mlx26.core.common.errors import InputError
from mlx26.core.select_batch.spec import BUDGET_MODES


def domain_counts(domains: Iterable[str]) -> dict[str, int]:
    """How many pool items each domain has, in sorted domain order."""
    counts = Counter(domains)
    return {d: counts[d] for d in sorted(counts)}


def allocate_budgets(counts: Mapping[str, int], budget: int,
                     mode: str | Mapping[str, int] = "proportional") -> dict[str, int]:
    """Budgets {domain: k_c} with Σ k_c = ``budget`` and k_c ≤ counts[domain].

    ``mode`` is ``proportional``, ``equal`` or a mapping of user-given budgets. Raises
    ValueError for a budget larger than the pool, a user budget naming a domain absent from
    the pool, exceeding its availability, or not summing to ``budget``.
    """
    total = sum(counts.values())
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InputError(f"the budget must be a positive integer, got {budget!r}.")
    if budget > total:
        raise InputError(f"the budget {budget} exceeds the pool ({total} usable items).",
                         "lower --budget or give a larger pool")
    if isinstance(mode, Mapping):
        return _given(counts, budget, mode)
    if mode not in BUDGET_MODES:
        raise InputError(f"Unknown budget mode '{mode}'.", "choose proportional, equal or a JSON file")
    weights = {d: float(n) if mode == "proportional" else 1.0 for d, n in counts.items() if n > 0}
    return water_fill(dict(counts), budget, weights)


def _given(counts: Mapping[str, int], budget: int, given: Mapping[str, int]) -> dict[str, int]:
    out = {}
    for domain, k in given.items():
        if domain not in counts:
            raise InputError(f"budget domain '{domain}' is not in the pool (domains: {', '.join(sorted(counts))}).")
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InputError(f"the budget of domain '{domain}' must be an integer ≥ 0, got {k!r}.")
        if k > counts[domain]:
            raise InputError(f"the budget of domain '{domain}' ({k}) exceeds its {counts[domain]} usable "
                             "pool items.")
        out[domain] = k
    if sum(out.values()) != budget:
        raise InputError(f"the per-domain budgets sum to {sum(out.values())}, not to the budget {budget}.")
    return {d: out.get(d, 0) for d in sorted(counts)}


def water_fill(counts: dict[str, int], budget: int, weights: dict[str, float]) -> dict[str, int]:
    """Split ``budget`` over the domains ∝ ``weights``, none above its count (largest remainders get the rest)."""
    result = {d: 0 for d in sorted(counts)}
    active = dict(weights)
    remaining = budget
    while remaining > 0:
        scale = sum(active.values())
        quotas = {d: remaining * w / scale for d, w in active.items()}
        capped = [d for d, q in quotas.items() if q >= counts[d]]
        if capped:  # these domains are short: take all they have, redistribute the rest
            for d in capped:
                result[d] = counts[d]
                remaining -= counts[d]
                del active[d]
            continue
        floors = {d: math.floor(q) for d, q in quotas.items()}
        left = remaining - sum(floors.values())
        order = sorted(active, key=lambda d: (-(quotas[d] - floors[d]), -active[d], d))
        for d in order[:left]:
            floors[d] += 1  # q < n_c, so floor(q) + 1 ≤ n_c
        for d, k in floors.items():
            result[d] = k
        remaining = 0
    return result


def curriculum_weights(counts: Mapping[str, int], gains: Mapping[str, float], budget: int,
                       lam: float) -> dict[str, float]:
    """Water-fill weights for the curriculum budgets: max(B/C − (B/λ)·z_c, 0) over the domains present
    (z: the gains standardised over them; a domain without a gain gets the mean, z = 0). A tiny floor
    keeps every present domain able to take budget another domain cannot hold."""
    present = [d for d, n in counts.items() if n > 0]
    if not present:
        return {}
    mean = sum(gains.get(d, 0.0) for d in present if d in gains) / max(1, sum(d in gains for d in present))
    g = {d: float(gains.get(d, mean)) for d in present}
    mu = sum(g.values()) / len(g)
    sd = math.sqrt(sum((v - mu) ** 2 for v in g.values()) / len(g))
    z = {d: (v - mu) / sd if sd > 0 else 0.0 for d, v in g.items()}
    c = len(present)
    return {d: max(budget / c - budget / lam * z[d], 0.0) + 1e-9 for d in present}


def parse_budget_mode(value: str, *, train: bool = False) -> str | dict[str, int]:
    """``proportional`` / ``equal`` (and ``curriculum`` for train), or the path of a JSON object {domain: k}."""
    if value in BUDGET_MODES:
        return value
    if value == "curriculum":
        if not train:
            raise InputError("curriculum budgets adapt from step to step during training.",
                             "use it with `mlx26 select-batch train --budget-mode curriculum`")
        return value
    import json
    from pathlib import Path

    path = Path(value)
    if not path.is_file():
        raise InputError(f"--budget-mode must be proportional, equal or a JSON file of per-domain budgets; "
                         f"'{value}' is none of these.", 'a file holds e.g. {"code": 4, "prose": 4}')
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{value}: not valid JSON ({exc}).") from None
    if not isinstance(data, dict) or not data:
        raise InputError(f"{value}: expected a JSON object {{domain: budget}}.")
    return data
