"""The builder's LLM step: retrieval-augmented repair of slots anti-unification cannot explain.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper's
builder retrieves similar recorded trajectories and asks the LLM to write the RPA code; we
confine the LLM to the one thing the rules could not do: for an unexplained slot, the prompt
shows the retrieved demonstrations (instruction, fields, the value the slot took) and asks for
one expression over ``fields``. The answer is accepted only if it passes the same AST whitelist
as the generated code and reproduces the value in every demonstration; otherwise the slot
stays ``NeedsLLM``. Token usage is counted and reported as build-time tokens.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from mlx26.core.rpa_distill.antiunify import Expr
from mlx26.core.rpa_distill.whitelist import STR_METHODS

_EXPR = re.compile(r"Expression:\s*(.+)")


def _parse(node: ast.expr) -> Expr | None:
    """Our expression tuple for a whitelisted Python expression, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ("const", node.value)
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "fields"
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
        return ("field", node.slice.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STR_METHODS
            and not node.args and not node.keywords):
        inner = _parse(node.func.value)
        return ("call", node.func.attr, inner) if inner else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = node.left, node.right
        if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add) and isinstance(left.left, ast.Constant):
            inner = _parse(left.right)
            if inner and isinstance(right, ast.Constant) and isinstance(right.value, str):
                return ("concat", str(left.left.value), inner, right.value)
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            inner = _parse(right)
            return ("concat", left.value, inner, "") if inner else None
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            inner = _parse(left)
            return ("concat", "", inner, right.value) if inner else None
    return None


class RagResolver:
    """``resolver(label, what, values, contexts) → Expr | None`` backed by an LLM."""

    def __init__(self, backend: Any, *, max_examples: int = 5):
        self.backend = backend
        self.max_examples = max_examples
        self.tokens = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}

    def __call__(self, label: str, what: str, values: list[Any], contexts: list[tuple[dict[str, Any], Any]]
                 ) -> Expr | None:
        from mlx26.core.rpa_distill.antiunify import evaluate

        shots = "\n".join(f"fields = {json.dumps(f, ensure_ascii=False)} -> {json.dumps(v, ensure_ascii=False)}"
                          for v, (f, _) in list(zip(values, contexts, strict=True))[:self.max_examples])
        prompt = (f"Recorded demonstrations of one web task ({label}, {what}). For each, the instruction fields "
                  f"and the value the step used:\n{shots}\n"
                  "Write one Python expression over `fields` (string constants, fields[\"k\"], +, .lower(), "
                  ".upper(), .title(), .strip()) that gives the value in every case. Answer 'Expression: …'.")
        result = self.backend.chat([{"role": "user", "content": prompt}], temperature=0.0, max_tokens=64, seed=0)
        self.tokens["prompt_tokens"] += result.usage.prompt_tokens
        self.tokens["completion_tokens"] += result.usage.completion_tokens
        self.tokens["calls"] += 1
        match = _EXPR.search(result.text)
        if not match:
            return None
        try:
            expr = _parse(ast.parse(match.group(1).strip().strip("`"), mode="eval").body)
        except SyntaxError:
            return None
        if expr is None:
            return None
        try:
            ok = all(evaluate(expr, f, it) == v for v, (f, it) in zip(values, contexts, strict=True))
        except (KeyError, TypeError, AttributeError):
            return None
        return expr if ok else None
