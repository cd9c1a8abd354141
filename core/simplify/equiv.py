"""Numeric equivalence checking and train/test decontamination of expression sets.

Reconstruction (our own code) of the evaluation tooling of Saegert & Köthe, "Breaking the
Simplification Bottleneck in Amortized Neural Symbolic Regression" (ICML 2026, arXiv
2602.08885), where simplification is used to remove test-set expressions from
procedurally generated SR training data.

``equivalent(a, b)``: both expressions are evaluated on several seeded point sets (mixed
sign uniform, positive heavy-tailed, small magnitudes).  Without ``<constant>`` they are
equivalent when they agree (``rtol``) wherever both are finite and, with
``domain="strict"`` (default), are finite on the same points; ``domain="intersection"``
only compares the common domain (``exp(log x) ~ x``).  With ``<constant>`` (skeletons) the
check is existential: for several random constant "challenges" of one side, the other
side's constants are fitted with ``scipy.optimize.curve_fit`` and must reproduce it, in
both directions.  ``allow_renaming`` also tries every mapping of b's variables onto a's.

``decontaminate(train, test)``: streams over the training expressions and drops every one
whose key matches a test key: (1) the simplified skeleton (``mask_constants=True``) with
variables renamed in order of first appearance, or (2) its "functional image", the values
of that skeleton on a fixed seeded grid (all constants set to one generic value) rounded to
``digits`` significant digits.  Test keys are held in hash sets, so the cost is one
simplification and one evaluation per training row (linear, streaming).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Iterator

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.simplify.errors import ExpressionError
from mlx26.core.simplify.ops import CONSTANT, evaluate, is_var
from mlx26.core.simplify.parse import parse_any, tree_to_prefix
from mlx26.core.simplify.spec import DOMAINS


def _prefix(expr) -> list[str]:
    """Prefix tokens of an infix string, a prefix list, or a record with "prefix"/"expr"."""
    if isinstance(expr, dict):
        if "prefix" in expr:
            from mlx26.core.simplify.parse import parse_prefix

            return parse_prefix(expr["prefix"])
        if "expr" in expr:
            expr = expr["expr"]
        else:
            raise ExpressionError("record has neither 'prefix' nor 'expr'")
    return tree_to_prefix(parse_any(expr))


def _nvars(prefix: list[str]) -> int:
    return max([int(t[1:]) for t in prefix if is_var(t)] or [0])


def _point_sets(n_vars: int, n_points: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    nv = max(n_vars, 1)
    uni = rng.uniform(-5.0, 5.0, size=(n_points, nv))
    pos = 10.0 ** rng.uniform(-2.0, 2.0, size=(n_points, nv))
    small = 10.0 ** rng.uniform(-3.0, 0.0, size=(n_points, nv)) * np.where(rng.random((n_points, nv)) < 0.5, -1, 1)
    return [uni, pos, small]


def _close(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)) + 1e-10))


def _fit(pa: list[str], ya: np.ndarray, pb: list[str], X: np.ndarray, rtol: float, rng) -> bool:
    """Can b's constants be chosen so that b reproduces ya (where finite) on X?"""
    from scipy.optimize import curve_fit

    mask = np.isfinite(ya)
    if mask.sum() < 4:
        return False
    Xm = X[mask]
    k = sum(1 for t in pb if t == CONSTANT)
    if k == 0:
        yb = evaluate(pb, Xm)
        return bool(np.all(np.isfinite(yb))) and _close(ya[mask], yb, rtol)

    def f(_x, *c):
        return evaluate(pb, Xm, constants=dict(enumerate(c)))

    xs = np.arange(int(mask.sum()), dtype=float)
    starts = [np.ones(k)] + [rng.normal(size=k) * 2 for _ in range(3)]
    for p0 in starts:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                popt, _ = curve_fit(f, xs, ya[mask], p0=p0, maxfev=2000)
        except (RuntimeError, ValueError, TypeError):
            continue
        yb = f(xs, *popt)
        if np.all(np.isfinite(yb)) and _close(ya[mask], yb, max(rtol, 1e-6)):
            return True
    return False


def equivalent_details(a, b, n_points: int = 128, seed: int = 0, rtol: float = 1e-6, domain: str = "strict",
                       n_challenges: int = 3, allow_renaming: bool = False) -> dict:
    """Like ``equivalent`` but returns ``{"equivalent", "reason", "mapping", ...}``."""
    if domain not in DOMAINS:
        raise InputError(f"domain must be one of {', '.join(DOMAINS)}, not {domain!r}")
    pa, pb = _prefix(a), _prefix(b)
    va = sorted({t for t in pa if is_var(t)}, key=lambda t: int(t[1:]))
    vb = sorted({t for t in pb if is_var(t)}, key=lambda t: int(t[1:]))
    if not allow_renaming or len(va) != len(vb):
        res = _equivalent_fixed(pa, pb, n_points, seed, rtol, domain, n_challenges)
        res["mapping"] = {}
        return res
    last: dict = {"equivalent": False, "reason": "no mapping tried"}
    tried = 0
    for m in _candidate_mappings(pa, pb, va, vb):
        tried += 1
        pbm = [m.get(t, t) for t in pb]
        res = _equivalent_fixed(pa, pbm, n_points, seed, rtol, domain, n_challenges)
        res["mapping"] = {k: v for k, v in m.items() if k != v}
        res["mappings_tried"] = tried
        if res["equivalent"]:
            return res
        last = res
        if tried >= MAX_MAPPINGS:
            last["reason"] += f" (stopped after {MAX_MAPPINGS} variable mappings)"
            break
    return last


MAX_MAPPINGS = 5040


def _candidate_mappings(pa: list[str], pb: list[str], va: list[str], vb: list[str]):
    """Mappings of b's variables onto a's: signature-matched ones first, then the rest.

    Each variable's functional signature (``canon.signature``: f with that variable varied and
    all others at one shared value) does not depend on the other variables' names, so equal
    functions up to renaming pair their variables by equal signatures: with distinct
    signatures there is exactly one candidate, whatever the number of variables.  Skeletons
    with constants, or signatures that do not pair up (domain edges, rounding), fall back to
    permutations ordered by signature closeness.  Identity comes first when names agree."""
    from mlx26.core.simplify.canon import signature

    n = max([int(v[1:]) for v in va + vb] or [1])
    sa = {v: signature(pa, v, n, 5) for v in va}
    sb = {v: signature(pb, v, n, 5) for v in vb}
    seen: set = set()

    def emit(m):
        k = tuple(sorted(m.items()))
        if k not in seen:
            seen.add(k)
            return True
        return False

    groups_a: dict = {}
    for v in va:
        groups_a.setdefault(sa[v], []).append(v)
    groups_b: dict = {}
    for v in vb:
        groups_b.setdefault(sb[v], []).append(v)
    paired = sorted(groups_a) == sorted(groups_b) and all(len(groups_a[k]) == len(groups_b[k]) for k in groups_a)
    if paired:
        keys = sorted(groups_a)
        for combo in itertools.product(*[itertools.permutations(groups_a[k]) for k in keys]):
            m: dict[str, str] = {}
            for k, perm in zip(keys, combo, strict=True):
                m.update(zip(groups_b[k], perm, strict=True))
            if emit(m):
                yield m
    ident = {v: v for v in vb} if va == vb else None
    if ident is not None and emit(ident):
        yield ident

    # fallback: every permutation, nearest signatures first (lazy; bounded by MAX_MAPPINGS)
    def dist(x, y):
        return sum(p != q for p, q in zip(sa[x], sb[y], strict=True))

    order_b = sorted(vb, key=lambda v: sb[v])
    for perm in itertools.permutations(sorted(va, key=lambda v: sa[v])):
        m = dict(zip(order_b, perm, strict=True))
        if emit(m):
            yield m


def _overflow_only(pa, pb, X, ya, yb, idx, rtol) -> bool:
    """Re-evaluate the points where exactly one side is finite with mpmath: True when every such
    point is a float64 overflow (both defined and equal at 80 digits), not a domain difference."""
    try:
        from mlx26.core.simplify.canon import evaluate_mp
    except ImportError:  # pragma: no cover - mpmath ships with sympy
        return False
    for i in idx:
        a = evaluate_mp(pa, X[i])
        b = evaluate_mp(pb, X[i])
        if a is None or b is None:
            return False
        if abs(a - b) > rtol * max(abs(a), abs(b)) + 1e-10:
            return False
    return True


def _equivalent_fixed(pa, pb, n_points, seed, rtol, domain, n_challenges) -> dict:
    nv = max(_nvars(pa), _nvars(pb))
    sets = _point_sets(nv, n_points, seed)
    ka = sum(1 for t in pa if t == CONSTANT)
    kb = sum(1 for t in pb if t == CONSTANT)
    rng = np.random.default_rng(seed + 1)
    compared = 0
    if ka == 0 and kb == 0:
        for X in sets:
            ya, yb = evaluate(pa, X), evaluate(pb, X)
            fa, fb = np.isfinite(ya), np.isfinite(yb)
            if domain == "strict" and np.any(fa != fb):
                idx = np.flatnonzero(fa != fb)
                # an intermediate overflow (exp(exp(x)) = inf, then inf/inf = nan) looks like a domain
                # difference in float64: decide those points at 80 digits (stops at the first real one)
                if len(idx) > 1024 or not _overflow_only(pa, pb, X, ya, yb, idx, rtol):
                    return {"equivalent": False, "reason": "different domains", "points_compared": compared}
            both = fa & fb
            compared += int(both.sum())
            if not _close(ya[both], yb[both], rtol):
                return {"equivalent": False, "reason": "different values", "points_compared": compared}
        if compared < 4:
            return {"equivalent": False, "reason": "too few points where both are defined",
                    "points_compared": compared}
        return {"equivalent": True, "reason": "numerically equal", "points_compared": compared}
    # skeletons: fit constants in both directions
    for src, dst, ks in ((pa, pb, ka), (pb, pa, kb)):
        for _ in range(n_challenges):
            consts = dict(enumerate(rng.uniform(0.5, 3.0, size=ks) * np.where(rng.random(ks) < 0.5, -1, 1)))
            ok = False
            for X in sets:
                ys = evaluate(src, X, constants=consts)
                if np.isfinite(ys).sum() < 4:
                    continue
                ok = _fit(src, ys, dst, X, rtol, rng)
                compared += int(np.isfinite(ys).sum())
                break
            if not ok:
                return {"equivalent": False, "reason": "constants could not be fitted", "points_compared": compared}
    return {"equivalent": True, "reason": "equal after fitting constants", "points_compared": compared}


def equivalent(a, b, n_points: int = 128, seed: int = 0, rtol: float = 1e-6, domain: str = "strict",
               n_challenges: int = 3, allow_renaming: bool = False) -> bool:
    """Numeric, domain-aware equivalence of two expressions (infix strings or prefix lists)."""
    return bool(equivalent_details(a, b, n_points, seed, rtol, domain, n_challenges, allow_renaming)["equivalent"])


# ----------------------------------------------------------------------------- decontamination
def canonical_rename(prefix: list[str]) -> list[str]:
    """Rename variables in order of first appearance: x1, x2, ..."""
    m: dict[str, str] = {}
    out = []
    for t in prefix:
        if is_var(t):
            if t not in m:
                m[t] = f"x{len(m) + 1}"
            out.append(m[t])
        else:
            out.append(t)
    return out


class Decontaminator:
    """Hash index of test keys; ``filter(train)`` streams the kept training items."""

    def __init__(self, test: Iterable, mode: str = "sound", n_points: int = 32, seed: int = 0,
                 digits: int = 6, use_image: bool = True, n_vars_grid: int = 8, canonical: bool = True,
                 cancel: bool = False):
        self.mode = mode
        self.digits = digits
        self.use_image = use_image
        self.canonical = canonical
        self.cancel = cancel
        rng = np.random.default_rng(seed)
        self.grid = np.concatenate([
            rng.uniform(-3.0, 3.0, size=(n_points // 2, n_vars_grid)),
            10.0 ** rng.uniform(-1.0, 1.0, size=(n_points - n_points // 2, n_vars_grid)),
        ])
        self.skeletons: set = set()
        self.images: set = set()
        self.stats = {"test": 0, "test_errors": 0, "train": 0, "kept": 0, "dropped": 0,
                      "dropped_skeleton": 0, "dropped_image": 0, "train_errors": 0}
        for item in test:
            self.stats["test"] += 1
            try:
                sk, im = self.keys(item)
            except ExpressionError:
                self.stats["test_errors"] += 1
                continue
            self.skeletons.add(sk)
            if im is not None:
                self.images.add(im)

    def keys(self, item) -> tuple[str, bytes | None]:
        from mlx26.core.simplify.engine import simplify

        p = _prefix(item)
        if self.canonical:  # exact arithmetic first (folds, distributes numeric factors), then mask
            p = simplify(p, mode=self.mode)
        s = simplify(p, mode=self.mode, mask_constants=True)
        if self.cancel:
            s = simplify(cancel_rational(s), mode=self.mode, mask_constants=True)
        if self.canonical:
            from mlx26.core.simplify.canon import affine_image, canonical_skeleton

            s = canonical_skeleton(s, lambda q: simplify(q, mode=self.mode, mask_constants=True))
            sk = " ".join(s)
            im = None
            if self.use_image and _nvars(s) <= self.grid.shape[1]:
                im = affine_image(s, self.grid, self.digits)
            return sk, im
        s = canonical_rename(s)
        sk = " ".join(s)
        im = None
        if self.use_image and _nvars(s) <= self.grid.shape[1]:
            y = evaluate(s, self.grid, constants=1.3746)
            if np.isfinite(y).any():
                with np.errstate(all="ignore"):
                    r = np.array([float(f"{v:.{self.digits}g}") if np.isfinite(v) else np.inf for v in y])
                im = r.tobytes()
        return sk, im

    def verdict(self, item) -> str:
        """``kept``, ``train_error`` (unparsable: kept), ``dropped_skeleton`` or ``dropped_image``; no stats."""
        try:
            sk, im = self.keys(item)
        except ExpressionError:
            return "train_error"
        if sk in self.skeletons:
            return "dropped_skeleton"
        if im is not None and im in self.images:
            return "dropped_image"
        return "kept"

    def count(self, verdict: str) -> bool:
        """Add one training item's ``verdict`` to ``stats``; whether the item is kept."""
        self.stats["train"] += 1
        if verdict.startswith("dropped"):
            self.stats["dropped"] += 1
            self.stats[verdict] += 1
            return False
        if verdict == "train_error":
            self.stats["train_errors"] += 1
        self.stats["kept"] += 1
        return True

    def filter(self, train: Iterable) -> Iterator:
        for item in train:
            if self.count(self.verdict(item)):
                yield item


def cancel_rational(prefix: list[str]) -> list[str]:
    """Rational/polynomial normalisation (optional decontamination step, needs SymPy): numerator
    and denominator expanded and their common polynomial factors cancelled (``sympy.cancel``),
    e.g. ``(x1**2 - 1)/(x1 - 1) -> x1 + 1``.  Constants stay ``<constant>`` placeholders.  The
    result may differ from the input on a null set (the cancelled factor's zeros), which is what a
    decontamination key wants; it is never used by ``simplify`` itself."""
    import sympy as sp
    from mlx26.core.simplify.bench import sympy_prefix, to_sympy

    try:
        out = sympy_prefix(sp.cancel(sp.together(to_sympy(prefix))))
        from mlx26.core.simplify.parse import parse_prefix

        return parse_prefix(out)
    except (ExpressionError, TypeError, ValueError, sp.PolynomialError):
        return prefix


def decontaminate(train: Iterable, test: Iterable, mode: str = "sound", n_points: int = 32, seed: int = 0,
                  digits: int = 6, use_image: bool = True, canonical: bool = True,
                  cancel: bool = False) -> tuple[Iterator, dict]:
    """Drop training expressions equivalent to a test expression (streaming over ``train``).

    Items are infix strings, prefix token lists, or dicts with ``"prefix"`` or ``"expr"``;
    kept items are yielded unchanged.  Returns ``(iterator, stats)``; ``stats`` (a dict)
    is filled in as the iterator is consumed: train, kept, dropped, dropped_skeleton,
    dropped_image, train_errors (unparsable rows are kept and counted), test, test_errors.
    """
    d = Decontaminator(test, mode=mode, n_points=n_points, seed=seed, digits=digits, use_image=use_image,
                       canonical=canonical, cancel=cancel)
    return d.filter(train), d.stats
