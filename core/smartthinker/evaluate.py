"""Mean completion length and accuracy of a policy on held-out arithmetic prompts.

Part of the SmartThinker reconstruction (ICML 2026, arXiv 2603.08000): the paper reports accuracy
and mean response length per benchmark; we measure both on held-out problems of our synthetic
arithmetic task. Length is counted as GRPO counts it: completion tokens up to and including the
first end-of-text token (or the cap). Greedy decoding gives one deterministic figure; sampling at
temperature 1 (seeded) measures the distribution GRPO actually trains.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlx26.core.common.errors import InputError


def generate(model: Any, tokenizer: Any, prompts: Sequence[str], *, max_new_tokens: int, greedy: bool = True,
             seed: int = 0, batch_size: int = 64) -> list[tuple[str, int]]:
    """(completion text, completion length in tokens) per prompt, in order."""
    import torch

    if max_new_tokens < 1:
        raise InputError(f"max_new_tokens must be ≥ 1, got {max_new_tokens}.")
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    out: list[tuple[str, int]] = []
    eos = tokenizer.eos_token_id
    try:
        torch.manual_seed(seed)
        model.eval()
        for start in range(0, len(prompts), batch_size):
            enc = tokenizer(list(prompts[start:start + batch_size]), return_tensors="pt", padding=True)
            with torch.no_grad():
                seq = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=not greedy,
                                     temperature=1.0 if not greedy else None, top_k=0 if not greedy else None,
                                     top_p=1.0 if not greedy else None,
                                     pad_token_id=tokenizer.pad_token_id, eos_token_id=eos)
            for row in seq[:, enc["input_ids"].shape[1]:].tolist():
                n = row.index(eos) + 1 if eos in row else len(row)
                out.append((tokenizer.decode(row[:n], skip_special_tokens=True), n))
    finally:
        tokenizer.padding_side = side
    return out


def evaluate(model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]], *, max_new_tokens: int,
             greedy: bool = True, seed: int = 0) -> dict[str, Any]:
    """``{accuracy, mean_length, verbose_share, n}`` on ``rows`` (``data.records`` rows)."""
    from mlx26.core.smartthinker.data import is_correct

    gen = generate(model, tokenizer, [r["prompt"] for r in rows], max_new_tokens=max_new_tokens, greedy=greedy,
                   seed=seed)
    right = [is_correct(text, r["answer"]) for (text, _), r in zip(gen, rows, strict=True)]
    lengths = [n for _, n in gen]
    n = max(1, len(rows))
    return {"decode": "greedy" if greedy else "sample", "n": len(rows), "accuracy": sum(right) / n,
            "mean_length": sum(lengths) / n,
            "verbose_share": sum("Check:" in text for text, _ in gen) / n,
            "truncated_share": sum(ln >= max_new_tokens and "Answer:" not in t for t, ln in gen) / n}
