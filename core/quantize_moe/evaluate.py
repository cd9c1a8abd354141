"""Perplexity and experts-forward latency for quantized MoE models (standard measures, no paper).

Used by ``mlx26 quantize-moe`` (our TileQ reconstruction, Gu et al., ICML 2026). Perplexity is
``exp(mean token NLL)`` over consecutive ``context``-token windows that each start from ``<|bos|>``
(:func:`mlx26.core.zoo.evaluate.token_nll`). Latency times one experts module's forward on
recorded routed inputs, fused vs loop, interleaved, and reports medians and their ratio.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

import torch
from mlx26.core.common.errors import InputError


def token_batches(ids: list[int], bos_id: int, context: int) -> list[torch.Tensor]:
    """Calibration batches: ``context``-token chunks, each prefixed with ``<|bos|>``, 8 per batch."""
    chunks = [[bos_id] + ids[i:i + context - 1] for i in range(0, len(ids) - 1, context - 1)]
    chunks = [c for c in chunks if len(c) == context] or [[bos_id] + ids[: context - 1]]
    return [torch.tensor(chunks[i:i + 8], dtype=torch.long) for i in range(0, len(chunks), 8)]


def perplexity(model: Any, ids: list[int], bos_id: int, context: int = 128) -> float:
    from mlx26.core.zoo.evaluate import token_nll

    if len(ids) < 2:
        raise InputError("the perplexity text is too short (fewer than 2 tokens).")
    nats, n = token_nll(model, ids, bos_id, context)
    return math.exp(nats / n)


def chunk_nll(model: Any, ids: list[int], bos_id: int, context: int = 128, windows: int = 8) -> list[tuple[float, int]]:
    """(Σ NLL, tokens) per chunk of ``windows`` consecutive ``context``-token windows (each from ``<|bos|>``):
    the units of the paired standard error (:func:`paired_delta`); :func:`chunks_ppl` pools them."""
    from mlx26.core.zoo.evaluate import token_nll

    if len(ids) < 2:
        raise InputError("the perplexity text is too short (fewer than 2 tokens).")
    step = context * windows
    return [token_nll(model, ids[i:i + step], bos_id, context) for i in range(0, len(ids) - 1, step)
            if len(ids[i:i + step]) >= 2]


def chunks_ppl(chunks: list[tuple[float, int]]) -> float:
    return math.exp(sum(a for a, _ in chunks) / sum(b for _, b in chunks))


def paired_delta(a: list[tuple[float, int]], b: list[tuple[float, int]]) -> tuple[float, float]:
    """ln ppl(a) − ln ppl(b) on the same text, and its standard error over the chunks (a ratio estimator:
    the chunk residuals d_i − Δ·n_i, with the n/(n−1) correction); nan with fewer than 2 chunks."""
    n = sum(c for _, c in a)
    d = [x - y for (x, _), (y, _) in zip(a, b, strict=True)]
    mean = sum(d) / n
    if len(d) < 2:
        return mean, float("nan")
    res = [di - mean * c for di, (_, c) in zip(d, a, strict=True)]
    return mean, (sum(r * r for r in res) * len(res) / (len(res) - 1)) ** 0.5 / n


def time_forward(fns: dict[str, Any], module: Any, x: torch.Tensor, idx: torch.Tensor, w: torch.Tensor,
                 repeats: int = 7) -> dict[str, float]:
    """Median seconds of each experts forward ``fn(module, x, idx, w)``, runs interleaved."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    with torch.inference_mode():
        for fn in fns.values():  # warm-up
            fn(module, x, idx, w)
        for _ in range(repeats):
            for name, fn in fns.items():
                t0 = time.perf_counter()
                fn(module, x, idx, w)
                times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(v) for name, v in times.items()}


def latency(module: Any, x: torch.Tensor, idx: torch.Tensor, w: torch.Tensor, repeats: int = 7) -> dict[str, Any]:
    from mlx26.kernels import quantize_moe as kern

    t = time_forward({"fused": kern.fused_experts_forward, "loop": kern.loop_experts_forward}, module, x, idx, w,
                     repeats)
    return {"tokens": int(x.shape[0]), "experts": int(module.gate_up_proj.shape[0]), "fused_ms": 1e3 * t["fused"],
            "loop_ms": 1e3 * t["loop"], "fused_over_loop": t["fused"] / t["loop"],
            "threads": torch.get_num_threads()}


def int4_latency(module: Any, x: torch.Tensor, idx: torch.Tensor, w: torch.Tensor, fp32: dict[str, Any] | None = None,
                 repeats: int = 7) -> dict[str, Any]:
    """Median time of the int4 experts forward; with ``fp32`` (:func:`latency` of the same module before its
    weights were packed, so not interleaved with it) also its ratios to the fp32 fused and loop forwards."""
    from mlx26.kernels import quantize_moe_int4 as k4

    t = 1e3 * time_forward({"int4": k4.int4_experts_forward}, module, x, idx, w, repeats)["int4"]
    out: dict[str, Any] = {"tokens": int(x.shape[0]), "int4_ms": t, "threads": torch.get_num_threads()}
    if fp32:
        out.update(int4_over_fused=t / fp32["fused_ms"], int4_over_loop=t / fp32["loop_ms"])
    return out
