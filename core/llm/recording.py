"""``record:FILE=SPEC`` writes every call to a JSONL file; ``replay:FILE`` answers from it offline.

Our own test device (no paper reconstructed). One JSON object a line:

    {"key": sha256, "model": …, "backend": "openai:http://…#m", "request": {kind, messages|prompt, params},
     "result": {text, finish_reason, choices, usage, …}, "recorded_at": "…Z"}

``key`` is :meth:`ChatRequest.key` of (model, messages or prompt, params), so the same file
serves the cache wrapper too. A recording also keeps the prompt-token bounds the budget asked
for, one ``{"bound": N, "key": …, "model": …}`` line per distinct request, so a replayed run
prices planned calls exactly as the recorded one did (calls it never made included). A request recorded k times replays its k results in order, then
repeats the last. A replayed result keeps the recorded text, usage and model, has backend
``replay`` and names its original backend in ``replayed_from``. Recording appends to an
existing file (a session accumulates); it never truncates one.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.llm.base import Backend, Wrapper
from mlx26.core.llm.tokens import pieces
from mlx26.core.llm.types import Capabilities, ChatRequest, ChatResult, LLMError, TokenCallback


def read_calls(path: str, *, bounds: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The call records of a call file (InputError naming a malformed line); bound lines go to ``bounds``."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"call file not found: {path}", "record one first with record:FILE=SPEC")
    records = []
    with open(p, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if isinstance(record, dict) and "bound" in record and "result" not in record:
                    if not isinstance(record["bound"], int) or not isinstance(record["key"], str):
                        raise TypeError("bound must be an integer and key a string")
                    if bounds is not None:
                        bounds[record["key"]] = record["bound"]
                    continue
                ChatResult.from_dict(record["result"])
                if not isinstance(record["key"], str) or not isinstance(record["model"], str):
                    raise TypeError("key and model must be strings")
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{path} line {number}: not a recorded call ({exc}).") from None
            records.append(record)
    return records


class CallWriter:
    """Thread-safe appends of call records to a JSONL file (one flushed line per call)."""

    def __init__(self, path: str):
        p = Path(path)
        if p.is_dir():
            raise InputError(f"call file is a directory: {path}")
        if not p.parent.exists():
            raise InputError(f"directory does not exist for call file: {path}")
        self.path = p
        self._lock = threading.Lock()

    def append_bound(self, key: str, model: str, bound: int) -> None:
        line = json.dumps({"bound": bound, "key": key, "model": model}, sort_keys=True) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()

    def append(self, key: str, model: str, backend: str, request: ChatRequest, result: ChatResult) -> None:
        record = {"key": key, "model": model, "backend": backend, "request": request.payload(),
                  "result": result.to_dict(),
                  "recorded_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")}
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()


def stream_text(result: ChatResult, on_token: TokenCallback | None) -> None:
    if on_token is not None:
        for piece in pieces(result.text):
            on_token(piece)


class RecordingBackend(Wrapper):
    kind = "record"

    def __init__(self, inner: Backend, path: str):
        super().__init__(inner, f"record:{path}={inner.label}")
        self.writer = CallWriter(path)
        self._bounds: set[str] = set()

    def prompt_token_bound(self, request: ChatRequest) -> int:
        bound = self.inner.prompt_token_bound(request)
        key = request.key(self.inner.model)
        if key not in self._bounds:  # one line per distinct request: replay prices it the same way
            self._bounds.add(key)
            self.writer.append_bound(key, self.inner.model, bound)
        return bound

    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        result = self.inner.call(request, on_token)
        model = self.inner.model  # the requested model (resolved by now), not the server's echo
        self.model = model
        self.writer.append(request.key(model), model, self.inner.label, request, result)
        return result


class ReplayBackend(Backend):
    kind = "replay"

    def __init__(self, path: str, model: str | None = None):
        self._bounds: dict[str, int] = {}
        records = read_calls(path, bounds=self._bounds)
        models = sorted({r["model"] for r in records})
        if model is None:
            if len(models) != 1:
                raise InputError(f"{path} holds calls to {len(models)} models ({', '.join(models) or 'none'}).",
                                 "choose one with replay:FILE#MODEL")
            model = models[0]
        elif model not in models:
            raise InputError(f"{path} has no calls to model '{model}'.", "recorded models: " + ", ".join(models))
        super().__init__(model, f"replay:{path}#{model}")
        self.path = path
        self._results: dict[str, list[tuple[str, ChatResult]]] = defaultdict(list)
        for record in records:
            if record["model"] == model:
                self._results[record["key"]].append((record["backend"], ChatResult.from_dict(record["result"])))
        self._served: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def capabilities(self) -> Capabilities:
        return Capabilities(self.kind, self.model, streaming=True, native_n=True, seed=True, stop=True,
                            completions=True, usage_source="recorded", deterministic=True,
                            notes=f"replays {self.path}; unrecorded requests are errors")

    def _lookup(self, request: ChatRequest) -> tuple[str, ChatResult] | None:
        key = request.key(self.model)
        entries = self._results.get(key)
        if not entries:
            return None
        with self._lock:
            index = min(self._served[key], len(entries) - 1)
            self._served[key] += 1
        return entries[index]

    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        start = time.perf_counter()
        found = self._lookup(request)
        if found is None:
            raise LLMError(f"no recorded call in {self.path} matches this request to '{self.model}' "
                           f"(key {request.key(self.model)[:12]}).",
                           "the messages or parameters differ from the recording; record them with record:FILE=SPEC")
        origin, recorded = found
        stream_text(recorded, on_token)
        return ChatResult(recorded.choices, recorded.usage, time.perf_counter() - start, recorded.model,
                          self.kind, replayed_from=recorded.replayed_from or origin)

    def prompt_token_bound(self, request: ChatRequest) -> int:
        key = request.key(self.model)
        if key in self._bounds:  # the bound the recorded run was given
            return self._bounds[key]
        entries = self._results.get(key)
        # an unrecorded request (a budget estimate of a call never made) gets the generic byte bound, not 0
        return entries[0][1].usage.prompt_tokens if entries else super().prompt_token_bound(request)
