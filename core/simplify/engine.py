"""Rule-based simplification engine on prefix expressions (tuple trees).

Reconstruction of the engine of Saegert & Köthe, "Breaking the Simplification Bottleneck
in Amortized Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885; public code
psaegert/simplipy).  What is reconstructed, in our own code:

* a bottom-up fixed-point loop that, at every node, (1) folds operators whose operands are
  all literals (or, with ``mask_constants``, all constant-like: the result is
  ``<constant>``), (2) flattens additive (``+ - neg``) and multiplicative
  (``* / inv pow2 pow3 pow(., int)``) chains, cancels and merges duplicate terms/factors
  (``x - x -> 0``, ``x/x -> 1``, ``x + x -> 2*x``, ``x*x -> x**2``) and rebuilds them in a
  canonical operand order, and (3) applies mined rewrite rules with wildcard patterns
  (``_0``, ``_1`` match subtrees; a repeated wildcard must match identical,
  constant-free subtrees) looked up in O(1) from an index keyed by the root operator and
  the heads of its operands;
* (second pass, issue 35) associative-commutative matching: a rule rooted at ``+ -`` or
  ``* /`` also matches any subset of a flattened sum/product in any order (sums with a common
  numeric multiplier), exact rational constants (``Fraction``), folded literal powers,
  numeric factors distributed over a sum where that is shorter, and IEEE folding of explicit
  ``inf``/``nan`` literals (non-finite results are ``nan``; ``nan`` absorbs) — all ours;
* the guarantee that the output is never longer than the input (else the input is
  returned);
* two modes.  ``sound``: every rewrite keeps the function equal wherever the input is
  defined, and may extend the domain only on a null set (removable singularities such as
  ``x/x`` at ``x = 0``).  Concretely: rules marked sound by the miner (verified equal
  wherever the source is finite, and undefined wherever the source is undefined, on random
  heavy-tailed points), and a cancellation that drops a subtree (``f - f``, ``f/f``,
  ``0*f``, a rule whose right side lacks a wildcard) only when that subtree is defined and
  non-zero on all probe points (so ``log(x) - log(x)`` stays: dropping it would define the
  result for ``x < 0``).  ``lossy`` (for SR training data): all mined rules, including
  those that hold only for positive wildcard values where both sides are finite
  (``exp(log x) -> x``, ``sqrt(x**2) -> x``), and no probe checks.

Undefined constants: folding a literal-only subtree whose value is not finite (``1/0``,
``log(-1)``, overflow) raises ``ExpressionError("expression is undefined ...")``.

Recursion: the per-node walk is recursive but every accepted tree has depth <=
``MAX_DEPTH`` (1000, enforced by the parsers) and the interpreter limit is raised to cover
it, so no RecursionError can occur; parsing, printing and evaluation are iterative.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.simplify.errors import ExpressionError
from mlx26.core.simplify.ops import (
    ARITY,
    CONSTANT,
    evaluate,
    fold_scalar,
    format_number,
    is_var,
    number_value,
)
from mlx26.core.simplify.parse import Tree, prefix_to_tree, tree_to_prefix
from mlx26.core.simplify.spec import MODES

_C = "C"  # symbolic (masked) coefficient
_ADD = frozenset(("+", "-", "neg"))
_MUL = frozenset(("*", "/", "inv", "pow2", "pow3", "pow4", "pow5", "mult2", "mult3", "mult4", "mult5", "div2",
                  "div3", "div4", "div5"))
_POWK = {"pow2": 2, "pow3": 3, "pow4": 4, "pow5": 5}
_SCALE = {"mult2": Fraction(2), "mult3": Fraction(3), "mult4": Fraction(4), "mult5": Fraction(5),
          "div2": Fraction(1, 2), "div3": Fraction(1, 3), "div4": Fraction(1, 4), "div5": Fraction(1, 5)}
_NUMVAL: dict = {}


def _numval(tok: str):
    """Exact value of a decimal literal (a Fraction: folded constants stay exact where rational,
    so 0.1 + 0.2 is 0.3 and x/3 + x/6 is x/2); ``pi`` and ``e`` are floats."""
    v = _NUMVAL.get(tok)
    if v is None:
        v = number_value(tok) if tok in ("pi", "e") else Fraction(tok)
        if len(_NUMVAL) < 100_000:
            _NUMVAL[tok] = v
    return v


def _tame(c):
    """Keep exact coefficients bounded: huge numerators/denominators fall back to floats (and an
    overflowing constant is an undefined expression)."""
    if c.__class__ is Fraction and (abs(c.numerator) > _BIG or c.denominator > _BIG):
        try:
            return float(c)
        except OverflowError:
            raise ExpressionError("expression is undefined: a constant factor overflows") from None
    return c


_BIG = 10**40
_NONFINITE = frozenset(("inf", "-inf", "nan"))


class _Undefined(Exception):
    """Internal: the sub-expression is non-finite everywhere (contains ``nan`` or a product/sum with ``inf``)."""
_MAX_STEPS = 64
_AC_BUDGET = 400  # match attempts per chain node: bounds AC matching on very long sums/products

_CACHE_LIMIT = 400_000
_RECURSION = 30_000

# ----------------------------------------------------------------------------- tree info
_SIZE: dict = {}
_KEY: dict = {}
_HASC: dict = {}


def _clear_global_caches() -> None:
    _SIZE.clear()
    _KEY.clear()
    _HASC.clear()
    _PROBE.clear()


def size(t: Tree) -> int:
    if t.__class__ is str:
        return 1
    s = _SIZE.get(t)
    if s is None:
        s = 1
        for c in t[1:]:
            s += size(c)
        _SIZE[t] = s
    return s


def key(t: Tree) -> str:
    if t.__class__ is str:
        return t
    k = _KEY.get(t)
    if k is None:
        k = t[0] + " " + " ".join([key(c) for c in t[1:]])
        _KEY[t] = k
    return k


def has_const(t: Tree) -> bool:
    if t.__class__ is str:
        return t == CONSTANT
    h = _HASC.get(t)
    if h is None:
        h = any(has_const(c) for c in t[1:])
        _HASC[t] = h
    return h


def _is_num(t: Tree) -> bool:
    return t.__class__ is str and (t[0].isdigit() or t[0] == "-" or t in ("pi", "e", "inf", "nan") or t[0] == ".")


def _fold_ieee(op: str, kids) -> str:
    """Literal fold with a non-finite operand: IEEE arithmetic, and a non-finite result is ``nan``
    (undefined, like every non-finite intermediate in ``evaluate``): ``1/inf -> 0``,
    ``exp(-inf) -> 0``, ``atan(inf) -> pi/2``, ``inf - inf -> nan``, ``x**inf -> nan``."""
    from mlx26.core.simplify.ops import OPERATORS

    with np.errstate(all="ignore"):
        v = float(OPERATORS[op].np_fn(*[np.float64(number_value(c)) for c in kids]))
    return format_number(v) if math.isfinite(v) else "nan"


def _scaled(t: Tree, c) -> Tree:
    """``c*t`` pushed into the terms of the additive chain ``t`` (before re-normalisation)."""
    if t.__class__ is tuple and t[0] in ("+", "-"):
        return (t[0], _scaled(t[1], c), _scaled(t[2], c))
    if t.__class__ is tuple and t[0] == "neg":
        return ("neg", _scaled(t[1], c))
    return ("*", _lit(c), t)


def _lit(c) -> str:
    if c.__class__ is Fraction and c.denominator != 1:
        return repr(float(c))  # a float literal; flat_mul reads it back as the exact Fraction of that float
    return format_number(c)


def _term_key(term) -> str:
    """Head operator of a sum term's unit tree (coefficient, factors) without building that tree."""
    factors = term[1]
    if len(factors) != 1:
        pos = any(e > 0 for _b, e in factors)
        return ("/" if any(e < 0 for _b, e in factors) else "*") if pos else "inv"
    b, e = factors[0]
    if e == 1:
        return b[0] if b.__class__ is tuple else b
    if e < 0:
        return "inv"
    return {2: "pow2", 3: "pow3"}.get(e, "pow")


def _head1(t: tuple) -> str:
    """Head of the first operand (AC index key): operator name, literal, or "$" for a variable."""
    c = t[1]
    if c.__class__ is tuple:
        return c[0]
    return c if (_is_num(c) or c == CONSTANT) else "$"


def _int_literal(t: Tree) -> int | None:
    if t.__class__ is str and _is_num(t) and t not in ("pi", "e", "inf", "-inf", "nan"):
        v = float(t)
        if v == int(v) and abs(v) <= 64:
            return int(v)
    return None


def _sort_key(t: Tree) -> tuple:
    if t.__class__ is str:
        if _is_num(t):
            return (0, t)
        if t == CONSTANT:
            return (1, t)
        if is_var(t):
            return (2, len(t), t)
    return (3, size(t), key(t))


# ----------------------------------------------------------------------------- probes
_PROBE: dict = {}
_PROBE_N = 48
_PROBE_X: np.ndarray | None = None


def _probe_points(n_vars: int) -> np.ndarray:
    global _PROBE_X
    if _PROBE_X is None or _PROBE_X.shape[1] < n_vars:
        cols = max(n_vars, 8)
        rng = np.random.default_rng(20260208)
        mag = 10.0 ** rng.uniform(-2.0, 2.0, size=(_PROBE_N, cols))
        sign = np.where(rng.random((_PROBE_N, cols)) < 0.5, -1.0, 1.0)
        _PROBE_X = mag * sign
    return _PROBE_X


def probe(t: Tree) -> tuple[bool, bool]:
    """(defined on all probe points, non-zero on all probe points) for a subtree."""
    r = _PROBE.get(t)
    if r is None:
        prefix = tree_to_prefix(t)
        nv = max([int(tok[1:]) for tok in prefix if is_var(tok)] or [1])
        v = evaluate(prefix, _probe_points(nv), constants=0.7371)
        fin = bool(np.all(np.isfinite(v)))
        r = (fin, fin and bool(np.all(v != 0)))
        _PROBE[t] = r
    return r


# ----------------------------------------------------------------------------- coefficients
def _cmul(a, b):
    if a == 0 or b == 0:
        return 0.0
    if a is _C or b is _C:
        return _C
    return a * b


def _cadd(a, b):
    if a is _C or b is _C:
        return _C
    return a + b


def _pw(b: Tree, e: int) -> Tree:
    if e == 1:
        return b
    if e == 2:
        return ("pow2", b)
    if e == 3:
        return ("pow3", b)
    return ("pow", b, format_number(float(e)))


def _product(items: list[Tree]) -> Tree:
    t = items[0]
    for it in items[1:]:
        t = ("*", t, it)
    return t


class Engine:
    """Simplifier for one (mode, mask_constants, rule set) combination, with memo tables."""

    _rules: object  # the rule set it was built from; set by get_engine()

    def __init__(self, mode: str = "sound", mask_constants: bool = False, ruleset=None):
        if mode not in MODES:
            raise InputError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.sound = mode == "sound"
        self.mask = bool(mask_constants)
        self.memo: dict = {}
        self._busy: set = set()
        self.index = ruleset.index_for(mode, self.mask) if ruleset is not None else {}
        ac = ruleset.ac_index_for(mode, self.mask) if ruleset is not None else {
            "+": {}, "*": {}, "+long": {}, "*long": {}}
        # a two-operand chain is the binary node the structural matcher already sees (the mined file
        # holds both operand orders of every source up to 5 tokens), so it only needs the longer rules
        self.ac_add, self.ac_mul = ac["+"], ac["*"]
        self.ac_add2, self.ac_mul2 = ac["+long"], ac["*long"]
        self._head_sets: dict = {}

    # ------------------------------------------------------------------ entry
    def run(self, tree: Tree) -> Tree:
        if sys.getrecursionlimit() < _RECURSION:
            sys.setrecursionlimit(_RECURSION)
        if len(self.memo) > _CACHE_LIMIT:
            self.memo.clear()
        if len(_SIZE) > _CACHE_LIMIT or len(_KEY) > _CACHE_LIMIT:
            _clear_global_caches()
        self._busy.clear()
        return self.simp(tree)

    def leaf(self, t: str) -> Tree:
        if self.mask and t not in ("0", "1", "-1") and t not in _NONFINITE and _is_num(t):
            return CONSTANT
        return t

    def simp(self, t: Tree) -> Tree:
        if t.__class__ is str:
            return self.leaf(t)
        r = self.memo.get(t)
        if r is not None:
            return r
        if t in self._busy:
            return t
        self._busy.add(t)
        try:
            op = t[0]
            n: Tree
            if op == "pow" and _int_literal(t[2]) is not None:
                n = ("pow", self.simp(t[1]), t[2])
            elif len(t) == 2:
                n = (op, self.simp(t[1]))
            else:
                n = (op, self.simp(t[1]), self.simp(t[2]))
            r = "nan" if "nan" in n[1:] else self.step(n)
        finally:
            self._busy.discard(t)
        self.memo[t] = r
        self.memo[r] = r
        return r

    def step(self, n: Tree) -> Tree:
        for _ in range(_MAX_STEPS):
            if n.__class__ is str:
                return self.leaf(n)
            m = self.normalize(n)
            if m != n:
                if m.__class__ is str:
                    return self.leaf(m)
                n = self._resimp(m)
                continue
            r = self.apply_rules(n)
            if r is None:
                return n
            n = self._resimp(r) if r.__class__ is not str else self.leaf(r)
        return n

    def _resimp(self, m: Tree) -> Tree:
        if m.__class__ is str:
            return self.leaf(m)
        if m[0] == "pow" and _int_literal(m[2]) is not None:
            return ("pow", self.simp(m[1]), m[2])
        return (m[0],) + tuple(self.simp(c) for c in m[1:])

    # ------------------------------------------------------------------ folding
    def normalize(self, n: Tree) -> Tree:
        op = n[0]
        kids = n[1:]
        if any(c.__class__ is str and c in _NONFINITE for c in kids):
            if "nan" in kids:
                return "nan"
            if all(_is_num(c) for c in kids):
                return _fold_ieee(op, kids)
        try:
            return self._normalize(n)
        except _Undefined:
            return "nan"

    def _normalize(self, n: Tree) -> Tree:
        op = n[0]
        if op in _ADD:
            return self.norm_add(n)
        if op in _MUL or (op == "pow" and _int_literal(n[2]) is not None):
            return self.norm_mul(n)
        kids = n[1:]
        if all(_is_num(c) for c in kids):
            v = fold_scalar(op, [number_value(c) for c in kids])
            if v is None:
                raise ExpressionError(f"expression is undefined: {op} of {', '.join(kids)} has no finite value")
            return self.leaf(format_number(v))
        if self.mask and all(_is_num(c) or c == CONSTANT for c in kids):
            return CONSTANT
        return n

    # ------------------------------------------------------------------ multiplicative chains
    def flat_mul(self, u: Tree):
        """(coefficient, [(base, exponent), ...]) of a multiplicative chain."""
        coef: Any = 1  # an exact Fraction/int, a float, or _C (masked)
        factors: list = []
        stack = [(u, 1)]
        mask = self.mask
        while stack:
            v, e = stack.pop()
            if v.__class__ is str:
                if v in _NONFINITE:
                    if e > 0:
                        raise _Undefined  # inf times anything is non-finite (or nan): undefined
                    coef = _cmul(coef, 0.0) if coef is not _C else 0.0  # 1/inf = 0
                    continue
                if _is_num(v):
                    val = _numval(v)
                    if e == 1:
                        coef = _cmul(coef, val)
                    elif val == 0:
                        if e == 0:
                            continue  # 0**0 = 1, as np.power
                        if e < 0:
                            raise ExpressionError("expression is undefined: division by zero")
                        coef = _cmul(coef, 0)
                    elif coef is not _C:
                        # literal powers fold (2**2 -> 4, x/2**2 -> x/4), exactly for rationals
                        try:
                            coef = _tame(_cmul(coef, _tame(val ** e) if val.__class__ is Fraction else val ** e))
                        except OverflowError:
                            raise ExpressionError("expression is undefined: a constant factor overflows") from None
                elif v == CONSTANT and mask:
                    coef = _cmul(coef, _C)
                else:
                    factors.append((v, e))
                continue
            op = v[0]
            if op == "*":
                stack.append((v[2], e))
                stack.append((v[1], e))
            elif op == "/":
                stack.append((v[2], -e))
                stack.append((v[1], e))
            elif op == "inv":
                stack.append((v[1], -e))
            elif op == "neg" and e in (1, -1):
                coef = _cmul(coef, -1)
                stack.append((v[1], e))
            elif op in _POWK:
                if _is_num(v[1]) and v[1] not in _NONFINITE:
                    stack.append((v[1], _POWK[op] * e))
                else:
                    factors.append((v[1], _POWK[op] * e))
            elif op in _SCALE and e in (1, -1):
                scale = _SCALE[op] if e == 1 else 1 / _SCALE[op]
                coef = _cmul(coef, scale) if coef is not _C else _C
                stack.append((v[1], e))
            elif op == "pow" and (k := _int_literal(v[2])) is not None:
                if _is_num(v[1]) and v[1] not in _NONFINITE:
                    stack.append((v[1], k * e))
                else:
                    factors.append((v[1], k * e))
            else:
                factors.append((v, e))
        if coef is not _C:
            coef = _tame(coef)
        if coef is not _C and not math.isfinite(coef):
            raise ExpressionError("expression is undefined: a constant factor overflows")
        return coef, self.merge_factors(factors)

    def merge_factors(self, factors: list) -> list:
        if len(factors) <= 1:
            if factors and factors[0][1] == 0:
                b = factors[0][0]
                if not self.sound or probe(b)[0]:
                    return []
            return factors
        groups: dict = {}
        order: list = []
        for b, e in factors:
            if has_const(b):
                order.append((b, e, None))
                continue
            g = groups.get(b)
            if g is None:
                g = groups[b] = [0, 0]
                order.append((b, None, g))
            if e > 0:
                g[0] += e
            else:
                g[1] += e
        out = []
        for b, e, g in order:
            if g is None:
                out.append((b, e))
                continue
            pos, neg = g
            net = pos + neg
            if self.sound and ((pos and neg) or net == 0):
                fin, nz = probe(b)
                ok = nz if neg else fin
                if not ok:
                    if pos:
                        out.append((b, pos))
                    if neg:
                        out.append((b, neg))
                    continue
            if net:
                out.append((b, net))
        if len(out) > 1:
            out.sort(key=lambda f: (_sort_key(f[0]), f[1]))
        return out

    def build_mul(self, coef, factors: list) -> Tree:
        if coef == 0 and coef is not _C:
            if not factors:
                return "0"
            lead = "0"
            neg = False
            den: list = []
            num: list = []
        else:
            lead = None
            neg = False
            den = []
            num = []
            if coef is _C:
                lead = CONSTANT
            else:
                a = coef
                if a < 0:
                    neg, a = True, -a
                if self.mask and a != 1:
                    lead, neg = CONSTANT, False
                elif a != 1:
                    r = 1.0 / a
                    # x/8 rather than 0.125*x; but a lone 1/8 is the literal 0.125 when that is exact
                    if a < 1 and r == round(r) and r < 1e15 and not (
                            not factors and a.__class__ is Fraction and Fraction(repr(float(a))) == a):
                        den.append(format_number(r))
                    else:
                        lead = format_number(a)
        fs = sorted(factors, key=lambda f: (_sort_key(f[0]), f[1]))
        for b, e in fs:
            if e > 0:
                num.append(_pw(b, e))
            elif e < 0:
                den.append(_pw(b, -e))
        if neg:
            if lead is not None:
                lead = format_number(-float(lead))
                neg = False
            elif den and _is_num(den[0]):
                den[0] = format_number(-float(den[0]))
                neg = False
        if lead is not None:
            num.insert(0, lead)
        if not num and not den:
            return "-1" if neg else "1"
        if not den:
            t = _product(num)
        elif not num:
            t = ("inv", _product(den))
        else:
            t = ("/", _product(num), _product(den))
        return ("neg", t) if neg else t

    def norm_mul(self, n: Tree) -> Tree:
        coef, factors = self.flat_mul(n)
        if coef == 0 and coef is not _C and factors:
            # 0 * f: every dropped factor must be defined (and non-zero if divided by)
            if not self.sound or all(probe(b)[1 if e < 0 else 0] for b, e in factors):
                factors = []
        plain = self.build_mul(coef, factors)
        if coef is not _C and len(factors) == 1 and factors[0][1] == 1 and coef not in (0, 1, -1):
            b = factors[0][0]
            if b.__class__ is tuple and b[0] in ("+", "-"):
                # distribute a numeric factor where it shortens: 0.5*(2*x1 + x2) -> x1 + 0.5*x2
                dist = self.norm_add(_scaled(b, coef))
                if size(dist) < size(plain):
                    return dist
        if self.ac_mul and len(factors) >= 2:
            better = self._ac_product(coef, factors, size(plain),
                                      self.ac_mul if len(factors) > 2 or coef != 1 else self.ac_mul2)
            if better is not None:
                return better
        return plain

    # ------------------------------------------------------------------ AC rule matching
    def _heads(self, index: dict) -> frozenset:
        h = self._head_sets.get(id(index))
        if h is None:
            h = self._head_sets[id(index)] = frozenset(k[0] for k in index)
        return h

    def _rule_ok(self, rule, b: dict) -> bool:
        if rule.repeated and any(has_const(b[w]) for w in rule.repeated):
            return False
        return not (self.sound and rule.dropped and not all(probe(b[w])[1] for w in rule.dropped))

    def _ac_product(self, coef, factors: list, cur: int, index: dict):
        """Apply a rule whose left side is a product to any subset of ``factors`` (any order)."""
        hs = self._heads(index)
        if not any((b[0] if b.__class__ is tuple else b) in hs for b, _e in factors):
            return None
        heads: dict = {}
        keys: dict = {}
        for i, (bse, _e) in enumerate(factors):
            h = bse[0] if bse.__class__ is tuple else bse
            heads.setdefault(h, []).append(i)
            if bse.__class__ is tuple:
                keys[(h, _head1(bse))] = None
            keys[(h, "*")] = None
        seen: set = set()
        budget = [_AC_BUDGET]
        for kk in keys:
            for rule in index.get(kk, ()):
                if id(rule) in seen:
                    continue
                seen.add(id(rule))
                pats, pcoef = rule.ac_mul
                if len(pats) > len(factors) or (coef is not _C and coef == 0):
                    continue
                if any(len(heads.get(hh, ())) < c for hh, c in rule.ac_need):
                    continue
                hit = self._ac_search(pats, factors, heads, 0, {}, set(), budget, False)
                if hit is None:
                    continue
                b, used = hit
                if not self._rule_ok(rule, b):
                    continue
                rest = [f for i, f in enumerate(factors) if i not in used]
                r = substitute(rule.rhs, b)
                c2 = coef if coef is _C else coef / pcoef
                if _is_num(r):
                    c2 = c2 if c2 is _C else c2 * number_value(r)
                else:
                    rest.append((r, 1))
                try:
                    cand = self.build_mul(c2, rest)
                except ExpressionError:
                    continue
                if size(cand) < cur:
                    return cand
                if budget[0] <= 0:
                    return None
        return None

    def _ac_search(self, pats: list, items: list, heads: dict, j: int, b: dict, used: set, budget: list,
                   additive: bool, mult=None):
        """Backtracking assignment of pattern terms ``pats[j:]`` to distinct ``items``.

        Products: an item (base, exponent) matches (pattern, k, head) when the exponents are equal
        and the base matches.  Sums (``additive``): an item (coefficient, unit tree) matches
        (pattern coefficient, pattern, head) when the tree matches and all matched coefficients
        share one multiplier ``mult`` (so 3*sin(x)**2 + 3*cos(x)**2 matches sin**2 + cos**2).
        Returns (bindings, used indices, multiplier) or None; ``budget`` bounds the work per node."""
        if j == len(pats):
            return (b, used, mult) if additive else (b, used)
        if additive:
            k, pat, head = pats[j]
        else:
            pat, k, head = pats[j]
        cands = heads.get(head, ()) if head is not None else range(len(items))
        for i in cands:
            if i in used:
                continue
            budget[0] -= 1
            if budget[0] < 0:
                return None
            x, y = items[i]
            if additive:
                if x is _C:
                    continue
                m = x / k
                if mult is not None and abs(m - mult) > 1e-12 * max(abs(m), abs(mult)):
                    continue
                tree = y
            else:
                if y != k:
                    continue
                m = mult
                tree = x
            b2 = dict(b)
            if not match_pattern(pat, tree, b2):
                continue
            used.add(i)
            r = self._ac_search(pats, items, heads, j + 1, b2, used, budget, additive, m)
            if r is not None:
                return r
            used.discard(i)
        return None

    def _ac_sum(self, final: list, const, cur: int, index: dict):
        """Apply a rule whose left side is a sum to any subset of the terms (any order, common factor)."""
        hs = self._heads(index)
        if not any(_term_key(t) in hs for t in final):
            return None  # cheap pre-check on the terms' head operators before building unit trees
        items = []
        heads: dict = {}
        keys: dict = {}
        for i, (coef, factors) in enumerate(final):
            unit = self.build_mul(1.0, factors)
            items.append((coef, unit))
            h = unit[0] if unit.__class__ is tuple else unit
            heads.setdefault(h, []).append(i)
            if unit.__class__ is tuple:
                keys[(h, _head1(unit))] = None
            keys[(h, "*")] = None
        seen: set = set()
        budget = [_AC_BUDGET]
        for kk in keys:
            for rule in index.get(kk, ()):
                if id(rule) in seen:
                    continue
                seen.add(id(rule))
                pats, pconst = rule.ac_add
                if len(pats) > len(items):
                    continue
                if any(len(heads.get(hh, ())) < c for hh, c in rule.ac_need):
                    continue
                hit = self._ac_search(pats, items, heads, 0, {}, set(), budget, True)
                if hit is None:
                    if budget[0] <= 0:
                        return None
                    continue
                b, used, m = hit
                if m is None:
                    continue
                if not self._rule_ok(rule, b):
                    continue
                c2 = const if const is _C else const - m * pconst
                rest = [final[i] for i in range(len(final)) if i not in used]
                r = substitute(rule.rhs, b)
                if _is_num(r):
                    c2 = c2 if c2 is _C else c2 + m * number_value(r)
                else:
                    rest.append((m, [(r, 1)]))
                try:
                    cand = self._build_sum(rest, c2)
                except ExpressionError:
                    continue
                if size(cand) < cur:
                    return cand
        return None


    # ------------------------------------------------------------------ additive chains
    def norm_add(self, n: Tree) -> Tree:
        const: Any = 0  # exact (Fraction/int), a float, or _C (masked)
        terms: list = []  # [coef, factors, fkey]
        stack = [(n, 1)]
        mask = self.mask
        while stack:
            u, s = stack.pop()
            if u.__class__ is str:
                if u in _NONFINITE:
                    raise _Undefined  # x + inf is non-finite everywhere
                if _is_num(u):
                    const = _cadd(const, s * _numval(u))
                elif u == CONSTANT and mask:
                    const = _C
                else:
                    terms.append([s, [(u, 1)], u])
                continue
            op = u[0]
            if op == "+":
                stack.append((u[2], s))
                stack.append((u[1], s))
            elif op == "-":
                stack.append((u[2], -s))
                stack.append((u[1], s))
            elif op == "neg":
                stack.append((u[1], -s))
            elif op in _MUL or (op == "pow" and _int_literal(u[2]) is not None):
                coef, factors = self.flat_mul(u)
                if not factors:
                    const = _cadd(const, _cmul(coef, s))
                    continue
                terms.append([_cmul(coef, s), factors, None])
            else:
                terms.append([s, [(u, 1)], u])
        # merge identical (constant-free) bases
        merged: dict = {}
        order: list = []
        for t in terms:
            coef, factors, _ = t
            if any(has_const(b) for b, _e in factors):
                order.append([coef, factors, [t]])
                continue
            fkey = tuple(factors)
            g = merged.get(fkey)
            if g is None:
                merged[fkey] = g = [coef, factors, [t]]
                order.append(g)
            else:
                g[0] = _cadd(g[0], coef)
                g[2].append(t)
        final: list = []
        for coef, factors, members in order:
            if coef == 0 and coef is not _C:
                if self.sound and not probe(self.build_mul(1.0, factors))[0]:
                    final.extend((t[0], t[1]) for t in members)
                continue
            final.append((coef, factors))
        plain = self._build_sum(final, const)
        n_items = len(final) + (const != 0)
        if self.ac_add and n_items >= 2:
            better = self._ac_sum(final, const, size(plain), self.ac_add if n_items > 2 else self.ac_add2)
            if better is not None:
                return better
        if len(final) >= 2 and const == 0 and const is not _C:
            fact = self._factor(final)
            if fact is not None and size(fact) < size(plain):
                return fact
        return plain

    def _factor(self, final: list):
        """Pull a factor common to every term out of a sum (``x*a + x*b -> x*(a + b)``)."""
        common = None
        for _coef, factors in final:
            d = {b: e for b, e in factors if not has_const(b)}
            if common is None:
                common = d
            else:
                common = {b: (min(e, d[b]) if e > 0 else max(e, d[b])) for b, e in common.items()
                          if b in d and (e > 0) == (d[b] > 0)}
            if not common:
                return None
        assert common is not None  # final is never empty
        reduced = []
        for coef, factors in final:
            nf = [(b, e - common[b]) if b in common else (b, e) for b, e in factors]
            reduced.append((coef, [(b, e) for b, e in nf if e != 0]))
        inner = self._build_sum(reduced, 0.0)
        return self.build_mul(1.0, list(common.items()) + [(inner, 1)])

    def _build_sum(self, final: list, const) -> Tree:
        mask = self.mask
        pos: list = []
        negs: list = []
        for coef, factors in final:
            if coef is _C or coef > 0:
                pos.append(self.build_mul(coef, factors))
            else:
                negs.append((coef, factors))
        pos.sort(key=_sort_key)
        neg_trees = sorted((self.build_mul(-c, f) for c, f in negs), key=_sort_key)
        if const is _C:
            pos.append(CONSTANT)
        elif const != 0:
            if not math.isfinite(const):
                raise ExpressionError("expression is undefined: a constant term overflows")
            if mask and const not in (1.0, -1.0):
                pos.append(CONSTANT)
            elif const > 0:
                pos.append(format_number(const))
            else:
                neg_trees.append(format_number(-const))
        if not pos:
            if not neg_trees:
                return "0"
            if negs:
                # absorb the sign into the first negative term (e.g. -2*x instead of neg(2*x))
                first_c, first_f = min(negs, key=lambda cf: _sort_key(self.build_mul(-cf[0], cf[1])))
                t = self.build_mul(first_c, first_f)
                rest = list(neg_trees)
                rest.remove(self.build_mul(-first_c, first_f))
            else:
                t = format_number(-float(neg_trees[0]))
                rest = neg_trees[1:]
            for x in rest:
                t = ("-", t, x)
            return t
        t = pos[0]
        for x in pos[1:]:
            t = ("+", t, x)
        for x in neg_trees:
            t = ("-", t, x)
        return t


    # ------------------------------------------------------------------ rules
    def apply_rules(self, n: Tree):
        index = self.index
        if not index:
            return None
        op = n[0]
        c0 = n[1]
        h0 = c0[0] if c0.__class__ is tuple else (c0 if (_is_num(c0) or c0 == CONSTANT) else "$")
        keys: tuple[tuple[str, ...], ...]
        if len(n) == 2:
            keys = ((op, h0), (op, "*"))
        else:
            c1 = n[2]
            h1 = c1[0] if c1.__class__ is tuple else (c1 if (_is_num(c1) or c1 == CONSTANT) else "$")
            keys = ((op, h0, h1), (op, h0, "*"), (op, "*", h1), (op, "*", "*"))
        sz = 0
        for k in keys:
            bucket = index.get(k)
            if not bucket:
                continue
            if not sz:
                sz = size(n)
            for rule in bucket:
                if rule.min_size > sz:
                    continue
                b: dict = {}
                if not match_pattern(rule.lhs, n, b):
                    continue
                if rule.repeated and any(has_const(b[w]) for w in rule.repeated):
                    continue
                if self.sound and rule.dropped and not all(probe(b[w])[1] for w in rule.dropped):
                    continue
                r = substitute(rule.rhs, b)
                if size(r) < sz:
                    return r
        return None


def match_pattern(p: Tree, t: Tree, b: dict) -> bool:
    """Does pattern ``p`` (``_x`` leaves are variables) match tree ``t``? Binds variables into ``b``."""
    if p.__class__ is str:
        if p[0] == "_":
            bound = b.get(p)
            if bound is None:
                b[p] = t
                return True
            return bound == t
        return p == t
    if t.__class__ is str or t[0] != p[0] or len(t) != len(p):
        return False
    if not match_pattern(p[1], t[1], b):
        return False
    return len(p) == 2 or match_pattern(p[2], t[2], b)


def substitute(p: Tree, b: dict) -> Tree:
    """``p`` with its pattern variables replaced by their bindings in ``b``."""
    if p.__class__ is str:
        return b.get(p, p) if p[0] == "_" else p
    return (p[0],) + tuple(substitute(c, b) for c in p[1:])


# ----------------------------------------------------------------------------- public API
_ENGINES: dict = {}


def get_engine(mode: str = "sound", mask_constants: bool = False, rules=None) -> Engine:
    if rules is None:
        eng = _ENGINES.get((mode, mask_constants))
        if eng is not None:
            return eng
    from mlx26.core.simplify.ruleset import RuleSet, load_rules

    default = rules is None
    if rules is None:
        rules = load_rules()
    elif not isinstance(rules, RuleSet):
        rules = load_rules(rules)
    k = (mode, bool(mask_constants), id(rules))
    eng = _ENGINES.get(k)
    if default and eng is not None:
        _ENGINES[(mode, mask_constants)] = eng
    if eng is None or eng._rules is not rules:
        eng = Engine(mode, mask_constants, rules)
        eng._rules = rules
        _ENGINES[k] = eng
    return eng


def simplify_tree(tree: Tree, mode: str = "sound", mask_constants: bool = False, rules=None) -> Tree:
    eng = get_engine(mode, mask_constants, rules)
    out = eng.run(tree)
    if size(out) > size(tree):
        return tree
    return out


def simplify(prefix, mode: str = "sound", mask_constants: bool = False, rules=None) -> list[str]:
    """Simplify a prefix expression (token list or string); returns prefix tokens.

    ``mode``: "sound" (default) or "lossy"; ``mask_constants``: fold every constant-only
    subtree and numeric literal other than 0, 1, -1 into ``<constant>`` (SR skeletons);
    ``rules``: a RuleSet, a path to a rules JSON file, or None for the shipped default.
    Raises ExpressionError for malformed or undefined input.  Never returns a longer
    expression than the input.
    """
    if isinstance(prefix, str):
        toks = prefix.split()
    else:
        toks = list(prefix)
    tree = prefix_to_tree(toks)
    return tree_to_prefix(simplify_tree(tree, mode, mask_constants, rules))


def _worker_simplify(args):
    expr, kw = args
    try:
        return simplify(expr, **kw)
    except ExpressionError as exc:
        return exc


def _worker_chunk(args):
    chunk, kw = args
    out = []
    for expr in chunk:
        try:
            out.append(simplify(expr, **kw))
        except ExpressionError as exc:
            out.append(ExpressionError(str(exc)))
    return out


def simplify_many(exprs, workers: int = 1, chunksize: int = 256, **kw) -> list:
    """Simplify many prefix expressions; ``workers > 1`` uses a multiprocessing pool.

    Returns one entry per input: the simplified prefix list, or the ExpressionError
    instance for a malformed/undefined input (the batch never aborts).
    """
    exprs = list(exprs)
    if workers <= 1 or len(exprs) < 2 * chunksize:
        return _worker_chunk((exprs, kw))
    import multiprocessing as mp

    chunks = [exprs[i:i + chunksize] for i in range(0, len(exprs), chunksize)]
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(workers) as pool:
        parts = pool.map(_worker_chunk, [(c, kw) for c in chunks])
    return [x for part in parts for x in part]


__all__ = ["Engine", "simplify", "simplify_many", "simplify_tree", "get_engine", "size", "probe", "ARITY"]
