"""Base quantizers for MoE expert weights: RTN, GPTQ and (optionally) HQQ, with bit-packed storage.

Paper context: Gu, Chen, Hu, Liu, "TileQ: Efficient Low-Rank Quantization of Mixture-of-Experts
with 2D Tiling" (ICML 2026, arXiv 2605.09281). Its code is not public; everything here is our own
implementation of standard building blocks the paper builds on:

* RTN — asymmetric round-to-nearest with one (scale, zero) pair per group of ``group_size``
  consecutive input channels; scales are rounded to float16 *before* rounding the weights, so
  the stored codes reproduce the dequantized weights bit for bit.
* GPTQ (Frantar et al., 2023) — column-by-column rounding with error feedback through the
  inverse Cholesky factor of the calibration Hessian ``H = XᵀX / T`` (1 % damping); groups use
  the RTN (scale, zero) of the original weights ("static groups"), so storage is the same as RTN.
* HQQ (Badri & Shaji, 2023) through the ``hqq`` package, only as an optional anchor.

Codes are packed LSB-first into a byte stream for any bit width in {2, 3, 4, 8}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from mlx26.core.common.errors import InputError
from mlx26.core.quantize_moe.spec import BASES, BITS


@dataclass
class Quantized:
    """Codes (uint8, unpacked, same shape as the weights) with per-group float16 scale and zero."""

    codes: torch.Tensor  # (..., m, n) uint8
    scale: torch.Tensor  # (..., m, n // g) float16
    zero: torch.Tensor  # (..., m, n // g) float16
    bits: int
    group_size: int

    def dequantize(self) -> torch.Tensor:
        *lead, m, n = self.codes.shape
        g = self.group_size
        q = self.codes.to(torch.float32).reshape(*lead, m, n // g, g)
        w = (q - self.zero.float()[..., None]) * self.scale.float()[..., None]
        return w.reshape(*lead, m, n)

    def storage_bytes(self) -> int:
        """Packed codes + float16 scale and zero per group."""
        return packed_size(self.codes.numel(), self.bits) + 2 * (self.scale.numel() + self.zero.numel())


def check_bits_group(bits: int, group_size: int, n: int, what: str = "weight") -> None:
    if bits not in BITS:
        raise InputError(f"--bits must be one of {', '.join(map(str, BITS))}, got {bits}.")
    if group_size < 2:
        raise InputError(f"--group-size must be ≥ 2, got {group_size}.")
    if n % group_size:
        raise InputError(f"--group-size {group_size} does not divide the input dimension {n} of {what}.",
                         "choose a group size that divides every expert projection's input dimension")


def _group_params(w: torch.Tensor, bits: int, g: int, symmetric: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    *lead, m, n = w.shape
    grouped = w.reshape(*lead, m, n // g, g)
    if symmetric:  # GPTQ's and compressed-tensors' convention: zero at the middle code, scale 2·max|w| / (2^b − 1)
        amax = grouped.abs().amax(-1)
        scale = (2 * amax / (2 ** bits - 1)).clamp(min=1e-8).to(torch.float16).float()
        scale = torch.where(scale > 0, scale, torch.full_like(scale, 6e-5))
        return scale, torch.full_like(scale, float(2 ** (bits - 1)))
    wmin = grouped.amin(-1).clamp(max=0.0)
    wmax = grouped.amax(-1).clamp(min=0.0)
    qmax = 2 ** bits - 1
    scale = ((wmax - wmin) / qmax).clamp(min=1e-8).to(torch.float16).float()
    scale = torch.where(scale > 0, scale, torch.full_like(scale, 6e-5))  # float16 underflow
    zero = torch.clamp(torch.round(-wmin / scale), 0, qmax)
    return scale, zero


def _codes(w: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, bits: int, g: int) -> torch.Tensor:
    *lead, m, n = w.shape
    grouped = w.reshape(*lead, m, n // g, g)
    q = torch.clamp(torch.round(grouped / scale[..., None]) + zero[..., None], 0, 2 ** bits - 1)
    return q.reshape(*lead, m, n)


def rtn(w: torch.Tensor, bits: int, group_size: int, symmetric: bool = False) -> Quantized:
    """Round-to-nearest, one (scale, zero) per group of input channels; asymmetric, or symmetric (zero = 2^(b−1))."""
    check_bits_group(bits, group_size, w.shape[-1])
    w = w.float()
    scale, zero = _group_params(w, bits, group_size, symmetric)
    codes = _codes(w, scale, zero, bits, group_size)
    return Quantized(codes.to(torch.uint8), scale.half(), zero.half(), bits, group_size)


def gptq(w: torch.Tensor, hessian: torch.Tensor | None, bits: int, group_size: int, damp: float = 0.01,
         block: int = 128, symmetric: bool = False) -> Quantized:
    """GPTQ of one (m, n) matrix with calibration Hessian (n, n); ``None`` (no tokens) → RTN."""
    check_bits_group(bits, group_size, w.shape[-1])
    if hessian is None:
        return rtn(w, bits, group_size, symmetric)
    W = w.double().clone()
    m, n = W.shape
    scale, zero = _group_params(w.float(), bits, group_size, symmetric)
    sc, zr = scale.double(), zero.double()
    H = hessian.double().clone()
    dead = torch.diag(H) == 0
    H[dead, dead] = 1.0
    H += damp * torch.mean(torch.diag(H)) * torch.eye(n, dtype=H.dtype)
    L = torch.linalg.cholesky(H)
    Hinv = torch.linalg.cholesky(torch.cholesky_inverse(L), upper=True)
    Q = torch.zeros_like(W)
    qmax = 2 ** bits - 1
    for i1 in range(0, n, block):
        i2 = min(i1 + block, n)
        W1 = W[:, i1:i2].clone()
        Err = torch.zeros_like(W1)
        Hb = Hinv[i1:i2, i1:i2]
        for j in range(i2 - i1):
            col = i1 + j
            gi = col // group_size
            s, z = sc[:, gi], zr[:, gi]
            q = torch.clamp(torch.round(W1[:, j] / s) + z, 0, qmax)
            Q[:, col] = q
            err = (W1[:, j] - (q - z) * s) / Hb[j, j]
            W1[:, j:] -= err[:, None] * Hb[j, j:][None, :]
            Err[:, j] = err
        W[:, i2:] -= Err @ Hinv[i1:i2, i2:]
    return Quantized(Q.to(torch.uint8), scale.half(), zero.half(), bits, group_size)


def hqq(w: torch.Tensor, bits: int, group_size: int) -> Quantized:
    """HQQ (``hqq`` package) codes and float16 (scale, zero); an optional anchor only."""
    check_bits_group(bits, group_size, w.shape[-1])
    try:
        from hqq.core.quantize import Quantizer
    except ImportError as exc:  # → exit 3 with the install hint
        raise ModuleNotFoundError("No module named 'hqq'", name="hqq") from exc
    *lead, m, n = w.shape
    flat = w.float().reshape(-1, n)
    codes, meta = Quantizer.quantize(flat, nbits=bits, channel_wise=True, group_size=group_size, optimize=True,
                                     axis=1, bitpack=False, compute_dtype=torch.float32, device="cpu")
    shape = (*lead, m, n // group_size)
    scale = meta["scale"].float().reshape(shape).half()
    zero = meta["zero"].float().reshape(shape).half()
    return Quantized(codes.reshape(*lead, m, n).to(torch.uint8), scale, zero, bits, group_size)


def quantize(w: torch.Tensor, base: str, bits: int, group_size: int,
             hessians: list[torch.Tensor | None] | None = None, symmetric: bool = False) -> Quantized:
    """Quantize stacked expert weights (E, m, n) with ``base``; GPTQ takes one Hessian per expert."""
    if base == "rtn":
        return rtn(w, bits, group_size, symmetric)
    if base == "hqq":
        if symmetric:
            raise InputError("--symmetric applies to --base rtn and gptq (HQQ fits its own zero points).")
        return hqq(w, bits, group_size)
    if base == "gptq":
        hs = hessians if hessians is not None else [None] * w.shape[0]
        parts = [gptq(w[e], hs[e], bits, group_size, symmetric=symmetric) for e in range(w.shape[0])]
        return Quantized(torch.stack([p.codes for p in parts]), torch.stack([p.scale for p in parts]),
                         torch.stack([p.zero for p in parts]), bits, group_size)
    raise InputError(f"unknown base quantizer '{base}'.", "choose one of: " + ", ".join(BASES))


# --------------------------------------------------------------------------- bit packing

def packed_size(count: int, bits: int) -> int:
    return (count * bits + 7) // 8


def pack_bits(codes: Any, bits: int) -> np.ndarray:
    """Pack integer codes (< 2**bits) LSB-first into a uint8 stream of ``ceil(count·bits/8)`` bytes."""
    flat = np.asarray(codes, dtype=np.uint8).reshape(-1)
    if flat.size and int(flat.max()) >= 2 ** bits:
        raise InputError(f"a code does not fit in {bits} bits.")
    if bits == 8:
        return flat.copy()
    bitplanes = np.unpackbits(flat[:, None], axis=1, bitorder="little")[:, :bits]
    return np.packbits(bitplanes.reshape(-1), bitorder="little")


def unpack_bits(packed: Any, bits: int, count: int) -> np.ndarray:
    """Inverse of :func:`pack_bits`: the first ``count`` codes."""
    data = np.asarray(packed, dtype=np.uint8).reshape(-1)
    if bits == 8:
        return data[:count].copy()
    stream = np.unpackbits(data, bitorder="little")[: count * bits].reshape(count, bits)
    weights = (1 << np.arange(bits)).astype(np.uint16)
    return (stream.astype(np.uint16) @ weights).astype(np.uint8)
