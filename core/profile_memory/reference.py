"""Pure-torch references of the HLS kernels in ``fpga/hls`` (Quest page min/max, page score,
top-k, gather), written to give the same bits as the C++.

Reconstruction for He, Ma, Sun, Cong (ICML 2026), whose kernels are not public; the Quest
formula is from Tang et al. (ICML 2024, mit-han-lab/Quest). Documented rules the kernels share:

* page score: Σ_d max(q_d·kmin_d, q_d·kmax_d) in the kernel's order — 16 lane partial sums (lane l
  takes d = l, l+16, …, one 512-bit beat at a time, each from +0.0), then a fixed pairwise tree over
  the lanes; float32, no fused multiply-add, so the sum is bit-identical (D a multiple of 16);
* top-k: a stable descending sort truncated to k — larger score first, equal scores by the
  smaller index first; scores must be finite;
* min / max and gather are exact.

The fast torch path used on CPU/GPU (``torch.topk``, vectorised sums) may differ from these in
the last bit and in tie order; it is what ``--device cpu|gpu`` runs.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError

LANES = 16  # floats per 512-bit beat of the HLS kernels


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
    """q [H, D], kmin/kmax [H, P, D] → [H, P], summed in the order of ``fpga/hls/page_score.cpp``.

    1. Lane partial sums: lane l of every 16-float beat accumulates, from +0.0 and beat by beat in
       order, the values d = l, l+16, l+32, … (float32 adds, one per beat).
    2. A fixed tree over the 16 lane sums: adjacent pairs (0+1, 2+3, …), then pairs of those, down
       to one value.

    The kernel interleaves pages to hide the adder latency; that changes when each addition runs,
    not its operands, so this order is the kernel's bit for bit. D must be a multiple of 16, as the
    kernel's wide ports require.
    """
    import torch

    heads, pages, dim = kmin.shape
    if dim % LANES:
        raise InputError(f"page_score sums whole 512-bit beats of {LANES} floats; dim must be a multiple of "
                         f"{LANES}, got {dim}.")
    m = torch.maximum(q[:, None, :] * kmin, q[:, None, :] * kmax).reshape(heads, pages, dim // LANES, LANES)
    acc = torch.zeros((heads, pages, LANES), dtype=torch.float32)
    for beat in range(dim // LANES):
        acc = acc + m[:, :, beat]
    while acc.shape[-1] > 1:
        acc = acc[..., 0::2] + acc[..., 1::2]
    return acc[..., 0]


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
