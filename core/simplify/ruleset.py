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
from mlx26.core.simplify.ops import ARITY, CONSTANT, is_number, is_wild, number_value
from mlx26.core.simplify.parse import Tree

DEFAULT_RULES = Path(__file__).resolve().parent / "rules" / "default.json"
# Hand-written identities whose smallest source is longer than the mined 5 tokens (each one
# re-verified numerically by tests/simplify/test_ac.py); loaded together with the mined rules.
IDENTITY_RULES = Path(__file__).resolve().parent / "rules" / "identities.json"


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
    # associative-commutative forms (None when the root is not + - or * /, or no term is anchored):
    # ac_add = (terms [(coefficient, pattern tree, anchor head or None)], numeric constant)
    # ac_mul = (factors [(base pattern, exponent, anchor head or None)], numeric coefficient)
    ac_add: tuple | None = None
    ac_mul: tuple | None = None
    has_constant: bool = False
    ac_need: tuple = ()  # ((head, count), ...): heads a chain must contain for the AC form to match


def _anchor(t: Tree) -> str | None:
    if isinstance(t, tuple):
        return t[0]
    return None if is_wild(t) else t


def _flatten_add(t: Tree):
    """(terms, constant) of an additive pattern; each term is (coefficient, tree)."""
    terms: list = []
    const = 0.0
    stack = [(t, 1.0)]
    while stack:
        u, s = stack.pop()
        if isinstance(u, tuple) and u[0] in ("+", "-"):
            stack.append((u[2], s if u[0] == "+" else -s))
            stack.append((u[1], s))
        elif isinstance(u, tuple) and u[0] == "neg":
            stack.append((u[1], -s))
        elif isinstance(u, str) and is_number(u) and u not in ("inf", "-inf", "nan"):
            const += s * number_value(u)
        elif isinstance(u, tuple) and u[0] == "*" and isinstance(u[1], str) and is_number(u[1]) \
                and u[1] not in ("inf", "-inf", "nan", "0"):
            terms.append((s * number_value(u[1]), u[2]))
        else:
            terms.append((s, u))
    return terms, const


_POWK = {"pow2": 2, "pow3": 3, "pow4": 4, "pow5": 5}


def _flatten_mul(t: Tree):
    """(factors, coefficient) of a multiplicative pattern; each factor is (base, integer exponent)."""
    factors: list = []
    coef = 1.0
    stack = [(t, 1)]
    while stack:
        u, e = stack.pop()
        if isinstance(u, tuple) and u[0] in ("*", "/"):
            stack.append((u[2], e if u[0] == "*" else -e))
            stack.append((u[1], e))
        elif isinstance(u, tuple) and u[0] == "inv":
            stack.append((u[1], -e))
        elif isinstance(u, tuple) and u[0] in _POWK:
            factors.append((u[1], _POWK[u[0]] * e))
        elif isinstance(u, str) and is_number(u) and u not in ("inf", "-inf", "nan", "0"):
            coef *= number_value(u) ** e
        else:
            factors.append((u, e))
    return factors, coef


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
    has_c = CONSTANT in _leaves(lhs)
    ac_add = ac_mul = None
    if not has_c and lhs[0] in ("+", "-"):
        terms, const = _flatten_add(lhs)
        if len(terms) + (const != 0) >= 2 and any(_anchor(p) for _, p in terms):
            # anchored terms first: the backtracking search then starts from the few candidates
            items = sorted([(c, p, _anchor(p)) for c, p in terms], key=lambda x: x[2] is None)
            ac_add = (items, const)
    elif not has_c and lhs[0] in ("*", "/"):
        factors, coef = _flatten_mul(lhs)
        if len(factors) >= 2 and any(_anchor(b) for b, _ in factors):
            ac_mul = (sorted([(b, e, _anchor(b)) for b, e in factors], key=lambda x: x[2] is None), coef)
    need: dict = {}
    for *_x, a in (ac_add[0] if ac_add else ac_mul[0] if ac_mul else ()):
        if a:
            need[a] = need.get(a, 0) + 1
    return CompiledRule(lhs, rhs, bool(d.get("sound", False)), bool(d.get("masked", False)),
                        ls, ls - rs, repeated, dropped, key, ac_add, ac_mul, has_c, tuple(sorted(need.items())))


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

    def ac_index_for(self, mode: str, mask: bool) -> dict:
        """{"+": {anchor head: [rules]}, "*": {...}}: rules matched modulo associativity/commutativity.

        A rule is filed under the anchor head of its first anchored term (factor); the engine looks
        up the heads present in a sum (product) and tries each rule once."""
        k = ("ac", mode, mask)
        idx = self._index.get(k)
        if idx is None:
            idx = {"+": {}, "*": {}, "+long": {}, "*long": {}}
            for i, r in enumerate(self.rules):
                if (mode == "sound" and not r.sound) or (r.masked and not mask) or r.gain <= 0:
                    continue
                if r.ac_add is not None:
                    kind, items = "+", r.ac_add[0]
                elif r.ac_mul is not None:
                    kind, items = "*", r.ac_mul[0]
                else:
                    continue
                # file under (head, head of the first operand) of the first anchored term, e.g.
                # ("pow2", "sin") for sin(x)**2: the engine looks up both that and (head, "*")
                first = next(x for x in items if x[2])
                pat = first[1] if kind == "+" else first[0]
                sub = pat[1] if len(pat) > 1 else None
                sub_head = "*" if sub is None or (isinstance(sub, str) and is_wild(sub)) else (
                    sub[0] if isinstance(sub, tuple) else sub)
                idx[kind].setdefault((first[2], sub_head), []).append((-r.gain, i, r))
                if r.min_size > 5:  # beyond the mined length: both operand orders are not in the file
                    idx[kind + "long"].setdefault((first[2], sub_head), []).append((-r.gain, i, r))
            for kind in idx:
                idx[kind] = {kk: [r for _, _, r in sorted(v, key=lambda x: (x[0], x[1]))]
                             for kk, v in idx[kind].items()}
            self._index[k] = idx
        return idx

    def merged(self, other: RuleSet) -> RuleSet:
        """A rule set with this set's rules followed by ``other``'s."""
        rs = RuleSet(self.raw + other.raw, {"merged": [self.provenance, other.provenance]},
                     f"{self.path}+{other.path}")
        return rs


_CACHE: dict = {}


def load_rules(path=None) -> RuleSet:
    """Load a rules JSON file, cached by path; default: the shipped mined ``rules/default.json``
    plus the hand-written ``rules/identities.json``.  A SimpliPy rule-set file (its list-of-pairs
    format, see ``simplipy_format``) is recognised and imported."""
    if path is None:
        rs = _CACHE.get("<default>")
        if rs is None:
            rs = _load_file(None)
            if IDENTITY_RULES.exists():
                rs = rs.merged(_load_file(IDENTITY_RULES))
            _CACHE["<default>"] = rs
        return rs
    return _load_file(path)


def _load_file(path) -> RuleSet:
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
        from mlx26.core.simplify.simplipy_format import import_rules, looks_like_simplipy

        if looks_like_simplipy(data):
            rules, stats = import_rules(data)
            rs = RuleSet(rules, {"imported_from": str(p), "format": "simplipy (reconstructed)",
                                 "import_stats": stats}, k)
            _CACHE[k] = rs
            return rs
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
