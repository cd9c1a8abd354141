"""A run's logs beside ``metrics.jsonl``: ``metrics.csv`` and TensorBoard event files (``tb/``), and reading runs back.

* ``metrics.csv`` is long-format (``step, phase, metric, value``), so records with different keys
  (train, eval, online) share one appendable file that pandas or a spreadsheet pivots;
* ``tb/`` holds TensorBoard scalars ``<phase>/<metric>`` (``torch.utils.tensorboard``; needs the
  ``tensorboard`` package, else no event files are written and :func:`tensorboard_available` is False);
* :func:`read_run` loads a run folder (config + records) for ``rl plot`` and ``rl sweep``.

No paper: logging plumbing for :mod:`.runner`.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError

CSV_NAME = "metrics.csv"
TB_DIR = "tb"
CSV_FIELDS = ("step", "phase", "metric", "value")


def tensorboard_available() -> bool:
    try:
        import tensorboard  # noqa: F401
        from torch.utils.tensorboard import SummaryWriter  # noqa: F401
    except ImportError:
        return False
    return True


def scalars(record: Mapping[str, Any]) -> dict[str, float]:
    """The record's finite numeric metrics (not step, not bools, not lists)."""
    out = {}
    for k, v in record.items():
        if k in ("step", "phase") or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if math.isfinite(float(v)):
            out[k] = float(v)
    return out


class RunLogger:
    """Writes each record to ``metrics.csv`` and (if available) TensorBoard under ``folder``."""

    def __init__(self, folder: str | Path, tensorboard: bool = True):
        self.folder = Path(folder)
        path = self.folder / CSV_NAME
        new = not path.exists() or path.stat().st_size == 0
        self.csv_file = open(path, "a", encoding="utf-8", newline="")
        self.csv = csv.writer(self.csv_file)
        if new:
            self.csv.writerow(CSV_FIELDS)
        self.tb = None
        if tensorboard and tensorboard_available():
            from torch.utils.tensorboard import SummaryWriter

            self.tb = SummaryWriter(log_dir=str(self.folder / TB_DIR))

    def write(self, record: Mapping[str, Any]) -> None:
        step, phase = int(record.get("step", 0)), str(record.get("phase", "train"))
        values = scalars(record)
        for k, v in values.items():
            self.csv.writerow((step, phase, k, repr(v)))
            if self.tb is not None:
                self.tb.add_scalar(f"{phase}/{k}", v, step)
        self.csv_file.flush()
        if self.tb is not None:
            self.tb.flush()

    def close(self) -> None:
        self.csv_file.close()
        if self.tb is not None:
            self.tb.close()


def read_run(folder: str | Path) -> dict[str, Any]:
    """``{"folder", "algo", "env", "seed", "config", "records"}`` of a ``train rl --out`` folder."""
    p = Path(folder)
    cfg_file, metrics = p / "config.json", p / "metrics.jsonl"
    if not p.is_dir():
        raise InputError(f"run folder not found: {folder}", "give `mlx26 train rl --out` folders")
    if not cfg_file.is_file() or not metrics.is_file():
        raise InputError(f"{folder} is not a training run: it needs config.json and metrics.jsonl")
    try:
        config = json.loads(cfg_file.read_text())
    except ValueError as exc:
        raise InputError(f"{cfg_file} is not valid JSON: {exc}") from exc
    records = []
    for i, line in enumerate(metrics.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            raise InputError(f"{metrics}:{i} is not a JSON line") from None
    return {"folder": str(p), "algo": config.get("algo"), "env": config.get("env"), "seed": config.get("seed"),
            "config": config, "records": records}
