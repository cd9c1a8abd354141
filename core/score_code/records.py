"""``score-code score`` and ``detect`` as batch functions over source records (issue 41).

A record is ``{"name": …, "text": …}`` (one source file, read in the driver); a result is
``{"rows": [output records], "notices": [lines for stderr]}``. Both engines of
:mod:`mlx26.core.common.engine` call these same functions, so ``--engine local`` and
``--engine ray`` write identical output; the model object travels with the function.
"""

from __future__ import annotations

from typing import Any


def _scored(name: str, text: str, model: Any, segment: str, notices: list[str]) -> Any:
    from mlx26.core.score_code import score_text
    from mlx26.core.score_code.segment import parses

    if segment == "ast" and not parses(text):
        notices.append(f"{name}: does not parse; ast steps fall back to logical/line grouping.")
    scored = score_text(text, model, segment)
    if scored.window_exceeded:
        notices.append(f"Warning: {name} is longer than the {model.kind} model's context window; scored with a "
                       "sliding window.")
    return scored


def step_record(name: str, step: Any, score: float) -> dict[str, Any]:
    """``{file, step, start_line, end_line, text, score}`` of one scored step."""
    from mlx26.core.score_code.source import printable

    return {"file": name, "step": step.index, "start_line": step.start_line, "end_line": step.end_line,
            "text": printable(step.text), "score": score + 0.0}  # + 0.0: no "-0.0" for a zero score


def score_sources(batch: list[dict[str, str]], *, model: Any, segment: str) -> list[dict[str, Any]]:
    """``score-code score``: every step of each source, with its notices."""
    out = []
    for source in batch:
        notices: list[str] = []
        scored = _scored(source["name"], source["text"], model, segment, notices)
        rows = [step_record(source["name"], st, sc) for st, sc in zip(scored.steps, scored.scores, strict=True)]
        out.append({"rows": rows, "notices": notices})
    return out


def detect_sources(batch: list[dict[str, str]], *, model: Any, segment: str, unit: str, agg: str, tau: float,
                   alpha: float, top: int, threshold: float) -> list[dict[str, Any]]:
    """``score-code detect``: one verdict per unit of each source (none, with a notice, for a source without code)."""
    from mlx26.core.score_code.detect import verdicts
    from mlx26.core.score_code.source import printable

    out = []
    for source in batch:
        notices: list[str] = []
        name, text = source["name"], source["text"]
        scored = _scored(name, text, model, segment, notices)
        rows = []
        if not scored.steps:
            notices.append(f"{name}: no code, skipped.")
        else:
            for v in verdicts(scored, text, unit=unit, agg=agg, tau=tau, alpha=alpha, top=top, threshold=threshold):
                for r in v["riskiest"]:
                    r["text"] = printable(r["text"])
                rows.append({"file": name, **v})
        out.append({"rows": rows, "notices": notices})
    return out
