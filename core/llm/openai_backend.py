"""``openai:URL#MODEL`` — any OpenAI-compatible server (vLLM, llama.cpp server, Ollama's /v1, mlx26 llm serve).

Our own client over ``httpx`` (no paper reconstructed); the ``openai`` library itself is
used by the tests to prove that ``mlx26 llm serve`` speaks the same protocol. Behaviour:

* ``POST {URL}/chat/completions`` (and ``/completions`` for raw prompts), SSE streaming
  when a token callback is given (``stream_options.include_usage`` asks for usage).
* Timeouts: ``timeout`` seconds for connect, each read and write (default 60,
  ``MLX26_LLM_TIMEOUT``). Retries (default 3, ``MLX26_LLM_RETRIES``) on 408/409/429/5xx,
  connection errors and timeouts; the wait honours ``Retry-After`` / ``retry-after-ms``
  (seconds or an HTTP date; a wait longer than ``max_retry_wait`` fails at once), else
  exponential backoff. A stream cut after it started is not retried (text was delivered).
* The API key comes from an environment variable (``MLX26_LLM_API_KEY``, else
  ``OPENAI_API_KEY``, or the one named by ``api_key_env``); it is sent as a bearer token
  and never appears in labels, errors or logs.
* Every failure is one :class:`LLMError` line naming the base URL and the model.
* ``#MODEL`` may be omitted when the server serves exactly one model (asked at first use).
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from collections.abc import Iterator
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.llm.base import Backend
from mlx26.core.llm.tokens import estimate_prompt_tokens, estimate_tokens
from mlx26.core.llm.types import Capabilities, ChatRequest, ChatResult, Choice, LLMError, TokenCallback, Usage

DEFAULT_URL = "https://api.openai.com/v1"
KEY_VARS = ("MLX26_LLM_API_KEY", "OPENAI_API_KEY")
RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


def _env_number(name: str, default: float, kind: type = float) -> Any:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise InputError(f"{name} must be a number, not '{raw}'.") from None


def retry_after_seconds(headers: Any, now: float | None = None) -> float | None:
    """Seconds a server asks us to wait (``retry-after-ms``, ``Retry-After`` seconds or HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


def _server_message(response: Any) -> str:
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    except Exception:  # not JSON: show a short excerpt of the body instead
        pass
    text = " ".join(response.text.split())
    return text[:200] if text else response.reason_phrase


class OpenAIBackend(Backend):
    kind = "openai"
    model: str  # "" until resolved from /models when the spec names none

    def __init__(self, base_url: str = "", model: str | None = None, *, timeout: float | None = None,
                 max_retries: int | None = None, api_key_env: str | None = None, backoff_s: float = 0.5,
                 max_retry_wait: float = 60.0, api_key: str | None = None):
        import httpx

        base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_URL).rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise InputError(f"openai backend URL must start with http:// or https://, got '{base_url}'.",
                             "e.g. --llm openai:http://127.0.0.1:8000/v1#MODEL")
        self.base_url = base_url
        self.timeout = float(timeout if timeout is not None else _env_number("MLX26_LLM_TIMEOUT", 60.0))
        self.max_retries = int(max_retries if max_retries is not None else _env_number("MLX26_LLM_RETRIES", 3, int))
        if not self.timeout > 0:
            raise InputError(f"timeout must be positive, got {self.timeout}.")
        if self.max_retries < 0:
            raise InputError(f"retries must be ≥ 0, got {self.max_retries}.")
        self.backoff_s = backoff_s
        self.max_retry_wait = max_retry_wait
        headers = {"Accept": "application/json"}
        key = api_key or self._api_key(api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        # Proxies from the environment apply to remote servers, never to loopback ones.
        host = httpx.URL(base_url).host
        self._client = httpx.Client(base_url=base_url, headers=headers, timeout=httpx.Timeout(self.timeout),
                                    trust_env=host not in ("127.0.0.1", "localhost", "::1"))
        self._httpx = httpx
        super().__init__(model or "", f"openai:{base_url}#{model or '?'}")
        self.attempts = 0  # total HTTP attempts made (for tests and reports)

    @staticmethod
    def _api_key(api_key_env: str | None) -> str | None:
        if api_key_env:
            if api_key_env not in os.environ:
                raise InputError(f"environment variable {api_key_env} (the API key) is not set.")
            return os.environ[api_key_env]
        return next((os.environ[v] for v in KEY_VARS if os.environ.get(v)), None)

    def close(self) -> None:
        self._client.close()

    def capabilities(self) -> Capabilities:
        return Capabilities(self.kind, self.model or "?", streaming=True, native_n=True, seed=True, stop=True,
                            completions=True, usage_source="server", deterministic=False,
                            notes=f"{self.base_url}; usage as reported by the server (estimated when absent)")

    # ------------------------------------------------------------------ HTTP with retries
    def _where(self) -> str:
        return f"{self.base_url} (model {self.model or '?'})"

    def _fail(self, what: str, hint: str | None = None) -> LLMError:
        return LLMError(f"LLM server {self._where()}: {what}", hint or None)

    def _send(self, method: str, path: str, body: dict[str, Any] | None = None, stream: bool = False) -> Any:
        httpx = self._httpx
        last = hint = ""
        for attempt in range(self.max_retries + 1):
            self.attempts += 1
            wait: float | None = None
            try:
                request = self._client.build_request(method, path, json=body)
                response = self._client.send(request, stream=stream)
            except httpx.TimeoutException:
                last = f"no reply within the {self.timeout:g} s timeout"
                hint = "raise --timeout (or MLX26_LLM_TIMEOUT) if the model is slow"
            except httpx.ConnectError as exc:
                last = f"cannot connect ({' '.join(str(exc).split()) or 'connection refused'})"
                hint = "is the server running at that URL?"
            except httpx.TransportError as exc:  # the connection broke before a whole reply arrived
                last = f"connection broken ({type(exc).__name__}: {' '.join(str(exc).split()) or 'no detail'})"
                hint = "the server dropped the connection; raise --retries or check its logs"
            else:
                if response.status_code < 400:
                    return response
                if stream:
                    response.read()
                message = f"HTTP {response.status_code}: {_server_message(response)}"
                response.close()
                if response.status_code not in RETRY_STATUS:
                    raise self._fail(message, "set MLX26_LLM_API_KEY (or OPENAI_API_KEY) to the server's key"
                                     if response.status_code in (401, 403) else None)
                last = message
                hint = "the server kept failing; raise --retries or try again later"
                wait = retry_after_seconds(response.headers)
                if wait is not None and wait > self.max_retry_wait:
                    raise self._fail(f"{message}; the server asks to retry after {wait:g} s, "
                                     f"more than the {self.max_retry_wait:g} s allowed")
            if attempt == self.max_retries:
                break
            time.sleep(wait if wait is not None else min(self.backoff_s * 2 ** attempt, 8.0))
        tries = self.max_retries + 1
        raise self._fail(f"{last} (after {tries} attempt{'s' if tries > 1 else ''})", hint)

    def _json(self, response: Any) -> Any:
        try:
            return json.loads(response.content)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise self._fail(f"malformed JSON in the reply ({exc}).") from None
        except self._httpx.TransportError as exc:
            raise self._fail(f"the reply was cut off ({type(exc).__name__}).") from None

    def _resolve_model(self) -> str:
        if not self.model:
            models = self.list_models()
            if len(models) != 1:
                raise InputError(f"{self.base_url} serves {len(models)} models ({', '.join(models) or 'none'}).",
                                 "name one: openai:URL#MODEL")
            self.model = models[0]
            self.label = f"openai:{self.base_url}#{self.model}"
        return self.model

    def list_models(self) -> list[str]:
        response = self._send("GET", "/models")
        data = self._json(response)
        try:
            return [str(m["id"]) for m in data["data"]]
        except (KeyError, TypeError):
            raise self._fail("the /models reply has no data[].id list.") from None

    # ------------------------------------------------------------------ calls
    def _body(self, request: ChatRequest, stream: bool) -> tuple[str, dict[str, Any]]:
        p = request.params
        body: dict[str, Any] = {"model": self.model, "temperature": p.temperature, "max_tokens": p.max_tokens,
                                "n": p.n}
        if p.stop:
            body["stop"] = list(p.stop)
        if p.seed is not None:
            body["seed"] = p.seed
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if request.kind == "chat":
            body["messages"] = [dict(m) for m in request.messages]
            return "/chat/completions", body
        body["prompt"] = request.prompt
        return "/completions", body

    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        self._resolve_model()
        start = time.perf_counter()
        path, body = self._body(request, stream=on_token is not None)
        if on_token is None:
            texts, finishes, usage = self._parse(self._json(self._send("POST", path, body)), request)
        else:
            texts, finishes, usage = self._stream(self._send("POST", path, body, stream=True), request, on_token)
        if usage is None:
            prompt = (estimate_tokens(request.prompt) if request.kind == "completion"
                      else estimate_prompt_tokens(request.messages))
            usage = Usage(prompt, sum(estimate_tokens(t) for t in texts), "estimated")
        choices = tuple(Choice(t, f or "stop") for t, f in zip(texts, finishes, strict=True))
        return ChatResult(choices, usage, time.perf_counter() - start, self.model, self.kind)

    @staticmethod
    def _usage(data: Any) -> Usage | None:
        if isinstance(data, dict) and isinstance(data.get("prompt_tokens"), int) \
                and isinstance(data.get("completion_tokens"), int):
            return Usage(data["prompt_tokens"], data["completion_tokens"], "server")
        return None

    def _parse(self, data: Any, request: ChatRequest) -> tuple[list[str], list[str | None], Usage | None]:
        try:
            choices = sorted(data["choices"], key=lambda c: c.get("index", 0))
            if request.kind == "chat":
                texts = [str(c["message"].get("content") or "") for c in choices]
            else:
                texts = [str(c.get("text") or "") for c in choices]
            finishes = [c.get("finish_reason") for c in choices]
        except (KeyError, TypeError, AttributeError):
            raise self._fail("the reply has no choices[] with a message.") from None
        if not texts:
            raise self._fail("the reply has no choices.")
        return texts, finishes, self._usage(data.get("usage"))

    def _events(self, response: Any) -> Iterator[Any]:
        done = False
        chunks = 0
        try:
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    done = True
                    break
                try:
                    event = json.loads(payload)
                except json.JSONDecodeError:
                    raise self._fail(f"malformed JSON in stream chunk {chunks + 1}: {payload[:80]!r}") from None
                chunks += 1
                yield event
        except self._httpx.TransportError as exc:
            raise self._fail(f"the stream was cut after {chunks} chunk(s) ({type(exc).__name__}).") from None
        finally:
            response.close()
        if not done:
            raise self._fail(f"the stream ended after {chunks} chunk(s) without [DONE].")

    def _stream(self, response: Any, request: ChatRequest, on_token: TokenCallback
                ) -> tuple[list[str], list[str | None], Usage | None]:
        n = request.params.n
        texts = [""] * n
        finishes: list[str | None] = [None] * n
        usage = None
        for event in self._events(response):
            if isinstance(event, dict) and isinstance(event.get("error"), dict):
                raise self._fail(f"error in stream: {event['error'].get('message', '?')}")
            usage = self._usage(event.get("usage")) or usage
            for choice in event.get("choices") or []:
                index = int(choice.get("index", 0))
                if not 0 <= index < n:
                    continue
                delta = (choice.get("delta") or {}).get("content") if request.kind == "chat" else choice.get("text")
                if delta:
                    texts[index] += delta
                    if index == 0:
                        on_token(delta)
                if choice.get("finish_reason"):
                    finishes[index] = choice["finish_reason"]
        return texts, finishes, usage
