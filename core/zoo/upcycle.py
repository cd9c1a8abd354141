"""Sparse upcycling: a dense Llama model of the zoo turned into a Mixtral MoE whose experts start as copies.

After Komatsuzaki et al., "Sparse Upcycling: Training Mixture-of-Experts from Dense Checkpoints" (ICLR 2023),
the recipe real MoEs such as Qwen1.5-MoE were built with; our implementation. Every non-MLP weight
(embeddings, attention, norms) is copied; each layer's SwiGLU MLP becomes E experts with the dense
``gate_proj``/``up_proj`` stacked into ``gate_up_proj`` and ``down_proj`` copied, each copy multiplied by
(1 + noise·ε), ε ~ N(0, 1) per weight, so the experts can drift apart in training; the router starts at
N(0, 0.02²). With noise 0 the MoE computes exactly the dense model (the top-k routing weights are
renormalised to sum to 1 and all experts are the same function) — the test of this module.

**Fine-grained** upcycling (``segments`` = G > 1; the recipe Qwen1.5-MoE describes, after DeepSeekMoE's
fine-grained experts; our implementation): the dense MLP's intermediate dimension is cut into G contiguous
segments, and expert e is a copy of segment e mod G (E/G copies of each), its ``down_proj`` multiplied by G.
A token's output is then Σ over its k chosen experts of w_e·G·MLP_seg(e)(x); with near-uniform routing
(w_e ≈ 1/k) each expert is chosen with probability k/E, so the expected output is the dense MLP's, and with
E = k = G (every segment chosen once) and equal router logits it is exactly the dense MLP (tested).
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError


def upcycle(dense: Any, experts: int, top_k: int, *, noise: float = 0.0, seed: int = 0,
            router_aux_loss_coef: float = 0.01, segments: int = 1) -> Any:
    """A ``MixtralForCausalLM`` (float32) built from the Llama model ``dense``; ``segments`` > 1: fine-grained."""
    import torch
    from transformers import MixtralConfig, MixtralForCausalLM

    c = dense.config
    if getattr(c, "model_type", None) != "llama":
        raise InputError(f"upcycling starts from a Llama model; this one is {getattr(c, 'model_type', None)!r}.")
    if not 1 <= top_k <= experts:
        raise InputError(f"top-k must be in [1, {experts}], got {top_k}.")
    if getattr(c, "mlp_bias", False) or getattr(c, "attention_bias", False):
        raise InputError("upcycling expects a Llama model without biases.")
    if segments < 1 or c.intermediate_size % segments or experts % segments:
        raise InputError(f"fine-grained upcycling needs segments ≥ 1 dividing both the intermediate size "
                         f"({c.intermediate_size}) and the number of experts ({experts}); got {segments}.")
    width = c.intermediate_size // segments
    config = MixtralConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, intermediate_size=width,
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
            gate, up, down = (src[f"{mlp}.{n}_proj.weight"] for n in ("gate", "up", "down"))
            # Expert e holds segment e mod G: rows of gate/up, columns of down (scaled by G, see above).
            cut = [slice(g * width, (g + 1) * width) for g in range(segments)]
            gate_up = torch.stack([torch.cat([gate[cut[e % segments]], up[cut[e % segments]]], 0)
                                   for e in range(experts)])
            down = torch.stack([down[:, cut[e % segments]] * segments for e in range(experts)])
            for target, w in ((layer.mlp.experts.gate_up_proj, gate_up), (layer.mlp.experts.down_proj, down)):
                jitter = 1 + noise * torch.randn(target.shape, generator=gen) if noise else 1.0
                target.copy_(w.reshape(target.shape) * jitter)
            layer.mlp.gate.weight.normal_(0.0, 0.02, generator=gen)
    moe.eval()
    return moe
