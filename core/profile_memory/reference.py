"""Pure-torch references of the HLS kernels in ``fpga/hls`` (Quest page min/max, page score,
top-k, gather), written to give the same bits as the C++.

Reconstruction for He, Ma, Sun, Cong (ICML 2026), whose kernels are not public; the Quest
formula is from Tang et al. (ICML 2024, mit-han-lab/Quest). Documented rules the kernels share:

* page score: Σ_d max(q_d·kmin_d, q_d·kmax_d), summed in the order d = 0 … D-1 into a float32
  accumulator starting at +0.0 (no fused multiply-add), so the sum is bit-identical;
* top-k: a stable descending sort truncated to k — larger score first, equal scores by the
  smaller index first; scores must be finite;
* min / max and gather are exact.

The fast torch path used on CPU/GPU (``torch.topk``, vectorised sums) may differ from these in
the last bit and in tie order; it is what ``--device cpu|gpu`` runs.
"""

from __future__ import annotations

from typing import Any


def page_minmax(keys: Any, page: int) -> tuple[Any, Any]:
    """keys [H, T, D] → (kmin, kmax) [H, ceil(T/page), D]; the last page may be partial."""
    import torch

    heads, n, dim = keys.shape
    pages = -(-n // page)
    pad = pages * page - n
    if pad:
        lo = torch.cat([keys, keys[:, -1:].expand(heads, pad, dim)], dim=1)  # repeating a row keeps min/max
    else:
        lo = keys
    blocks = lo.reshape(heads, pages, page, dim)
    return blocks.amin(dim=2), blocks.amax(dim=2)


def page_score_ordered(q: Any, kmin: Any, kmax: Any) -> Any:
    """q [H, D], kmin/kmax [H, P, D] → [H, P], summed over d in order (the kernel's rule)."""
    import torch

    m = torch.maximum(q[:, None, :] * kmin, q[:, None, :] * kmax)
    acc = torch.zeros(m.shape[:2], dtype=torch.float32)
    for d in range(m.shape[2]):
        acc = acc + m[:, :, d]
    return acc


def page_score_true_max(q: Any, keys: Any, page: int) -> Any:
    """The quantity Quest bounds: max over the page's tokens of q·k, per head and page."""
    import torch

    heads, n, dim = keys.shape
    logits = torch.einsum("hd,htd->ht", q, keys)
    pages = -(-n // page)
    pad = pages * page - n
    if pad:
        logits = torch.cat([logits, torch.full((heads, pad), -torch.inf)], dim=1)
    return logits.reshape(heads, pages, page).amax(dim=2)


def topk_stable(scores: Any, k: int) -> Any:
    """scores [R, N] → indices [R, k]: stable descending sort, first k (ties: smaller index first)."""
    import torch

    return torch.sort(scores, dim=-1, descending=True, stable=True).indices[:, :k]


def gather(src: Any, idx: Any) -> Any:
    """src [R, N, W], idx [R, M] → [R, M, W]."""
    import torch

    return torch.gather(src, 1, idx[:, :, None].expand(-1, -1, src.shape[2]))


def dense_attention(q: Any, keys: Any, values: Any) -> Any:
    """One decode query per head: q [H, D], keys/values [H, T, D] → [H, D]."""
    import torch

    scale = q.shape[-1] ** -0.5
    weights = torch.softmax(torch.einsum("hd,htd->ht", q, keys) * scale, dim=-1)
    return torch.einsum("ht,htd->hd", weights, values)
