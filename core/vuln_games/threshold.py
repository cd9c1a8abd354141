"""The self-grading exploit threshold: the audit probability p below which training learns to over-claim.

Part of the vulnerability-games reconstruction (arXiv 2602.12124). Theory (spec.py's table): over-claiming on a
wrong answer earns 1 − 7p, the honest admission 0.5p, so the exact break-even is p* = 2/15 ≈ 0.133 (1/7 ≈ 0.143
where the honesty bonus is ignored). Measured: from the uniform policy (ER = 0.5) train at each p of a grid;
the threshold of one seed is where the final ER crosses 0.5, linearly interpolated between grid points. REINFORCE's
expected update has the sign of the payoff difference, so it should cross at p*; GRPO's per-group std
normalisation shrinks the groups that contain an audit's −6 and amplifies the unaudited ones, which can move it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.vuln_games.games import SelfGrading
from mlx26.core.vuln_games.train import TrainConfig, run


def final_er(p: float, cfg: TrainConfig) -> float:
    recs, _ = run(SelfGrading("vulnerable", audit_p=p), replace(cfg, log_every=max(1, cfg.steps)))
    return float(recs[-1]["er"])


def crossing(grid: Sequence[float], ers: Sequence[float], level: float = 0.5) -> float | None:
    """First p where ER falls through ``level`` (ER decreases with p), interpolated; None without a crossing."""
    for (p0, e0), (p1, e1) in zip(zip(grid, ers, strict=True), list(zip(grid, ers, strict=True))[1:], strict=False):
        if e0 >= level > e1:
            return p0 + (e0 - level) * (p1 - p0) / (e0 - e1)
    return None


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and the two-sided Student-t interval (scipy's t quantile)."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    m = float(x.mean())
    if len(x) < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def sweep(algo: str, grid: Sequence[float], seeds: Sequence[int], cfg: TrainConfig) -> dict[str, Any]:
    if len(grid) < 2 or any(not 0 <= p <= 1 for p in grid) or list(grid) != sorted(grid):
        raise InputError("the audit-probability grid needs ≥ 2 increasing values in [0, 1].")
    per_seed, curves = [], []
    for seed in seeds:
        ers = [final_er(p, replace(cfg, algo=algo, seed=seed)) for p in grid]
        curves.append(ers)
        t = crossing(grid, ers)
        per_seed.append(None if t is None else float(t))
    found = [t for t in per_seed if t is not None]
    mean, lo, hi = t_interval(found) if found else (math.nan, math.nan, math.nan)
    return {"algo": algo, "grid": list(grid), "seeds": list(seeds), "thresholds": per_seed, "mean": mean,
            "ci95": [lo, hi], "er_by_p": np.mean(curves, axis=0).round(4).tolist(), "steps": cfg.steps}
