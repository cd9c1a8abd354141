"""Loading, saving and applying the step scorers (SecCodePRM reconstruction, arXiv 2602.10418).

Two models share one interface ``score_steps(texts) -> (scores, window_exceeded)``: ``linear``
(hashed n-grams + pooled context, :mod:`linear`) and ``transformer`` (small causal transformer,
:mod:`transformer`). Trained weights ship in ``models/`` with ``manifest.json`` recording how
they were trained (``make reproduce-score-code`` retrains them). A model folder holds
``linear.npz`` and/or ``transformer.npz`` plus the manifest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.common.files import atomic_writer
from mlx26.core.score_code.segment import Step, segment
from mlx26.core.score_code.spec import MODELS

SHIPPED_DIR = Path(__file__).resolve().parent / "models"
_CACHE: dict[tuple[str, str], Any] = {}


def load_model(kind: str = "linear", model_dir: str | None = None, *, fresh: bool = False):
    if kind not in MODELS:
        raise InputError(f"unknown model '{kind}'.", "choose one of: " + ", ".join(MODELS))
    folder = Path(model_dir) if model_dir else SHIPPED_DIR
    key = (str(folder.resolve()), kind)
    if key in _CACHE and not fresh:
        return _CACHE[key]
    path = folder / f"{kind}.npz"
    if not path.is_file():
        raise InputError(f"no {kind} model in {folder} (missing {path.name}).",
                         "train one with `mlx26 score-code train --out DIR`, or drop --model-dir for the shipped one")
    import zipfile

    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as arrays:
            data = {k: arrays[k] for k in arrays.files}
        if kind == "linear":
            from mlx26.core.score_code.linear import LinearPRM

            model: Any = LinearPRM.from_arrays(data)
        else:
            from mlx26.core.score_code.transformer import TransformerPRM

            model = TransformerPRM.from_arrays(data)
    except (OSError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile) as exc:
        detail = (f"missing array {exc}" if isinstance(exc, KeyError) else "not an .npz archive"
                  if "pickle" in str(exc) or isinstance(exc, zipfile.BadZipFile) else str(exc).split(".")[0])
        raise InputError(f"{path} is not a valid {kind} model ({detail}).",
                         "retrain it with `mlx26 score-code train --out DIR`, or drop --model-dir for the shipped one"
                         ) from None
    _CACHE[key] = model
    return model


def save_model(model, folder: str) -> str:
    """Write ``<kind>.npz`` atomically into ``folder``; return its path."""
    import numpy as np

    Path(folder).mkdir(parents=True, exist_ok=True)
    target = Path(folder) / f"{model.kind}.npz"
    with atomic_writer(target, "wb", perms=0o644) as fh:
        np.savez_compressed(fh, **model.to_arrays())
    return str(target)


def manifest(folder: str | None = None) -> dict:
    path = (Path(folder) if folder else SHIPPED_DIR) / "manifest.json"
    return json.loads(path.read_text()) if path.is_file() else {}


@dataclass
class Scored:
    steps: list[Step]
    scores: list[float]
    window_exceeded: bool


def score_text(text: str, model, mode: str = "block") -> Scored:
    steps = segment(text, mode)
    scores, exceeded = model.score_steps([s.text for s in steps])
    return Scored(steps, scores, exceeded)
