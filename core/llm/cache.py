"""``cache:FILE=SPEC`` — answer repeated deterministic requests from a cache (memory or a JSONL file).

Our own utility (no paper reconstructed). A request is cached only when its answer is meant
to be reproducible: temperature 0, or a fixed seed. The key is the same hash as replay's,
and a cache file has the record format, so ``replay:FILE`` can serve it offline. A hit
returns the stored result with ``cached=True`` (the ledger bills it nothing).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from mlx26.core.llm.base import Backend, Wrapper
from mlx26.core.llm.recording import CallWriter, read_calls, stream_text
from mlx26.core.llm.types import ChatRequest, ChatResult, TokenCallback


def cacheable(request: ChatRequest) -> bool:
    return request.params.temperature == 0 or request.params.seed is not None


class CachingBackend(Wrapper):
    kind = "cache"

    def __init__(self, inner: Backend, path: str | None = None):
        super().__init__(inner, f"cache:{path or ''}={inner.label}")
        self._store: dict[str, ChatResult] = {}
        self._lock = threading.Lock()
        self.writer = CallWriter(path) if path else None
        self.hits = self.misses = 0
        if path and Path(path).is_file() and Path(path).stat().st_size:
            for record in read_calls(path):
                self._store[record["key"]] = ChatResult.from_dict(record["result"])

    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        start = time.perf_counter()
        key = request.key(self.inner.model) if cacheable(request) else None
        hit = self._store.get(key) if key else None
        if hit is not None:
            with self._lock:
                self.hits += 1
            stream_text(hit, on_token)
            return ChatResult(hit.choices, hit.usage, time.perf_counter() - start, hit.model, hit.backend,
                              hit.replayed_from, cached=True)
        result = self.inner.call(request, on_token)
        with self._lock:
            self.misses += 1
        if cacheable(request):
            key = request.key(self.inner.model)  # the model may have been resolved by the call
            with self._lock:
                self._store[key] = result
            if self.writer is not None:
                self.writer.append(key, self.inner.model, self.inner.label, request, result)
        return result
