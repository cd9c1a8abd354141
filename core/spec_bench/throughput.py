"""The Throughput split: prompts at exact input lengths (target tokenizer), by entropy tier, plus random tokens.

Our reconstruction of the paper's procedure: each pool prompt is encoded with the target's
tokenizer and cut to the length, or padded by appending the next prompts of its category (then of
the pool), so every sequence has exactly ``length`` ids (stored as ``input_ids``; the decoded text
goes along for servers). ``appended_prompts`` counts the pool prompts appended to reach the length:
0 for a single real document cut to length. Appending prompts of one category repeats its template
(the same instruction, the same question form), which prompt lookup can copy, so padded sequences are
not the long real inputs a served workload sends; the benchmark compares against both. Sequences are put in tiers by the Shannon entropy of their token
unigram distribution (bits): ``low`` / ``mixed`` / ``high`` are the lower, middle and upper thirds
at that length. ``random`` is SYNTHETIC: uniform ids over the non-special vocabulary, the variant
the paper shows to overestimate real throughput.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.spec_bench.prompts import Prompt
from mlx26.core.spec_bench.spec import TIERS


def token_entropy(ids: Sequence[int]) -> float:
    counts = Counter(ids)
    n = len(ids)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


def exact_length(pool: Sequence[Prompt], encode: Any, length: int, sep: Sequence[int]
                 ) -> list[tuple[Prompt, list[int], int]]:
    """(prompt, exactly ``length`` ids, number of prompts appended to reach the length) for each pool prompt."""
    encoded = [list(encode(p.text)) for p in pool]
    order = list(range(len(pool)))
    out = []
    for i, p in enumerate(pool):
        ids = list(encoded[i])
        appended = 0
        same = [j for j in order if pool[j].category == p.category and j != i]
        rest = [j for j in order if pool[j].category != p.category]
        queue = same[same.index(i) if i in same else 0:] + same + rest
        for j in queue:
            if len(ids) >= length:
                break
            ids += list(sep) + encoded[j]
            appended += 1
        while len(ids) < length:  # a pool shorter than one sequence: repeat it
            ids += list(sep) + encoded[i]
            appended += 1
        out.append((p, ids[:length], appended))
    return out


def build(pool: Sequence[Prompt], tokenizer: Any, lengths: Sequence[int], per_tier: int, *, seed: int = 0,
          context: int | None = None, tiers: Sequence[str] = TIERS) -> list[dict[str, Any]]:
    import numpy as np

    if per_tier < 1:
        raise InputError(f"--per-tier must be >= 1, got {per_tier}.")
    for length in lengths:
        if length < 1:
            raise InputError(f"--length must be >= 1, got {length}.")
        if context and length >= context:
            raise InputError(f"--length {length} does not fit the target's context of {context} tokens.",
                             f"use lengths below {context} (the paper's {length}-token tier is configuration only here)")
    rng = np.random.default_rng(seed)
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    vocab = [i for i in range(len(tokenizer)) if i not in special]
    sep = tokenizer("\n\n", add_special_tokens=False)["input_ids"]

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    records: list[dict[str, Any]] = []
    for length in lengths:
        rows = exact_length(pool, encode, length, sep)
        ranked = sorted(rows, key=lambda r: token_entropy(r[1]))
        third = max(1, len(ranked) // 3)
        groups = {"low": ranked[:third], "mixed": ranked[third:len(ranked) - third] or ranked,
                  "high": ranked[len(ranked) - third:]}
        for tier in tiers:
            if tier == "random":
                for n in range(per_tier):
                    ids = [int(v) for v in rng.choice(vocab, size=length)]
                    records.append(_record(f"random-{length}-{n}", "random", length, tier, ids, tokenizer, "SYNTHETIC",
                                           0))
                continue
            group = groups[tier]
            picks = rng.choice(len(group), size=min(per_tier, len(group)), replace=False)
            for n in sorted(int(x) for x in picks):
                p, ids, appended = group[n]
                records.append(_record(p.id, p.category, length, tier, ids, tokenizer, "pool", appended))
    return records


def _record(ident: str, category: str, length: int, tier: str, ids: list[int], tokenizer: Any, data: str,
            appended: int) -> dict[str, Any]:
    return {"id": f"{ident}@{length}", "category": f"{tier}@{length}", "source_category": category,
            "length": length, "tier": tier, "entropy_bits": round(token_entropy(ids), 4), "data": data,
            "appended_prompts": appended,
            "input_ids": ids, "prompt": tokenizer.decode(ids)}
