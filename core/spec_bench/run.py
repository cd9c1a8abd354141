"""One benchmark run: an engine against plain decoding on a list of prompts, in the same process.

Per prompt: plain decoding (the baseline) and the speculative engine, both timed; greedy match
(token-for-token equality with plain greedy) when asked or at temperature 0; accepted lengths per
step. The summary gives AL = new tokens / target calls, acceptance rate, conditional / joint
acceptance by position, tokens per second, the measured wall speedup (labelled CPU-specific) and
the modelled speedup tau / (1 + k c_draft / c_target), with c_draft / c_target measured as the
ratio of single-token forward times (0 for prompt lookup, whose drafts cost no model call).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Sequence
from typing import Any

from mlx26.core._version import __version__
from mlx26.core.common.errors import InputError
from mlx26.core.spec_bench import engines as E
from mlx26.core.spec_bench import metrics as M
from mlx26.core.spec_bench.prompts import Prompt
from mlx26.core.zoo.registry import trained_context

CPU_LABEL = "CPU-specific wall speedup (tiny zoo models, {cores} core(s)); not a GPU figure"


def load_pair(target: str, draft: str | None) -> dict[str, Any]:
    """Target, draft (or None) and tokenizer, with the vocabulary check."""
    import torch
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.zoo import load_model, load_tokenizer
    from transformers.utils import logging as hf_logging

    apply_torch_threads(torch)
    hf_logging.set_verbosity_error()  # generate()'s deprecation chatter is not a notice for our users
    tm, tt = load_model(target), load_tokenizer(target)
    out: dict[str, Any] = {"target": tm, "tokenizer": tt, "draft": None}
    if draft:
        dm, dt = load_model(draft), load_tokenizer(draft)
        E.check_vocab(tt, dt, tm, dm)
        out["draft"] = dm
    eos = {int(x) for x in ([tm.config.eos_token_id] if isinstance(tm.config.eos_token_id, int)
                            else (tm.config.eos_token_id or []))}
    if tt.eos_token_id is not None:
        eos.add(int(tt.eos_token_id))
    out["eos"] = eos
    out["context"] = getattr(tm.config, "max_position_embeddings", None)
    out["trained_context"] = trained_context(target)
    out["draft_trained_context"] = trained_context(draft) if draft else None
    return out


def positions_needed(prompt_tokens: int, max_tokens: int, k: int) -> int:
    """Positions a prompt can reach: its tokens, the new ones, and up to k drafts verified past the last of them."""
    return prompt_tokens + max_tokens + k


def encode_prompts(prompts: Sequence[Prompt], tokenizer: Any, ids: Sequence[Sequence[int] | None], max_tokens: int,
                   context: int | None, k: int, truncate: int | None = None) -> list[list[int]]:
    """Token ids per prompt; ``truncate`` keeps the last N (left truncation, as vLLM's truncate_prompt_tokens)."""
    out = []
    for p, given in zip(prompts, ids, strict=True):
        toks = list(given) if given is not None else tokenizer(p.text)["input_ids"]
        if given is not None and any(not 0 <= t < len(tokenizer) for t in toks):  # saved by build-throughput
            raise InputError(f"prompt '{p.id}' ({p.category}): its input_ids fall outside the target's vocabulary of "
                             f"{len(tokenizer)} tokens, so they were not built with this target's tokenizer.",
                             "rebuild the file with spec-bench build-throughput --target <this target>")
        if truncate:
            toks = toks[-truncate:]
        if not toks:
            raise InputError(f"prompt '{p.id}' ({p.category}) encodes to no tokens.")
        if context and positions_needed(len(toks), max_tokens, k) > context:
            raise InputError(f"prompt '{p.id}' ({p.category}) has {len(toks)} tokens: with --max-tokens {max_tokens} "
                             f"and -k {k} it exceeds the target's context of {context}.",
                             "shorten the prompt, lower --max-tokens, or pass --truncate-prompt-tokens N")
        out.append(toks)
    return out


def run(prompts: Sequence[Prompt], models: dict[str, Any], *, engine: str, k: int, max_tokens: int,
        temperature: float = 0.0, seed: int = 0, check_greedy: bool = False,
        ids: Sequence[Sequence[int] | None] | None = None, truncate: int | None = None,
        progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Plain decoding and ``engine`` on each prompt; ``progress(prompts_done, prompts)`` after each (a display)."""
    import os

    import torch

    M.check_k(k)
    if engine != "prompt-lookup" and models["draft"] is None:
        raise InputError(f"--engine {engine} needs --draft.")
    if not 0 <= temperature <= 2:
        raise InputError(f"--temperature must be in [0, 2], got {temperature}.")
    target, draft, tok, eos = models["target"], models["draft"], models["tokenizer"], models["eos"]
    encoded = encode_prompts(prompts, tok, ids or [None] * len(prompts), max_tokens, models["context"], k, truncate)
    # The shorter of the windows the models in use were trained on (the draft runs at the same positions).
    windows = [w for w in (models.get("trained_context"), models.get("draft_trained_context") if engine != "prompt-lookup"
                           else None) if w]
    trained = min(windows) if windows else None
    rows: list[dict[str, Any]] = []
    all_steps: list[M.Step] = []
    totals = {"new": 0, "calls": 0, "spec_s": 0.0, "plain_s": 0.0, "plain_new": 0}
    matches: list[bool] = []
    for n, (p, toks) in enumerate(zip(prompts, encoded, strict=True)):
        gen = torch.Generator().manual_seed(seed + n)
        plain = E.plain_decode(target, toks, max_tokens, eos_ids=eos, temperature=temperature,
                               generator=torch.Generator().manual_seed(seed + n))
        spec = _engine(engine, target, draft, toks, max_tokens, k, eos, temperature, gen, seed + n)
        match = None
        if temperature == 0:
            match = spec.tokens == plain.tokens
        elif check_greedy:
            g_plain = E.plain_decode(target, toks, max_tokens, eos_ids=eos)
            g_spec = _engine(engine, target, draft, toks, max_tokens, k, eos, 0.0, None, seed + n)
            match = g_spec.tokens == g_plain.tokens
        if match is not None:
            matches.append(match)
        all_steps += spec.steps
        totals["new"] += len(spec.tokens)
        totals["calls"] += spec.target_calls
        totals["spec_s"] += spec.seconds
        totals["plain_s"] += plain.seconds
        totals["plain_new"] += len(plain.tokens)
        row = {"id": p.id, "category": p.category, "prompt_tokens": len(toks), "new_tokens": len(spec.tokens),
               "target_calls": spec.target_calls, "acceptance_length": spec.acceptance_length,
               "accepted": [s.accepted for s in spec.steps] if spec.steps else None,
               "spec_tokens_per_s": len(spec.tokens) / spec.seconds if spec.seconds else None,
               "plain_tokens_per_s": len(plain.tokens) / plain.seconds if plain.seconds else None,
               "wall_speedup_cpu": plain.seconds / spec.seconds if spec.seconds else None,
               "spec_seconds": spec.seconds, "plain_seconds": plain.seconds}
        if check_greedy or temperature == 0:
            row["greedy_match"] = match
        rows.append(row)
        if progress is not None:
            progress(n + 1, len(encoded))
    ratio = 0.0 if engine == "prompt-lookup" else E.forward_cost(draft) / E.forward_cost(target)
    al = M.acceptance_length(totals["new"], totals["calls"])
    per_step = M.summarize(all_steps, totals["new"], totals["calls"], k) if all_steps else {
        "acceptance_length": al, "acceptance_rate": None if al is None else (al - 1) / k, "steps": totals["calls"],
        "target_calls": totals["calls"], "new_tokens": totals["new"], "accepted_histogram": None,
        "conditional": None, "joint": None}
    spec_tps = totals["new"] / totals["spec_s"] if totals["spec_s"] else None
    plain_tps = totals["plain_new"] / totals["plain_s"] if totals["plain_s"] else None
    cores = os.cpu_count() or 1
    summary = {**per_step, "engine": engine, "k": k, "prompts": len(rows), "temperature": temperature,
               "spec_tokens_per_s": spec_tps, "plain_tokens_per_s": plain_tps,
               "wall_speedup_cpu": spec_tps / plain_tps if spec_tps and plain_tps else None,
               "wall_speedup_label": CPU_LABEL.format(cores=cores), "c_draft_over_c_target": ratio,
               "modelled_speedup": M.modelled_speedup(al, k, ratio),
               "greedy_match": all(matches) if matches else None, "truncate_prompt_tokens": truncate,
               "trained_context": models.get("trained_context"),
               "draft_trained_context": models.get("draft_trained_context") if engine != "prompt-lookup" else None,
               "prompts_past_trained_context": None if trained is None else
               sum(positions_needed(len(t), max_tokens, k) > trained for t in encoded)}
    return {"summary": summary, "by_category": by_category(rows, k, ratio), "prompts": rows,
            "provenance": {"mlx26": __version__, "seed": seed, "python": platform.python_version(),
                           "torch": torch.__version__}}


def _engine(engine: str, target: Any, draft: Any, toks: list[int], max_tokens: int, k: int, eos: set[int],
            temperature: float, gen: Any, seed: int) -> E.Generation:
    if engine == "ours":
        return E.speculative_decode(target, E.ModelDrafter(draft), toks, max_tokens, k, eos_ids=eos,
                                    temperature=temperature, generator=gen)
    if engine == "prompt-lookup":
        return E.speculative_decode(target, E.NgramDrafter(), toks, max_tokens, k, eos_ids=eos,
                                    temperature=temperature, generator=gen)
    return E.hf_assisted(target, draft, toks, max_tokens, k, eos_ids=eos, temperature=temperature, seed=seed)


def by_category(rows: Sequence[dict[str, Any]], k: int, cost_ratio: float | None = None) -> list[dict[str, Any]]:
    """Per category: pooled AL, the modelled speedup from that AL (when the draft's cost ratio is known) and
    the category's own wall speedup (its plain decoding seconds over its speculative seconds)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["category"], []).append(r)
    out = []
    for category, members in groups.items():
        new = sum(r["new_tokens"] for r in members)
        calls = sum(r["target_calls"] for r in members)
        matches = [r["greedy_match"] for r in members if r.get("greedy_match") is not None]
        al = M.acceptance_length(new, calls)
        spec_s = sum(r.get("spec_seconds") or 0.0 for r in members)
        plain_s = sum(r.get("plain_seconds") or 0.0 for r in members)
        out.append({"category": category, "prompts": len(members), "acceptance_length": al,
                    "new_tokens": new, "target_calls": calls,
                    "greedy_match": all(matches) if matches else None,
                    "modelled_speedup": None if cost_ratio is None else M.modelled_speedup(al, k, cost_ratio),
                    "wall_speedup_cpu": plain_s / spec_s if spec_s and plain_s else None})
    return out
