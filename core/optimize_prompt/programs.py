"""Program execution for self-derived references: a safe evaluator of one arithmetic expression.

Our own piece of the reconstruction (MR.PEA derives references "where checkable"; for arithmetic
we execute a program the optimiser LLM writes). Only numbers, ``+ - * / // % **`` and
parentheses are allowed, evaluated from the AST (never ``eval``), with bounds on the exponent,
the magnitude and the expression length so a hostile reply cannot hang or exhaust memory.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

MAX_CHARS = 300
MAX_ABS = 1e15
MAX_POWER = 12
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class NotArithmetic(Exception):
    """The expression is not plain bounded arithmetic (the reference is then left undetermined)."""


def evaluate(expression: str) -> float:
    """The value of ``expression``; NotArithmetic for anything else."""
    text = expression.strip().replace("×", "*").replace("÷", "/").replace(",", "")
    if not text or len(text) > MAX_CHARS:
        raise NotArithmetic("empty or too long")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise NotArithmetic("not an expression") from None
    value = _eval(tree.body)
    if not math.isfinite(value):
        raise NotArithmetic("not finite")
    return value


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return float(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_POWER:
            raise NotArithmetic("exponent too large")
        try:
            value = _BIN[type(node.op)](left, right)
        except (ZeroDivisionError, OverflowError, ValueError):
            raise NotArithmetic("undefined") from None
        if isinstance(value, complex) or abs(value) > MAX_ABS:
            raise NotArithmetic("out of range")
        return float(value)
    raise NotArithmetic(f"{type(node).__name__} is not allowed")
