"""Loading and indexing of mined rewrite rules for the simplification engine.

Reconstruction (our own format and code) of the rule store of Saegert & Köthe, "Breaking
the Simplification Bottleneck in Amortized Neural Symbolic Regression" (ICML 2026, arXiv
2602.08885).  A rules file is JSON: ``{"provenance": {...}, "rules": [{"lhs": "prefix",
"rhs": "prefix", "sound": bool, "masked": bool, ...}, ...]}``; wildcards are ``_0``,
``_1``, ... .  ``sound`` rules are used in both modes, the others only in ``lossy`` mode;
``masked`` rules (their verification needed fitted ``<constant>`` values) only with
``mask_constants=True``.  Rules are indexed by (root operator, head of each operand), a
head being an operator name, a literal token, or ``*`` for a wildcard, so the engine finds
its candidates with at most four dictionary look-ups per node.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from mlx26.core.common.errors import InputError
from mlx26.core.simplify.errors import ExpressionError
from mlx26.core.simplify.ops import ARITY, CONSTANT, is_number, is_wild
from mlx26.core.simplify.parse import Tree

DEFAULT_RULES = Path(__file__).resolve().parent / "rules" / "default.json"


def pattern_tree(prefix) -> Tree:
    """Tree of a rule pattern (wildcards ``_k`` allowed as leaves)."""
    toks = prefix.split() if isinstance(prefix, str) else list(prefix)
    stack: list[Tree] = []
    for tok in reversed(toks):
        a = ARITY.get(tok)
        if a is None:
            if not (is_wild(tok) or is_number(tok) or tok == CONSTANT):
                raise ExpressionError(f"bad token {tok!r} in rule pattern")
            stack.append(tok)
        elif len(stack) < a:
            raise ExpressionError(f"wrong arity in rule pattern {' '.join(toks)!r}")
        elif a == 1:
            stack.append((tok, stack.pop()))
        else:
            x = stack.pop()
            y = stack.pop()
            stack.append((tok, x, y))
    if len(stack) != 1:
        raise ExpressionError(f"wrong arity in rule pattern {' '.join(toks)!r}")
    return stack[0]


def _leaves(t: Tree) -> list[str]:
    out: list[str] = []
    stack = [t]
    while stack:
        u = stack.pop()
        if isinstance(u, str):
            out.append(u)
        else:
            stack.extend(u[1:])
    return out


def _tsize(t: Tree) -> int:
    n = 0
    stack = [t]
    while stack:
        u = stack.pop()
        n += 1
        if not isinstance(u, str):
            stack.extend(u[1:])
    return n


@dataclass
class CompiledRule:
    lhs: Tree
    rhs: Tree
    sound: bool
    masked: bool
    min_size: int
    gain: int
    repeated: tuple = ()
    dropped: tuple = ()
    index_key: tuple = field(default=())


def _head(t: Tree) -> str:
    if isinstance(t, tuple):
        return t[0]
    return "*" if is_wild(t) else t


def compile_rule(d: dict) -> CompiledRule:
    lhs = pattern_tree(d["lhs"])
    rhs = pattern_tree(d["rhs"])
    if isinstance(lhs, str):
        raise ExpressionError(f"rule left side must be an operator node: {d['lhs']!r}")
    lw = [x for x in _leaves(lhs) if is_wild(x)]
    rw = {x for x in _leaves(rhs) if is_wild(x)}
    if not rw <= set(lw):
        raise ExpressionError(f"rule right side uses unbound wildcards: {d['rhs']!r}")
    repeated = tuple(sorted({w for w in lw if lw.count(w) > 1}))
    dropped = tuple(sorted(set(lw) - rw))
    key = (lhs[0],) + tuple(_head(c) for c in lhs[1:])
    ls, rs = _tsize(lhs), _tsize(rhs)
    return CompiledRule(lhs, rhs, bool(d.get("sound", False)), bool(d.get("masked", False)),
                        ls, ls - rs, repeated, dropped, key)


class RuleSet:
    """A list of compiled rules plus per-(mode, mask) indexes."""

    def __init__(self, rules: list[dict], provenance: dict | None = None, path: str | None = None):
        self.raw = list(rules)
        self.provenance = provenance or {}
        self.path = path
        self.rules = [compile_rule(r) for r in self.raw]
        self._index: dict = {}

    def __len__(self) -> int:
        return len(self.rules)

    def index_for(self, mode: str, mask: bool) -> dict:
        k = (mode, mask)
        idx = self._index.get(k)
        if idx is None:
            idx = {}
            for i, r in enumerate(self.rules):
                if mode == "sound" and not r.sound:
                    continue
                if r.masked and not mask:
                    continue
                if r.gain <= 0:
                    continue
                idx.setdefault(r.index_key, []).append((-r.gain, i, r))
            idx = {kk: [r for _, _, r in sorted(v, key=lambda x: (x[0], x[1]))] for kk, v in idx.items()}
            self._index[k] = idx
        return idx


_CACHE: dict = {}


def load_rules(path=None) -> RuleSet:
    """Load a rules JSON file (default: the shipped ``rules/default.json``), cached by path."""
    p = Path(path) if path is not None else DEFAULT_RULES
    k = str(p.resolve()) if p.exists() else str(p)
    rs = _CACHE.get(k)
    if rs is None:
        if not p.exists():
            if path is None:
                rs = RuleSet([], {"note": "default rules file missing"}, k)
                _CACHE[k] = rs
                return rs
            raise InputError(f"rules file not found: {p}", "check the path")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"rules file {p} is not valid JSON ({getattr(exc, 'msg', exc.__class__.__name__)}).",
                             "give a file written by `mlx26 simplify mine`") from None
        rules, provenance = (data, None) if isinstance(data, list) else (
            (data.get("rules"), data.get("provenance")) if isinstance(data, dict) else (None, None))
        if not isinstance(rules, list) or not all(isinstance(r, dict) and isinstance(r.get("lhs"), str)
                                                  and isinstance(r.get("rhs"), str) for r in rules):
            raise InputError(f"rules file {p} is not a rule list: expected [{{\"lhs\": …, \"rhs\": …}}, …] or "
                             "{\"rules\": [...]}.", "give a file written by `mlx26 simplify mine`")
        try:
            rs = RuleSet(rules, provenance if isinstance(provenance, dict) else None, k)
        except (KeyError, TypeError, IndexError) as exc:
            raise InputError(f"rules file {p}: a rule cannot be compiled ({type(exc).__name__}: {exc}).") from None
        _CACHE[k] = rs
    return rs


def rules_from_dict(data: dict) -> RuleSet:
    return RuleSet(data.get("rules", []), data.get("provenance"))
