"""``mlx26 llm serve --self-test``: check a running server end to end with the built-in client.

Our own check (no paper reconstructed): lists the models, answers a chat, streams one
(the deltas must add up to the text), completes a raw prompt and reads ``/metrics``.
Any failure is an :class:`LLMError`; faults configured on the server go through the
client's retry logic, so ``--fault 429 --fault-count 1`` shows a retry that succeeds.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.llm.types import LLMError


def self_test(base_url: str, model: str, *, api_key: str | None = None, timeout: float = 10.0,
              retries: int = 3) -> dict[str, Any]:
    from mlx26.core.llm.openai_backend import OpenAIBackend

    client = OpenAIBackend(base_url, model, timeout=timeout, max_retries=retries, backoff_s=0.05,
                           api_key=api_key)
    with client:
        models = client.list_models()
        if model not in models:
            raise LLMError(f"self-test: {base_url} lists {models}, not '{model}'.")
        chat = client.chat("hello", max_tokens=32, seed=0)
        deltas: list[str] = []
        streamed = client.chat("hello", max_tokens=32, seed=0, on_token=deltas.append)
        if "".join(deltas) != streamed.text:
            raise LLMError("self-test: the streamed deltas do not add up to the streamed text.")
        completion = client.complete("hello", max_tokens=16, seed=0)
        root = base_url[:-3] if base_url.endswith("/v1") else base_url
        metrics = client._send("GET", f"{root}/metrics").text
        if "mlx26_llm_requests_total" not in metrics:
            raise LLMError(f"self-test: {root}/metrics has no mlx26_llm_requests_total.")
        return {"ok": True, "base_url": base_url, "models": models, "chat": chat.text,
                "chat_finish_reason": chat.finish_reason, "prompt_tokens": chat.usage.prompt_tokens,
                "completion_tokens": chat.usage.completion_tokens, "usage_source": chat.usage.source,
                "stream_chunks": len(deltas), "stream_text_matches": True, "completion": completion.text,
                "http_attempts": client.attempts,
                "metrics_lines": sum(1 for line in metrics.splitlines() if line and not line.startswith("#"))}
