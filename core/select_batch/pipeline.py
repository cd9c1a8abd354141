"""One selection from features or from texts: the glue behind ``mlx26 select-batch``.

Our own plumbing around PartitionSel (Agrawal et al., ICML 2026; see :mod:`.greedy`). Order
of checks, so a selection is never silently partial: feature dimensions of pool and
validation agree; NaN/Inf and all-zero rows are dropped and counted; budgets are allocated
over the rows that remain (a user-given budget that no longer fits is an error); then the
greedy runs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.select_batch.budgets import allocate_budgets, domain_counts
from mlx26.core.select_batch.features import check_dims, clean_rows
from mlx26.core.select_batch.greedy import BUDGETED, Selection, select
from mlx26.core.select_batch.utility import QuadraticUtility


def select_from_features(G: np.ndarray, domains: Sequence[str], ids: Sequence[str], V: np.ndarray, budget: int,
                         budget_mode: str | Mapping[str, int] = "proportional", method: str = "partitionsel",
                         *, eta: float = 0.1, seed: int = 0, randomized: bool = False
                         ) -> tuple[list[dict[str, Any]], dict[str, Any], Selection]:
    """(records {id, domain, weight, rank}, summary, selection) for precomputed features."""
    G, V = np.asarray(G), np.asarray(V)
    if V.ndim == 1:
        V = V[None, :]
    if G.ndim != 2:
        raise InputError(f"pool gradients must be a 2-D array (rows × dims), got shape {G.shape}.")
    if len(domains) != G.shape[0] or len(ids) != G.shape[0]:
        raise InputError(f"{G.shape[0]} gradient rows but {len(domains)} domain labels and {len(ids)} ids.")
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if list(ids).count(i) > 1)
        raise InputError(f"duplicate id '{dup}' in the pool.", "ids must be unique")
    check_dims(G, V)
    Gc, keep, dropped = clean_rows(G, "pool")
    Vc, _, dropped_val = clean_rows(V, "validation")
    kept_domains = [d for d, k in zip(domains, keep, strict=True) if k]
    kept_ids = [i for i, k in zip(ids, keep, strict=True) if k]
    budgets = None
    if method in BUDGETED or not isinstance(budget_mode, str):
        budgets = allocate_budgets(domain_counts(kept_domains), budget, budget_mode)
    elif budget > len(kept_ids):
        raise InputError(f"the budget {budget} exceeds the pool ({len(kept_ids)} usable items).")
    util = QuadraticUtility.from_features(Gc, Vc, eta)
    sel = select(util, kept_domains, budget, method, budgets, randomized=randomized, seed=seed)
    records = [{"id": kept_ids[i], "domain": kept_domains[i], "weight": w, "rank": r}
               for r, (i, w) in enumerate(zip(sel.indices, sel.weights, strict=True))]
    summary = {**sel.summary(), "pool": int(G.shape[0]), "dropped_rows": dropped, "dropped_val_rows": dropped_val,
               "eta": eta, "seed": seed}
    return records, summary, sel


def select_from_texts(items: Sequence[Any], val_items: Sequence[Any], budget: int,
                      budget_mode: str | Mapping[str, int] = "proportional", method: str = "partitionsel", *,
                      model: str = "tiny-llama", grad_params: str = "last-layer", proj_dim: int = 512,
                      seq_len: int = 64, eta: float = 0.1, seed: int = 0, randomized: bool = False,
                      features: str = "auto") -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Gradient features of pool and validation texts under ``model``, then :func:`select_from_features`."""
    import torch
    from mlx26.core.common.seeding import seed_everything
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.select_batch.features import Featurizer
    from mlx26.core.zoo import load_model, load_tokenizer

    apply_torch_threads(torch)
    seed_everything(seed)
    if budget > len(items):
        raise InputError(f"the budget {budget} exceeds the pool ({len(items)} items).")
    start = time.perf_counter()
    feat = Featurizer(load_model(model), load_tokenizer(model), grad_params, proj_dim, seed, seq_len, path=features)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    G = feat.features([it.text for it in items])
    V = feat.features([it.text for it in val_items])
    feature_s = time.perf_counter() - start
    records, summary, _ = select_from_features(G, [it.domain for it in items], [it.id for it in items], V, budget,
                                               budget_mode, method, eta=eta, seed=seed, randomized=randomized)
    summary.update({"model": model, "grad_params": grad_params, "features": feat.resolved_path,
                    "proj_dim": proj_dim, "load_s": load_s,
                    "features_s": feature_s})
    return records, summary
