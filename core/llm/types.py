"""The data every LLM backend speaks: requests, parameters, results, usage and capabilities.

Our own interface (no paper reconstructed). Messages are OpenAI-style ``{"role", "content"}``
dicts; a request is either a chat (messages) or a raw completion (a prompt string). A
request's :meth:`ChatRequest.key` hashes (model, messages or prompt, params) canonically: the
replay, record and cache wrappers all key on it, so a cache file can also be replayed.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from mlx26.core.common.errors import InputError, RunFailure

ROLES = ("system", "user", "assistant", "tool", "developer")
USAGE_SOURCES = ("server", "local", "estimated")
FINISH_REASONS = ("stop", "length", "content_filter", "tool_calls")
MAX_N = 16
KEY_VERSION = 1

TokenCallback = Callable[[str], None]
UsageSource = Literal["server", "local", "estimated"]


class LLMError(RunFailure):
    """A failure while talking to a model (server error, bad reply, no matching rule): exit 1.

    ``str(error)`` is the one-line message; ``error.hint`` an optional next step (the CLI
    prints it as a ``Hint:`` line).
    """

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


class BudgetExceeded(LLMError):
    """A call was refused because its worst case would exceed the budget."""


def content_text(content: Any) -> str:
    """Message content as text: a string, or OpenAI content parts ``[{"type": "text", "text": …}]``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                raise InputError("only text content parts are supported (got a non-text part).")
        return "".join(parts)
    raise InputError(f"message content must be a string, not {type(content).__name__}.")


def normalize_messages(messages: str | Iterable[Mapping[str, Any]]) -> tuple[dict[str, str], ...]:
    """``[{"role", "content"}]`` with text content; a bare string is one user message."""
    if isinstance(messages, str):
        return ({"role": "user", "content": messages},)
    out = []
    for i, message in enumerate(messages, 1):
        if not isinstance(message, Mapping):
            raise InputError(f"message {i} must be an object with 'role' and 'content'.")
        role = message.get("role")
        if role not in ROLES:
            raise InputError(f"message {i} has role {role!r}; expected one of: {', '.join(ROLES)}.")
        if "content" not in message:
            raise InputError(f"message {i} has no 'content'.")
        out.append({"role": str(role), "content": content_text(message["content"])})
    if not out:
        raise InputError("no messages to send.", "give a prompt or at least one message")
    return tuple(out)


@dataclass(frozen=True)
class ChatParams:
    """Sampling parameters shared by every backend (OpenAI semantics)."""

    temperature: float = 0.0
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None
    n: int = 1

    @classmethod
    def make(cls, *, temperature: float = 0.0, max_tokens: int = 256, stop: str | Sequence[str] | None = None,
             seed: int | None = None, n: int = 1) -> ChatParams:
        if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and 0 <= temperature <= 2):
            raise InputError(f"temperature must be in [0, 2], got {temperature}.")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise InputError(f"max_tokens must be a positive integer, got {max_tokens!r}.")
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_N:
            raise InputError(f"n must be an integer in [1, {MAX_N}], got {n!r}.")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise InputError(f"seed must be an integer, got {seed!r}.")
        stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
        if any(not isinstance(s, str) or not s for s in stops):
            raise InputError("stop sequences must be non-empty strings.")
        return cls(float(temperature), max_tokens, stops, seed, n)

    def to_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "stop": list(self.stop),
                "seed": self.seed, "n": self.n}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatParams:
        return cls.make(temperature=data.get("temperature", 0.0), max_tokens=data.get("max_tokens", 256),
                        stop=data.get("stop") or None, seed=data.get("seed"), n=data.get("n", 1))


@dataclass(frozen=True)
class ChatRequest:
    """One call: a chat (``messages``) or a raw completion (``prompt``), with its parameters."""

    kind: Literal["chat", "completion"]
    params: ChatParams
    messages: tuple[dict[str, str], ...] = ()
    prompt: str = ""

    @classmethod
    def chat(cls, messages: str | Iterable[Mapping[str, Any]], params: ChatParams) -> ChatRequest:
        return cls("chat", params, messages=normalize_messages(messages))

    @classmethod
    def completion(cls, prompt: str, params: ChatParams) -> ChatRequest:
        if not isinstance(prompt, str):
            raise InputError("a completion prompt must be a string.")
        return cls("completion", params, prompt=prompt)

    def text(self) -> str:
        """All the text sent (for token estimates and rule matching)."""
        if self.kind == "completion":
            return self.prompt
        return "\n".join(m["content"] for m in self.messages)

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": self.kind, "params": self.params.to_dict()}
        if self.kind == "chat":
            body["messages"] = [dict(m) for m in self.messages]
        else:
            body["prompt"] = self.prompt
        return body

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> ChatRequest:
        params = ChatParams.from_dict(data.get("params", {}))
        if data.get("kind") == "completion":
            return cls.completion(data.get("prompt", ""), params)
        return cls.chat(data.get("messages", []), params)

    def key(self, model: str) -> str:
        """sha256 of the canonical JSON of (model, messages or prompt, params)."""
        blob = json.dumps({"v": KEY_VERSION, "model": model, **self.payload()}, sort_keys=True,
                          ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    source: str  # server | local | estimated

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens, "source": self.source}


@dataclass(frozen=True)
class Choice:
    text: str
    finish_reason: str


@dataclass(frozen=True)
class ChatResult:
    """What every backend returns. ``text``/``finish_reason`` are those of the first choice.

    ``backend`` is the kind that produced this object (openai, hf, scripted, replay);
    ``replayed_from`` names the original backend of a replayed result, whose ``model``,
    ``usage`` and text are the recorded ones; ``cached`` marks a cache hit (nothing was spent).
    """

    choices: tuple[Choice, ...]
    usage: Usage
    latency_s: float
    model: str
    backend: str
    replayed_from: str | None = None
    cached: bool = False

    @property
    def text(self) -> str:
        return self.choices[0].text

    @property
    def finish_reason(self) -> str:
        return self.choices[0].finish_reason

    @property
    def texts(self) -> list[str]:
        return [c.text for c in self.choices]

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "finish_reason": self.finish_reason, "model": self.model,
                "backend": self.backend, "usage": self.usage.to_dict(), "latency_s": self.latency_s,
                "choices": [asdict(c) for c in self.choices], "replayed_from": self.replayed_from,
                "cached": self.cached}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatResult:
        usage = data["usage"]
        choices = tuple(Choice(str(c["text"]), str(c["finish_reason"])) for c in data["choices"])
        if not choices:
            raise InputError("a recorded result has no choices.")
        return cls(choices, Usage(int(usage["prompt_tokens"]), int(usage["completion_tokens"]), str(usage["source"])),
                   float(data.get("latency_s", 0.0)), str(data["model"]), str(data["backend"]),
                   data.get("replayed_from"), bool(data.get("cached", False)))


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do; ``usage_source`` says how its token counts are obtained."""

    backend: str
    model: str
    streaming: bool
    native_n: bool
    seed: bool
    stop: bool
    completions: bool
    usage_source: str
    deterministic: bool
    max_context: int | None = None
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
