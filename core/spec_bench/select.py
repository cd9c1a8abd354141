"""The Qualitative split: pick k prompts per category that are as semantically diverse as possible.

Two selectors on unit-norm embeddings (our own implementation of the standard heuristics the paper
names): *greedy* adds, one at a time, the prompt with the least summed cosine similarity to those
already chosen; *farthest* (farthest-point / k-center) adds the prompt whose largest similarity to
the chosen ones is smallest. Both start from the prompt with the least mean similarity to its
category. Diversity is the mean pairwise cosine of the chosen set (lower = more diverse), compared
with ``n_random`` uniformly random subsets of the same size (seeded): ``beats_random`` is the share
of random subsets whose mean pairwise cosine is strictly higher. A category with at most k prompts
is kept whole, with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.spec_bench.prompts import Prompt, by_category
from mlx26.core.spec_bench.spec import SELECTORS


def mean_pairwise_cosine(vectors: Any, idx: Sequence[int]) -> float | None:
    n = len(idx)
    if n < 2:
        return None
    sub = vectors[list(idx)]
    sims = sub @ sub.T
    return float((sims.sum() - sims.trace()) / (n * (n - 1)))


def choose(vectors: Any, k: int, method: str) -> list[int]:
    import numpy as np

    sims = vectors @ vectors.T
    n = len(vectors)
    if k >= n:
        return list(range(n))
    chosen = [int(np.argmin(sims.sum(axis=1)))]
    score = sims[chosen[0]].copy()  # greedy: summed similarity; farthest: max similarity to the chosen
    while len(chosen) < k:
        masked = score.copy()
        masked[chosen] = np.inf
        nxt = int(np.argmin(masked))
        chosen.append(nxt)
        score = score + sims[nxt] if method == "greedy" else np.maximum(score, sims[nxt])
    return chosen


def select_split(pool: Sequence[Prompt], vectors: Any, k: int, method: str = "greedy", n_random: int = 200,
                 seed: int = 0) -> tuple[list[Prompt], list[dict[str, Any]], list[str]]:
    """(chosen prompts, one diversity row per category, warnings)."""
    import numpy as np

    if k < 1:
        raise InputError(f"--per-category must be >= 1, got {k}.")
    if method not in SELECTORS:
        raise InputError(f"unknown selector {method!r}.", "choose one of: " + ", ".join(SELECTORS))
    rng = np.random.default_rng(seed)
    index = {id(p): i for i, p in enumerate(pool)}
    chosen: list[Prompt] = []
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for category, members in by_category(pool).items():
        idx = [index[id(p)] for p in members]
        sub = vectors[idx]
        if len(members) <= k:
            warnings.append(f"category '{category}' has {len(members)} prompt(s), not more than --per-category "
                            f"{k}: all kept.")
        picks = choose(sub, k, method)
        chosen += [members[i] for i in picks]
        mine = mean_pairwise_cosine(sub, picks)
        randoms = [mean_pairwise_cosine(sub, rng.choice(len(members), size=k, replace=False))
                   for _ in range(n_random)] if len(members) > k and k >= 2 else []
        rows.append({"category": category, "pool": len(members), "chosen": len(picks),
                     "mean_cosine": mine, "random_mean_cosine": float(np.mean(randoms)) if randoms else None,
                     "beats_random": (sum(r > mine for r in randoms) / len(randoms)) if randoms else None,
                     "all_cosine": mean_pairwise_cosine(sub, range(len(members)))})
    return chosen, rows, warnings
