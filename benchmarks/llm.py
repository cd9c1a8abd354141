"""Benchmark ``mlx26 llm serve``: HTTP overhead per request, streaming, concurrency, scripted vs hf.

Our own measurement (no paper reconstructed). One process starts the server on
127.0.0.1:0 for each backend and measures, side by side:

* the backend called directly vs through the server with our httpx client (``openai:``),
  and with the ``openai`` client library itself (the anchor for client overhead), calls
  interleaved so that load changes on a shared machine hit all three alike;
* streaming: time to the first delta and to the end;
* throughput with 1 and 4 concurrent clients;
* the reply latency with Nagle's algorithm on (the stdlib handler's default) vs off (ours);
* the same for ``hf:`` with a shipped zoo model (tiny-llama, else tiny-llama-draft), where
  generation dominates and the HTTP share of a request is what matters.

Usage:  .venv/bin/python benchmarks/llm.py [--requests 200] [--hf-requests 20] [--max-tokens 16] [--no-hf]

Absolute times on a shared machine are noise; read the ratios. The tiny models' text is
meaningless: they only exercise the plumbing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable

from _results import record
from mlx26.core.llm import Backend, get_backend
from mlx26.core.llm.server import LLMServer

PROMPT = "What is 2+2?"


def medians_s(fns: list[Callable[[], object]], n: int) -> list[float]:
    """Median seconds per call of each function, calls interleaved so load drift hits all alike."""
    for fn in fns:
        fn()  # warm-up (connection, caches)
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(n):
        for fn, bucket in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def throughput(make_call: Callable[[], Callable[[], object]], clients: int, n: int) -> float:
    """Requests per second with ``clients`` threads sharing ``n`` requests (one client object each)."""
    calls = [make_call() for _ in range(clients)]
    for call in calls:
        call()
    per = max(n // clients, 1)
    barrier = threading.Barrier(clients + 1)

    def run(call: Callable[[], object]) -> None:
        barrier.wait()
        for _ in range(per):
            call()

    threads = [threading.Thread(target=run, args=(c,)) for c in calls]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return per * clients / (time.perf_counter() - start)


def first_delta(llm, kwargs: dict) -> tuple[float, float]:
    """(seconds to the first streamed delta, seconds to the end), medians of 5."""
    firsts, totals = [], []
    for _ in range(6):
        seen: list[float] = []
        start = time.perf_counter()
        llm.chat(PROMPT, on_token=lambda d, s=seen: s.append(time.perf_counter()) if not s else None, **kwargs)
        totals.append(time.perf_counter() - start)
        firsts.append((seen[0] if seen else time.perf_counter()) - start)
    return statistics.median(firsts[1:]), statistics.median(totals[1:])


def bench_backend(spec: str, n: int, max_tokens: int, figures: dict | None = None) -> list[tuple[str, str]]:
    import openai

    backend = get_backend(spec)
    kwargs = {"max_tokens": max_tokens, "temperature": 0.0, "seed": 0}
    rows: list[tuple[str, str]] = []
    with LLMServer(backend, port=0) as server:
        ours = get_backend(f"openai:{server.base_url}#{server.model_name}", max_retries=0)
        lib = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)

        def via_lib(client=lib) -> object:
            return client.chat.completions.create(model=server.model_name, max_tokens=max_tokens, temperature=0,
                                                  seed=0, messages=[{"role": "user", "content": PROMPT}])

        direct, http, anchor = medians_s([lambda: backend.chat(PROMPT, **kwargs),
                                          lambda: ours.chat(PROMPT, **kwargs), via_lib], n)
        ttft, total = first_delta(ours, kwargs)
        completion = backend.chat(PROMPT, **kwargs).usage.completion_tokens

        def make_ours() -> Callable[[], object]:
            client = get_backend(f"openai:{server.base_url}#{server.model_name}", max_retries=0)
            return lambda: client.chat(PROMPT, **kwargs)

        tp1 = throughput(make_ours, 1, n)
        tp4 = throughput(make_ours, 4, n)
    name = spec.split(":", 1)[0]
    if figures is not None:
        figures[name] = {"spec": spec, "requests": n, "direct_ms": direct * 1e3, "server_ms": http * 1e3,
                         "openai_ms": anchor * 1e3, "client_over_openai": http / anchor,
                         "server_overhead_ms": (http - direct) * 1e3, "server_share": (http - direct) / http,
                         "first_delta_ms": ttft * 1e3, "stream_total_ms": total * 1e3,
                         "completion_tokens": completion, "throughput_1": tp1, "throughput_4": tp4,
                         "throughput_4_over_1": tp4 / tp1}
    rows += [
        (f"[{name}] direct call, median", f"{direct * 1e3:.3f} ms ({completion} completion tokens)"),
        (f"[{name}] via server, mlx26 client, median", f"{http * 1e3:.3f} ms"),
        (f"[{name}] via server, openai library (anchor), median", f"{anchor * 1e3:.3f} ms"),
        (f"[{name}] mlx26 client / openai library", f"{http / anchor:.2f}x"),
        (f"[{name}] server overhead (via server - direct)", f"{(http - direct) * 1e3:.3f} ms = "
                                                           f"{100 * (http - direct) / http:.0f}% of a request"),
        (f"[{name}] stream: first delta / whole reply", f"{ttft * 1e3:.2f} ms / {total * 1e3:.2f} ms"),
        (f"[{name}] throughput 1 client / 4 clients", f"{tp1:.0f} / {tp4:.0f} req/s (x{tp4 / tp1:.2f})"),
    ]
    return rows


def nagle_row(n: int, max_tokens: int, figures: dict | None = None) -> tuple[str, str]:
    """The stdlib default (Nagle on) against our server's TCP_NODELAY, same scripted backend."""
    from mlx26.core.llm import server as server_module

    times = []
    for nodelay in (False, True):
        with LLMServer(get_backend("scripted:demo"), port=0) as srv:
            handler = srv.httpd.RequestHandlerClass
            srv.httpd.RequestHandlerClass = type("Handler", (handler,), {"disable_nagle_algorithm": nodelay})
            client = get_backend(f"openai:{srv.base_url}#{srv.model_name}", max_retries=0)

            def call(c: Backend = client) -> object:
                return c.chat(PROMPT, max_tokens=max_tokens)

            times.append(medians_s([call], n)[0])
    assert server_module._Handler.disable_nagle_algorithm
    if figures is not None:
        figures["nagle"] = {"on_ms": times[0] * 1e3, "off_ms": times[1] * 1e3, "on_over_off": times[0] / times[1]}
    return ("[scripted] via server, Nagle on (stdlib default) / off (ours)",
            f"{times[0] * 1e3:.2f} ms / {times[1] * 1e3:.2f} ms (x{times[0] / times[1]:.0f})")


def hf_spec() -> str | None:
    try:
        from mlx26.core.zoo import shipped_names
    except ImportError:
        return None
    names = shipped_names()
    for name in ("tiny-llama", "tiny-llama-draft"):
        if name in names:
            return f"hf:{name}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200, help="requests per scripted measurement")
    ap.add_argument("--hf-requests", type=int, default=20, help="requests per hf measurement")
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--no-hf", action="store_true")
    args = ap.parse_args(argv)
    figures: dict = {}
    rows = bench_backend("scripted:demo", args.requests, args.max_tokens, figures)
    rows.append(nagle_row(min(args.requests, 30), args.max_tokens, figures))
    spec = None if args.no_hf else hf_spec()
    if spec:
        rows += bench_backend(spec, args.hf_requests, args.max_tokens, figures)
    elif not args.no_hf:
        print("no shipped zoo model found: hf rows skipped", file=sys.stderr)
    rows.append(("cores", str(os.cpu_count())))
    width = max(len(k) for k, _ in rows)
    print(f"llm serve benchmark (scripted:demo{', ' + spec if spec else ''}; max_tokens={args.max_tokens}; "
          f"loopback HTTP/1.1 keep-alive)")
    print("-" * (width + 40))
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    data = [{"name": "scripted:demo", "source": "SYNTHETIC: the scripted backend's canned replies (no model)"}]
    if spec:
        data.append({"name": spec, "source": f"zoo {spec.split(':', 1)[1]} (tiny locally trained model; "
                     "its text is meaningless, it exercises the plumbing)"})
    record("llm", {**figures, "max_tokens": args.max_tokens, "cores": os.cpu_count()}, data=data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
