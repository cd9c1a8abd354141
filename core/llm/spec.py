"""Choose a backend from one spec string (``--llm SPEC`` or ``$MLX26_LLM``).

Our own registry (no paper reconstructed). Specs:

    openai:URL#MODEL      an OpenAI-compatible server (``#MODEL`` optional if it serves one)
    hf:NAME_OR_PATH       local transformers generation (zoo name or save_pretrained folder)
    scripted:FILE         ordered regex → reply rules (``scripted:demo`` is shipped)
    replay:FILE[#MODEL]   answers recorded calls, offline
    record:FILE=SPEC      SPEC, with every call appended to FILE (replayable)
    cache:[FILE]=SPEC     SPEC, with deterministic calls cached (in memory, or in FILE)

Backends are imported on first use (``module:Class`` strings), so choosing ``scripted:``
never imports httpx or torch.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.llm.base import Backend

ENV_VAR = "MLX26_LLM"
BACKENDS = {
    "openai": "mlx26.core.llm.openai_backend:OpenAIBackend",
    "hf": "mlx26.core.llm.hf_backend:HFBackend",
    "scripted": "mlx26.core.llm.scripted:ScriptedBackend",
    "replay": "mlx26.core.llm.recording:ReplayBackend",
}
WRAPPERS = {
    "record": "mlx26.core.llm.recording:RecordingBackend",
    "cache": "mlx26.core.llm.cache:CachingBackend",
}
FORMS = "openai:URL#MODEL, hf:NAME_OR_PATH, scripted:FILE, replay:FILE, record:FILE=SPEC, cache:[FILE]=SPEC"
OPENAI_OPTIONS = ("timeout", "max_retries", "api_key_env", "backoff_s", "max_retry_wait")


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def spec_kind(spec: str) -> str:
    """The backend kind of a spec (``record``/``cache`` name the kind they wrap last: ``record``)."""
    kind, sep, _ = spec.partition(":")
    if not sep or kind not in {**BACKENDS, **WRAPPERS}:
        raise unknown_name("LLM backend", spec, list({**BACKENDS, **WRAPPERS}), f"use one of: {FORMS}",
                           cutoff=0.5, suffix=":")
    return kind


def inner_kinds(spec: str) -> list[str]:
    """Every backend kind a (possibly wrapped) spec uses, outermost first."""
    kind = spec_kind(spec)
    if kind in WRAPPERS:
        return [kind, *inner_kinds(_split_wrapper(spec)[1])]
    return [kind]


def _split_wrapper(spec: str) -> tuple[str, str]:
    kind, _, rest = spec.partition(":")
    path, sep, inner = rest.partition("=")
    if not sep or not inner:
        raise InputError(f"'{spec}' needs the backend it wraps: {kind}:FILE=SPEC.",
                         f"e.g. {kind}:calls.jsonl=scripted:demo")
    if kind == "record" and not path:
        raise InputError("record: needs a file: record:FILE=SPEC.")
    return path, inner


def _split_model(rest: str) -> tuple[str, str | None]:
    if "#" in rest and not Path(rest).exists():
        where, _, model = rest.rpartition("#")
        return where, model or None
    return rest, None


def get_backend(spec: str | None = None, **options: Any) -> Backend:
    """The backend for ``spec`` (default: ``$MLX26_LLM``).

    ``options`` (``timeout``, ``max_retries``, ``api_key_env``, ``backoff_s``,
    ``max_retry_wait``) apply to ``openai:`` backends wherever they sit in the spec.
    """
    unknown = set(options) - set(OPENAI_OPTIONS)
    if unknown:
        raise TypeError(f"unknown backend option(s): {', '.join(sorted(unknown))}")
    spec = spec if spec is not None else os.environ.get(ENV_VAR, "")
    spec = spec.strip()
    if not spec:
        raise InputError("no LLM backend chosen.", f"pass --llm SPEC or set {ENV_VAR} (e.g. scripted:demo)")
    kind = spec_kind(spec)
    rest = spec.partition(":")[2]
    if kind in WRAPPERS:
        path, inner = _split_wrapper(spec)
        return _load(WRAPPERS[kind])(get_backend(inner, **options), path or None)
    if kind == "openai":
        url, model = _split_model(rest)
        opts = {k: v for k, v in options.items() if v is not None}
        return _load(BACKENDS["openai"])(url, model, **opts)
    if not rest:
        raise InputError(f"'{spec}' names no model or file.", f"use one of: {FORMS}")
    if kind == "replay":
        path, model = _split_model(rest)
        return _load(BACKENDS["replay"])(path, model)
    return _load(BACKENDS[kind])(rest)
