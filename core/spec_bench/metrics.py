"""Acceptance metrics of speculative decoding from per-step logs, and the modelled speedup.

A *step* is one target forward call that verifies ``drafted`` tokens and keeps ``accepted`` of
them plus one token of its own (the correction, or the bonus when all were accepted), so it emits
``accepted + 1`` tokens and AL = new tokens / target calls = 1 + sum(accepted) / steps.
Conditional acceptance at position i is P(draft i accepted | drafts < i accepted), over the
steps that drafted position i; joint acceptance is P(drafts <= i all accepted), the product of
the conditionals (chain rule; with every step drafting k it is the share of steps with a > i). Our own code; the formulas are textbook.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mlx26.core.common.errors import InputError


@dataclass(frozen=True)
class Step:
    drafted: int
    accepted: int


def histogram(steps: Iterable[Step], k: int) -> list[int]:
    """counts[a] = steps that accepted exactly a drafts, a = 0..k."""
    counts = [0] * (k + 1)
    for s in steps:
        counts[min(s.accepted, k)] += 1
    return counts


def acceptance_length(new_tokens: int, target_calls: int) -> float | None:
    return None if target_calls <= 0 else new_tokens / target_calls


def acceptance_rate(steps: Sequence[Step]) -> float | None:
    drafted = sum(s.drafted for s in steps)
    return None if drafted == 0 else sum(s.accepted for s in steps) / drafted


def by_position(steps: Sequence[Step], k: int) -> dict[str, list[float | None]]:
    """Conditional and joint acceptance per draft position 1..k, over steps that drafted that far."""
    conditional: list[float | None] = []
    joint: list[float | None] = []
    running: float | None = 1.0
    for i in range(k):
        before = [s for s in steps if s.drafted > i and s.accepted >= i]
        ok = sum(1 for s in before if s.accepted > i)
        rate = ok / len(before) if before else None
        conditional.append(rate)
        running = None if running is None or rate is None else running * rate
        joint.append(running)
    return {"conditional": conditional, "joint": joint}


def summarize(steps: Sequence[Step], new_tokens: int, target_calls: int, k: int) -> dict[str, object]:
    return {"acceptance_length": acceptance_length(new_tokens, target_calls),
            "acceptance_rate": acceptance_rate(steps), "steps": len(steps), "target_calls": target_calls,
            "new_tokens": new_tokens, "accepted_histogram": histogram(steps, k), **by_position(steps, k)}


def modelled_speedup(al: float | None, k: int, cost_ratio: float) -> float | None:
    """tau / (1 + k * c_draft / c_target): the wall speedup if a step costs one target + k draft calls."""
    if al is None:
        return None
    if k < 0 or cost_ratio < 0:
        raise InputError(f"k and the cost ratio must be >= 0 (got k={k}, ratio={cost_ratio}).")
    return al / (1.0 + k * cost_ratio)


def check_k(k: int) -> None:
    if k <= 0:
        raise InputError(f"-k must be >= 1 (draft tokens per step), got {k}.")


def pooled_al(rows: Sequence[dict]) -> float | None:
    """AL of a group of prompts: their new tokens over their target calls (not the mean of per-prompt ALs)."""
    return acceptance_length(sum(int(r["new_tokens"]) for r in rows), sum(int(r["target_calls"]) for r in rows))


def al_ratio_interval(numerator: Sequence[dict], denominator: Sequence[dict], *, level: float = 0.9,
                      resamples: int = 2000, seed: int = 0) -> dict[str, float | int | None]:
    """Pooled AL of ``numerator`` over that of ``denominator`` (per-prompt rows with ``new_tokens`` and
    ``target_calls``), with a percentile bootstrap interval that resamples prompts within each group.

    ``share_at_most_one`` is the share of resamples with a ratio <= 1: how often the direction "numerator's AL
    above denominator's" fails when the prompts are drawn again."""
    import numpy as np

    if not numerator or not denominator:
        raise InputError("a ratio of acceptance lengths needs prompts in both groups")
    if not 0 < level < 1 or resamples < 1:
        raise InputError(f"level must be in (0, 1) and resamples >= 1, got {level}, {resamples}")
    point_num, point_den = pooled_al(numerator), pooled_al(denominator)
    if point_num is None or point_den is None:
        return {"ratio": None, "low": None, "high": None, "share_at_most_one": None, "resamples": resamples}
    rng = np.random.default_rng(seed)

    def arrays(rows):
        return (np.array([int(r["new_tokens"]) for r in rows], float), np.array([int(r["target_calls"]) for r in rows], float))

    (n_new, n_calls), (d_new, d_calls) = arrays(numerator), arrays(denominator)
    i = rng.integers(0, len(numerator), size=(resamples, len(numerator)))
    j = rng.integers(0, len(denominator), size=(resamples, len(denominator)))
    ratios = (n_new[i].sum(1) / n_calls[i].sum(1)) / (d_new[j].sum(1) / d_calls[j].sum(1))
    tail = (1 - level) / 2
    return {"ratio": point_num / point_den, "low": float(np.quantile(ratios, tail)),
            "high": float(np.quantile(ratios, 1 - tail)), "share_at_most_one": float((ratios <= 1).mean()),
            "resamples": resamples}
