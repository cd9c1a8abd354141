"""Model presets of the zoo: plain transformers configs (Llama, Mixtral), no custom architectures.

Our own choice of sizes (no paper reconstructed):

* ``tiny-llama`` — LlamaConfig, d128, 4 layers, 4 heads, SwiGLU 384, tied embeddings.
* ``tiny-llama-draft`` — d64, 2 layers, same tokenizer: the draft of the speculative pair.
* ``tiny-llama-pkgs`` — tiny-llama's shape and CPU budget, trained on a broader corpus: the sources of
  the installed third-party packages (split by package, so held-out packages are unseen) and stdlib code,
  an equal byte share each.
* ``tiny-moe`` — MixtralConfig, d128, 2 layers, 8 experts, top-2, load-balancing loss.
* ``tiny-llama-long`` — d512, 4 layers, head_dim 64, 32k positions; **random init, for
  timing and memory profiles only** (never trained, never shipped; built from its config).
* ``tiny-moe-upcycled`` — Mixtral, 8 experts top-2, **sparse-upcycled** from the shipped
  ``tiny-llama-draft`` (d64, 2 layers; :mod:`.upcycle`: experts start as jittered copies of its MLP) and
  trained on at its source's final learning rate; the shipped one is the shortest of the runs of 100,
  200, … steps whose held-out bits/byte matches its source's (200 steps; the preset's default time budget
  trains longer, and its experts drift further apart): the shared structure real upcycled MoEs
  (Qwen1.5-MoE) have and ``tiny-moe`` lacks.
* ``tiny-moe-fine`` — Mixtral, **32 fine-grained experts** of width 24 (≤ d/2), top-8, fine-grained-upcycled
  from ``tiny-llama-draft`` (its MLP cut into 8 segments, 4 copies of each; :mod:`.upcycle`) and trained on
  like ``tiny-moe-upcycled``: the many-small-experts layout of DeepSeekMoE / Qwen1.5-MoE.
* ``tiny-llama-1k`` — ``tiny-llama`` continued at a **1,024-token context** (context extension, as long-context
  models are made by continued pre-training): ``tiny-llama`` saw only 128-token windows, so every position
  past 128 is extrapolation for it; this one is trained on every position it will be asked about (the
  Throughput split of ``mlx26 spec-bench`` at 128–512 input tokens plus the generated ones). Same
  tokenizer, so ``tiny-llama-draft`` drafts for it; ``tiny-llama-draft-1k`` is the draft continued the same way,
  so a speculative pair exists whose two models were both trained on every position they are used at.
* ``micro-llama`` / ``micro-moe`` — seconds-to-train models for tests and the smoke recipe.

Each preset also fixes its training defaults (context, batch, learning rate, minutes,
corpora), which ``mlx26 zoo train`` can override.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mlx26.core.common.errors import unknown_name

# Upcycled presets continue where their dense source's schedule ended (tiny-llama-draft: cosine from 1e-2 to
# 10 %, so 1e-3), as sparse upcycling continues the dense run. Fixed after development runs at 3e-4 and 1e-3;
# the first recipe's 3e-3 drives the expert copies further apart (benchmarks/quantize_moe.py, the drift rows).
UPCYCLE_LR = 1e-3
# tiny-llama's cosine ended at 10 % of 8e-3; the context-extended copy takes that as its peak (then warm-up and
# cosine as every preset, with a fresh AdamW).
CONTINUE_LR = 8e-4
DRAFT_CONTINUE_LR = 1e-3  # likewise for tiny-llama-draft (10 % of 1e-2)


@dataclass(frozen=True)
class Preset:
    name: str
    family: str  # "llama" | "mixtral"
    arch: dict[str, Any]
    description: str
    tokenizer: str = "bpe-4096"
    shipped: bool = False
    random_init: bool = False
    context: int = 256
    batch_size: int = 16
    lr: float = 3e-3
    minutes: float = 4.0
    corpora: tuple[str, ...] = ("stdlib-code",)
    extra_config: dict[str, Any] = field(default_factory=dict)
    upcycle_from: str | None = None  # a shipped dense zoo model whose MLPs become the experts (sparse upcycling)
    upcycle_noise: float = 0.0  # relative jitter of each expert copy
    upcycle_segments: int = 1  # > 1: fine-grained upcycling (each expert a copy of one MLP segment)
    continue_from: str | None = None  # a shipped zoo model of the same shape whose weights training starts from


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("tiny-llama", "llama",
               dict(hidden_size=128, intermediate_size=384, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=4, max_position_embeddings=1024),
               "Llama, d128 × 4 layers, BPE-4096, trained on stdlib code", shipped=True, minutes=12.0, lr=8e-3,
               batch_size=8, context=128),
        Preset("tiny-llama-pkgs", "llama",
               dict(hidden_size=128, intermediate_size=384, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=4, max_position_embeddings=1024),
               "Llama, d128 × 4 layers (tiny-llama's shape and budget), trained on installed packages' code "
               "(held-out packages unseen) and stdlib code", shipped=True, minutes=12.0, lr=8e-3, batch_size=8,
               context=128, corpora=("packages-code", "stdlib-code")),
        Preset("tiny-llama-draft", "llama",
               dict(hidden_size=64, intermediate_size=192, num_hidden_layers=2, num_attention_heads=2,
                    num_key_value_heads=2, max_position_embeddings=1024),
               "Llama, d64 × 2 layers, same tokenizer as tiny-llama (speculative-decoding draft)",
               shipped=True, minutes=2.0, lr=1e-2, batch_size=8, context=128),
        Preset("tiny-moe", "mixtral",
               dict(hidden_size=128, intermediate_size=192, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=4, max_position_embeddings=1024, num_local_experts=8,
                    num_experts_per_tok=2, router_aux_loss_coef=0.1),
               "Mixtral, d128 × 2 layers, 8 experts top-2, BPE-4096, trained on stdlib code",
               shipped=True, minutes=3.5, lr=8e-3, batch_size=8, context=128),
        Preset("tiny-moe-upcycled", "mixtral",
               dict(hidden_size=64, intermediate_size=192, num_hidden_layers=2, num_attention_heads=2,
                    num_key_value_heads=2, max_position_embeddings=1024, num_local_experts=8,
                    num_experts_per_tok=2, router_aux_loss_coef=0.01),
               "Mixtral, d64 × 2 layers, 8 experts top-2, sparse-upcycled from tiny-llama-draft, trained on stdlib code",
               shipped=True, minutes=3.0, lr=UPCYCLE_LR, batch_size=8, context=128, upcycle_from="tiny-llama-draft",
               upcycle_noise=0.01),
        Preset("tiny-moe-fine", "mixtral",
               dict(hidden_size=64, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2,
                    num_key_value_heads=2, max_position_embeddings=1024, num_local_experts=32,
                    num_experts_per_tok=8, router_aux_loss_coef=0.01),
               "Mixtral, d64 × 2 layers, 32 fine-grained experts (width 24) top-8, upcycled from tiny-llama-draft's "
               "MLP segments, trained on stdlib code",
               shipped=True, minutes=3.0, lr=UPCYCLE_LR, batch_size=8, context=128, upcycle_from="tiny-llama-draft",
               upcycle_noise=0.01, upcycle_segments=8),
        Preset("tiny-llama-1k", "llama",
               dict(hidden_size=128, intermediate_size=384, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=4, max_position_embeddings=1024),
               "Llama, tiny-llama continued on 1,024-token windows of stdlib code (context extension)",
               shipped=True, minutes=8.0, lr=CONTINUE_LR, batch_size=8, context=1024, continue_from="tiny-llama"),
        Preset("tiny-llama-draft-1k", "llama",
               dict(hidden_size=64, intermediate_size=192, num_hidden_layers=2, num_attention_heads=2,
                    num_key_value_heads=2, max_position_embeddings=1024),
               "Llama, tiny-llama-draft continued on 1,024-token windows of stdlib code (context extension)",
               shipped=True, minutes=3.0, lr=DRAFT_CONTINUE_LR, batch_size=8, context=1024,
               continue_from="tiny-llama-draft"),
        Preset("tiny-llama-long", "llama",
               dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                    num_key_value_heads=8, head_dim=64, max_position_embeddings=32768),
               "Llama, d512 × 4 layers, head_dim 64, 32k positions — RANDOM INIT, timing/memory only",
               random_init=True),
        Preset("micro-llama", "llama",
               dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                    num_key_value_heads=2, max_position_embeddings=256),
               "Llama, d32 × 1 layer, byte tokenizer — for tests and smoke runs (seconds)",
               tokenizer="byte", context=64, batch_size=8, minutes=0.1),
        Preset("micro-moe", "mixtral",
               dict(hidden_size=32, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                    num_key_value_heads=2, max_position_embeddings=256, num_local_experts=4,
                    num_experts_per_tok=2, router_aux_loss_coef=0.02),
               "Mixtral, d32 × 1 layer, 4 experts top-2, byte tokenizer — for tests (seconds)",
               tokenizer="byte", context=64, batch_size=8, minutes=0.1),
    )
}


def get_preset(name: str) -> Preset:
    if name not in PRESETS:
        raise unknown_name("preset", name, PRESETS, cutoff=0.5)
    return PRESETS[name]


def build_config(preset: Preset, tokenizer: Any) -> Any:
    """The transformers config of ``preset`` for ``tokenizer`` (vocab size and special ids)."""
    from transformers import LlamaConfig, MixtralConfig

    common = dict(vocab_size=len(tokenizer), bos_token_id=tokenizer.bos_token_id,
                  eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                  tie_word_embeddings=True, rms_norm_eps=1e-5, initializer_range=0.02)
    cls = {"llama": LlamaConfig, "mixtral": MixtralConfig}[preset.family]
    return cls(**common, **preset.arch, **preset.extra_config)


def build_model(preset: Preset, tokenizer: Any, seed: int) -> Any:
    """The causal LM training starts from, in float32: freshly initialised from ``seed``, or for an upcycled preset
    built from its shipped source (``seed`` drives the jitter), or for a continued one the source itself (``seed``
    unused)."""
    import torch
    from transformers import AutoModelForCausalLM

    config = build_config(preset, tokenizer)
    if preset.upcycle_from:
        return _upcycled(preset, config, seed)
    if preset.continue_from:
        return _continued(preset, config)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    return model


def _upcycled(preset: Preset, config: Any, seed: int) -> Any:
    from mlx26.core.zoo.registry import load_model
    from mlx26.core.zoo.upcycle import upcycle

    a = preset.arch
    model = upcycle(load_model(preset.upcycle_from), a["num_local_experts"], a["num_experts_per_tok"],
                    noise=preset.upcycle_noise, seed=seed, router_aux_loss_coef=a.get("router_aux_loss_coef", 0.01),
                    segments=preset.upcycle_segments)
    _check_source(preset, preset.upcycle_from, model.config, config,
                  ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"))
    return model


def _continued(preset: Preset, config: Any) -> Any:
    from mlx26.core.zoo.registry import load_model

    model = load_model(preset.continue_from)
    _check_source(preset, preset.continue_from, model.config, config,
                  ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                   "num_key_value_heads", "max_position_embeddings"))
    model.train()
    return model


def _check_source(preset: Preset, source: str, got: Any, want: Any, keys: tuple[str, ...]) -> None:
    """A preset built from a shipped model must have the shape its own config says (a drifted preset would
    otherwise train and ship a model whose manifest misdescribes it)."""
    from mlx26.core.common.errors import RunFailure

    for key in keys:
        if getattr(got, key) != getattr(want, key):
            raise RunFailure(f"preset {preset.name}: {key} {getattr(want, key)} does not match its source "
                             f"{source} ({getattr(got, key)}).")


def count_parameters(model: Any) -> int:
    """Distinct parameters (tied embeddings counted once)."""
    seen: set[int] = set()
    total = 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def llama_parameters(preset: Preset, vocab_size: int) -> int:
    """Parameter count of a Llama preset with tied embeddings, without building it (closed form)."""
    a = preset.arch
    d, layers, inter = a["hidden_size"], a["num_hidden_layers"], a["intermediate_size"]
    heads, kv = a["num_attention_heads"], a.get("num_key_value_heads", a["num_attention_heads"])
    hd = a.get("head_dim", d // heads)
    attention = d * heads * hd * 2 + d * kv * hd * 2  # q, o and k, v projections (no bias)
    per_layer = attention + 3 * d * inter + 2 * d  # SwiGLU gate/up/down + two RMSNorms
    return vocab_size * d + layers * per_layer + d  # tied embedding + layers + final norm
