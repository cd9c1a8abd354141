"""Anti-unification of one slot's values across demonstrations into a small expression.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper's
builder generalises aligned actions; the rule set here is the issue's, the order our own: a
value is explained by the loop item, by an instruction field, by a simple transform of either
(lower / upper / title / strip), by a constant, or by a constant prefix + field + suffix
template. Expressions are tuples; :func:`evaluate` runs them, :func:`to_code` prints them as
the (whitelisted) Python the generated function uses.
"""

from __future__ import annotations

import json
from typing import Any

from mlx26.core.common.errors import InputError

Expr = tuple[Any, ...]
TRANSFORMS = ("lower", "upper", "title", "strip")


def evaluate(expr: Expr, fields: dict[str, Any], item: Any = None) -> Any:
    kind = expr[0]
    if kind == "const":
        return expr[1]
    if kind == "field":
        return fields[expr[1]]
    if kind == "item":
        return item
    if kind == "call":
        return getattr(str(evaluate(expr[2], fields, item)), expr[1])()
    if kind == "concat":
        return expr[1] + str(evaluate(expr[2], fields, item)) + expr[3]
    raise InputError(f"unknown expression kind {kind!r}.")


def to_code(expr: Expr, item_name: str = "item") -> str:
    kind = expr[0]
    if kind == "const":
        return json.dumps(expr[1], ensure_ascii=False)
    if kind == "field":
        return f"fields[{json.dumps(expr[1])}]"
    if kind == "item":
        return item_name
    if kind == "call":
        return f"{to_code(expr[2], item_name)}.{expr[1]}()"
    if kind == "concat":
        return f"{json.dumps(expr[1], ensure_ascii=False)} + {to_code(expr[2], item_name)} + " \
               f"{json.dumps(expr[3], ensure_ascii=False)}"
    raise InputError(f"unknown expression kind {kind!r}.")


def uses_item(expr: Expr) -> bool:
    return expr[0] == "item" or (expr[0] in ("call", "concat") and uses_item(expr[2]))


def _bases(contexts: list[tuple[dict[str, Any], Any]], with_item: bool) -> list[Expr]:
    bases: list[Expr] = [("item",)] if with_item else []
    keys = set.intersection(*(set(f) for f, _ in contexts)) if contexts else set()
    for key in sorted(keys):
        if all(isinstance(f[key], str) for f, _ in contexts):
            bases.append(("field", key))
    return bases


def explain(values: list[Any], contexts: list[tuple[dict[str, Any], Any]], *, with_item: bool = False
            ) -> Expr | None:
    """The first expression that yields ``values[i]`` in ``contexts[i]`` (fields, item) for all i."""
    if not values:
        return None

    def fits(expr: Expr) -> bool:
        try:
            return all(evaluate(expr, f, it) == v for v, (f, it) in zip(values, contexts, strict=True))
        except (KeyError, TypeError, AttributeError):
            return False

    bases = _bases(contexts, with_item)
    for base in bases:
        if fits(base):
            return base
    for base in bases:
        for method in TRANSFORMS:
            if fits(("call", method, base)):
                return ("call", method, base)
    if all(v == values[0] for v in values):
        return ("const", values[0])
    for base in bases:
        parts = []
        for v, (f, it) in zip(values, contexts, strict=True):
            inner = str(evaluate(base, f, it))
            if not isinstance(v, str) or not inner or v.count(inner) != 1:
                break
            pre, _, post = v.partition(inner)
            parts.append((pre, post))
        else:
            if len(set(parts)) == 1 and parts[0] != ("", ""):
                return ("concat", parts[0][0], base, parts[0][1])
    return None
