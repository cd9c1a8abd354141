"""Calibration statistics for MoE experts: routed inputs, activation scales and GPTQ Hessians.

Part of our reconstruction of TileQ (Gu, Chen, Hu, Liu, ICML 2026, arXiv 2605.09281) on top of
LQER/L2QER. A forward pre-hook on every fused experts module records its input hidden states and
top-k routing on the full-precision model. From them, per projection type:

* ``gate_up_proj`` — the input is common to all experts, so its activation scale is shared
  (mean |x| over all calibration tokens); the GPTQ Hessian of expert e uses the tokens routed to e.
* ``down_proj`` — the input is the expert's own ``act(gate)·up`` on its routed tokens (FP weights);
  scale and Hessian per expert. An expert with no routed token gets an identity scale, RTN instead
  of GPTQ, and a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from mlx26.core.common.errors import InputError, RunFailure

SUPPORTED = ("MixtralForCausalLM (zoo: tiny-moe)", "other transformers ≥ 5 MoE models whose experts module stores "
             "fused gate_up_proj (E, 2I, H) and down_proj (E, H, I), e.g. Qwen2-MoE, OLMoE")


def find_experts(model: Any) -> list[tuple[str, Any]]:
    """(name, module) of every fused experts module; ValueError listing what is supported when none."""
    found = []
    for name, module in model.named_modules():
        gu, dn = getattr(module, "gate_up_proj", None), getattr(module, "down_proj", None)
        if isinstance(gu, torch.Tensor) and isinstance(dn, torch.Tensor) and gu.dim() == 3 and dn.dim() == 3:
            if getattr(module, "is_transposed", False) or getattr(module, "has_bias", False) \
                    or not getattr(module, "is_concatenated", True):
                continue
            found.append((name, module))
    if not found:
        arch = (getattr(model.config, "architectures", None) or [type(model).__name__])[0]
        raise InputError(f"the model ({arch}) has no MoE experts with fused gate_up_proj/down_proj weights.",
                         "supported: " + "; ".join(SUPPORTED))
    return found


def check_finite(experts: list[tuple[str, Any]], model: Any = None) -> None:
    """NaN/inf anywhere in the model poisons calibration (routing, activation scales): refuse it early."""
    for name, module in experts:
        for proj in ("gate_up_proj", "down_proj"):
            w = getattr(module, proj)
            if not bool(torch.isfinite(w).all()):
                bad = int((~torch.isfinite(w)).sum())
                raise InputError(f"{name}.{proj} has {bad} NaN/infinite weight(s); cannot quantize it.",
                                 "check the checkpoint")
    if model is not None:
        for name, tensor in model.state_dict().items():
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                bad = int((~torch.isfinite(tensor)).sum())
                raise InputError(f"{name} has {bad} NaN/infinite value(s); cannot quantize this model.",
                                 "check the checkpoint")


@dataclass
class ProjStats:
    abs_sum: torch.Tensor  # (E, n) Σ|x| over the tokens each expert sees (shared input: all tokens)
    count: torch.Tensor  # (E,) number of those tokens
    hessians: list[torch.Tensor | None] = field(default_factory=list)  # (n, n) per expert, None = no tokens


@dataclass
class LayerStats:
    name: str
    inputs: torch.Tensor  # (T, H) experts-module input
    top_k_index: torch.Tensor  # (T, k)
    top_k_weights: torch.Tensor  # (T, k)
    routed: torch.Tensor  # (E,) tokens routed to each expert
    projections: dict[str, ProjStats]


def capture(model: Any, experts: list[tuple[str, Any]], batches: list[torch.Tensor]) -> dict[str, list[tuple]]:
    """Run the FP model on token batches and record each experts module's (inputs, index, weights)."""
    records: dict[str, list[tuple]] = {name: [] for name, _ in experts}
    handles = []
    for name, module in experts:
        def hook(mod: Any, args: tuple, kwargs: dict, _name: str = name) -> None:
            vals = list(args) + [kwargs.get(k) for k in ("hidden_states", "top_k_index", "top_k_weights")
                                 if k in kwargs]
            records[_name].append(tuple(v.detach().float().clone() for v in vals[:3]))
        handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))
    try:
        with torch.inference_mode():
            for ids in batches:
                model(input_ids=ids)
    finally:
        for h in handles:
            h.remove()
    return records


def layer_stats(name: str, module: Any, x: torch.Tensor, idx: torch.Tensor, w: torch.Tensor, need_hessian: bool,
                warn: Callable[[str], None]) -> LayerStats:
    E = module.gate_up_proj.shape[0]
    T = x.shape[0]
    gu_abs = x.abs().sum(0).double()
    gu = ProjStats(gu_abs[None].expand(E, -1).clone(), torch.full((E,), T, dtype=torch.long))
    inter = module.down_proj.shape[-1]
    dn = ProjStats(torch.zeros(E, inter, dtype=torch.float64), torch.zeros(E, dtype=torch.long))
    routed = torch.zeros(E, dtype=torch.long)
    act = module.act_fn
    with torch.no_grad():
        for e in range(E):
            tok = torch.nonzero((idx == e).any(-1)).flatten()
            routed[e] = len(tok)
            if len(tok) == 0:
                warn(f"Warning: {name}: expert {e} got no routed calibration token; "
                     "identity activation scale and RTN are used for it.")
                gu.hessians.append(None)
                dn.hessians.append(None)
                continue
            xe = x[tok].double()
            g, u = (xe @ module.gate_up_proj[e].double().T).chunk(2, dim=-1)
            h = act(g) * u
            dn.abs_sum[e] = h.abs().sum(0)
            dn.count[e] = len(tok)
            if need_hessian:
                gu.hessians.append(xe.T @ xe / len(tok))
                dn.hessians.append(h.T @ h / len(tok))
            else:
                gu.hessians.append(None)
                dn.hessians.append(None)
    return LayerStats(name, x, idx, w, routed, {"gate_up_proj": gu, "down_proj": dn})


def collect(model: Any, batches: list[torch.Tensor], need_hessian: bool,
            warn: Callable[[str], None] = lambda _m: None) -> list[LayerStats]:
    experts = find_experts(model)
    records = capture(model, experts, batches)
    out = []
    for name, module in experts:
        if not records[name]:
            raise RunFailure(f"{name} was never called during calibration.")
        x = torch.cat([r[0].reshape(-1, r[0].shape[-1]) for r in records[name]])
        idx = torch.cat([r[1].reshape(-1, r[1].shape[-1]) for r in records[name]]).long()
        w = torch.cat([r[2].reshape(-1, r[2].shape[-1]) for r in records[name]])
        out.append(layer_stats(name, module, x, idx, w, need_hessian, warn))
    return out
