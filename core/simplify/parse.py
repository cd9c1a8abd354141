"""Infix/prefix parsing and printing for the simplifier (all iterative, depth-checked).

Part of the reconstruction of Saegert & Köthe, "Breaking the Simplification Bottleneck in
Amortized Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885), whose engine works on
prefix token lists.  The infix front end is our own shunting-yard parser: ``+ - * /``,
``**`` and ``^`` (right associative), unary minus (binding looser than power, so ``-x**2``
is ``neg(pow2(x))``), the unicode minus ``−``, scientific literals, ``pi``/``e`` and calls
of every unary operator name (plus ``pow(a, b)``).  Normalisations applied while parsing
infix: ``a**2 -> pow2 a``, ``a**3 -> pow3 a``, ``a**0.5 -> pow1_2 a``, ``1/a -> inv a``,
``-<literal> -> negative literal``; the printer emits exactly these spellings back, so
infix -> prefix -> infix -> prefix is a fixed point.  Names ``c``, ``c1``, ``c_2``,
``C`` and ``<constant>`` denote the skeleton placeholder ``<constant>``.

Internally expressions are nested tuples ``(op, child, ...)`` with ``str`` leaves; every
tree walk here is an explicit-stack loop, and trees deeper than ``MAX_DEPTH`` are refused
with an ExpressionError instead of a RecursionError.
"""

from __future__ import annotations

import re

from mlx26.core.simplify.errors import ExpressionError
from mlx26.core.simplify.ops import (
    ARITY,
    CONSTANT,
    FUNCTION_ALIASES,
    NAMED_LITERALS,
    NONFINITE_LITERALS,
    NONFINITE_SPELLINGS,
    OPERATORS,
    check_token,
    is_number,
    is_var,
    normalize_number,
)

MAX_DEPTH = 1000
MAX_TOKENS = 100_000

Tree = str | tuple

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<const><constant>)"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op>\*\*|[-+*/^(),]))"
)
_CONST_NAME_RE = re.compile(r"^(c|C|c_?[0-9]+|const)$")
_BIN_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 4}
_BIN_OP = {"+": "+", "-": "-", "*": "*", "/": "/", "**": "pow"}
_NEG_PREC = 3
_ROOTS = {("inv", "3"): "pow1_3", ("inv", "4"): "pow1_4", ("inv", "5"): "pow1_5"}
_FLOAT_CALL_RE = re.compile(r"float\(\s*(['\"])\s*([-+]?)\s*(inf|infinity|nan)\s*\1\s*\)", re.IGNORECASE)


def _mk(op: str, children: list[Tree]) -> Tree:
    """Build a node with the infix normalisations listed in the module docstring."""
    if op == "pow":
        ex = children[1]
        if ex == "2":
            return ("pow2", children[0])
        if ex == "3":
            return ("pow3", children[0])
        if ex == "0.5" or ex == ("inv", "2"):
            return ("pow1_2", children[0])
        # written roots: x**(1/3) and x**(1/5) are real odd roots (defined for x < 0, like SimpliPy's
        # pow1_3/pow1_5); x**(1/4) is the even root
        root = _ROOTS.get(ex) if isinstance(ex, tuple) else None
        if root is not None:
            return (root, children[0])
    elif op == "/" and children[0] == "1":
        return ("inv", children[1])
    elif op == "neg":
        c = children[0]
        if isinstance(c, str) and c in NONFINITE_LITERALS:
            return {"inf": "-inf", "-inf": "inf", "nan": "nan"}[c]
        if isinstance(c, str) and is_number(c) and c not in NAMED_LITERALS:
            return normalize_number(c[1:] if c.startswith("-") else "-" + c)
    return (op, *children)


def _tokenize(s: str) -> list[str]:
    s = s.replace("\u2212", "-").replace("\u00d7", "*").replace("\u00f7", "/").replace("\u2013", "-")
    if "float" in s:  # Python's float('inf') spelling, as in SimpliPy's rule files
        s = _FLOAT_CALL_RE.sub(lambda m: ("(-inf)" if m.group(2) == "-" else m.group(3).lower()), s)
    pos = 0
    out: list[str] = []
    n = len(s)
    while pos < n:
        m = _TOKEN_RE.match(s, pos)
        if m is None or m.end() == pos:
            rest = s[pos:].strip()
            if not rest:
                break
            raise ExpressionError(f"unexpected character {rest[0]!r} at position {pos + len(s[pos:]) - len(s[pos:].lstrip())}")
        tok = m.group("num") or m.group("const") or m.group("name") or m.group("op")
        if tok == "^":
            tok = "**"
        out.append(tok)
        pos = m.end()
        if len(out) > MAX_TOKENS:
            raise ExpressionError(f"expression too long (> {MAX_TOKENS} tokens)")
    return out


def parse_infix_tree(s: str) -> Tree:
    """Parse an infix string into a tuple tree (shunting-yard, no recursion)."""
    if not isinstance(s, str):
        raise ExpressionError("expression must be a string")
    toks = _tokenize(s)
    if not toks:
        raise ExpressionError("empty expression")
    out: list[Tree] = []
    depth: list[int] = []
    # operator stack entries: ("bin", sym) | ("neg",) | ("(", func_name or None, argcount)
    ops: list[list] = []

    def apply(entry: list) -> None:
        kind = entry[0]
        if kind == "bin":
            if len(out) < 2:
                raise ExpressionError(f"missing operand for {entry[1]!r}")
            b, a = out.pop(), out.pop()
            db, da = depth.pop(), depth.pop()
            node = _mk(_BIN_OP[entry[1]], [a, b])
            d = max(da, db) + 1
        else:  # unary minus
            if not out:
                raise ExpressionError("missing operand for unary minus")
            a = out.pop()
            node = _mk("neg", [a])
            d = depth.pop() + 1
        if d > MAX_DEPTH:
            raise ExpressionError(f"expression too deep (nesting depth > {MAX_DEPTH})")
        out.append(node)
        depth.append(d if isinstance(node, tuple) else 0)

    expect_operand = True
    i = 0
    n = len(toks)
    while i < n:
        tok = toks[i]
        if tok == "(":
            if not expect_operand:
                raise ExpressionError("missing operator before '(' (implicit multiplication is not supported)")
            ops.append(["(", None, 1])
        elif tok == ")":
            if expect_operand:
                if ops and ops[-1][0] == "(" and i > 0 and toks[i - 1] == "(":
                    raise ExpressionError("empty parentheses")
                raise ExpressionError("missing operand before ')'")
            while ops and ops[-1][0] != "(":
                apply(ops.pop())
            if not ops:
                raise ExpressionError("unbalanced parentheses: unexpected ')'")
            _, fname, argc = ops.pop()
            if fname is not None:
                want = ARITY[fname]
                if argc != want:
                    raise ExpressionError(f"function {fname!r} takes {want} argument(s), got {argc}")
                args = out[-argc:]
                ds = depth[-argc:]
                del out[-argc:]
                del depth[-argc:]
                node = _mk(fname, list(args))
                d = max(ds) + 1
                if d > MAX_DEPTH:
                    raise ExpressionError(f"expression too deep (nesting depth > {MAX_DEPTH})")
                out.append(node)
                depth.append(d if isinstance(node, tuple) else 0)
            expect_operand = False
        elif tok == ",":
            if expect_operand:
                raise ExpressionError("missing operand before ','")
            while ops and ops[-1][0] != "(":
                apply(ops.pop())
            if not ops or ops[-1][1] is None:
                raise ExpressionError("',' outside a function call")
            ops[-1][2] += 1
            expect_operand = True
        elif tok in _BIN_PREC:
            if expect_operand:
                if tok == "-":
                    ops.append(["neg"])
                elif tok == "+":
                    pass  # unary plus
                else:
                    raise ExpressionError(f"missing operand before {tok!r}")
            else:
                prec = _BIN_PREC[tok]
                right = tok == "**"
                while ops and ops[-1][0] != "(":
                    top = ops[-1]
                    tprec = _NEG_PREC if top[0] == "neg" else _BIN_PREC[top[1]]
                    if tprec > prec or (tprec == prec and not right):
                        apply(ops.pop())
                    else:
                        break
                ops.append(["bin", tok])
                expect_operand = True
        else:
            # operand-like token
            if not expect_operand:
                raise ExpressionError(f"missing operator before {tok!r}")
            nxt = toks[i + 1] if i + 1 < n else None
            if tok[0].isdigit() or tok[0] == ".":
                out.append(normalize_number(tok))
                depth.append(0)
                expect_operand = False
            elif tok == CONSTANT:
                out.append(CONSTANT)
                depth.append(0)
                expect_operand = False
            elif nxt == "(":
                name = FUNCTION_ALIASES.get(tok, tok)
                if name not in ARITY or OPERATORS[name].symbol in ("+", "-", "*", "/"):
                    raise ExpressionError(f"unknown function {tok!r}")
                ops.append(["(", name, 1])
                i += 2
                expect_operand = True
                continue
            elif is_var(tok):
                out.append(tok)
                depth.append(0)
                expect_operand = False
            elif tok in NAMED_LITERALS:
                out.append(tok)
                depth.append(0)
                expect_operand = False
            elif _CONST_NAME_RE.match(tok):
                out.append(CONSTANT)
                depth.append(0)
                expect_operand = False
            elif tok.lower() in NONFINITE_SPELLINGS:
                out.append(NONFINITE_SPELLINGS[tok.lower()])
                depth.append(0)
                expect_operand = False
            elif tok in ARITY:
                raise ExpressionError(f"function {tok!r} must be followed by '('")
            else:
                raise ExpressionError(f"unknown symbol {tok!r} (variables are x1, x2, ...)")
        i += 1
    if expect_operand:
        raise ExpressionError("expression ends with an operator" if out or ops else "empty expression")
    while ops:
        top = ops.pop()
        if top[0] == "(":
            raise ExpressionError("unbalanced parentheses: missing ')'")
        apply(top)
    if len(out) != 1:  # pragma: no cover - guarded above
        raise ExpressionError("malformed expression")
    return out[0]


def tree_to_prefix(tree: Tree) -> list[str]:
    out: list[str] = []
    stack = [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, str):
            out.append(t)
        else:
            out.append(t[0])
            for c in reversed(t[1:]):
                stack.append(c)
    return out


_VALID: dict[str, str] = {}
_POW_TEXT = {"pow2": "2", "pow3": "3", "pow4": "4", "pow5": "5", "pow1_2": "0.5", "pow1_3": "(1/3)",
             "pow1_4": "(1/4)", "pow1_5": "(1/5)"}


def prefix_to_tree(tokens: list[str], check: bool = True) -> Tree:
    """Validated tuple tree from prefix tokens (reverse scan, depth-checked)."""
    if not tokens:
        raise ExpressionError("empty expression")
    if len(tokens) > MAX_TOKENS:
        raise ExpressionError(f"expression too long (> {MAX_TOKENS} tokens)")
    stack: list[Tree] = []
    dstack: list[int] = []
    valid = _VALID
    for tok in reversed(tokens):
        arity = ARITY.get(tok)
        if arity is None:
            if check:
                t2 = valid.get(tok)
                if t2 is None:
                    tok = NONFINITE_SPELLINGS.get(tok.lower(), tok)
                    check_token(tok)
                    t2 = normalize_number(tok) if is_number(tok) else tok
                    if len(valid) < 200_000:
                        valid[tok] = t2
                tok = t2
            stack.append(tok)
            dstack.append(0)
            continue
        if len(stack) < arity:
            raise ExpressionError(f"wrong prefix arity: operator {tok!r} needs {arity} operand(s)")
        node: Tree
        if arity == 1:
            node = (tok, stack.pop())
            d = dstack.pop() + 1
        else:
            a = stack.pop()
            b = stack.pop()
            node = (tok, a, b)
            d = max(dstack.pop(), dstack.pop()) + 1
        if d > MAX_DEPTH:
            raise ExpressionError(f"expression too deep (nesting depth > {MAX_DEPTH})")
        stack.append(node)
        dstack.append(d)
    if len(stack) != 1:
        raise ExpressionError(f"wrong prefix arity: {len(stack)} expressions left over (missing operator)")
    return stack[0]


def _as_tokens(expr) -> list[str]:
    if isinstance(expr, str):
        toks = expr.split()
    else:
        try:
            toks = [str(t) for t in expr]
        except TypeError as exc:
            raise ExpressionError("prefix expression must be a list of tokens or a string") from exc
    return toks


def parse_prefix(expr) -> list[str]:
    """Validate a prefix expression (token list or whitespace-separated string)."""
    return tree_to_prefix(prefix_to_tree(_as_tokens(expr)))


def parse_infix(s: str) -> list[str]:
    """Parse an infix string into validated prefix tokens."""
    return tree_to_prefix(parse_infix_tree(s))


def parse_any(expr) -> Tree:
    """Tree from an infix string, a prefix token list, or a prefix string (heuristic)."""
    if isinstance(expr, str):
        toks = expr.split()
        if len(toks) > 1 and toks[0] in ARITY:
            try:
                for t in toks:
                    if t not in ARITY:
                        check_token(t)
                return prefix_to_tree(toks)
            except ExpressionError:
                pass
        return parse_infix_tree(expr)
    return prefix_to_tree(_as_tokens(expr))


def to_infix(prefix) -> str:
    """Infix text for a prefix expression (iterative; reparses to the same prefix)."""
    toks = _as_tokens(prefix)
    prefix_to_tree(toks)  # validate
    # stack of (text, prec, is_neg_like)
    stack: list[tuple[str, int, bool]] = []
    for tok in reversed(toks):
        arity = ARITY.get(tok)
        if arity is None:
            neg_lit = tok.startswith("-")
            stack.append((tok, 3 if neg_lit else 5, neg_lit))
            continue
        op = OPERATORS[tok]
        if arity == 1:
            a, ap, aneg = stack.pop()
            if tok == "neg":
                inner = f"({a})" if ap < 4 or aneg else a
                stack.append(("-" + inner, 3, True))
            elif tok in _POW_TEXT:
                base = f"({a})" if ap <= 4 else a
                stack.append((f"{base}**{_POW_TEXT[tok]}", 4, False))
            elif tok.startswith("mult") and tok[4:].isdigit():
                inner = f"({a})" if ap < 2 or aneg else a
                stack.append((f"{tok[4:]}*{inner}", 2, False))
            elif tok.startswith("div") and tok[3:].isdigit():
                inner = f"({a})" if ap < 2 else a
                stack.append((f"{inner}/{tok[3:]}", 2, False))
            elif tok == "inv":
                den = f"({a})" if ap <= 2 or aneg else a
                stack.append((f"1/{den}", 2, False))
            else:
                stack.append((f"{tok}({a})", 5, False))
            continue
        a, ap, aneg = stack.pop()
        b, bp, bneg = stack.pop()
        prec = op.precedence
        if tok == "pow":
            left = f"({a})" if ap <= 4 or aneg else a
            right = f"({b})" if bp < 4 or bneg else b
            stack.append((f"{left}**{right}", 4, False))
            continue
        if aneg:
            left = a if tok in ("+", "-", "*", "/") else f"({a})"
        else:
            left = f"({a})" if ap < prec else a
        right = f"({b})" if bneg or bp <= prec else b
        sym = op.symbol
        sep = f" {sym} " if prec == 1 else sym
        stack.append((f"{left}{sep}{right}", prec, False))
    return stack[0][0]
