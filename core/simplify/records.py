"""Per-record work of ``simplify run`` and ``simplify decontam`` as batch functions (issue 41).

Both engines of :mod:`mlx26.core.common.engine` call these same top-level functions (picklable
with ``functools.partial``), so ``--engine local`` and ``--engine ray`` write identical output.
A record is ``(line, record)``: the input line number and the record as read.
"""

from __future__ import annotations

import hashlib
import pickle
from typing import Any

from mlx26.core.simplify.errors import ExpressionError

VALUE_KEY = "value"


def parse_record(line: int, record: dict[str, Any]) -> tuple[Any, str, Any]:
    """``(id, text, parsed prefix or the ExpressionError)`` of one ``simplify run`` input record."""
    from mlx26.core.simplify.parse import parse_infix, parse_prefix

    rid = record.get("id", line)
    text: Any
    if "prefix" in record:
        text = record["prefix"] if isinstance(record["prefix"], str) else " ".join(map(str, record["prefix"]))
        parse = parse_prefix
    else:
        text = record.get("expr", record.get(VALUE_KEY))
        parse = parse_infix
    if not isinstance(text, str):
        return rid, str(text), ExpressionError("no 'expr', 'prefix' or expression text in this record")
    try:
        return rid, text, parse(text)
    except ExpressionError as exc:
        return rid, text, exc


def result_record(rid: Any, text: str, parsed: Any, out: Any) -> dict[str, Any]:
    """The output record: {id, input, simplified, prefix, len_in, len_out}, or {id, input, error}."""
    from mlx26.core.simplify.parse import to_infix

    if isinstance(out, Exception):
        return {"id": rid, "input": text, "error": str(out)}
    return {"id": rid, "input": text, "simplified": to_infix(out), "prefix": " ".join(out),
            "len_in": len(parsed), "len_out": len(out)}


def simplify_records(batch: list[tuple[int, dict[str, Any]]], *, mode: str = "sound", mask_constants: bool = False,
                     rules: str | None = None) -> list[dict[str, Any]]:
    """``simplify run`` on a batch: one output record per input (a malformed line gets its 'error')."""
    from mlx26.core.simplify.engine import simplify

    out = []
    for line, record in batch:
        rid, text, parsed = parse_record(line, record)
        if isinstance(parsed, list):
            try:
                result: Any = simplify(parsed, mode=mode, mask_constants=mask_constants, rules=rules)
            except ExpressionError as exc:
                result = ExpressionError(str(exc))
        else:
            result = parsed
        out.append(result_record(rid, text, parsed, result))
    return out


# A worker builds the test-set index once per (test set, options) and keeps it for its later batches.
_DECONTAMINATORS: dict[str, Any] = {}


def _decontaminator(test: list[Any], options: dict[str, Any]) -> Any:
    key = hashlib.sha256(pickle.dumps((test, sorted(options.items())), protocol=4)).hexdigest()
    d = _DECONTAMINATORS.get(key)
    if d is None:
        from mlx26.core.simplify.equiv import Decontaminator

        _DECONTAMINATORS.clear()  # one test set at a time
        d = _DECONTAMINATORS[key] = Decontaminator(test, **options)
    return d


def decontam_verdicts(batch: list[Any], *, test: list[Any], options: dict[str, Any]) -> list[str]:
    """``simplify decontam`` on a batch of training items: each one's verdict
    (``kept``, ``train_error`` (kept), ``dropped_skeleton`` or ``dropped_image``)."""
    d = _decontaminator(test, options)
    return [d.verdict(item) for item in batch]
