"""Decontamination of the SR training stream against the test sets (part of ``mlx26 sr``).

Flash-ANSR (Saegert & Köthe, ICML 2026, arXiv 2602.08885) removes from its procedurally generated
training data every skeleton that matches a test expression. We reuse the simplify engine's
``Decontaminator`` (``mlx26 simplify decontam``): a training skeleton is dropped when its simplified,
variable-renamed skeleton or its functional image (values on a fixed grid, constants set to one
generic value) equals a test key. Test expressions are masked first (numbers → ``<constant>``),
so a test formula ``2*sin(x1)*cos(x2)`` also removes ``<constant>*sin(x1)*cos(x2)`` and its
renamings.

The two hashes miss skeletons that are equal only after re-parametrising constants, e.g.
``x1 + c*(x1 + c)`` ≡ ``c*x1 + c`` (the engine does not expand products). A third layer (ours; on by
default, ``--hash-only`` turns it off) closes most of that gap: a training skeleton that passes the hashes
is compared by the equivalence checker (``mlx26.core.simplify.equivalent``, variable renaming allowed)
with the test skeletons of its *bucket* — same number of variables and the same set of transcendental
operators applied to variables, with ``cos`` counted as ``sin`` (phase shifts). Two cheap necessary tests
run before the checker: equal family dimension (``family_dim``: the rank of the Jacobian in the
constants, invariant under re-parametrisation; it ruled out two pairs in three on the prior stream) and one constant fit
of the test skeleton to one draw of the training skeleton (``_could_match``). Results are memoised per
skeleton. An equivalence across buckets (``exp(x1 + c)`` ≡ ``c*exp(x1)`` is inside one bucket, but e.g.
``sqrt(c*x1**2)`` ≡ ``c*abs(x1)`` is not) is still missed. tests/sr/test_decontam.py checks with the
checker, against every test skeleton, that nothing kept is equivalent on a seeded stream, and
``audit`` (``make bench-sr``) does the same on a sample of the shipped model's pool.
"""

from __future__ import annotations

from collections.abc import Iterable


class TestSetIndex:
    """Hash index of test skeletons; ``contaminated(prefix)`` is an O(1) look-up per training skeleton."""

    __test__ = False  # not a pytest class

    def __init__(self, test_expressions: Iterable, mode: str = "sound", seed: int = 0, use_equiv: bool = False):
        from mlx26.core.simplify import Decontaminator
        from mlx26.core.simplify.parse import parse_any, tree_to_prefix
        from mlx26.core.sr.sampler import simplified_skeleton

        masked: list[list[str]] = []
        for e in test_expressions:
            p = e if isinstance(e, list) else tree_to_prefix(parse_any(e))
            s = simplified_skeleton(p)
            if s is not None:
                masked.append(s)
        self._d = Decontaminator(masked, mode=mode, seed=seed)
        self.n_test = len(masked)
        self.use_equiv = use_equiv
        self._buckets: dict[tuple, list[list[str]]] = {}
        for s in {" ".join(m): m for m in masked}.values():
            self._buckets.setdefault(bucket(s), []).append(s)
        self._memo: dict[str, bool] = {}
        self.stats = {"checked": 0, "dropped": 0, "dropped_skeleton": 0, "dropped_image": 0, "dropped_equiv": 0,
                      "equiv_checks": 0, "dim_skipped": 0}

    @property
    def test_skeletons(self) -> list[list[str]]:
        """The distinct masked test skeletons."""
        return [q for group in self._buckets.values() for q in group]

    def contaminated(self, prefix: list[str]) -> bool:
        from mlx26.core.simplify.errors import ExpressionError

        self.stats["checked"] += 1
        try:
            sk, im = self._d.keys(prefix)
        except ExpressionError:
            return False
        if sk in self._d.skeletons:
            self.stats["dropped"] += 1
            self.stats["dropped_skeleton"] += 1
            return True
        if im is not None and im in self._d.images:
            self.stats["dropped"] += 1
            self.stats["dropped_image"] += 1
            return True
        if self.use_equiv and self._equivalent_in_bucket(prefix):
            self.stats["dropped"] += 1
            self.stats["dropped_equiv"] += 1
            return True
        return False

    def _equivalent_in_bucket(self, prefix: list[str]) -> bool:
        from mlx26.core.simplify import equivalent

        key = " ".join(prefix)
        hit = self._memo.get(key)
        if hit is None:
            hit = False
            dim = family_dim(prefix)
            for q in self._buckets.get(bucket(prefix), ()):
                dq = family_dim(q)
                if dim is not None and dq is not None and dim != dq:
                    self.stats["dim_skipped"] += 1
                    continue
                if not _could_match(prefix, q):
                    continue
                self.stats["equiv_checks"] += 1
                if equivalent(prefix, q, allow_renaming=True, n_challenges=2):
                    hit = True
                    break
            self._memo[key] = hit
        return hit


_TRANSCENDENTAL = {"exp": "exp", "log": "log", "sin": "sin", "cos": "sin", "tan": "tan", "sqrt": "sqrt",
                   "pow1_2": "sqrt", "pow": "pow", "asin": "asin", "acos": "asin", "atan": "atan", "sinh": "exp",
                   "cosh": "exp", "tanh": "exp", "abs": "abs"}


def bucket(prefix: list[str]) -> tuple:
    """(number of variables, transcendental operators over variable-dependent subtrees; cos = sin)."""
    from mlx26.core.simplify.ops import ARITY, is_var

    ops: set[str] = set()
    stack: list[bool] = []  # has a variable, right to left
    for tok in reversed(prefix):
        a = ARITY.get(tok, 0)
        kids = [stack.pop() for _ in range(a)]
        has = is_var(tok) or any(kids)
        if has and tok in _TRANSCENDENTAL:
            ops.add(_TRANSCENDENTAL[tok])
        stack.append(has)
    return (len({t for t in prefix if is_var(t)}), frozenset(ops))


def default_test_index(heldout_skeletons: Iterable[list[str]] = (), use_equiv: bool = True) -> TestSetIndex:
    """Nguyen-1..12 + the FastSRB-style set + any held-out synthetic skeletons."""
    from mlx26.core.sr.suites import all_test_expressions

    return TestSetIndex([*all_test_expressions(), *heldout_skeletons], use_equiv=use_equiv)


_DIMS: dict[tuple[str, ...], int | None] = {}


def family_dim(prefix: list[str]) -> int | None:
    """Dimension of the skeleton's function family: the rank of d f(X; c) / d c at a generic constant draw.

    Equal families have equal dimensions (the image of an analytic map has the dimension of its generic
    rank), and re-parametrisation keeps it (``x1 + c*(x1 + c)`` and ``c*x1 + c`` are both 2), so a pair
    whose dimensions differ cannot be equivalent and needs no constant fit. ``None`` (too few finite
    points to tell) never rules a pair out. Central differences; singular values below 1e-7 of the
    largest count as structural zeros (``c*c*x1`` has dimension 1).
    """
    import numpy as np
    from mlx26.core.sr.expr import compile_skeleton, n_constants

    key = tuple(prefix)
    if key in _DIMS:
        return _DIMS[key]
    k = n_constants(prefix)
    dim: int | None = 0
    if k:
        f = compile_skeleton(prefix)
        c = np.resize(np.asarray(_CDRAW, dtype=float), k)
        cols = []
        for i in range(k):
            h = 1e-5 * max(1.0, abs(c[i]))
            up, down = c.copy(), c.copy()
            up[i] += h
            down[i] -= h
            cols.append((f(_GRID, up) - f(_GRID, down)) / (2 * h))
        jac = np.stack(cols, axis=1)
        rows = jac[np.all(np.isfinite(jac), axis=1)]
        if len(rows) < k + 2:
            dim = None
        else:
            s = np.linalg.svd(rows, compute_uv=False)
            dim = int((s > 1e-7 * s[0]).sum()) if s[0] > 0 else 0
    if len(_DIMS) > 200_000:
        _DIMS.clear()
    _DIMS[key] = dim
    return dim


def affine_in_variables(prefix: list[str]) -> bool:
    """Is every member of the skeleton's family affine in the variables (a + b·x)? Two generic constant draws,
    each reproduced by least squares on [1, x1, x2, x3] over the fixed grid (relative residual < 1e-10)."""
    import numpy as np
    from mlx26.core.sr.expr import compile_skeleton, n_constants

    f = compile_skeleton(prefix)
    k = n_constants(prefix)
    design = np.column_stack([np.ones(len(_GRID)), _GRID])
    for shift in (0, 3):
        c = np.resize(np.roll(np.asarray(_CDRAW, dtype=float), shift), k)
        y = f(_GRID, c)
        if not np.all(np.isfinite(y)):
            return False
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        with np.errstate(all="ignore"):
            if float(np.sum((design @ coef - y) ** 2)) > 1e-20 * max(1.0, float(np.sum(y ** 2))):
                return False
    return True


def _could_match(t: list[str], q: list[str]) -> bool:
    """Cheap necessary test before the checker: can q's constants reproduce t (one constant draw)?

    Compiled numpy + Levenberg–Marquardt on 24 fixed points, every renaming of q's variables;
    only a pair that passes is handed to ``equivalent`` (which decides).
    """
    import itertools

    import numpy as np
    from mlx26.core.simplify.ops import is_var
    from mlx26.core.sr.expr import compile_skeleton, n_constants
    from mlx26.core.sr.infer import fit_constants

    X = _GRID
    kt = n_constants(t)
    ct = np.resize(_CDRAW, kt)
    yt = compile_skeleton(t)(X, ct)
    ok = np.isfinite(yt)
    if ok.sum() < 8:
        return True  # too little to tell: let the checker decide
    X, yt = X[ok], yt[ok]
    vq = sorted({v for v in q if is_var(v)})
    vt = sorted({v for v in t if is_var(v)})
    for perm in itertools.permutations(vt, len(vq)):
        qq = [dict(zip(vq, perm, strict=True)).get(v, v) for v in q]
        if n_constants(qq) == 0:
            yq = compile_skeleton(qq)(X, np.zeros(0))
            if np.all(np.isfinite(yq)) and np.allclose(yq, yt, rtol=1e-5, atol=1e-8):
                return True
            continue
        _, v = fit_constants(qq, X, yt, restarts=3, seed=0, max_nfev=100)
        with np.errstate(all="ignore"):
            flat = float(np.var(yt)) < 1e-12
        if v < 1e-8 or (flat and v < float("inf")):
            return True
    return False


def _grid():
    import numpy as np

    rng = np.random.default_rng(12345)
    return np.concatenate([rng.uniform(-3, 3, size=(12, 3)), 10 ** rng.uniform(-1, 1, size=(12, 3))])


_GRID = _grid()
_CDRAW = [1.3, -0.7, 2.1, 0.9, -1.6, 2.7]


def audit(kept: list[list[str]], index: TestSetIndex, n: int, seed: int = 0) -> dict:
    """Independent check of a decontaminated pool: a seeded sample of ``n`` kept skeletons, each compared by the
    equivalence checker with *every* test skeleton of the same variable count (no buckets, no dimension filter).

    Returns the pairs checked and the kept skeletons found equivalent to a test skeleton (misses).
    """
    import numpy as np
    from mlx26.core.simplify import equivalent

    tests = [(bucket(q)[0], q) for q in index.test_skeletons]  # (distinct variables, skeleton)
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(kept), size=min(n, len(kept)), replace=False) if kept else []
    pairs, misses = 0, []
    for i in picks:
        s = kept[int(i)]
        n_vars = bucket(s)[0]
        for nq, q in tests:
            if nq != n_vars:
                continue
            pairs += 1
            if equivalent(s, q, allow_renaming=True, n_challenges=2):
                misses.append({"kept": " ".join(s), "test": " ".join(q)})
                break
    return {"sample": len(picks), "pairs_checked": pairs, "equivalent_found": len(misses), "examples": misses[:5]}
