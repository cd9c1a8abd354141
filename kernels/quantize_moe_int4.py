"""A real 4-bit runtime for quantized MoE experts: packed int4 weights and a W4A16-style CPU kernel.

Part of our reconstruction of TileQ (Gu, Chen, Hu, Liu, ICML 2026, arXiv 2605.09281). The paper's kernels
are not public; this path is our own, on torch's int4 CPU kernels (the ones torchao's int4 weight-only
CPU layout uses): ``aten._convert_weight_to_int4pack_for_cpu`` packs a projection's 4-bit codes, two per
byte, and ``aten._weight_int4pack_mm_for_cpu`` multiplies activations by them, dequantizing group by group
inside the kernel. No fp32 copy of an expert weight stays in memory. Activations enter the kernel in
bfloat16 (W4A16): that is the kernel's vectorised path; with float32 activations torch takes a scalar
path some 60–80× slower (measured on this machine's AVX-512 CPU, 1 thread). Everything around the two
products — the low-rank corrections, the activation function, the routing weights, the sum over
experts — stays in float32.

Our asymmetric codes dequantize as ``w = (q − zero)·scale`` (``zero`` in code units, :mod:`..core`'s RTN
and GPTQ); the kernel computes ``w = (q − 8)·scale + zp``, so ``zp = (8 − zero)·scale`` per group — the same
weights up to float rounding. The low-rank corrections (LQER / TileQ factors) stay in fp32 and are added
per expert exactly as in the loop reference of :mod:`.quantize_moe`.

Limits of the kernel (checked, with a typed error): 4 bits only, group size 32, 64, 128 or 256 dividing
the input dimension, output dimension a multiple of 8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from mlx26.core.common.errors import InputError
from mlx26.kernels.quantize_moe import expert_loop

GROUP_SIZES = (32, 64, 128, 256)
PROJECTIONS = ("gate_up_proj", "down_proj")


@dataclass
class Int4Weight:
    """One projection of all experts: ``packed[e]`` (out, in/2) uint8, ``scales_zeros`` (E, in/g, out, 2) bf16."""

    packed: list[torch.Tensor]
    scales_zeros: torch.Tensor
    group_size: int
    out_features: int
    in_features: int

    def nbytes(self) -> int:
        return sum(p.untyped_storage().nbytes() for p in self.packed) + self.scales_zeros.untyped_storage().nbytes()

    def matmul(self, x: torch.Tensor, e: int) -> torch.Tensor:
        """x (T, in) → x · W_eᵀ (T, out) float32, through the kernel in bfloat16."""
        return torch.ops.aten._weight_int4pack_mm_for_cpu(x.to(torch.bfloat16).contiguous(), self.packed[e],
                                                          self.group_size, self.scales_zeros[e]).float()


def check(bits: int, group_size: int, out_features: int, in_features: int, what: str = "weight") -> None:
    if bits != 4:
        raise InputError(f"the int4 runtime needs 4-bit codes; {what} has {bits} bits.",
                         "quantize with --bits 4, or use --runtime fp32")
    if group_size not in GROUP_SIZES or in_features % group_size:
        fits = [g for g in GROUP_SIZES if in_features % g == 0]
        raise InputError(f"the int4 kernel takes group sizes {', '.join(map(str, GROUP_SIZES))} dividing the input "
                         f"dimension; {what} has group size {group_size} and input dimension {in_features}.",
                         f"quantize with --group-size {fits[0]}, or use --runtime fp32" if fits else
                         f"none of them divides {in_features}, so this model cannot run on the int4 kernel: "
                         "use --runtime fp32")
    if out_features % 8:
        raise InputError(f"the int4 kernel needs an output dimension that is a multiple of 8; {what} has "
                         f"{out_features}.", "use --runtime fp32")


def pack(codes: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, bits: int, group_size: int,
         what: str = "weight") -> Int4Weight:
    """codes (E, out, in) uint8 in [0, 15], scale and zero (E, out, in/g) → the kernel's packed layout."""
    E, m, n = codes.shape
    check(bits, group_size, m, n, what)
    packed = [torch.ops.aten._convert_weight_to_int4pack_for_cpu(codes[e].to(torch.int32).contiguous(), 1)
              for e in range(E)]
    s = scale.float()
    zp = (8.0 - zero.float()) * s
    sz = torch.stack([s, zp], -1).transpose(1, 2).to(torch.bfloat16).contiguous()  # (E, in/g, out, 2)
    return Int4Weight(packed, sz, group_size, m, n)


def attach(module: Any, weights: dict[str, Int4Weight]) -> None:
    """Give an experts module its int4 weights and drop its fp32 ones (an empty (E, 0, 0) stays as a marker)."""
    E = len(weights[PROJECTIONS[0]].packed)
    module.int4_weights = weights
    for proj in PROJECTIONS:
        setattr(module, proj, torch.nn.Parameter(torch.empty(E, 0, 0), requires_grad=False))


def resident_bytes(module: Any) -> dict[str, int]:
    """Bytes the experts module holds: int4 codes and scales, correction factors, and the fp32 equivalent."""
    w = module.int4_weights
    factors = getattr(module, "tileq_factors", None) or {}
    seen: set[int] = set()
    fac = 0
    for f in factors.values():
        if f is None:
            continue
        for t in (f.U, f.V, f.core, f.rows, f.cols):
            if t is not None and t.untyped_storage().data_ptr() not in seen:
                seen.add(t.untyped_storage().data_ptr())
                fac += t.untyped_storage().nbytes()
    fp32 = sum(4 * len(v.packed) * v.out_features * v.in_features for v in w.values())
    return {"int4_bytes": sum(v.nbytes() for v in w.values()), "factor_bytes": fac, "fp32_bytes": fp32}


def int4_experts_forward(self: Any, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
                         top_k_weights: torch.Tensor) -> torch.Tensor:
    """transformers' experts interface on int4 weights: the loop reference with the kernel as base product."""
    w = self.int4_weights
    out = expert_loop(self, hidden_states.float(), top_k_index, top_k_weights,
                      lambda proj, e, x: w[proj].matmul(x, e))
    return out.to(hidden_states.dtype)


def register() -> None:
    """Make ``"tileq_int4"`` valid for ``model.set_experts_implementation``."""
    from transformers.integrations.moe import ExpertsInterface

    ExpertsInterface.register("tileq_int4", int4_experts_forward)
