"""``hf:NAME_OR_PATH`` — local generation with a transformers causal LM, usage counted by its tokenizer.

Our own decoding loop (no paper reconstructed). The model and tokenizer come from the mlx26
model zoo (``mlx26.core.zoo.load_model`` / ``load_tokenizer``): a zoo name such as
``tiny-llama``, or any folder written by ``save_pretrained``; neither touches the network
(``local_files_only``), so ``HF_HUB_OFFLINE=1`` is fine. A hub id ``owner/name`` is only
tried when the network is allowed.

* The prompt is the tokenizer's chat template with the generation prompt; without a template
  (or if it fails on these messages) it is the plain concatenation of
  :func:`~mlx26.core.llm.tokens.render_plain`. Raw completions use the prompt as is.
* Greedy at temperature 0, else softmax sampling at that temperature from a
  ``torch.Generator`` seeded with ``seed`` (choice i of n continues the same generator),
  with a KV cache; generation stops at an EOS id, a stop string (excluded from the text) or
  ``max_tokens`` (finish_reason ``length``), and never runs past the model's context.
* Usage is exact and labelled ``local``: prompt ids and generated ids (EOS included).
* Calls are serialised by a lock (one model, shared by the server's threads).

The shipped tiny models only prove the plumbing: their text is not meaningful.
"""

from __future__ import annotations

import inspect
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.llm.base import Backend
from mlx26.core.llm.tokens import cut_at_stop, render_plain
from mlx26.core.llm.types import Capabilities, ChatRequest, ChatResult, Choice, TokenCallback, Usage


def _ids(value: Any) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, int):
        return {value}
    return {int(v) for v in value}


class HFBackend(Backend):
    kind = "hf"

    def __init__(self, spec: str, *, model: Any = None, tokenizer: Any = None):
        import torch
        from mlx26.core.common.threads import apply_torch_threads

        apply_torch_threads(torch)
        if model is None or tokenizer is None:
            from mlx26.core.zoo import load_model, load_tokenizer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # stderr carries notices, not loading bars

            model = load_model(spec) if model is None else model
            tokenizer = load_tokenizer(spec) if tokenizer is None else tokenizer
        self.torch = torch
        self.lm = model.eval()
        self.tokenizer = tokenizer
        name = Path(spec).name if Path(spec).expanduser().exists() else spec
        super().__init__(name, f"hf:{spec}")
        config = model.config
        self.max_context = getattr(config, "max_position_embeddings", None)
        generation = getattr(model, "generation_config", None)
        self.eos_ids = (_ids(getattr(config, "eos_token_id", None)) | _ids(tokenizer.eos_token_id)
                        | _ids(getattr(generation, "eos_token_id", None)))
        self.has_template = bool(getattr(tokenizer, "chat_template", None))
        # transformers ≥ 5.2x names the KV cache ``cache`` (``past_key_values`` before).
        self._cache_arg = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        self._lock = threading.Lock()

    def capabilities(self) -> Capabilities:
        return Capabilities(self.kind, self.model, streaming=True, native_n=True, seed=True, stop=True,
                            completions=True, usage_source="local", deterministic=True,
                            max_context=self.max_context,
                            notes="chat template" if self.has_template else "no chat template: plain concatenation")

    # ------------------------------------------------------------------ prompt
    def render(self, request: ChatRequest) -> tuple[str, bool]:
        """(prompt text, whether the tokenizer should add its special tokens)."""
        if request.kind == "completion":
            return request.prompt, True
        if self.has_template:
            try:
                text = self.tokenizer.apply_chat_template(list(request.messages), add_generation_prompt=True,
                                                          tokenize=False)
                bos = self.tokenizer.bos_token
                return text, not (bos and text.startswith(bos))
            except Exception:  # a template that rejects these roles: fall back to plain text  # noqa: S110
                pass
        return render_plain(request.messages), True

    def encode(self, request: ChatRequest) -> list[int]:
        text, add_special = self.render(request)
        return list(self.tokenizer(text, add_special_tokens=add_special)["input_ids"])

    def prompt_token_bound(self, request: ChatRequest) -> int:
        return len(self.encode(request))  # exact

    # ------------------------------------------------------------------ generation
    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        start = time.perf_counter()
        prompt = self.encode(request)
        params = request.params
        budget = params.max_tokens
        if self.max_context:
            if len(prompt) >= self.max_context:
                raise InputError(f"the prompt has {len(prompt)} tokens; {self.model} has a context of "
                                 f"{self.max_context}.", "shorten the prompt")
            budget = min(budget, self.max_context - len(prompt))
        seed = params.seed if params.seed is not None else secrets.randbits(63)
        choices, generated = [], 0
        with self._lock, self.torch.inference_mode():
            generator = self.torch.Generator().manual_seed(seed)
            for index in range(params.n):
                text, finish, count = self._generate(prompt, budget, params.temperature, params.stop, generator,
                                                     on_token if index == 0 else None)
                choices.append(Choice(text, finish))
                generated += count
        usage = Usage(len(prompt), generated, "local")
        return ChatResult(tuple(choices), usage, time.perf_counter() - start, self.model, self.kind)

    def _pick(self, logits: Any, temperature: float, generator: Any) -> int:
        torch = self.torch
        if temperature == 0:
            return int(torch.argmax(logits).item())
        probs = torch.softmax(logits.float() / temperature, dim=-1)
        return int(torch.multinomial(probs, 1, generator=generator).item())

    def _generate(self, prompt: list[int], budget: int, temperature: float, stop: tuple[str, ...],
                  generator: Any, on_token: TokenCallback | None) -> tuple[str, str, int]:
        torch = self.torch
        decode = self.tokenizer.decode
        holdback = max((len(s) for s in stop), default=1) - 1
        out = self.lm(input_ids=torch.tensor([prompt]), use_cache=True)
        new: list[int] = []
        sent = 0
        finish = "length"
        text = ""
        stopped = False
        for step in range(budget):
            token = self._pick(out.logits[0, -1], temperature, generator)
            new.append(token)
            if token in self.eos_ids:
                finish = "stop"
                break
            text, stopped = cut_at_stop(decode(new, skip_special_tokens=True), stop)
            if stopped:
                finish = "stop"
                break
            safe = len(text) - holdback
            while safe > sent and text[safe - 1] == "\ufffd":  # an incomplete UTF-8 sequence
                safe -= 1
            if on_token is not None and safe > sent:
                on_token(text[sent:safe])
                sent = safe
            if step + 1 < budget:
                cache = getattr(out, self._cache_arg)
                out = self.lm(input_ids=torch.tensor([[token]]), use_cache=True, **{self._cache_arg: cache})
        if not stopped:  # the full decode (EOS dropped) is the text
            text = decode([t for t in new if t not in self.eos_ids], skip_special_tokens=True)
        if on_token is not None and len(text) > sent:
            on_token(text[sent:])
        return text, finish, len(new)
