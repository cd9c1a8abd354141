"""Quest: query-aware page selection for sparse decode attention (Tang et al., ICML 2024;
mit-han-lab/Quest), as one of the four-stage pipelines of He, Ma, Sun, Cong (ICML 2026).

* Prepare Memory — per page of ``page`` (16) tokens, the elementwise min and max of the keys;
  built over the context, then kept current as each decoded token is appended.
* Compute Relevancy — score(page) = Σ_d max(q_d·kmin_d, q_d·kmax_d), an upper bound of the
  page's largest qᵀk (for each d the product with the key is at most this term).
* Retrieval — the top (k-1) pages by score plus the last (current) page, k = budget // page;
  their keys and values are gathered.
* Apply — attention of the query over the gathered tokens only. With budget ≥ context every page
  is selected, and the result equals dense attention.

Reconstructed from the Quest paper/README; per-head selection as in Quest. GQA models expand the
per-KV-head metadata to the query heads (the copy is charged to relevancy).
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.clock import LapClock
from mlx26.core.profile_memory.costs import CostBook, topk_ops
from mlx26.core.profile_memory.kernel_bw import topk_traffic

PAGE = 16


def pages_for_budget(budget: int, n_tokens: int, page: int = PAGE) -> tuple[int, bool]:
    """(k pages, clamped?) for a token budget: k = max(1, budget // page), at most ceil(T / page)."""
    if budget <= 0:
        raise InputError(f"--budget must be a positive number of tokens, got {budget}.")
    n_pages = -(-n_tokens // page)
    k = max(1, budget // page)
    return (n_pages, True) if k > n_pages else (k, False)


def select_tokens(scores: Any, k: int, n_tokens: int, ops: Any, page: int = PAGE) -> Any:
    """Token indices [H, n] of the top (k-1) full pages by score plus the last page (the same
    selection :func:`gather_selected` copies, as token ids)."""
    import torch

    heads, n_full = scores.shape  # pages 0 .. n_full-1 (the last page is not scored)
    last_start = n_full * page
    last = torch.arange(last_start, n_tokens, device=scores.device).expand(heads, -1)
    take = min(k - 1, n_full)
    if take <= 0:
        return last
    pages = ops.topk(scores, take).to(scores.device)
    offsets = torch.arange(page, device=scores.device)
    tokens = (pages[:, :, None] * page + offsets).reshape(heads, take * page)
    return torch.cat([tokens, last], dim=1)


def select_pages(scores: Any, k: int, ops: Any) -> Any:
    """Indices [H, min(k-1, P_full)] of the best full pages (None when only the last page is kept)."""
    take = min(k - 1, scores.shape[1])
    return ops.topk(scores, take).to(scores.device) if take > 0 else None


def gather_selected(keys: Any, pages: Any, n_tokens: int, ops: Any, page: int = PAGE) -> Any:
    """keys [H, T, D] → [H, n_sel, D]: the selected full pages (gathered as rows of page·D values,
    one index per page) followed by the last page's tokens."""
    import torch

    heads, _, dim = keys.shape
    n_full = (n_tokens - 1) // page
    last = keys[:, n_full * page:n_tokens]
    if pages is None:
        return last
    if keys.stride(2) != 1 or keys.stride(1) != dim:
        keys = keys.contiguous()
    rows = keys.as_strided((heads, n_full, page * dim), (keys.stride(0), page * dim, 1))
    chosen = ops.gather(rows, pages).to(keys.device).reshape(heads, pages.shape[1] * page, dim)
    return torch.cat([chosen, last], dim=1)


def sparse_attention(q: Any, keys: Any, values: Any, kmin: Any, kmax: Any, k: int, ops: Any,
                     page: int = PAGE) -> Any:
    """Quest attention of q [H, D] over keys/values [H, T, D] with page metadata [H, P, D]."""
    from mlx26.core.profile_memory.reference import dense_attention

    n = keys.shape[1]
    n_full = (n - 1) // page
    scores = ops.page_score(q, kmin[:, :n_full], kmax[:, :n_full])
    pages = select_pages(scores, k, ops)
    return dense_attention(q, gather_selected(keys, pages, n, ops, page), gather_selected(values, pages, n, ops, page))


class QuestPipeline:
    """Decode-time Quest over a :class:`LlamaRunner`'s cache; laps prepare/relevancy/retrieval/apply."""

    name = "quest"

    def __init__(self, runner: Any, budget: int, ops: Any, page: int = PAGE):
        self.r, self.budget, self.ops, self.page = runner, budget, ops, page
        self.kmin: list[Any] = []
        self.kmax: list[Any] = []
        self.clamped = False

    def build(self, clock: LapClock, costs: CostBook) -> None:
        """Prepare over the context already in the cache (after the context prefill)."""
        r = self.r
        n = r.length
        cap_pages = -(-r.capacity // self.page)
        for i in range(len(r.layers)):
            lo, hi = self.ops.page_minmax(r.k_cache[i][:, :n], self.page)
            kmin = r.k_cache[i].new_zeros((r.n_kv, cap_pages, r.head_dim))
            kmax = r.k_cache[i].new_zeros((r.n_kv, cap_pages, r.head_dim))
            kmin[:, :lo.shape[1]] = lo.to(kmin.device)
            kmax[:, :hi.shape[1]] = hi.to(kmax.device)
            self.kmin.append(kmin)
            self.kmax.append(kmax)
        size = r.itemsize
        pages = -(-n // self.page)
        moved = size * r.n_kv * r.head_dim * (n + 2 * pages) * len(r.layers)
        costs["prepare"].add(2.0 * r.n_kv * n * r.head_dim * len(r.layers), moved,
                             launches=2 * len(r.layers), calls=len(r.layers), kernels={"page_minmax": moved})
        clock.lap("prepare")

    def attend(self, i: int, q: Any, k_new: Any, v_new: Any, pos: int, h: Any, clock: LapClock,
               costs: CostBook) -> Any:
        from mlx26.core.profile_memory.reference import dense_attention

        r, page, size = self.r, self.page, self.r.itemsize
        H, D, Hkv = r.n_heads, r.head_dim, r.n_kv
        # Prepare: append the new key/value and refresh the min/max of the page it lands in.
        r.k_cache[i][:, pos] = k_new
        r.v_cache[i][:, pos] = v_new
        n = pos + 1
        p_last = pos // page
        lo, hi = self.ops.page_minmax(r.k_cache[i][:, p_last * page:n], page)
        self.kmin[i][:, p_last] = lo[:, 0].to(r.device)
        self.kmax[i][:, p_last] = hi[:, 0].to(r.device)
        in_page = n - p_last * page
        costs["prepare"].add(2.0 * Hkv * in_page * D, size * Hkv * D * (2 + in_page + 2), launches=4,
                             in_bytes=size * (H + 2 * Hkv) * D, out_bytes=size * 4 * Hkv * D,
                             kernels={"page_minmax": size * Hkv * D * (in_page + 2)})
        clock.lap("prepare")
        # Relevancy: bound of each full page's max q·k.
        n_pages = -(-n // page)
        n_full = n_pages - 1
        kmin, kmax = self.kmin[i][:, :n_full], self.kmax[i][:, :n_full]
        keys, vals = r.k_cache[i][:, :n], r.v_cache[i][:, :n]
        if Hkv != H:
            rep = H // Hkv
            kmin, kmax = kmin.repeat_interleave(rep, 0), kmax.repeat_interleave(rep, 0)
            keys, vals = keys.repeat_interleave(rep, 0), vals.repeat_interleave(rep, 0)
        scores = self.ops.page_score(q, kmin, kmax)
        scored = size * (2 * H * n_full * D + H * D + H * n_full)
        costs["relevancy"].add(4.0 * H * n_full * D, scored, launches=3,
                               in_bytes=size * (2 * Hkv * n_full * D + H * D), out_bytes=size * H * n_full,
                               kernels={"page_score": scored})
        clock.lap("relevancy")
        # Retrieval: top-(k-1) pages + the last page; gather their keys and values.
        k, clamped = pages_for_budget(self.budget, n, page)
        self.clamped = self.clamped or clamped
        pages = select_pages(scores, k, self.ops)
        k_sel = gather_selected(keys, pages, n, self.ops, page)
        v_sel = gather_selected(vals, pages, n, self.ops, page)
        n_sel = k_sel.shape[1]
        moved = 2 * 2 * size * H * n_sel * D
        costs["retrieval"].add(H * topk_ops(n_full, k), size * H * n_full + 8 * H * n_sel + moved,
                               irregular=moved + size * H * n_full, launches=5,
                               in_bytes=size * (H * n_full + 2 * Hkv * n * D), out_bytes=2 * size * H * n_sel * D,
                               kernels={"topk_select": topk_traffic(H, n_full, min(k - 1, n_full), size), "gather_rows": moved})
        clock.lap("retrieval")
        # Apply: attention over the selected tokens.
        out = dense_attention(q, k_sel, v_sel)
        costs["apply"].add(H * n_sel * (4 * D + 5), size * H * D * (2 * n_sel + 2), launches=4,
                           in_bytes=size * H * D * (2 * n_sel + 1), out_bytes=size * H * D)
        clock.lap("apply")
        return out
