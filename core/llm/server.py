"""``mlx26 llm serve``: an OpenAI-compatible HTTP server on loopback, backed by any mlx26 backend.

Our own server on the standard library's ``ThreadingHTTPServer`` (no paper reconstructed).
Endpoints: ``GET /v1/models``, ``POST /v1/chat/completions`` and ``POST /v1/completions``
(JSON, or Server-Sent Events with ``"stream": true`` and chunked transfer encoding;
``stream_options.include_usage`` adds a final usage chunk), ``GET /metrics`` (Prometheus
text, plus the backend's ``prometheus_extra()`` when it has one) and ``GET /health``. Errors use OpenAI's ``{"error": {"message", "type"}}`` body.
Usage in replies is the backend's (exact for ``hf:``, an estimate for ``scripted:``).
Unset request fields take OpenAI's defaults (temperature 1), except ``max_tokens`` (256).
An optional API key makes every endpoint but ``/health`` require ``Authorization: Bearer``.
Faults are injected from a :class:`~mlx26.core.llm.faults.FaultPlan`.
"""

from __future__ import annotations

import hmac
import json
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mlx26.core._version import __version__
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.llm.base import Backend
from mlx26.core.llm.faults import FaultPlan
from mlx26.core.llm.metrics import Metrics
from mlx26.core.llm.tokens import pieces
from mlx26.core.llm.types import ChatParams, ChatRequest, ChatResult, Choice

LOOPBACK = ("127.0.0.1", "::1", "localhost")
GENERATION = ("/v1/chat/completions", "/v1/completions")
ENDPOINTS = ("/v1/models", "/metrics", "/health", *GENERATION)
MAX_BODY = 16 * 1024 * 1024


class HTTPError(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    app: LLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A peer that went away is routine; anything else is one log line, never a traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError) or self.app.log is None:
            return
        self.app.log(f"error serving {client_address[0]}: {type(exc).__name__}: {' '.join(str(exc).split())}")


class _Server6(_Server):
    address_family = socket.AF_INET6


class LLMServer:
    """Serve ``backend`` as model ``model_name``; ``start()`` in a thread or ``serve_forever()``."""

    def __init__(self, backend: Backend, *, host: str = "127.0.0.1", port: int = 0, model_name: str | None = None,
                 faults: FaultPlan | None = None, api_key: str | None = None,
                 log: Callable[[str], None] | None = None, allow_remote: bool = False):
        if host not in LOOPBACK and not allow_remote:
            raise InputError(f"refusing to listen on {host}: the server has no TLS and serves anyone who can "
                             "reach it.", "use 127.0.0.1 (default), or pass --allow-remote knowingly")
        if not 0 <= port <= 65535:
            raise InputError(f"port must be in [0, 65535], got {port}.")
        self.backend = backend
        self.model_name = model_name or backend.model
        self.faults = faults or FaultPlan()
        self.api_key = api_key
        self.log = log
        self.metrics = Metrics(self.model_name)
        self.generations = 0
        self.created = int(time.time())
        cls = _Server6 if ":" in host else _Server
        try:
            self.httpd = cls((host, port), _Handler)
        except OSError as exc:
            raise RunFailure(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self.httpd.app = self
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self._thread: threading.Thread | None = None
        self._count_lock = threading.Lock()
        self._connections: set[socket.socket] = set()

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def start(self) -> LLMServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="mlx26-llm-serve", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.1)

    def stop(self) -> None:
        """Stop accepting, close idle keep-alive connections, release the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
        with self._count_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    def track(self, connection: socket.socket, open_: bool) -> None:
        with self._count_lock:
            (self._connections.add if open_ else self._connections.discard)(connection)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def count_generation(self) -> None:
        with self._count_lock:
            self.generations += 1

    def run(self, max_requests: int | None = None) -> None:
        """Serve until SIGINT/SIGTERM, or until ``max_requests`` generation requests were answered."""
        import signal

        stop = threading.Event()
        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, lambda *_: stop.set())
        self.start()
        try:
            while not stop.wait(0.05):
                if max_requests and self.generations >= max_requests:
                    break
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _parse_request(path: str, body: Any, model_name: str) -> tuple[list[ChatRequest], bool, bool]:
    """(one request per prompt, stream?, include_usage?) or HTTPError 400/404."""
    if not isinstance(body, dict):
        raise HTTPError(400, "the request body must be a JSON object.")
    model = body.get("model")
    if model != model_name:
        raise HTTPError(404, f"The model '{model}' does not exist; this server serves '{model_name}'.",
                        "not_found_error")
    stop = body.get("stop")
    try:
        temperature = body.get("temperature")
        params = ChatParams.make(temperature=1.0 if temperature is None else temperature,
                                 max_tokens=body.get("max_completion_tokens") or body.get("max_tokens") or 256,
                                 stop=stop, seed=body.get("seed"), n=body.get("n") or 1)
        if path == "/v1/chat/completions":
            if "messages" not in body:
                raise InputError("'messages' is required.")
            requests = [ChatRequest.chat(body["messages"], params)]
        else:
            prompt = body.get("prompt")
            prompts = prompt if isinstance(prompt, list) else [prompt]
            if not prompts or not all(isinstance(p, str) for p in prompts):
                raise InputError("'prompt' must be a string or a list of strings.")
            requests = [ChatRequest.completion(p, params) for p in prompts]
    except ValueError as exc:
        raise HTTPError(400, str(exc.args[0]) if exc.args else "invalid request") from None
    options = body.get("stream_options") or {}
    return requests, bool(body.get("stream")), bool(isinstance(options, dict) and options.get("include_usage"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = f"mlx26-llm/{__version__}"
    # Headers and body leave in separate writes: with Nagle on, the client's delayed ACK held
    # every non-streamed reply back ~40 ms (measured with benchmarks/llm.py).
    disable_nagle_algorithm = True
    server: _Server
    _status = 0

    # ------------------------------------------------------------------ plumbing
    @property
    def app(self) -> LLMServer:
        return self.server.app

    def setup(self) -> None:
        super().setup()
        self.app.track(self.connection, True)

    def finish(self) -> None:
        self.app.track(self.connection, False)
        try:
            super().finish()
        except OSError:  # the peer (or a 'cut' fault) already closed the socket
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        if self.app.log is not None:
            self.app.log(f"{self.address_string()} - {format % args}")

    def send_response(self, code: int, message: str | None = None) -> None:
        self._status = code
        super().send_response(code, message)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self._send_bytes(status, data, "application/json", headers)

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None,
                    length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(status, _error_body(message, kind), headers)

    def _endpoint(self) -> str:
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        return path if path in ENDPOINTS else "other"

    def _authorized(self) -> bool:
        key = self.app.api_key
        if not key:
            return True
        given = self.headers.get("Authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {key}".encode())

    def _dispatch(self, method: str) -> None:
        endpoint = self._endpoint()
        start = time.perf_counter()
        self.app.metrics.begin()
        self._status = 0
        try:
            if endpoint != "/health" and not self._authorized():
                self._error(401, "invalid or missing API key.", "authentication_error")
            elif method == "GET":
                self._get(endpoint)
            else:
                self._post(endpoint)
        except HTTPError as exc:
            self._error(exc.status, exc.message, exc.kind)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # a bug must not kill the server or print a traceback per request
            self.close_connection = True
            if self.app.log is not None:
                self.app.log(f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}")
            if not self._status:
                self._error(500, f"internal error: {type(exc).__name__}", "server_error")
        finally:
            self.app.metrics.end(endpoint, self._status, time.perf_counter() - start)
            if endpoint in GENERATION:
                self.app.count_generation()  # after the reply is written (--max-requests waits for it)

    def do_GET(self) -> None:  # noqa: N802 (stdlib name)
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802 (stdlib name)
        self._dispatch("POST")

    # ------------------------------------------------------------------ GET
    def _get(self, endpoint: str) -> None:
        if endpoint == "/v1/models":
            self._send_json(200, {"object": "list", "data": [
                {"id": self.app.model_name, "object": "model", "created": self.app.created, "owned_by": "mlx26",
                 "mlx26_backend": self.app.backend.kind}]})
        elif endpoint == "/metrics":
            # a backend may export counters of its own (spec-decode ones under vLLM's names: --draft)
            extra = getattr(self.app.backend, "prometheus_extra", None)
            text = self.app.metrics.render() + (extra() if callable(extra) else "")
            self._send_bytes(200, text.encode(), "text/plain; version=0.0.4; charset=utf-8")
        elif endpoint == "/health":
            self._send_json(200, {"status": "ok", "model": self.app.model_name})
        else:
            raise HTTPError(404, f"no route GET {self.path}", "not_found_error")

    # ------------------------------------------------------------------ POST
    def _read_body(self) -> Any:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise HTTPError(400, "bad Content-Length header.") from None
        if length > MAX_BODY:
            raise HTTPError(413, f"request body over {MAX_BODY} bytes.")
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HTTPError(400, f"the request body is not valid JSON ({exc}).") from None

    def _post(self, endpoint: str) -> None:
        if endpoint not in GENERATION:
            self._read_body_quietly()
            raise HTTPError(404, f"no route POST {self.path}", "not_found_error")
        requests, stream, include_usage = _parse_request(endpoint, self._read_body(), self.app.model_name)
        fault = self.app.faults.next()
        if fault:
            self.app.metrics.fault(fault)
        plan = self.app.faults
        if fault == "429":
            self._error(429, "rate limited (injected fault); retry later.", "rate_limit_error",
                        {"Retry-After": f"{plan.retry_after:g}"})
            return
        if fault == "500":
            self._error(500, "internal server error (injected fault).", "server_error")
            return
        if fault == "slow":
            time.sleep(plan.slow_s)
        if fault == "length":
            requests = [ChatRequest(r.kind, ChatParams.make(
                temperature=r.params.temperature, max_tokens=min(r.params.max_tokens, plan.length_tokens),
                stop=r.params.stop, seed=r.params.seed, n=r.params.n), r.messages, r.prompt) for r in requests]
        chat = endpoint == "/v1/chat/completions"
        if stream:
            self._stream(requests, chat, include_usage, fault)
        else:
            self._reply(requests, chat, fault)

    def _read_body_quietly(self) -> None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
            if 0 < length <= MAX_BODY:
                self.rfile.read(length)
        except ValueError:
            pass

    def _generate(self, request: ChatRequest, on_token: Callable[[str], None] | None, fault: str | None
                  ) -> ChatResult:
        try:
            result = self.app.backend.call(request, on_token)
        except (_Cut, BrokenPipeError, ConnectionResetError):  # the stream writer stops generation
            raise
        except ValueError as exc:
            raise HTTPError(400, str(exc.args[0]) if exc.args else "invalid request") from None
        except Exception as exc:  # a backend failure is the server's 500, with its one-line message
            raise HTTPError(500, f"backend error: {' '.join(str(exc).split())}", "server_error") from None
        if fault == "length":
            result = ChatResult(tuple(Choice(c.text, "length") for c in result.choices), result.usage,
                                result.latency_s, result.model, result.backend)
        self.app.metrics.tokens(result.usage.prompt_tokens, result.usage.completion_tokens)
        return result

    def _reply(self, requests: list[ChatRequest], chat: bool, fault: str | None) -> None:
        results = [self._generate(r, None, fault) for r in requests]
        choices: list[dict[str, Any]] = []
        for result in results:
            for choice in result.choices:
                index = len(choices)
                if chat:
                    choices.append({"index": index, "message": {"role": "assistant", "content": choice.text},
                                    "finish_reason": choice.finish_reason, "logprobs": None})
                else:
                    choices.append({"index": index, "text": choice.text, "finish_reason": choice.finish_reason,
                                    "logprobs": None})
        prompt = sum(r.usage.prompt_tokens for r in results)
        completion = sum(r.usage.completion_tokens for r in results)
        body = {"id": ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24],
                "object": "chat.completion" if chat else "text_completion", "created": int(time.time()),
                "model": self.app.model_name, "system_fingerprint": f"mlx26-{__version__}", "choices": choices,
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}}
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        if fault == "malformed":
            self._send_bytes(200, data[:max(len(data) // 2, 1)], "application/json")
        elif fault == "cut":
            self._send_bytes(200, data[:len(data) // 2], "application/json", length=len(data))
            self._abort()
        else:
            self._send_bytes(200, data, "application/json")

    # ------------------------------------------------------------------ SSE
    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _event(self, payload: Any) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        self._chunk(f"data: {text}\n\n".encode())

    def _abort(self) -> None:
        """Drop the connection without finishing the reply (the 'cut' fault)."""
        self.close_connection = True
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _stream(self, requests: list[ChatRequest], chat: bool, include_usage: bool, fault: str | None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        ident = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
        created = int(time.time())
        head = {"id": ident, "object": "chat.completion.chunk" if chat else "text_completion", "created": created,
                "model": self.app.model_name, "system_fingerprint": f"mlx26-{__version__}"}
        sent = [0]

        def emit(index: int, delta: str | None, finish: str | None, role: bool = False) -> None:
            if fault == "cut" and sent[0] >= 2:
                raise _Cut
            if fault == "malformed" and sent[0] >= 1:
                self._chunk(b'data: {"id": "' + ident.encode() + b'", "choices": [{"delt\n\n')
                raise _Cut
            if chat:
                body: dict[str, Any] = {"role": "assistant", "content": ""} if role else (
                    {"content": delta} if delta is not None else {})
                choice = {"index": index, "delta": body, "finish_reason": finish, "logprobs": None}
            else:
                choice = {"index": index, "text": delta or "", "finish_reason": finish, "logprobs": None}
            self._event({**head, "choices": [choice]})
            sent[0] += 1

        try:
            n = requests[0].params.n
            base = 0
            prompt = completion = 0
            for request in requests:
                if chat:
                    for i in range(n):
                        emit(base + i, None, None, role=True)
                live = n == 1

                def on_token(delta: str, index: int = base) -> None:
                    emit(index, delta, None)

                result = self._generate(request, on_token if live else None, fault)
                for i, choice in enumerate(result.choices):
                    if not live:
                        for piece in pieces(choice.text):
                            emit(base + i, piece, None)
                    emit(base + i, None, choice.finish_reason)
                prompt += result.usage.prompt_tokens
                completion += result.usage.completion_tokens
                base += n
            if include_usage:
                self._event({**head, "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                                             "total_tokens": prompt + completion}})
            self._event("[DONE]")
            self._chunk(b"")
        except _Cut:
            self._abort()
        except HTTPError as exc:  # headers are gone: report the error in the stream, then end it
            self._event(_error_body(exc.message, exc.kind))
            self._event("[DONE]")
            self._chunk(b"")


class _Cut(Exception):
    """Raised inside the stream writer to drop the connection (fault injection)."""
