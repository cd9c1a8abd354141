"""Reading expression corpora such as SimpliPy's ``benchmarks/corpus/raw_skeletons.json``.

Part of the reconstruction of Saegert & Köthe, "Breaking the Simplification Bottleneck in
Amortized Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885; public code
psaegert/simplipy).  The exact layout of SimpliPy's corpus file is reconstructed, not read
from it (the file is not in this repository; a user points the benchmark at it with
``--corpus FILE``), so the reader accepts every plausible shape: a JSON list whose rows are
prefix token lists, prefix strings or infix strings; a JSON object whose values (or whose
``"skeletons"``/``"expressions"``/``"rows"`` entry) are such rows, or dicts with
``"prefix"``/``"skeleton"``/``"expr"``; or JSON lines / plain lines.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlx26.core.common.errors import InputError
from mlx26.core.simplify.errors import ExpressionError
from mlx26.core.simplify.parse import parse_any, parse_prefix, tree_to_prefix

_ROW_KEYS = ("prefix", "skeleton", "tokens", "expr", "expression", "infix")
_LIST_KEYS = ("skeletons", "expressions", "rows", "corpus", "data")


def _rows(data) -> list:
    if isinstance(data, dict):
        for k in _LIST_KEYS:
            if isinstance(data.get(k), list | dict):
                return _rows(data[k])
        return list(data.values())
    if isinstance(data, list):
        return data
    raise InputError("corpus is neither a JSON list nor an object of rows")


def parse_row(row) -> list[str]:
    """Prefix tokens of one corpus row (token list, prefix string, infix string, or record)."""
    if isinstance(row, dict):
        for k in _ROW_KEYS:
            if k in row:
                return parse_row(row[k])
        raise ExpressionError("record has none of " + ", ".join(_ROW_KEYS))
    if isinstance(row, list | tuple):
        return parse_prefix([str(t) for t in row])
    if isinstance(row, str):
        return tree_to_prefix(parse_any(row))
    raise ExpressionError(f"row of type {type(row).__name__} is not an expression")


def load_corpus(path) -> list[tuple[object, list[str] | ExpressionError]]:
    """``[(raw row, prefix tokens or the ExpressionError), ...]`` for every row of a corpus file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"corpus file not found: {p}")
    text = p.read_text(encoding="utf-8")
    try:
        rows = _rows(json.loads(text))
    except json.JSONDecodeError:
        rows = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                rows.append(line)
    out: list[tuple[object, list[str] | ExpressionError]] = []
    for r in rows:
        try:
            out.append((r, parse_row(r)))
        except ExpressionError as exc:
            out.append((r, exc))
    return out
