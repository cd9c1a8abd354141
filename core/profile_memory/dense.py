"""Dense decode attention: the baseline that the sparse pipelines of He, Ma, Sun, Cong (ICML 2026)
are compared with. Prepare = the KV append; there is no relevancy or retrieval; apply = attention
of the query over every cached token. Used as the benchmark anchor and as the zero-share case:
its costs are ``pinned`` (plain attention, not memory processing), so the placement model never
offloads them."""

from __future__ import annotations

from typing import Any

from mlx26.core.profile_memory.clock import LapClock
from mlx26.core.profile_memory.costs import CostBook


class DensePipeline:
    name = "dense"

    def __init__(self, runner: Any):
        self.r = runner
        self.clamped = False

    def build(self, clock: LapClock, costs: CostBook) -> None:
        clock.lap("prepare")

    def attend(self, i: int, q: Any, k_new: Any, v_new: Any, pos: int, h: Any, clock: LapClock,
               costs: CostBook) -> Any:
        from mlx26.core.profile_memory.reference import dense_attention

        r, size = self.r, self.r.itemsize
        r.k_cache[i][:, pos] = k_new
        r.v_cache[i][:, pos] = v_new
        costs["prepare"].add(0.0, 2 * size * r.n_kv * r.head_dim, launches=2, pinned=True)
        clock.lap("prepare")
        n = pos + 1
        keys, vals = r.k_cache[i][:, :n], r.v_cache[i][:, :n]
        if r.n_kv != r.n_heads:
            rep = r.n_heads // r.n_kv
            keys, vals = keys.repeat_interleave(rep, 0), vals.repeat_interleave(rep, 0)
        out = dense_attention(q, keys, vals)
        costs["apply"].add(r.n_heads * n * (4 * r.head_dim + 5), size * r.n_heads * r.head_dim * (2 * n + 2),
                           launches=4, pinned=True)
        clock.lap("apply")
        return out
