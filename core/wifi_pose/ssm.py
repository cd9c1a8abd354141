"""Selective state-space scans in pure PyTorch (Mamba's S6 recurrence; Gu & Dao, arXiv 2312.00752).

The recurrence with input-dependent Δ, B, C and a diagonal A < 0:

    h_t = exp(Δ_t A) ⊙ h_{t-1} + Δ_t B_t x_t,        y_t = C_t · h_t   (per channel d, state n)

Three implementations, tested equal to each other (and to mambapy's parallel scan when installed):

* :func:`scan_reference` — a float64 loop over time, written from the formula (the test oracle);
* :func:`scan_sequential` — the same loop on batched tensors;
* :func:`scan_chunked` — parallel within chunks of ``chunk`` steps: with L_t = Σ_{s≤t} Δ_s A inside a chunk,
  h_t = exp(L_t) h_0 + Σ_{s≤t} exp(L_t − L_s) u_s; the mask is applied to the exponent before ``exp`` so no
  term overflows. Only cumsum/exp/where/sum are used, so it exports to ONNX with a fixed loop over chunks.

Every scan returns the whole state sequence H (B, T, D, N) and takes an initial state h0, which is what
the persistent memory (carrying h_T into the next frame) and the cross-stream state coupling of
:mod:`.model` are built on. Because exp(Δ A) ∈ (0, 1) the state is bounded by max|Δ B x| / (1 − max exp(Δ A)).
"""

from __future__ import annotations

import torch


def _u(x: torch.Tensor, delta: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return delta.unsqueeze(-1) * b.unsqueeze(2) * x.unsqueeze(-1)  # (B, T, D, N)


def scan_reference(x, delta, a, b, h0=None):
    """Naive float64 loop over batch, time, channel and state (slow: tests only). Returns (H, h_T)."""
    bs, t_len, d, n = x.shape[0], x.shape[1], x.shape[2], a.shape[1]
    x, delta, a, b = (v.detach().double() for v in (x, delta, a, b))
    h = torch.zeros(bs, d, n, dtype=torch.float64) if h0 is None else h0.detach().double().clone()
    out = torch.zeros(bs, t_len, d, n, dtype=torch.float64)
    for i in range(bs):
        for t in range(t_len):
            for j in range(d):
                for k in range(n):
                    h[i, j, k] = torch.exp(delta[i, t, j] * a[j, k]) * h[i, j, k] + delta[i, t, j] * b[i, t, k] * x[i, t, j]
            out[i, t] = h[i]
    return out, h


def scan_sequential(x, delta, a, b, h0=None):
    """x, delta (B, T, D); a (D, N); b (B, T, N); h0 (B, D, N) or None → (H (B, T, D, N), h_T)."""
    da = torch.exp(delta.unsqueeze(-1) * a)
    u = _u(x, delta, b)
    h = torch.zeros_like(u[:, 0]) if h0 is None else h0
    hs = []
    for t in range(x.shape[1]):
        h = da[:, t] * h + u[:, t]
        hs.append(h)
    return torch.stack(hs, 1), h


def scan_chunked(x, delta, a, b, h0=None, chunk: int = 16):
    """The chunked/parallel form of :func:`scan_sequential` (same signature, same result)."""
    log_a = delta.unsqueeze(-1) * a  # (B, T, D, N), ≤ 0
    u = _u(x, delta, b)
    h = torch.zeros_like(u[:, 0]) if h0 is None else h0
    out = []
    t_len = x.shape[1]
    for start in range(0, t_len, chunk):
        la, uc = log_a[:, start:start + chunk], u[:, start:start + chunk]
        c = la.shape[1]
        cum = torch.cumsum(la, 1)  # L_t
        diff = cum.unsqueeze(2) - cum.unsqueeze(1)  # (B, t, s, D, N) = L_t − L_s
        mask = torch.tril(torch.ones(c, c, dtype=torch.bool, device=x.device)).view(1, c, c, 1, 1)
        w = torch.exp(torch.where(mask, diff, torch.full_like(diff, float("-inf"))))
        hc = (w * uc.unsqueeze(1)).sum(2) + torch.exp(cum) * h.unsqueeze(1)
        out.append(hc)
        h = hc[:, -1]
    return torch.cat(out, 1), h


SCANS = {"sequential": scan_sequential, "chunked": scan_chunked}
