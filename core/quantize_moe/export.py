"""Export quantized MoE experts as a compressed-tensors checkpoint that transformers loads as is.

Support code for our TileQ reconstruction (Gu, Chen, Hu, Liu, ICML 2026, arXiv 2605.09281); the format is
not ours: compressed-tensors' ``pack-quantized`` (the one llm-compressor writes for W4A16 models, read by
transformers' ``CompressedTensorsHfQuantizer`` and by vLLM). The folder holds the model in its hub layout —
for Mixtral, per-expert ``block_sparse_moe.experts.<e>.w1/w3/w2`` — with each expert projection as
``weight_packed`` (int32, eight 4-bit codes each, packed by compressed-tensors itself), ``weight_scale``
(float32 per group) and ``weight_shape``, the other weights dense, and a ``quantization_config`` in
``config.json``. ``AutoModelForCausalLM.from_pretrained(folder)`` then loads it with no mlx26 code.

What the format cannot hold is refused, not approximated: transformers' loader reads MoE experts as
*symmetric* codes (no zero point), so the export needs ``--symmetric``; it has no place for LQER / TileQ
low-rank corrections, so it needs ``--lowrank none``; and only 4-bit codes are tested. The expert layout is
mapped for Mixtral (the zoo's ``tiny-moe``); other architectures are refused with their name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.common.files import atomic_folder

MARKER = "mlx26_export.json"
# model_type → (fused module suffix, hub module suffix, projection → [(hub name, half of the fused rows)])
LAYOUTS = {"mixtral": (".mlp.experts", ".block_sparse_moe.experts",
                       {"gate_up_proj": [("w1", 0), ("w3", 1)], "down_proj": [("w2", None)]})}


def check(cfg: Any, model_type: str) -> None:
    """Refuse, before any work, what a compressed-tensors checkpoint cannot represent."""
    problems = []
    if cfg.bits != 4:
        problems.append(f"--bits 4 (got {cfg.bits})")
    if not cfg.symmetric:
        problems.append("--symmetric (transformers reads MoE experts without zero points)")
    if cfg.lowrank != "none":
        problems.append("--lowrank none (the format has no place for low-rank corrections)")
    if problems:
        raise InputError("--export writes a compressed-tensors checkpoint; it needs " + ", ".join(problems) + ".")
    if model_type not in LAYOUTS:
        raise InputError(f"--export maps the experts of {', '.join(LAYOUTS)} models; this one is {model_type!r}.")


def _scheme(group_size: int):
    from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme

    args = QuantizationArgs(num_bits=4, type="int", symmetric=True, strategy="group", group_size=group_size)
    return QuantizationScheme(targets=["Linear"], weights=args), args


def export(path: str, model: Any, tokenizer: Any, experts: list[tuple[str, Any]], quantized: list[dict[str, Any]],
           meta: dict[str, Any]) -> dict[str, Any]:
    """Write the checkpoint (atomically) and return what was written: tensors, bytes, quantized projections."""
    from compressed_tensors.compressors.pack_quantized.base import PackedQuantizationCompressor
    from safetensors.torch import save_file

    fused, hub, parts = LAYOUTS[model.config.model_type]
    group = quantized[0]["gate_up_proj"].group_size
    scheme, args = _scheme(group)
    expert_keys = {f"{name}.{p}" for name, _ in experts for p in parts}
    tied = {"lm_head.weight"} if getattr(model.config, "tie_word_embeddings", False) else set()
    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items() if k not in expert_keys | tied}
    count = 0
    for (name, _), q in zip(experts, quantized, strict=True):
        prefix = name.replace(fused, hub)
        for proj, pieces in parts.items():
            qp = q[proj]
            if not bool((qp.zero.float() == 8).all()):
                raise InputError(f"{name}.{proj} has asymmetric codes; --export needs --symmetric.")
            weight, scale = qp.dequantize(), qp.scale.float()
            rows = weight.shape[1] // len(pieces)
            for e in range(weight.shape[0]):
                for hub_name, half in pieces:
                    sl = slice(None) if half is None else slice(half * rows, (half + 1) * rows)
                    packed = PackedQuantizationCompressor.compress(
                        {"weight": weight[e, sl].contiguous(), "weight_scale": scale[e, sl].contiguous()}, scheme)
                    for key, value in packed.items():
                        tensors[f"{prefix}.{e}.{hub_name}.{key}"] = value.contiguous()
                    count += 1
    config = model.config.to_dict()
    config["quantization_config"] = {
        "quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
        "config_groups": {"group_0": {"targets": [f"re:.*{re.escape(hub)}" + r"\.\d+\.w[123]$"],
                                      "weights": args.model_dump(mode="json")}},
        "ignore": ["lm_head"]}
    with atomic_folder(path) as tmp:
        (tmp / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        (tmp / MARKER).write_text(json.dumps({"written_by": "mlx26 quantize-moe --export", **meta}, indent=2) + "\n",
                                  encoding="utf-8")
        for f in tmp.iterdir():
            f.chmod(0o644)
        tmp.chmod(0o755)
    return {"export": path, "export_format": "compressed-tensors pack-quantized", "export_projections": count,
            "export_bytes": (Path(path) / "model.safetensors").stat().st_size}


def is_export_dir(path: str) -> bool:
    return (Path(path) / MARKER).is_file()
