"""Machine ceilings measured at start: GEMM FLOP/s and copy bandwidth (for the roofline of the
profiler in He, Ma, Sun, Cong, ICML 2026; our own micro-benchmarks).

* GEMM: an n×n float32 matmul (n = 512 on CPU, 4096 on GPU) repeated for ``seconds``; 2n³ per call.
* Copy: ``dst.copy_(src)`` of a 64 MiB float32 buffer (larger than the caches): 2 × 64 MiB moved.
The best of the repeats is kept (the ceiling is the fastest the machine showed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def _best_rate(fn: Callable[[], Any], work: float, seconds: float, sync: Callable[[], None]) -> float:
    fn()
    sync()
    best = 0.0
    deadline = time.perf_counter() + seconds
    while True:
        t0 = time.perf_counter()
        fn()
        sync()
        dt = time.perf_counter() - t0
        best = max(best, work / dt if dt > 0 else 0.0)
        if time.perf_counter() > deadline:
            return best


def measure(device: Any = "cpu", seconds: float = 0.25) -> dict[str, float]:
    import torch

    dev = torch.device(device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    n = 4096 if dev.type == "cuda" else 512
    a = torch.randn(n, n, device=dev)
    b = torch.randn(n, n, device=dev)
    c = torch.empty(n, n, device=dev)
    gemm = _best_rate(lambda: torch.mm(a, b, out=c), 2.0 * n ** 3, seconds, sync)
    elems = 16 * 1024 * 1024
    src = torch.ones(elems, device=dev)
    dst = torch.empty(elems, device=dev)
    copy = _best_rate(lambda: dst.copy_(src), 2.0 * 4 * elems, seconds, sync)
    return {"gemm_flops": gemm, "copy_bw": copy}
