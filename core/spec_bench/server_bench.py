"""Concurrency sweep of an OpenAI-compatible server (vLLM, SGLang, llama.cpp, ``mlx26 llm serve``).

Our own client (asyncio + httpx): at each concurrency c, ``requests`` streamed ``/v1/completions``
calls run with at most c in flight; every SSE chunk carrying text is time-stamped. Per request:
TTFT (first text chunk), ITL (gaps between text chunks), TPOT ((last - first) / (tokens - 1),
tokens from the final usage chunk, else the chunk count), tokens/s; per level: aggregate output
tokens/s over the level's wall time, medians and p90s. ``/metrics`` is scraped before and after
each level; AL = 1 + Δaccepted / Δdrafts from vLLM's spec-decode counters, or null (never 0)
when the server exports none.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import time
from collections.abc import Sequence
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.spec_bench import spec as S

SAMPLE = re.compile(r"^([A-Za-z_:][\w:]*)(\{[^}]*\})?\s+([-+0-9.eEinfaINF]+)")


def parse_prometheus(text: str) -> dict[str, float]:
    """{metric name: value summed over its label sets} (a ``_total`` suffix is dropped)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            continue
        name = m.group(1).removesuffix("_total")
        try:
            out[name] = out.get(name, 0.0) + float(m.group(3))
        except ValueError:
            continue
    return out


def spec_al(before: dict[str, float] | None, after: dict[str, float] | None) -> dict[str, Any]:
    """AL, acceptance rate and counter deltas between two scrapes; nulls when the counters are absent."""
    keys = (S.VLLM_ACCEPTED, S.VLLM_DRAFTS, S.VLLM_DRAFT_TOKENS)
    if before is None or after is None or any(k not in after for k in keys):
        return {"acceptance_length": None, "acceptance_rate": None, "spec_counters": False}
    d = {k: after[k] - before.get(k, 0.0) for k in keys}
    drafts, accepted, proposed = d[S.VLLM_DRAFTS], d[S.VLLM_ACCEPTED], d[S.VLLM_DRAFT_TOKENS]
    return {"acceptance_length": 1 + accepted / drafts if drafts > 0 else None,
            "acceptance_rate": accepted / proposed if proposed > 0 else None, "spec_counters": True,
            "drafts": drafts, "accepted_tokens": accepted, "draft_tokens": proposed}


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def _one(client: Any, url: str, model: str, prompt: str, max_tokens: int, temperature: float) -> dict[str, Any]:
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": temperature, "seed": 0,
            "stream": True, "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    stamps: list[float] = []
    tokens = None
    error = None
    try:
        async with client.stream("POST", f"{url}/completions", json=body) as reply:
            if reply.status_code != 200:
                error = f"HTTP {reply.status_code}: {(await reply.aread()).decode('utf-8', 'replace')[:200]}"
            else:
                async for line in reply.aiter_lines():
                    if not line.startswith("data: "):
                        continue
                    data = line[6:].strip()
                    if data == "[DONE]":
                        break
                    chunk = json.loads(data)
                    if "error" in chunk:
                        error = str(chunk["error"].get("message"))
                        break
                    if chunk.get("usage"):
                        tokens = chunk["usage"].get("completion_tokens")
                    if any(c.get("text") for c in chunk.get("choices") or []):
                        stamps.append(time.perf_counter())
    except Exception as exc:  # one failed request is a row, not the end of the sweep
        error = f"{type(exc).__name__}: {exc}"
    end = time.perf_counter()
    n = tokens if tokens is not None else len(stamps)
    itl = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    return {"ok": error is None, "error": error, "tokens": n, "chunks": len(stamps), "latency_s": end - start,
            "ttft_s": stamps[0] - start if stamps else None,
            "tpot_s": (stamps[-1] - stamps[0]) / (n - 1) if stamps and n > 1 else None, "itl_s": itl,
            "tokens_per_s": n / (end - start) if end > start else None}


async def _scrape(client: Any, metrics_url: str) -> dict[str, float] | None:
    try:
        reply = await client.get(metrics_url)
    except Exception:
        return None
    return parse_prometheus(reply.text) if reply.status_code == 200 else None


async def _check(client: Any, url: str, model: str) -> None:
    try:
        reply = await client.get(f"{url}/models")
    except Exception as exc:
        raise RunFailure(f"cannot reach the server at {url} (model '{model}'): {type(exc).__name__}: {exc}",
                         "start it first, e.g. mlx26 llm serve --llm hf:tiny-llama --draft tiny-llama-draft --port 0") from None
    if reply.status_code == 200:
        served = [m.get("id") for m in reply.json().get("data", [])]
        if served and model not in served:
            raise InputError(f"the server at {url} does not serve model '{model}' (it serves: {', '.join(served)}).")


async def _sweep(url: str, model: str, prompts: Sequence[str], levels: Sequence[int], requests: int,
                 max_tokens: int, temperature: float, timeout: float) -> list[dict[str, Any]]:
    import httpx

    metrics_url = re.sub(r"/v1/?$", "", url) + "/metrics"
    limits = httpx.Limits(max_connections=max(levels) + 2, max_keepalive_connections=max(levels) + 2)
    async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
        await _check(client, url, model)
        out = []
        for level in levels:
            before = await _scrape(client, metrics_url)
            gate = asyncio.Semaphore(level)
            count = max(requests, level)

            async def call(i: int, gate: asyncio.Semaphore = gate) -> dict[str, Any]:
                async with gate:
                    return await _one(client, url, model, prompts[i % len(prompts)], max_tokens, temperature)

            t0 = time.perf_counter()
            rows = await asyncio.gather(*(call(i) for i in range(count)))
            wall = time.perf_counter() - t0
            after = await _scrape(client, metrics_url)
            ok = [r for r in rows if r["ok"]]
            ttft = [r["ttft_s"] for r in ok if r["ttft_s"] is not None]
            tpot = [r["tpot_s"] for r in ok if r["tpot_s"] is not None]
            itl = [x for r in ok for x in r["itl_s"]]
            out.append({"concurrency": level, "requests": count, "ok": len(ok),
                        "errors": sorted({r["error"] for r in rows if not r["ok"]})[:3],
                        "output_tokens": sum(r["tokens"] for r in ok), "wall_s": wall,
                        "throughput_tokens_per_s": sum(r["tokens"] for r in ok) / wall if wall > 0 else None,
                        "ttft_median_s": _pct(ttft, 0.5), "ttft_p90_s": _pct(ttft, 0.9),
                        "tpot_median_s": _pct(tpot, 0.5), "itl_median_s": _pct(itl, 0.5), "itl_p90_s": _pct(itl, 0.9),
                        "request_tokens_per_s_median": statistics.median([r["tokens_per_s"] for r in ok])
                        if ok else None, **spec_al(before, after)})
        return out


def sweep(url: str, model: str, prompts: Sequence[str], levels: Sequence[int], *, requests: int = 8,
          max_tokens: int = 32, temperature: float = 0.0, timeout: float = 120.0) -> list[dict[str, Any]]:
    if not prompts:
        raise InputError("no prompts for the sweep.")
    if not levels or any(c < 1 for c in levels):
        raise InputError(f"--concurrency values must be >= 1, got {list(levels)}.")
    if max_tokens < 1 or requests < 1:
        raise InputError("--max-tokens and --requests must be >= 1.")
    return asyncio.run(_sweep(url.rstrip("/"), model, prompts, levels, requests, max_tokens, temperature, timeout))
