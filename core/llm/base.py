"""The one interface every LLM backend implements (our own design; no paper reconstructed).

Callers use :meth:`Backend.chat` (messages) or :meth:`Backend.complete` (a raw prompt); both
validate their parameters into a :class:`~mlx26.core.llm.types.ChatRequest` and call
:meth:`Backend.call`, which concrete backends and wrappers implement. ``on_token`` receives
the first choice's text deltas as they are produced (their concatenation is the final text).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mlx26.core.llm.tokens import token_upper_bound
from mlx26.core.llm.types import Capabilities, ChatParams, ChatRequest, ChatResult, TokenCallback


class Backend:
    """Base class: subclasses set ``kind``, ``model``, ``label`` and implement ``call``/``capabilities``."""

    kind = "base"
    model: str
    label: str

    def __init__(self, model: str, label: str):
        self.model = model
        self.label = label  # a spec-like description for messages and provenance; never holds secrets

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label}>"

    # ------------------------------------------------------------------ public API
    def chat(self, messages: str | Iterable[Mapping[str, Any]], *, temperature: float = 0.0, max_tokens: int = 256,
             stop: str | Sequence[str] | None = None, seed: int | None = None, n: int = 1,
             on_token: TokenCallback | None = None) -> ChatResult:
        """Answer a conversation; ``messages`` is a list of ``{"role", "content"}`` or one user string."""
        params = ChatParams.make(temperature=temperature, max_tokens=max_tokens, stop=stop, seed=seed, n=n)
        return self.call(ChatRequest.chat(messages, params), on_token)

    def complete(self, prompt: str, *, temperature: float = 0.0, max_tokens: int = 256,
                 stop: str | Sequence[str] | None = None, seed: int | None = None, n: int = 1,
                 on_token: TokenCallback | None = None) -> ChatResult:
        """Continue a raw prompt (no chat template)."""
        params = ChatParams.make(temperature=temperature, max_tokens=max_tokens, stop=stop, seed=seed, n=n)
        return self.call(ChatRequest.completion(prompt, params), on_token)

    # ------------------------------------------------------------------ for subclasses
    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        raise NotImplementedError

    def capabilities(self) -> Capabilities:
        raise NotImplementedError

    def prompt_token_bound(self, request: ChatRequest) -> int:
        """An upper bound on the prompt tokens this request will be billed (used by the budget)."""
        if request.kind == "completion":
            return token_upper_bound([request.prompt], 0)
        return token_upper_bound((m["content"] for m in request.messages), len(request.messages))

    def close(self) -> None:
        """Release connections or models (idempotent)."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Wrapper(Backend):
    """A backend that delegates to ``inner`` (record, cache, ledger)."""

    def __init__(self, inner: Backend, label: str):
        super().__init__(inner.model, label)
        self.inner = inner

    def capabilities(self) -> Capabilities:
        return self.inner.capabilities()

    def prompt_token_bound(self, request: ChatRequest) -> int:
        return self.inner.prompt_token_bound(request)

    def close(self) -> None:
        self.inner.close()
