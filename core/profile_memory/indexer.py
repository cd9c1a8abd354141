"""DeepSeek-sparse-attention-style token selection by a small "lightning indexer", as one of
the four-stage pipelines of He, Ma, Sun, Cong (ICML 2026).

* Prepare Memory — indexer keys k_s = W_k·h_s (d_I = 32 values per token) for every cached token;
  one new key per decoded token.
* Compute Relevancy — I_s = Σ_h w_h · ReLU(q_h · k_s) with H_I = 4 indexer heads,
  q_h = W_q,h·h_t and w = W_w·h_t from the current token's normed hidden state h_t.
* Retrieval — the top-k tokens by I_s (k = budget, at most the context), shared by all heads;
  their keys and values are gathered.
* Apply — attention over the selected tokens.

Reconstruction: DeepSeek-V3.2's indexer is trained (FP8, many heads); the zoo models have none,
so W_k, W_q, W_w are seeded random projections here. The costs are real, the selection quality
is not meaningful.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.clock import LapClock
from mlx26.core.profile_memory.costs import CostBook, topk_ops
from mlx26.core.profile_memory.kernel_bw import topk_traffic

INDEX_DIM = 32
INDEX_HEADS = 4


def indexer_scores(q: Any, w: Any, keys: Any) -> Any:
    """q [H_I, d_I], w [H_I], keys [n, d_I] → I [n] = Σ_h w_h ReLU(q_h · k_s)."""
    import torch

    return torch.relu(keys @ q.T) @ w


class IndexerPipeline:
    name = "indexer"

    def __init__(self, runner: Any, budget: int, ops: Any, seed: int = 0):
        import torch

        if budget <= 0:
            raise InputError(f"--budget must be a positive number of tokens, got {budget}.")
        self.r, self.budget, self.ops = runner, budget, ops
        g = torch.Generator().manual_seed(seed)
        d = runner.hidden
        make = lambda rows: (torch.randn(rows, d, generator=g) / d ** 0.5).to(runner.device, runner.dtype)  # noqa: E731
        self.wk = [make(INDEX_DIM) for _ in runner.layers]
        self.wq = [make(INDEX_HEADS * INDEX_DIM) for _ in runner.layers]
        self.ww = [make(INDEX_HEADS) for _ in runner.layers]
        self.keys = [runner.k_cache[0].new_zeros((runner.capacity, INDEX_DIM)) for _ in runner.layers]
        self.hidden: list[Any] = [None] * len(runner.layers)
        self.clamped = False

    def capture(self, i: int, h: Any) -> None:
        """Prefill hook: keep each layer's normed input (the indexer keys are built from it)."""
        self.hidden[i] = h

    def build(self, clock: LapClock, costs: CostBook) -> None:
        r = self.r
        n = r.length
        for i in range(len(r.layers)):
            self.keys[i][:n] = self.hidden[i] @ self.wk[i].T
            self.hidden[i] = None
        costs["prepare"].add(2.0 * n * r.hidden * INDEX_DIM * len(r.layers),
                             r.itemsize * (n * (r.hidden + INDEX_DIM) + INDEX_DIM * r.hidden) * len(r.layers),
                             launches=len(r.layers), calls=len(r.layers))
        clock.lap("prepare")

    def attend(self, i: int, q: Any, k_new: Any, v_new: Any, pos: int, h: Any, clock: LapClock,
               costs: CostBook) -> Any:
        from mlx26.core.profile_memory.reference import dense_attention

        r, size, d = self.r, self.r.itemsize, self.r.hidden
        H, D, Hkv = r.n_heads, r.head_dim, r.n_kv
        r.k_cache[i][:, pos] = k_new
        r.v_cache[i][:, pos] = v_new
        self.keys[i][pos] = self.wk[i] @ h
        n = pos + 1
        costs["prepare"].add(2.0 * d * INDEX_DIM, size * (2 * Hkv * D + d * INDEX_DIM + d + INDEX_DIM), launches=3,
                             in_bytes=size * (2 * Hkv * D + d + H * D), out_bytes=size * (2 * Hkv * D + INDEX_DIM))
        clock.lap("prepare")
        qi = (self.wq[i] @ h).view(INDEX_HEADS, INDEX_DIM)
        wi = self.ww[i] @ h
        scores = indexer_scores(qi, wi, self.keys[i][:n])
        ops_q = 2.0 * d * INDEX_HEADS * (INDEX_DIM + 1)
        costs["relevancy"].add(ops_q + n * (2 * INDEX_HEADS * INDEX_DIM + 3 * INDEX_HEADS),
                               size * (n * INDEX_DIM + n + d * INDEX_HEADS * (INDEX_DIM + 1)), launches=5,
                               in_bytes=size * (n * INDEX_DIM + d), out_bytes=size * n)
        clock.lap("relevancy")
        k = self.budget
        if k > n:
            k, self.clamped = n, True
        idx = self.ops.topk(scores[None], k).to(r.device)
        idx_kv = idx.expand(Hkv, -1)
        k_sel = self.ops.gather(r.k_cache[i][:, :n], idx_kv).to(r.device)
        v_sel = self.ops.gather(r.v_cache[i][:, :n], idx_kv).to(r.device)
        if Hkv != H:
            k_sel, v_sel = k_sel.repeat_interleave(H // Hkv, 0), v_sel.repeat_interleave(H // Hkv, 0)
        moved = 2 * 2 * size * Hkv * k * D
        costs["retrieval"].add(topk_ops(n, k), size * n + 8 * k + moved, irregular=moved + size * n, launches=3,
                               in_bytes=size * (n + 2 * Hkv * n * D), out_bytes=2 * size * Hkv * k * D,
                               kernels={"topk_select": topk_traffic(1, n, k, size), "gather_rows": moved})
        clock.lap("retrieval")
        out = dense_attention(q, k_sel, v_sel)
        costs["apply"].add(H * k * (4 * D + 5), size * H * D * (2 * k + 2), launches=4,
                           in_bytes=size * H * D * (2 * k + 1), out_bytes=size * H * D)
        clock.lap("apply")
        return out
