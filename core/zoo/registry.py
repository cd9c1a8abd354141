"""Find and load zoo models: ``NAME`` (the zoo), ``PATH`` (a saved folder) or a hub id.

The API other mlx26 features use (see docs/zoo.md): :func:`resolve_model_path`,
:func:`load_model`, :func:`load_tokenizer`, :func:`read_manifest`, :func:`list_models`.

* A zoo name is a folder shipped in ``core/zoo/models/`` (trained by ``mlx26 zoo train``)
  or a random-init preset (``tiny-llama-long``), which is built from its config with seed 0
  — in memory by :func:`load_model`, or saved once under ``$MLX26_HOME/zoo/`` when a path is
  needed. Shipped models load with ``local_files_only=True``: no network, ever.
* A path is any folder with ``config.json`` (what ``save_pretrained`` writes).
* A hub id (``owner/name``) is tried only when the caller passes one explicitly and the
  network is allowed (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` unset); a zoo name is
  never looked up on the hub.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure, unknown_name
from mlx26.core.common.files import atomic_folder
from mlx26.core.zoo.presets import PRESETS, count_parameters, get_preset

MODELS_DIR = Path(__file__).resolve().parent / "models"
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
RANDOM_INIT_SEED = 0


def shipped_names() -> list[str]:
    """Folders in ``core/zoo/models`` that hold a trained model (config, weights, manifest)."""
    if not MODELS_DIR.is_dir():
        return []
    return sorted(p.name for p in MODELS_DIR.iterdir()
                  if (p / "config.json").is_file() and (p / "manifest.json").is_file()
                  and (p / "model.safetensors").is_file())


def random_init_names() -> list[str]:
    return sorted(name for name, p in PRESETS.items() if p.random_init)


def zoo_names() -> list[str]:
    return shipped_names() + random_init_names()


def network_allowed() -> bool:
    off = {k: os.environ.get(k, "").strip().lower() for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    return not any(v not in ("", "0", "false", "no", "off") for v in off.values())


def model_kind(spec: str) -> tuple[str, str]:
    """("zoo" | "random" | "path" | "hub", resolved string); ValueError for anything else."""
    if spec in shipped_names():
        return "zoo", str(MODELS_DIR / spec)
    if spec in random_init_names():
        return "random", spec
    path = Path(spec).expanduser()
    if path.exists():
        if path.is_dir() and (path / "config.json").is_file():
            return "path", str(path)
        raise InputError(f"'{spec}' is not a model folder (no config.json in it).",
                         "give a folder written by save_pretrained / `mlx26 zoo train`")
    if HUB_ID.match(spec) and not spec.startswith("."):
        if not network_allowed():
            raise InputError(f"model '{spec}' is neither a zoo name nor a folder, and the hub is off "
                             "(HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set).",
                             "choose one of: " + ", ".join(zoo_names()))
        return "hub", spec
    if spec.startswith((".", "/", "~")) or spec.endswith("/"):
        raise InputError(f"no such model folder: {spec}", "give an existing folder with a config.json, "
                         "or one of: " + ", ".join(zoo_names()))
    raise unknown_name("model", spec, zoo_names(),
                       "choose one of: " + ", ".join(zoo_names()) + ", a model folder, or a hub id owner/name",
                       cutoff=0.5)


def resolve_model_path(spec: str) -> str:
    """A folder for a zoo name or path (random-init presets are saved once), or the hub id itself."""
    kind, value = model_kind(spec)
    if kind == "random":
        return str(materialize_random_init(spec))
    return value


def _data_dir() -> Path:
    from mlx26.core.common.environment import data_dir

    return data_dir() / "zoo"


def build_random_init(name: str) -> tuple[Any, Any]:
    """(model, tokenizer) of a random-init preset, weights from seed 0 (identical on every call)."""
    from mlx26.core.zoo.presets import build_model
    from mlx26.core.zoo.tokenization import get_tokenizer

    preset = get_preset(name)
    tokenizer = get_tokenizer(preset.tokenizer)
    model = build_model(preset, tokenizer, RANDOM_INIT_SEED)
    model.eval()
    return model, tokenizer


def random_init_manifest(name: str, parameters: int | None = None) -> dict[str, Any]:
    from mlx26.core.zoo.presets import llama_parameters
    from mlx26.core.zoo.tokenization import DEFAULT_VOCAB

    preset = get_preset(name)
    if parameters is None and preset.family == "llama" and preset.tokenizer == "bpe-4096":
        parameters = llama_parameters(preset, DEFAULT_VOCAB)
    return {"name": name, "preset": name, "description": preset.description, "family": preset.family,
            "random_init": True, "note": "RANDOM INIT — not trained; for timing and memory profiles only",
            "seed": RANDOM_INIT_SEED, "tokenizer": {"name": preset.tokenizer}, "parameters": parameters,
            "architecture": {"llama": "LlamaForCausalLM", "mixtral": "MixtralForCausalLM"}[preset.family]}


def materialize_random_init(name: str) -> Path:
    """Save a random-init preset under ``$MLX26_HOME/zoo/NAME`` once; return the folder."""
    target = _data_dir() / name
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return target
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model, tokenizer = build_random_init(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_folder(target, replace=False) as tmp:  # another process that finished first keeps its folder
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        manifest = random_init_manifest(name, count_parameters(model))
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        for f in tmp.iterdir():
            f.chmod(0o644)
    return target


def _hub_error(spec: str, exc: Exception) -> RuntimeError:
    return RunFailure(f"could not load '{spec}' from the Hugging Face hub ({type(exc).__name__}); "
                        "no network here? zoo names and local folders work offline")


def load_model(spec: str, *, dtype: Any = None) -> Any:
    """A causal LM in eval mode, float32 unless ``dtype`` is given; zoo and paths never touch the network."""
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bars on stderr
    kind, value = model_kind(spec)
    if kind == "random":
        model, _ = build_random_init(spec)
        return model.to(dtype) if dtype is not None else model
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # its load report of missing weights goes to stderr; we decide below
    try:
        model, info = AutoModelForCausalLM.from_pretrained(value, local_files_only=kind != "hub",
                                                           dtype=dtype or torch.float32, output_loading_info=True)
    except OSError as exc:
        if kind == "hub":
            raise _hub_error(spec, exc) from exc
        detail = " ".join(str(exc).split())[:200]
        if kind == "path":  # the user's folder is damaged (bad config.json, missing weights): an input error
            raise InputError(f"cannot load the model in {value}: {detail}") from None
        raise RunFailure(f"cannot load the model in {value}: {detail}") from exc
    except ValueError as exc:  # e.g. a config.json with a bad field
        detail = " ".join(str(exc).split())[:200]
        raise InputError(f"cannot load the model in {value}: {detail}") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    missing = sorted(info.get("missing_keys") or [])
    if missing:  # transformers would fill them with random values and carry on: refuse instead
        quantized = kind == "path" and (Path(value) / "quantize_moe.json").is_file()
        raise InputError(f"the checkpoint in {value} lacks {len(missing)} weight tensor(s) its config needs "
                         f"(e.g. {missing[0]}); loaded as is they would be random.",
                         "a quantize-moe --out folder is evaluated by `mlx26 quantize-moe --model DIR --eval-ppl "
                         "heldout` (or export it with --export)" if quantized else
                         "point at a complete transformers checkpoint")
    model.eval()
    return model


def load_tokenizer(spec: str) -> Any:
    """The tokenizer of a model (``bpe-4096`` and ``byte`` name the zoo tokenizers themselves)."""
    from mlx26.core.zoo.tokenization import get_tokenizer, load_tokenizer_dir

    if spec in ("byte", "bpe", "bpe-4096"):
        return get_tokenizer(spec)
    kind, value = model_kind(spec)
    if kind == "random":
        return get_tokenizer(get_preset(spec).tokenizer)
    if kind == "hub":
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(value)
        except OSError as exc:
            raise _hub_error(spec, exc) from exc
    return load_tokenizer_dir(value)


def read_manifest(spec: str) -> dict[str, Any]:
    """The manifest of a zoo model or folder (a folder without one gets a minimal record from config.json)."""
    kind, value = model_kind(spec)
    if kind == "random":
        return random_init_manifest(spec)
    if kind == "hub":
        return {"name": spec, "source": "hub"}
    folder = Path(value)
    if (folder / "manifest.json").is_file():
        return _json_file(folder / "manifest.json")
    config = _json_file(folder / "config.json")
    return {"name": folder.name, "architecture": (config.get("architectures") or ["?"])[0],
            "note": "no manifest.json (not trained by mlx26 zoo train)"}


def trained_context(model: str) -> int | None:
    """The window a zoo model was trained on (its manifest), or None when unknown (hub ids, bare folders).

    Positions past it are extrapolation even when ``max_position_embeddings`` allows them: tiny-llama has 1,024
    positions but saw only 128-token windows."""
    try:
        value = (read_manifest(model).get("training") or {}).get("context")
    except (InputError, OSError, ValueError):
        return None
    return int(value) if isinstance(value, int) else None


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is not valid JSON ({getattr(exc, 'msg', type(exc).__name__)}).") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} is not a JSON object.")
    return data


def folder_size(path: str | Path) -> int:
    return sum(p.stat().st_size for p in Path(path).iterdir() if p.is_file())


def list_models() -> list[dict[str, Any]]:
    """One row per zoo model: trained (shipped) ones with the held-out bits/byte of their manifest, then random-init ones.

    ``bpb`` is only comparable between rows of the same ``bpb_corpus`` and ``bpb_context`` (tiny-llama-pkgs is
    scored on held-out packages, tiny-llama-1k at a 1,024-token context), so both are in the row."""
    rows = []
    for name in shipped_names():
        m = read_manifest(name)
        ev = m.get("eval", {})
        rows.append({"name": name, "kind": "trained", "family": m.get("family"), "params": m.get("parameters"),
                     "bpb": ev.get("bits_per_byte"), "bpb_corpus": ev.get("corpus"), "bpb_context": ev.get("context"),
                     "size_mb": round(folder_size(MODELS_DIR / name) / 1e6, 2)})
    for name in random_init_names():
        m = random_init_manifest(name)
        rows.append({"name": name, "kind": "random-init, timing only", "family": m["family"],
                     "params": m["parameters"], "bpb": None, "bpb_corpus": None, "bpb_context": None, "size_mb": None})
    return rows
