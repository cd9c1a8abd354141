"""Decontamination of the SR training stream against the test sets (part of ``mlx26 sr``).

Flash-ANSR (Saegert & Köthe, ICML 2026, arXiv 2602.08885) removes from its procedurally generated
training data every skeleton that matches a test expression. We reuse the simplify engine's
``Decontaminator`` (``mlx26 simplify decontam``): a training skeleton is dropped when its simplified,
variable-renamed skeleton or its functional image (values on a fixed grid, constants set to one
generic value) equals a test key. Test expressions are masked first (numbers → ``<constant>``),
so a test formula ``2*sin(x1)*cos(x2)`` also removes ``<constant>*sin(x1)*cos(x2)`` and its
renamings.

The two hashes miss skeletons that are equal only after re-parametrising constants, e.g.
``x1 + c*(x1 + c)`` ≡ ``c*x1 + c`` (the engine does not expand products). An opt-in third layer (ours,
``use_equiv=True``; off for the shipped model: it costs ~10 checker calls per skeleton) narrows that gap: a training skeleton that passes the hashes is compared by the
equivalence checker (``mlx26.core.simplify.equivalent``, variable renaming allowed) with every
test skeleton of its *bucket* — same number of variables and the same set of transcendental
operators applied to variables, with ``cos`` counted as ``sin`` (phase shifts). The buckets keep
this to a few checks per skeleton (results are memoised per skeleton); an equivalence across
buckets (``exp(x1 + c)`` ≡ ``c*exp(x1)`` is inside one bucket, but e.g. ``sqrt(c*x1**2)`` ≡
``c*abs(x1)`` is not) is still missed. tests/sr/test_decontam.py checks with the equivalence
checker, against every test skeleton, that nothing kept is equivalent on a seeded stream.
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
                      "equiv_checks": 0}

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
            for q in self._buckets.get(bucket(prefix), ()):
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


def default_test_index(heldout_skeletons: Iterable[list[str]] = ()) -> TestSetIndex:
    """Nguyen-1..12 + the FastSRB-style set + any held-out synthetic skeletons."""
    from mlx26.core.sr.suites import all_test_expressions

    return TestSetIndex([*all_test_expressions(), *heldout_skeletons])


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
        if v < 1e-8 or (float(np.var(yt)) < 1e-12 and v < float("inf")):
            return True
    return False


def _grid():
    import numpy as np

    rng = np.random.default_rng(12345)
    return np.concatenate([rng.uniform(-3, 3, size=(12, 3)), 10 ** rng.uniform(-1, 1, size=(12, 3))])


_GRID = _grid()
_CDRAW = [1.3, -0.7, 2.1, 0.9, -1.6, 2.7]
