"""Spike2Max: base-2 winner-takes-all normalisation with max subtraction, exact or power-of-two.

Reconstructed from the SpikingLM abstract ("base-2 exponentiation and max-subtraction, using bit
shifts") and from power-of-two softmax approximations (Sorbet's PoT softmax, I-BERT/Softermax-style
integer softmax); the paper's exact formulation is unknown. For scores ``s`` of one row:

    a_j = 2^{s_j − max_k s_k}                (max subtraction: every a_j ∈ (0, 1], the max gets 1)
    exact:  p_j = a_j / Σ_k a_k
    pow2:   p_j = a_j / 2^{round(log2 Σ_k a_k)}   (a shift; the row sum lies in [2^−½, 2^½])

On integer scores (spike counts such as q·k of binary spikes) ``2^{s_j − max}`` in fixed point with
F fractional bits is ``(1 << F) >> (max − s_j)``: :func:`spike2max_int` computes it with integer shifts
only (plus one integer division per element for ``exact``). Masked entries get 0; a row with every entry
masked returns zeros, never NaN. ``spike2max(x · log2 e, "exact")`` is exactly ``softmax(x)``.
"""

from __future__ import annotations

import math

import torch
from mlx26.core.common.errors import unknown_name
from mlx26.core.spike.spec import NORMS

LOG2E = 1.0 / math.log(2.0)


def spike2max(x: torch.Tensor, norm: str = "exact", mask: torch.Tensor | None = None, dim: int = -1) -> torch.Tensor:
    """Float Spike2Max over ``dim``; ``mask`` (bool, broadcastable, True = keep). Differentiable (pow2: the
    forward value is the shift's, the gradient the exact normalisation's — a straight-through estimator)."""
    if norm not in NORMS:
        raise unknown_name("normalisation", norm, NORMS)
    neg = torch.finfo(x.dtype).min
    if mask is not None:
        x = x.masked_fill(~mask, neg)
    m = x.amax(dim, keepdim=True).detach()
    a = torch.pow(2.0, x - m)  # not torch.exp2: ONNX (opset 17) has Pow but no Exp2
    if mask is not None:
        a = a * mask.to(a.dtype)
    s = a.sum(dim, keepdim=True)
    if norm == "exact":
        return a / torch.where(s > 0, s, torch.ones_like(s))
    safe = torch.where(s > 0, s, torch.ones_like(s))
    k = torch.round(torch.log(safe) * LOG2E).detach()
    shifted = a * torch.pow(2.0, -k)
    if not (torch.is_grad_enabled() and a.requires_grad):
        return shifted
    # Straight-through: the forward value is the shift's, the gradient the exact normalisation's. With the
    # divisor as a constant instead, the scores get no gradient from the normalisation (the −p·Σ term of
    # softmax's Jacobian), and training loses most of what the competition between tokens is for.
    exact = a / safe
    return exact + (shifted - exact).detach()


def softmax(x: torch.Tensor, mask: torch.Tensor | None = None, dim: int = -1) -> torch.Tensor:
    """torch.softmax with masked entries 0 and fully masked rows all zero (not NaN)."""
    if mask is None:
        return torch.softmax(x, dim)
    x = x.masked_fill(~mask, torch.finfo(x.dtype).min)
    return torch.softmax(x, dim) * mask.any(dim, keepdim=True).to(x.dtype)


def nearest_pow2_exponent(s: torch.Tensor) -> torch.Tensor:
    """For positive integers s: the k with 2^k nearest to s in log scale (round(log2 s)), by integer ops only:
    e = bit_length(s) − 1, then k = e + 1 when s² ≥ 2^{2e+1} (s ≥ 2^{e+½})."""
    s = s.to(torch.int64)
    e = torch.zeros_like(s)
    t = s.clone()
    for _ in range(62):  # bit length by shifting (a priority encoder in hardware)
        more = t > 1
        e = e + more.to(torch.int64)
        t = torch.where(more, t >> 1, t)
    up = (s.double() ** 2) >= torch.exp2(2 * e.double() + 1)  # s ≥ 2^(e+1/2) ⇔ s² ≥ 2^(2e+1)
    return e + up.to(torch.int64)


def spike2max_int(scores: torch.Tensor, frac_bits: int = 16, norm: str = "pow2",
                  mask: torch.Tensor | None = None, dim: int = -1) -> torch.Tensor:
    """Integer Spike2Max: ``scores`` int tensor → fixed-point int64 probabilities (value = out / 2^frac_bits).

    ``a_j = (1 << F) >> (max − s_j)`` (underflows to 0 past F bits of difference); pow2 divides the row by
    the nearest power of two of ``Σ a`` with a shift (the sum's exponent is taken in units of 2^F);
    exact divides with an integer division (round half up)."""
    if norm not in NORMS:
        raise unknown_name("normalisation", norm, NORMS)
    s = scores.to(torch.int64)
    big = torch.iinfo(torch.int64).min // 4
    if mask is not None:
        s = torch.where(mask, s, torch.full_like(s, big))
    m = s.amax(dim, keepdim=True)
    d = (m - s).clamp(min=0, max=frac_bits + 1)
    one = torch.ones_like(s) << frac_bits
    a = torch.bitwise_right_shift(one, d)
    if mask is not None:
        a = torch.where(mask, a, torch.zeros_like(a))
    total = a.sum(dim, keepdim=True)
    safe = torch.where(total > 0, total, torch.ones_like(total))
    if norm == "exact":
        out = ((a << frac_bits) + safe // 2) // safe
    else:
        k = nearest_pow2_exponent(safe) - frac_bits  # Σa / 2^F ≈ 2^k
        out = torch.where(k >= 0, torch.bitwise_right_shift(a, k.clamp(min=0)),
                          torch.bitwise_left_shift(a, (-k).clamp(min=0)))
    return torch.where(total > 0, out, torch.zeros_like(out))


def to_float(fixed: torch.Tensor, frac_bits: int = 16) -> torch.Tensor:
    return fixed.to(torch.float64) / float(1 << frac_bits)
