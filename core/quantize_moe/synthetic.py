"""Synthetic MoE layers for testing TileQ where tiny trained models fall short.

Support code for our TileQ reconstruction (Gu, Chen, Hu, Liu, ICML 2026, arXiv 2605.09281); the
generator is our own. Real LLMs have a few input channels with very large activations, and many
MoE LLMs are upcycled from one dense FFN (experts = a shared weight plus a small per-expert
deviation). :func:`layer` builds such a layer: ``W_e = W_0 + ε·Δ_e`` (Gaussian, ``1/√n`` scale),
calibration inputs ``x ~ N(0, 1)`` with ``outliers`` channels multiplied by ``outlier_scale``,
and random top-k routing. :func:`experts_module` wraps weights in transformers' Mixtral experts
module so the fused forward can be checked against transformers' own eager code.
All results on these layers are SYNTHETIC and are labelled as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from mlx26.core.quantize_moe.calibrate import ProjStats


@dataclass
class SyntheticLayer:
    W: torch.Tensor  # (E, m, n)
    x: torch.Tensor  # (T, n) calibration inputs
    top_k_index: torch.Tensor  # (T, k)
    stats: ProjStats

    @property
    def label(self) -> str:
        return "SYNTHETIC"


def layer(E: int = 8, m: int = 256, n: int = 128, T: int = 2048, k: int = 2, outliers: int = 4,
          outlier_scale: float = 20.0, upcycle: float = 0.3, seed: int = 0) -> SyntheticLayer:
    """A synthetic expert projection (E, m, n) and routed calibration inputs with outlier channels."""
    gen = torch.Generator().manual_seed(seed)
    W0 = torch.randn(m, n, generator=gen) / n ** 0.5
    W = W0 + upcycle * torch.randn(E, m, n, generator=gen) / n ** 0.5
    x = torch.randn(T, n, generator=gen)
    channels = torch.randperm(n, generator=gen)[:outliers]
    x[:, channels] *= outlier_scale
    idx = torch.stack([torch.randperm(E, generator=gen)[:k] for _ in range(T)])
    abs_sum = torch.zeros(E, n, dtype=torch.float64)
    count = torch.zeros(E, dtype=torch.long)
    hessians = []
    for e in range(E):
        tok = torch.nonzero((idx == e).any(-1)).flatten()
        xe = x[tok].double()
        abs_sum[e] = xe.abs().sum(0)
        count[e] = len(tok)
        hessians.append(xe.T @ xe / max(1, len(tok)) if len(tok) else None)
    return SyntheticLayer(W, x, idx, ProjStats(abs_sum, count, hessians))


def experts_module(E: int, hidden: int, intermediate: int, seed: int = 0, scale: float = 0.1) -> Any:
    """transformers' ``MixtralExperts`` (E experts, H = hidden, I = intermediate) with seeded random weights."""
    from transformers import MixtralConfig
    from transformers.models.mixtral.modeling_mixtral import MixtralExperts

    cfg = MixtralConfig(hidden_size=hidden, intermediate_size=intermediate, num_local_experts=E,
                        num_experts_per_tok=2, num_hidden_layers=1, num_attention_heads=1, num_key_value_heads=1,
                        vocab_size=16)
    cfg._experts_implementation = "eager"
    module = MixtralExperts(cfg)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        module.gate_up_proj.copy_(scale * torch.randn(module.gate_up_proj.shape, generator=gen))
        module.down_proj.copy_(scale * torch.randn(module.down_proj.shape, generator=gen))
    return module


def routing(T: int, E: int, k: int = 2, hidden: int = 64, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Random inputs (T, hidden), top-k expert indices and softmax weights."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(T, hidden, generator=gen)
    logits = torch.randn(T, E, generator=gen)
    w, idx = torch.topk(torch.softmax(logits, -1), k, -1)
    return x, idx, w / w.sum(-1, keepdim=True)
