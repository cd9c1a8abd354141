"""``optimize-prompt report``: one row per round of a trace file, and the run's totals (our own code)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mlx26.core.common.errors import InputError


def _pairwise(scores: Mapping[str, Any]) -> tuple[int, int, int]:
    pw = scores.get("pairwise") or {}
    if isinstance(pw, list):  # APE: one tally per candidate; the best candidate's is shown
        pw = max(pw, key=lambda t: t.get("wins", 0) - t.get("losses", 0), default={})
    return int(pw.get("wins", 0)), int(pw.get("losses", 0)), int(pw.get("ties", 0))


def rows(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows of a trace: rounds first, then a ``TOTAL`` row from the summary line (if present)."""
    out: list[dict[str, Any]] = []
    summary: Mapping[str, Any] | None = None
    seen = 0
    for number, record in enumerate(records, 1):
        seen += 1
        kind = record.get("record")
        if kind == "summary":
            summary = record
            continue
        if kind != "round" or "round" not in record:
            raise InputError(f"trace record {number}: not an optimize-prompt trace line (no \"record\": \"round\").",
                             "give the file written by `optimize-prompt run --out FILE`")
        scores = record.get("scores") or {}
        wins, losses, ties = _pairwise(scores)
        cost = record.get("cost") or {}
        out.append({"round": record["round"], "method": record.get("method"), "accepted": bool(record.get("accepted")),
                    "aborted": record.get("aborted"),
                    "incumbent_score": scores.get("incumbent_pointwise"), "candidate_score": scores.get("candidate_pointwise"),
                    "wins": wins, "losses": losses, "ties": ties, "knowledge_version": record.get("knowledge_version"),
                    "failures": sum((record.get("failures") or {}).values()), "tokens": cost.get("tokens"),
                    "usd": cost.get("usd"), "data": record.get("data")})
    if not seen:
        raise InputError("the trace is empty.")
    if summary is not None:
        data = str(summary.get("data") or "")
        # the held-out accuracies get their own columns: the score columns above are judge scores
        out.append({"round": "TOTAL", "method": summary.get("method"), "accepted": summary.get("accepted"),
                    "aborted": None, "incumbent_score": None, "candidate_score": None, "wins": None, "losses": None,
                    "ties": None, "knowledge_version": None, "failures": None, "tokens": summary.get("tokens_spent"),
                    "usd": summary.get("usd_spent"), "data": "SIMULATED" if data.startswith("SIMULATED") else data,
                    "stopped": str(summary.get("stopped") or "").split(":")[0],
                    "accuracy_initial": summary.get("accuracy_initial"), "accuracy_final": summary.get("accuracy_final"),
                    "gain": summary.get("gain")})
    return out
