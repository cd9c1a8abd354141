"""Training the step scorers and writing their manifest (SecCodePRM reconstruction, arXiv 2602.10418).

Training data are files with ground-truth vulnerable lines (the synthetic corpus of
:mod:`corpus`, or any JSONL with ``code`` + ``vulnerable_lines``) or labelled steps as written
by ``mlx26 score-code label`` (``file``, ``start_line``, ``end_line``, ``text``, ``label``). Each
file is segmented in every mode of ``modes``, and each segmentation is one training sequence.
The manifest records the data (generator seed or file hash), options, model sizes and losses.
"""

from __future__ import annotations

import hashlib
import json
import platform
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from mlx26.core._version import __version__
from mlx26.core.common.errors import InputError
from mlx26.core.common.files import atomic_write
from mlx26.core.score_code.labels import step_labels
from mlx26.core.score_code.prm import MODELS, save_model
from mlx26.core.score_code.segment import segment

DEFAULT_TRAIN_MODES = {"linear": ("block", "logical", "ast"), "transformer": ("block", "logical")}


def sequences(records: Iterable[dict[str, Any]], modes: Sequence[str], label_mode: str = "local",
              weights: Sequence[float] | None = None, seq_weights: list[float] | None = None,
              origins: list[tuple[int, str]] | None = None) -> tuple[list[list[str]], list[list[int]]]:
    """Step texts and labels per (file, mode) from code records, or per file from labelled steps.

    With ``weights`` (one per record) and a list ``seq_weights``, the weight of each produced
    sequence is appended to ``seq_weights`` (code records only); with a list ``origins``, its
    (record index, segmentation) is appended (code records only).
    """
    texts: list[list[str]] = []
    labels: list[list[int]] = []
    by_file: dict[str, list[dict[str, Any]]] = {}
    for i, r in enumerate(records, 1):
        if "code" in r:
            vulnerable = r.get("vulnerable_lines", [])
            if not isinstance(r["code"], str) or not isinstance(vulnerable, list) or not all(
                    isinstance(n, int) and not isinstance(n, bool) for n in vulnerable):
                raise InputError(f"training record {i}: 'code' must be a string and 'vulnerable_lines' a list "
                                 "of line numbers.", "make data with `mlx26 score-code corpus`")
            lines = [(n, n) for n in vulnerable]
            for mode in modes:
                steps = segment(r["code"], mode)
                if steps:
                    texts.append([s.text for s in steps])
                    labels.append(step_labels(steps, lines, label_mode))
                    if seq_weights is not None:
                        seq_weights.append(float(weights[i - 1]) if weights is not None else 1.0)
                    if origins is not None:
                        origins.append((i - 1, mode))
        elif {"text", "label"} <= set(r):
            order = r.get("step", r.get("start_line", 0))
            if not isinstance(order, int) or isinstance(order, bool):
                raise InputError(f"training record {i}: 'step' (or 'start_line') must be an integer.",
                                 "make data with `mlx26 score-code label`")
            by_file.setdefault(str(r.get("file", "")), []).append(r)
        else:
            raise InputError("a training record needs 'code' (+ 'vulnerable_lines') or labelled steps "
                             "('text', 'label').", "make data with `mlx26 score-code corpus` or `score-code label`")
    for rows in by_file.values():
        rows.sort(key=lambda r: int(r.get("step", r.get("start_line", 0))))
        texts.append([str(r["text"]) for r in rows])
        labels.append([int(bool(r["label"])) for r in rows])
    return texts, labels


def fix_pairs(records: Sequence[dict[str, Any]], origins: Sequence[tuple[int, str]], mode: str
              ) -> list[tuple[int, int]]:
    """(vulnerable, fixed) indices of the ``mode`` sequences of records sharing a ``fix`` id.

    A record with ``"fix": ID`` and ``"version": "vulnerable" | "fixed"`` is one side of a fix
    (:func:`realtrain.sven_records` writes them); other records take no part.
    """
    sides: dict[Any, dict[str, int]] = {}
    for seq, (index, seg) in enumerate(origins):
        r = records[index]
        if seg == mode and "fix" in r and r.get("version") in ("vulnerable", "fixed"):
            sides.setdefault(r["fix"], {})[r["version"]] = seq
    return [(s["vulnerable"], s["fixed"]) for s in sides.values() if len(s) == 2]


def train(records: list[dict[str, Any]], out_dir: str, *, models: Sequence[str] = MODELS, seed: int = 0,
          epochs: int = 10, label_mode: str = "local", data_note: dict | None = None,
          progress: Callable[[str], None] | None = None, weights: Sequence[float] | None = None,
          real: bool = False, l2: float | dict[str, float] = 1e-4, layout: str = "mixed",
          dim: int | None = None, pair_weight: float = 0.0) -> dict:
    """Train the requested models into ``out_dir`` and write ``manifest.json``; return the manifest.

    ``weights``: one loss weight per record (linear model); ``real``: the real-code variant —
    function-scoped context and taint features for the linear model (see :mod:`realtrain`).
    """
    for m in models:
        if m not in MODELS:
            raise InputError(f"unknown model '{m}'.", "choose one of: " + ", ".join(MODELS))
    digest = hashlib.sha256(json.dumps(records, sort_keys=True).encode("utf-8", "surrogateescape")).hexdigest()
    entry: dict[str, Any] = {"mlx26": __version__, "seed": seed, "label_mode": label_mode,
                             "data": {"records": len(records), "sha256": digest, **(data_note or {})},
                             "python": platform.python_version(), "models": {}}
    for kind in models:
        modes = DEFAULT_TRAIN_MODES[kind]
        seq_weights: list[float] = []
        origins: list[tuple[int, str]] = []
        texts, labels = sequences(records, modes, label_mode, weights, seq_weights, origins)
        if not any(any(y) for y in labels) or all(all(y) for y in labels):
            raise InputError("training data need both vulnerable and safe steps.")
        t0 = time.process_time()
        if kind == "linear":
            from mlx26.core.score_code.linear import train_linear

            if real:
                model, info = train_linear(texts, labels, scope="function", taint=True, l2=l2, layout=layout,
                                           weights=seq_weights if weights is not None else None,
                                           pairs=fix_pairs(records, origins, modes[0]), pair_weight=pair_weight,
                                           **({"dim": dim} if dim else {}))
            else:
                model, info = train_linear(texts, labels)
        else:
            import torch
            from mlx26.core.score_code.transformer import TransformerConfig, train_transformer

            # Real code: the function scope of the linear model, so code before a function cannot move its scores.
            config = TransformerConfig(function_scope=1) if real else None
            model, info = train_transformer(texts, labels, config=config, seed=seed, epochs=epochs, progress=progress)
            info["torch"] = torch.__version__
            info["torch_threads"] = torch.get_num_threads()
        info["cpu_seconds"] = round(time.process_time() - t0, 1)
        info["segmentations"] = list(modes)
        path = save_model(model, out_dir)
        info["file"] = Path(path).name
        info["bytes"] = Path(path).stat().st_size
        entry["models"][kind] = info
        if progress:
            progress(f"{kind}: trained in {info['cpu_seconds']} CPU s, {info['bytes']} bytes")
    write_manifest(entry, out_dir)
    return entry


def write_manifest(entry: dict, out_dir: str) -> None:
    """Merge into an existing manifest (models trained separately keep their entries); atomic."""
    path = Path(out_dir) / "manifest.json"
    old = json.loads(path.read_text()) if path.is_file() else {}
    merged = {**old, **{k: v for k, v in entry.items() if k != "models"},
              "models": {**old.get("models", {}), **entry["models"]}}
    atomic_write(path, json.dumps(merged, indent=2, sort_keys=True) + "\n", perms=0o644)
