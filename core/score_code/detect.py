"""Full-code and partial-code detection from step scores (SecCodePRM, Yu et al., ICML 2026).

A unit (a whole file, or each top-level function/class of it) is vulnerable iff the
aggregate of its step scores is ≤ 0 (the paper's rule with its softmax aggregate). Partial-code
detection scores only the first fraction of a file's lines, as when code is still being
written. Function units are our addition: steps are scored causally over the whole file, then
grouped by the top-level definition they fall in (module-level code forms ``<module>``).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.score_code.aggregate import aggregate, riskiest
from mlx26.core.score_code.prm import Scored
from mlx26.core.score_code.segment import Step, split_lines

UNITS = ("file", "function")


def prefix_text(text: str, fraction: float) -> str:
    """The first ⌈fraction · lines⌉ lines of ``text`` (at least one), with line ends."""
    if not 0 < fraction <= 1:
        raise InputError(f"--prefix must be in (0, 1], got {fraction}.")
    lines = split_lines(text)
    keep = max(1, math.ceil(fraction * len(lines)))
    return "".join(line + "\n" for line in lines[:keep])


def function_spans(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of top-level defs and classes; empty when the code does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((node.name, first, node.end_lineno or node.lineno))
    return out


def _step_record(step: Step, score: float) -> dict[str, Any]:
    return {"step": step.index, "start_line": step.start_line, "end_line": step.end_line, "score": score,
            "text": step.text}


def verdicts(scored: Scored, text: str, *, unit: str = "file", agg: str = "softmax", tau: float = 0.1,
             alpha: float = 0.2, top: int = 3, threshold: float = 0.0) -> list[dict[str, Any]]:
    """One verdict per unit: aggregate, vulnerable flag (aggregate ≤ ``threshold``) and the riskiest steps.

    ``threshold`` 0 is the paper's rule; a model trained on real code carries a calibrated one
    in its manifest (see :func:`operating_threshold`).
    """
    if unit not in UNITS:
        raise InputError(f"unknown unit '{unit}'.", "choose one of: " + ", ".join(UNITS))
    groups: list[tuple[str, list[int]]] = []
    if unit == "file":
        groups = [("<file>", list(range(len(scored.steps))))]
    else:
        spans = function_spans(text)
        owner: dict[str, list[int]] = {}
        for i, step in enumerate(scored.steps):
            name = next((n for n, a, b in spans if a <= step.start_line <= b), "<module>")
            owner.setdefault(name, []).append(i)
        groups = list(owner.items()) or [("<file>", list(range(len(scored.steps))))]
    out = []
    for name, idx in groups:
        if not idx:
            continue
        scores = [scored.scores[i] for i in idx]
        value = aggregate(scores, agg, tau=tau, alpha=alpha)
        steps = [scored.steps[i] for i in idx]
        out.append({"unit": name, "start_line": steps[0].start_line, "end_line": steps[-1].end_line,
                    "steps": len(idx), "aggregate": value, "vulnerable": value <= threshold, "threshold": threshold,
                    "riskiest": [_step_record(steps[j], scores[j]) for j in riskiest(scores, top)]})
    return out


def operating_threshold(kind: str, model_dir: str | None, agg: str, tau: float) -> float:
    """The manifest's calibrated threshold for this model and aggregate, else 0 (the paper's rule)."""
    from mlx26.core.score_code.prm import manifest

    info = manifest(model_dir).get("models", {}).get(kind, {})
    if "threshold" in info and info.get("aggregate", "softmax") == agg and float(info.get("tau", 0.1)) == float(tau):
        return float(info["threshold"])
    return 0.0


def candidate_reward(scores: Sequence[float], steps: Sequence[Step], prefix_lines: int, *, agg: str,
                     tau: float, alpha: float) -> tuple[float, int]:
    """Aggregate over the steps that reach past the prefix (the candidate's own steps)."""
    own = [s for s, st in zip(scores, steps, strict=True) if st.end_line > prefix_lines]
    if not own:
        return float("nan"), 0
    return aggregate(own, agg, tau=tau, alpha=alpha), len(own)
