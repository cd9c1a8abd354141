"""Risk-sensitive aggregation of step scores (SecCodePRM, Yu et al., ICML 2026, arXiv 2602.10418).

Step scores are s_t = p(safe) − p(vulnerable) ∈ [−1, 1]. The paper's default aggregate is
A = Σ_t w_t s_t with w = softmax(−s/τ), τ = 0.1: it weights the riskiest steps most; the
code is called vulnerable iff A ≤ 0. The other aggregators are ours: ``min``, ``mean``,
``last`` (the outcome-style last-step criterion), the soft-min
``lse`` = −τ log((1/T) Σ exp(−s_t/τ)) (min ≤ lse ≤ mean; τ→0 gives min, τ→∞ mean) and
``cvar`` = mean of the worst ⌈αT⌉ steps. All but ``last`` ignore step order. Note that the
softmax-weighted aggregate is not monotone in the scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlx26.core.common.errors import InputError
from mlx26.core.score_code.spec import AGGREGATORS


def _check(scores: Sequence[float], tau: float, alpha: float) -> None:
    if not len(scores):
        raise InputError("cannot aggregate zero steps.")
    if not (tau > 0 and math.isfinite(tau)):
        raise InputError(f"--tau must be a positive finite number, got {tau}.")
    if not 0 < alpha <= 1:
        raise InputError(f"--alpha must be in (0, 1], got {alpha}.")


def softmax_weights(scores: Sequence[float], tau: float = 0.1) -> list[float]:
    low = min(scores)
    e = [math.exp(-(s - low) / tau) for s in scores]  # shifted: the largest term is exp(0)
    z = sum(e)
    return [x / z for x in e]


def aggregate(scores: Sequence[float], how: str = "softmax", *, tau: float = 0.1, alpha: float = 0.2) -> float:
    """One number for a sequence of step scores; ≤ 0 means vulnerable."""
    if how not in AGGREGATORS:
        raise InputError(f"unknown aggregator '{how}'.", "choose one of: " + ", ".join(AGGREGATORS))
    _check(scores, tau, alpha)
    s = [float(x) for x in scores]
    if how == "softmax":
        return sum(w * x for w, x in zip(softmax_weights(s, tau), s, strict=True))
    if how == "min":
        return min(s)
    if how == "mean":
        return sum(s) / len(s)
    if how == "last":
        return s[-1]
    if how == "lse":
        low = min(s)
        mean_exp = sum(math.exp(-(x - low) / tau) for x in s) / len(s)
        return low - tau * math.log(mean_exp)
    k = math.ceil(alpha * len(s))
    return sum(sorted(s)[:k]) / k


def riskiest(scores: Sequence[float], k: int = 3) -> list[int]:
    """Indices of the k lowest-scoring steps, riskiest first (ties: earlier step first)."""
    return sorted(range(len(scores)), key=lambda i: (scores[i], i))[:k]
