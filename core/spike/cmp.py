"""``spike softmax-cmp``: softmax and Spike2Max (exact and power-of-two) of score rows, side by side.

Reads records with a ``scores`` list (JSON list, or a string "[1, 2]" / "1 2 3" from CSV), an optional
``mask`` list of booleans (True = keep); writes the three normalisations per row. Spike2Max is base 2: pass
``scale = log2 e`` to make its exact form equal softmax of the raw scores.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator

import torch
from mlx26.core.common.errors import InputError
from mlx26.core.spike.spike2max import softmax, spike2max


def _list(value, what: str, line: int) -> list:
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text) if text.startswith("[") else [float(x) for x in text.replace(",", " ").split()]
        except ValueError:
            raise InputError(f"record {line}: '{what}' is not a list of numbers: {value[:60]!r}") from None
    if not isinstance(value, list) or not value:
        raise InputError(f"record {line}: '{what}' must be a non-empty list")
    return value


def _scores(rec: dict, line: int) -> list[float]:
    if "scores" not in rec:
        raise InputError(f"record {line} has no 'scores' field", "each record needs a list: {\"scores\": [1, 2, 3]}")
    vals = _list(rec["scores"], "scores", line)
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InputError(f"record {line}: scores must be numbers, got {v!r}")
    return [float(v) for v in vals]


def compare_rows(records: Iterable[tuple[int, dict]], scale: float = 1.0) -> Iterator[dict]:
    """``records`` are (line number, record) pairs: ``record N`` in an error is its line in the input."""
    if not (math.isfinite(scale) and scale > 0):
        raise InputError(f"--scale must be a finite number > 0, got {scale}", "1.4427 (log2 e) compares with softmax")
    for line, rec in records:
        s = _scores(rec, line)
        mask = None
        if rec.get("mask") not in (None, ""):
            m = _list(rec["mask"], "mask", line)
            if len(m) != len(s) or not all(isinstance(b, bool) or b in (0, 1) for b in m):
                raise InputError(f"record {line}: 'mask' must be {len(s)} booleans")
            mask = torch.tensor([bool(b) for b in m])
        bad = [v for i, v in enumerate(s) if not math.isfinite(v) and (mask is None or bool(mask[i]))]
        if bad:
            raise InputError(f"record {line}: scores must be finite, got {bad[0]}", "mask NaN/inf entries out with "
                             "a 'mask' list (false = ignore) or drop them")
        x = torch.tensor([v if math.isfinite(v) else 0.0 for v in s], dtype=torch.float64)  # masked out: never read
        scaled = x * scale
        if not bool(torch.isfinite(scaled).all()):
            raise InputError(f"record {line}: scores × --scale {scale:g} overflow to infinity",
                             "scale the scores down first (Spike2Max only needs their differences)")
        exact = spike2max(scaled, "exact", mask)
        pow2 = spike2max(scaled, "pow2", mask)
        soft = softmax(x, mask)
        echoed = [v if math.isfinite(v) else None for v in s]  # a masked NaN/inf is echoed as null, not as 0
        yield {**{k: v for k, v in rec.items() if k != "scores"}, "scores": echoed,
               "softmax": soft.tolist(), "spike2max": exact.tolist(), "spike2max_pow2": pow2.tolist(),
               "pow2_row_sum": float(pow2.sum()), "argmax_agree": bool(int(exact.argmax()) == int(soft.argmax()))}
