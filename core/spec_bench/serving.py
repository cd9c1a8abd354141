"""The backend of ``mlx26 llm serve --llm hf:TARGET --draft DRAFT``: our verify loop behind the server.

An :class:`~mlx26.core.llm.hf_backend.HFBackend` whose generation runs
:func:`~mlx26.core.spec_bench.engines.speculative_decode` (greedy or lossless sampling, k drafts),
streaming each step's tokens, and counting spec-decode work under vLLM's metric names so that
any client that reads vLLM's ``/metrics`` reads ours the same way:
``vllm:spec_decode_num_drafts_total`` (steps), ``…num_draft_tokens_total``,
``…num_accepted_tokens_total`` and ``…num_accepted_tokens_per_pos_total{position}``. Every
verify step counts as one draft (also a step that drafted 0 tokens at the budget's end), so
1 + accepted / drafts equals the engine log's new tokens / target calls exactly. Our own code.
"""

from __future__ import annotations

import threading
from typing import Any

from mlx26.core.llm.hf_backend import HFBackend
from mlx26.core.llm.tokens import cut_at_stop
from mlx26.core.llm.types import TokenCallback
from mlx26.core.spec_bench import engines as E
from mlx26.core.spec_bench import spec as S
from mlx26.core.spec_bench.metrics import Step, check_k


class SpecCounters:
    def __init__(self, k: int, model: str):
        self.k, self.model = k, model
        self._lock = threading.Lock()
        self.drafts = self.draft_tokens = self.accepted = 0
        self.per_pos = [0] * k
        self.log: list[dict[str, int]] = []  # the engine's own log: one entry per generation

    def step(self, step: Step) -> None:
        with self._lock:
            self.drafts += 1
            self.draft_tokens += step.drafted
            self.accepted += step.accepted
            for i in range(min(step.accepted, self.k)):
                self.per_pos[i] += 1

    def record(self, new_tokens: int, target_calls: int) -> None:
        with self._lock:
            self.log.append({"new_tokens": new_tokens, "target_calls": target_calls})

    def render(self) -> str:
        label = f'model_name="{self.model}"'
        with self._lock:
            lines = []
            for name, value, text in ((S.VLLM_DRAFTS, self.drafts, "Verify steps (drafts)."),
                                      (S.VLLM_DRAFT_TOKENS, self.draft_tokens, "Draft tokens proposed."),
                                      (S.VLLM_ACCEPTED, self.accepted, "Draft tokens accepted.")):
                lines += [f"# HELP {name} {text}", f"# TYPE {name} counter", f"{name}_total{{{label}}} {value}"]
            lines += [f"# HELP {S.VLLM_PER_POS} Accepted draft tokens by position.", f"# TYPE {S.VLLM_PER_POS} counter"]
            lines += [f'{S.VLLM_PER_POS}_total{{{label},position="{i}"}} {n}' for i, n in enumerate(self.per_pos)]
            return "\n".join(lines) + "\n"


class SpecHFBackend(HFBackend):
    """``hf:TARGET`` with a draft model: speculative decoding with ``k`` drafts per step."""

    def __init__(self, spec: str, draft: str, k: int = 4):
        check_k(k)
        super().__init__(spec)
        from mlx26.core.zoo import load_model, load_tokenizer

        self.draft_lm = load_model(draft).eval()
        E.check_vocab(self.tokenizer, load_tokenizer(draft), self.lm, self.draft_lm)
        self.k = k
        self.label = f"hf:{spec}+draft:{draft}(k={k})"
        self.counters = SpecCounters(k, self.model)

    def prometheus_extra(self) -> str:
        return self.counters.render()

    def _generate(self, prompt: list[int], budget: int, temperature: float, stop: tuple[str, ...],
                  generator: Any, on_token: TokenCallback | None) -> tuple[str, str, int]:
        decode = self.tokenizer.decode
        holdback = max((len(s) for s in stop), default=1) - 1
        new: list[int] = []
        state = {"sent": 0, "text": "", "stopped": False}

        def on_step(emitted: list[int], step: Step) -> bool:
            self.counters.step(step)
            new.extend(emitted)
            text, stopped = cut_at_stop(decode([t for t in new if t not in self.eos_ids], skip_special_tokens=True),
                                        stop)
            state["text"], state["stopped"] = text, stopped
            safe = len(text) if stopped else len(text) - holdback
            while safe > state["sent"] and text[safe - 1] == "\ufffd":  # an incomplete UTF-8 sequence
                safe -= 1
            if on_token is not None and safe > state["sent"]:
                on_token(text[state["sent"]:safe])
                state["sent"] = safe
            return stopped

        gen = E.speculative_decode(self.lm, E.ModelDrafter(self.draft_lm), prompt, budget, self.k,
                                   eos_ids=self.eos_ids, temperature=temperature, generator=generator, on_step=on_step)
        self.counters.record(len(gen.tokens), gen.target_calls)
        finish = "stop" if state["stopped"] or (gen.tokens and gen.tokens[-1] in self.eos_ids) else "length"
        text = state["text"]
        if on_token is not None and len(text) > state["sent"]:
            on_token(text[state["sent"]:])
        return text, finish, len(gen.tokens)
