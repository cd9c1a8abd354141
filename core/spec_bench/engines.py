"""Decoding engines: plain decoding, our draft/verify loop (model or prompt-lookup drafts), HF assisted.

Our own loop (a reconstruction of standard speculative decoding: Leviathan et al. 2023, Chen et
al. 2023; prompt lookup after Saxena 2023). One *step* drafts up to k tokens, then runs the target
once on the not-yet-cached suffix plus the drafts, keeps the longest accepted prefix and one token
of the target's own. The first step's target call is the prefill (prompt + drafts), so every target
call is a verify step and AL = new tokens / target calls exactly. Both KV caches are cropped to the
accepted prefix after each step.

* greedy (temperature 0): a draft is accepted iff it equals the target's argmax — the output is
  plain greedy decoding token for token;
* sampling: a draft d with draft probability q(d) is kept with probability min(1, p(d)/q(d)); on a
  rejection the token is drawn from norm(max(0, p - q)); after k acceptances a bonus token is drawn
  from p. This is lossless: every emitted token is distributed as the target's p. A prompt-lookup
  draft is deterministic (q is one-hot), which the same rule covers.

Drafts are shortened to ``remaining - 1`` near the budget so that every step ends with the target's
own token (the identity above holds to the last step). When EOS is emitted mid-step the step keeps
the tokens up to it and its ``accepted`` counts the kept tokens beyond the first.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.spec_bench.metrics import Step, check_k
from mlx26.core.spec_bench.spec import NGRAM_MAX


@dataclass
class Generation:
    tokens: list[int]
    target_calls: int
    seconds: float
    steps: list[Step] = field(default_factory=list)
    draft_calls: int = 0
    first_token_s: float | None = None

    @property
    def acceptance_length(self) -> float | None:
        return None if self.target_calls == 0 else len(self.tokens) / self.target_calls


def _cache_arg(model: Any) -> str:
    # transformers >= 5.2x names the KV cache argument ``cache`` (``past_key_values`` before).
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


class _Cached:
    """A causal LM with its own KV cache, fed only the tokens it has not seen."""

    def __init__(self, model: Any):
        import torch
        from transformers import DynamicCache

        self.torch, self.model, self.arg = torch, model, _cache_arg(model)
        self.cache = DynamicCache()
        self.length = 0
        self.calls = 0

    def feed(self, seq: Sequence[int], extra: Sequence[int] = ()) -> Any:
        """Logits (n, V) for seq[self.length:] + extra; the cache then holds all of them."""
        ids = list(seq[self.length:]) + list(extra)
        if not ids:
            raise RunFailure("the draft/verify loop fed no tokens to the model")  # a bug in the loop, never user input
        out = self.model(input_ids=self.torch.tensor([ids]), use_cache=True, **{self.arg: self.cache})
        self.cache = getattr(out, self.arg, None) or getattr(out, "past_key_values", None) or self.cache
        self.length += len(ids)
        self.calls += 1
        return out.logits[0].float()

    def crop(self, length: int) -> None:
        if length < self.length:
            # a negative count removes that many from the end in transformers 4.x and 5.x alike
            self.cache.crop(length - self.length)
            self.length = length


def _pick(torch: Any, logits: Any, temperature: float, generator: Any) -> tuple[int, Any]:
    if temperature == 0:
        return int(torch.argmax(logits).item()), None
    probs = torch.softmax(logits / temperature, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator).item()), probs


class ModelDrafter:
    """Drafts with a small causal LM (its own KV cache)."""

    name = "model"

    def __init__(self, model: Any):
        self.model = model
        self.state: _Cached | None = None

    def start(self) -> None:
        self.state = _Cached(self.model)

    @property
    def calls(self) -> int:
        return self.state.calls if self.state else 0

    def propose(self, seq: Sequence[int], n: int, temperature: float, generator: Any) -> tuple[list[int], list[Any]]:
        assert self.state is not None
        torch = self.state.torch
        logits = self.state.feed(seq)[-1]
        drafts: list[int] = []
        qs: list[Any] = []
        for i in range(n):
            token, probs = _pick(torch, logits, temperature, generator)
            drafts.append(token)
            qs.append(probs)
            if i + 1 < n:
                logits = self.state.feed([], [token])[-1]
        return drafts, qs

    def rollback(self, length: int) -> None:
        assert self.state is not None
        self.state.crop(length)


class NgramDrafter:
    """Prompt-lookup decoding: continue the latest earlier occurrence of the context's last n-gram."""

    name = "prompt-lookup"

    def __init__(self, max_n: int = NGRAM_MAX):
        self.max_n = max_n
        self.calls = 0

    def start(self) -> None:
        self.calls = 0

    def propose(self, seq: Sequence[int], n: int, temperature: float, generator: Any) -> tuple[list[int], list[Any]]:
        if n <= 0:
            return [], []
        for size in range(min(self.max_n, len(seq) - 1), 0, -1):
            tail = list(seq[-size:])
            for start in range(len(seq) - size - 1, -1, -1):
                if list(seq[start:start + size]) == tail:
                    follow = list(seq[start + size:start + size + n])
                    if follow:
                        return follow, [None] * len(follow)
        return [], []

    def rollback(self, length: int) -> None:
        pass


def _verify(torch: Any, logits: Any, drafts: list[int], qs: list[Any], temperature: float, generator: Any
            ) -> tuple[int, int]:
    """(number of drafts accepted, the target's own next token) — greedy or lossless rejection sampling."""
    if temperature == 0:
        best = torch.argmax(logits, dim=-1).tolist()
        accepted = 0
        while accepted < len(drafts) and drafts[accepted] == best[accepted]:
            accepted += 1
        return accepted, int(best[accepted])
    probs = torch.softmax(logits / temperature, dim=-1)
    for i, d in enumerate(drafts):
        p = probs[i]
        q = qs[i]
        q_d = 1.0 if q is None else float(q[d])
        if float(torch.rand((), generator=generator)) * q_d < float(p[d]):  # u < p/q without dividing by 0
            continue
        if q is None:
            residual = p.clone()
            residual[d] = 0.0
        else:
            residual = torch.clamp(p - q, min=0.0)
        total = float(residual.sum())
        residual = residual / total if total > 0 else p
        return i, int(torch.multinomial(residual, 1, generator=generator).item())
    token = int(torch.multinomial(probs[len(drafts)], 1, generator=generator).item())
    return len(drafts), token


def speculative_decode(target: Any, drafter: Any, prompt: Sequence[int], max_new: int, k: int, *,
                       eos_ids: Iterable[int] = (), temperature: float = 0.0, generator: Any = None,
                       on_step: Callable[[list[int], Step], bool] | None = None) -> Generation:
    """Draft/verify loop; see the module docstring for the accounting. ``on_step`` returning True stops."""
    check_k(k)
    import torch

    eos = set(eos_ids)
    seq = list(prompt)
    out: list[int] = []
    steps: list[Step] = []
    verifier = _Cached(target)
    drafter.start()
    start = time.perf_counter()
    first = None
    with torch.inference_mode():
        while len(out) < max_new:
            n = min(k, max_new - len(out) - 1)
            drafts, qs = drafter.propose(seq, n, temperature, generator) if n > 0 else ([], [])
            logits = verifier.feed(seq, drafts)[-(len(drafts) + 1):]
            accepted, token = _verify(torch, logits, drafts, qs, temperature, generator)
            emitted = drafts[:accepted] + [token]
            for j, t in enumerate(emitted):
                if t in eos:
                    emitted = emitted[:j + 1]
                    break
            verifier.crop(len(seq) + accepted)
            drafter.rollback(len(seq) + accepted)
            seq += emitted
            out += emitted
            steps.append(Step(len(drafts), len(emitted) - 1))
            if first is None:
                first = time.perf_counter() - start
            if out[-1] in eos or (on_step is not None and on_step(emitted, steps[-1])):
                break
    return Generation(out, verifier.calls, time.perf_counter() - start, steps, drafter.calls, first)


def plain_decode(model: Any, prompt: Sequence[int], max_new: int, *, eos_ids: Iterable[int] = (),
                 temperature: float = 0.0, generator: Any = None) -> Generation:
    """The baseline: one target call per token, with a KV cache."""
    import torch

    eos = set(eos_ids)
    lm = _Cached(model)
    seq = list(prompt)
    out: list[int] = []
    start = time.perf_counter()
    first = None
    with torch.inference_mode():
        while len(out) < max_new:
            token, _ = _pick(torch, lm.feed(seq)[-1], temperature, generator)
            seq.append(token)
            out.append(token)
            if first is None:
                first = time.perf_counter() - start
            if token in eos:
                break
    return Generation(out, lm.calls, time.perf_counter() - start, first_token_s=first)


def hf_assisted(target: Any, draft: Any, prompt: Sequence[int], max_new: int, k: int, *,
                eos_ids: Iterable[int] = (), temperature: float = 0.0, seed: int = 0) -> Generation:
    """transformers' assisted generation (``assistant_model``) with a constant k; target calls counted by a hook."""
    check_k(k)
    import torch

    calls = [0]
    handle = target.register_forward_pre_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    eos = sorted(set(eos_ids))
    kwargs: dict[str, Any] = dict(max_new_tokens=max_new, assistant_model=draft, num_assistant_tokens=k,
                                  num_assistant_tokens_schedule="constant", assistant_confidence_threshold=0.0,
                                  eos_token_id=eos or None, pad_token_id=eos[0] if eos else 0)
    if temperature > 0:
        kwargs.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
        torch.manual_seed(seed)
    else:
        kwargs.update(do_sample=False)
    ids = torch.tensor([list(prompt)])
    start = time.perf_counter()
    try:
        with torch.inference_mode():
            result = target.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs)
    finally:
        handle.remove()
    tokens = result[0, len(prompt):].tolist()  # one row: generate stops at EOS, no padding
    return Generation(tokens, calls[0], time.perf_counter() - start)


def check_vocab(target_tok: Any, draft_tok: Any, target: Any, draft: Any) -> None:
    """Draft and target must share one vocabulary (ids mean the same tokens)."""
    tv, dv = target.config.vocab_size, draft.config.vocab_size
    if tv != dv or target_tok.get_vocab() != draft_tok.get_vocab():
        raise InputError(f"the draft and target vocabularies differ (target {tv} ids, draft {dv} ids"
                         f"{'' if tv != dv else ', same size but different tokens'}).",
                         "speculative decoding needs a draft with the target's tokenizer (e.g. tiny-llama-draft "
                         "for tiny-llama)")


def forward_cost(model: Any, context: int = 64, reps: int = 5) -> float:
    """Median seconds of one single-token forward call at ``context`` cached tokens (for c_draft / c_target)."""
    import statistics

    import torch

    times = []
    with torch.inference_mode():
        for _ in range(reps):
            lm = _Cached(model)
            lm.feed(list(range(3, 3 + context)))
            t0 = time.perf_counter()
            lm.feed([], [5])
            times.append(time.perf_counter() - t0)
    return statistics.median(times)
