"""Save and reload a quantized MoE model: packed expert codes, float16 scales/zeros, low-rank factors.

Support code for our TileQ reconstruction (Gu, Chen, Hu, Liu, ICML 2026, arXiv 2605.09281); the
format is our own. A directory holds ``config.json`` (+ tokenizer files), ``model.safetensors``
(every non-expert weight), ``experts.safetensors`` (per layer and projection: bit-packed codes,
float16 scale and zero per group, and the factors ``U``, ``V``, ``core``, ``rows``, ``cols``) and
``quantize_moe.json`` (format version, options, shapes, the per-projection records). The directory
is written under a temporary name beside the target and renamed, so an interrupted save leaves an
older directory intact; an existing target needs ``force``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.common.files import atomic_folder, check_creatable_folder
from mlx26.core.quantize_moe import quant
from mlx26.core.quantize_moe.lowrank import Factors

FORMAT = "mlx26-quantize-moe/1"
PROJ = ("gate_up_proj", "down_proj")


def check_target(path: str, force: bool, source: str | None = None, what: str = "quantize-moe output",
                 ours: Callable[[str], bool] | None = None) -> None:
    """Refuse, before any work, an --out folder that cannot be written or that would lose user data.

    ``--force`` only replaces an earlier quantize-moe output (a folder holding ``quantize_moe.json``)
    or an empty folder, never the model being quantized, the working directory or one of its parents.
    """
    if not path.strip():
        raise InputError("--out needs a folder name.")
    p = Path(path)
    resolved = p.resolve()
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise InputError(f"refusing to write the quantized model over {path} (the working directory or a parent "
                         "of it).", "give a new folder name")
    if source is not None and Path(source).exists() and resolved == Path(source).resolve():
        raise InputError(f"--out {path} is the model being quantized; it would be replaced.",
                         "give a new folder name")
    check_creatable_folder(p)
    if p.exists():
        if not force:
            raise InputError(f"{path} already exists.", "pass --force to replace it")
        if any(p.iterdir()) and not (ours or is_quantized_dir)(path):
            raise InputError(f"refusing to replace {path}: it is not empty and is not a {what}.",
                             "give a new folder name or empty this one")


def _factor_tensors(prefix: str, f: Factors | None, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    if f is None:
        return {}
    out = {f"{prefix}.U": f.U.to(dtype).contiguous(), f"{prefix}.V": f.V.to(dtype).contiguous(),
           f"{prefix}.rows": f.rows.contiguous(), f"{prefix}.cols": f.cols.contiguous()}
    if f.core is not None:
        out[f"{prefix}.core"] = f.core.to(dtype).contiguous()
    return out


def save(path: str, model: Any, tokenizer: Any, experts: list[tuple[str, Any]], results: list[dict[str, Any]],
         meta: dict[str, Any], force: bool = False) -> None:
    from safetensors.torch import save_file

    check_target(path, force)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_folder(path) as tmp:  # the old folder, or the new one complete; a failure leaves no temp folder
        model.config.save_pretrained(tmp)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        expert_keys = {f"{name}.{p}" for name, _ in experts for p in PROJ}
        if getattr(model.config, "tie_word_embeddings", False):
            expert_keys.add("lm_head.weight")  # tied: restored from the embedding on load
        dense = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items() if k not in expert_keys}
        save_file(dense, str(tmp / "model.safetensors"))
        dtype = torch.float16 if meta.get("options", {}).get("factor_bytes", 2) == 2 else torch.float32
        tensors: dict[str, torch.Tensor] = {}
        layers = []
        for i, ((name, _), res) in enumerate(zip(experts, results, strict=True)):
            entry: dict[str, Any] = {"module": name}
            for p in PROJ:
                q = res[p].quantized
                key = f"{i}.{p}"
                tensors[f"{key}.codes"] = torch.from_numpy(quant.pack_bits(q.codes.numpy(), q.bits))
                tensors[f"{key}.scale"] = q.scale.contiguous()
                tensors[f"{key}.zero"] = q.zero.contiguous()
                tensors.update(_factor_tensors(key, res[p].factors, dtype))
                entry[p] = {"shape": list(q.codes.shape), "bits": q.bits, "group_size": q.group_size,
                            "has_factors": res[p].factors is not None,
                            "has_core": res[p].factors is not None and res[p].factors.core is not None}
            layers.append(entry)
        save_file(tensors, str(tmp / "experts.safetensors"))
        (tmp / "quantize_moe.json").write_text(json.dumps({"format": FORMAT, "layers": layers, **meta}, indent=2)
                                               + "\n", encoding="utf-8")
        for f in tmp.iterdir():
            f.chmod(0o644)
        tmp.chmod(0o755)


def is_quantized_dir(path: str) -> bool:
    return (Path(path) / "quantize_moe.json").is_file()


def load(path: str, runtime: str = "fp32") -> tuple[Any, dict[str, Any]]:
    """(model with dequantized experts, factors attached and the fused forward selected, metadata).

    ``runtime="int4"``: the experts keep packed int4 codes (``tileq_int4`` forward) instead of dequantized
    fp32 weights; ``meta["int4_sizes"]`` then holds what they occupy (:func:`.pipeline.to_int4`)."""
    folder = Path(path)
    try:
        meta = json.loads((folder / "quantize_moe.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}/quantize_moe.json is not valid JSON ({exc}).",
                         "rewrite the folder with mlx26 quantize-moe --out") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise InputError(f"{path}: unknown format {found!r} (expected {FORMAT}).")
    try:
        return _load(path, folder, meta, runtime)
    except (KeyError, TypeError, IndexError, RuntimeError) as exc:  # damaged or edited folder
        raise InputError(f"{path}/quantize_moe.json does not match the saved tensors "
                         f"({type(exc).__name__}: {exc}).", "rewrite the folder with mlx26 quantize-moe --out") from None


def _read_tensors(file: Path) -> dict[str, Any]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(str(file))
    except SafetensorError as exc:  # a truncated or overwritten tensor file, not a metadata mismatch
        raise InputError(f"{file} is damaged or truncated ({exc}).",
                         "rewrite the folder with mlx26 quantize-moe --out") from None


def _load(path: str, folder: Path, meta: dict[str, Any], runtime: str = "fp32") -> tuple[Any, dict[str, Any]]:
    from mlx26.kernels import quantize_moe as kern
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(_read_tensors(folder / "model.safetensors"), strict=False)
    tensors = _read_tensors(folder / "experts.safetensors")
    modules = dict(model.named_modules())
    expected_missing = set()
    kern.register()
    int4_codes: list[dict[str, quant.Quantized]] = []
    for i, entry in enumerate(meta["layers"]):
        module = modules[entry["module"]]
        factors: dict[str, Factors | None] = {}
        codes_here: dict[str, quant.Quantized] = {}
        int4_codes.append(codes_here)
        for p in PROJ:
            info, key = entry[p], f"{i}.{p}"
            expected_missing.add(f"{entry['module']}.{p}")
            shape = tuple(info["shape"])
            codes = quant.unpack_bits(tensors[f"{key}.codes"].numpy(), info["bits"], int(np.prod(shape)))
            q = quant.Quantized(torch.from_numpy(codes).reshape(shape), tensors[f"{key}.scale"],
                                tensors[f"{key}.zero"], info["bits"], info["group_size"])
            for part in ("scale", "zero"):
                if not bool(torch.isfinite(tensors[f"{key}.{part}"]).all()):
                    raise InputError(f"{path}/experts.safetensors: {key}.{part} has NaN/infinite values.",
                                     "rewrite the folder with mlx26 quantize-moe --out")
            codes_here[p] = q
            if runtime != "int4":
                with torch.no_grad():
                    getattr(module, p).data.copy_(q.dequantize())
            factors[p] = None
            if info["has_factors"]:
                for part in ("U", "V", *(("core",) if info["has_core"] else ())):
                    if not bool(torch.isfinite(tensors[f"{key}.{part}"]).all()):
                        raise InputError(f"{path}/experts.safetensors: {key}.{part} has NaN/infinite values.",
                                         "rewrite the folder with mlx26 quantize-moe --out")
                core = tensors[f"{key}.core"].float() if info["has_core"] else None
                factors[p] = Factors(tensors[f"{key}.U"].float(), tensors[f"{key}.V"].float(), core,
                                     tensors[f"{key}.rows"], tensors[f"{key}.cols"])
        module.tileq_factors = factors
    tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
    if unexpected or set(missing) - expected_missing - tied:
        raise RunFailure(f"{path}: weights do not match the config (missing {sorted(set(missing) - expected_missing)[:3]}, "
                           f"unexpected {sorted(unexpected)[:3]}).")
    model.tie_weights()
    model.set_experts_implementation("tileq")
    if runtime == "int4":
        from mlx26.core.quantize_moe.pipeline import to_int4

        experts = [(entry["module"], modules[entry["module"]]) for entry in meta["layers"]]
        meta["int4_sizes"] = to_int4(experts, int4_codes)
        model.set_experts_implementation("tileq_int4")
    model.eval()
    return model, meta
