"""Sparse upcycling: a dense Llama model of the zoo turned into a Mixtral MoE whose experts start as copies.

After Komatsuzaki et al., "Sparse Upcycling: Training Mixture-of-Experts from Dense Checkpoints" (ICLR 2023),
the recipe real MoEs such as Qwen1.5-MoE were built with; our implementation. Every non-MLP weight
(embeddings, attention, norms) is copied; each layer's SwiGLU MLP becomes E experts with the dense
``gate_proj``/``up_proj`` stacked into ``gate_up_proj`` and ``down_proj`` copied, each copy multiplied by
(1 + noise·ε), ε ~ N(0, 1) per weight, so the experts can drift apart in training; the router starts at
N(0, 0.02²). With noise 0 the MoE computes exactly the dense model (the top-k routing weights are
renormalised to sum to 1 and all experts are the same function) — the test of this module.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError


def upcycle(dense: Any, experts: int, top_k: int, *, noise: float = 0.0, seed: int = 0,
            router_aux_loss_coef: float = 0.01) -> Any:
    """A ``MixtralForCausalLM`` (float32) built from the Llama model ``dense``."""
    import torch
    from transformers import MixtralConfig, MixtralForCausalLM

    c = dense.config
    if getattr(c, "model_type", None) != "llama":
        raise InputError(f"upcycling starts from a Llama model; this one is {getattr(c, 'model_type', None)!r}.")
    if not 1 <= top_k <= experts:
        raise InputError(f"top-k must be in [1, {experts}], got {top_k}.")
    if getattr(c, "mlp_bias", False) or getattr(c, "attention_bias", False):
        raise InputError("upcycling expects a Llama model without biases.")
    config = MixtralConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, intermediate_size=c.intermediate_size,
        num_hidden_layers=c.num_hidden_layers, num_attention_heads=c.num_attention_heads,
        num_key_value_heads=c.num_key_value_heads, head_dim=getattr(c, "head_dim", None),
        max_position_embeddings=c.max_position_embeddings, rms_norm_eps=c.rms_norm_eps,
        rope_parameters=getattr(c, "rope_parameters", None), hidden_act=c.hidden_act,
        tie_word_embeddings=c.tie_word_embeddings, bos_token_id=c.bos_token_id, eos_token_id=c.eos_token_id,
        pad_token_id=c.pad_token_id, num_local_experts=experts, num_experts_per_tok=top_k,
        router_aux_loss_coef=router_aux_loss_coef, initializer_range=0.02)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    moe = MixtralForCausalLM(config).to(torch.float32)
    src = dense.state_dict()
    with torch.no_grad():
        for name, tensor in moe.state_dict().items():
            if ".mlp." not in name:
                tensor.copy_(src[name])
        for i, layer in enumerate(moe.model.layers):
            mlp = f"model.layers.{i}.mlp"
            gate_up = torch.cat([src[f"{mlp}.gate_proj.weight"], src[f"{mlp}.up_proj.weight"]], 0)
            down = src[f"{mlp}.down_proj.weight"]
            for target, w in ((layer.mlp.experts.gate_up_proj, gate_up), (layer.mlp.experts.down_proj, down)):
                jitter = 1 + noise * torch.randn(target.shape, generator=gen) if noise else 1.0
                target.copy_(w.unsqueeze(0) * jitter)
            layer.mlp.gate.weight.normal_(0.0, 0.02, generator=gen)
    moe.eval()
    return moe
