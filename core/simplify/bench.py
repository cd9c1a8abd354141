"""Benchmark of the engine against ``sympy.simplify`` and engine throughput.

Reconstruction (our own harness) of the speed/efficacy comparison in Saegert & Köthe,
"Breaking the Simplification Bottleneck in Amortized Neural Symbolic Regression" (ICML
2026, arXiv 2602.08885).  On ``n`` seeded random expressions (``random_expressions``) both
simplifiers run side by side in one call: ours in this process, SymPy in a persistent
worker process with a per-expression time limit (``signal.setitimer`` inside the worker,
plus a hard kill and restart from the parent if the worker does not answer).  SymPy's
result is converted back into our prefix form (shortest spelling: ``a - b``, ``a/b``,
``inv``, ``pow2``, ``sqrt``, negative literals) to count its length in the same tokens.
Rows whose input has an undefined constant (our ExpressionError) are skipped for both.
SymPy is imported only here and only when ``bench`` runs (optional dependency).
"""

from __future__ import annotations

import math
import os
import statistics
import time
from typing import TYPE_CHECKING, Any

from mlx26.core.simplify.generate import random_expressions
from mlx26.core.simplify.ops import ARITY, CONSTANT, is_var

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

# ----------------------------------------------------------------------------- sympy side


def _sp_scale(k: int, divide: bool):
    return (lambda x: x / k) if divide else (lambda x: k * x)


def to_sympy(prefix: list[str]):
    """SymPy expression of a prefix expression (``<constant>`` -> fresh symbols c0, c1, ...)."""
    import sympy as sp

    fns = {"abs": sp.Abs, "sqrt": sp.sqrt, "pow1_2": sp.sqrt, "exp": sp.exp, "log": sp.log, "sin": sp.sin,
           "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos, "atan": sp.atan, "sinh": sp.sinh,
           "cosh": sp.cosh, "tanh": sp.tanh, "asinh": sp.asinh, "acosh": sp.acosh, "atanh": sp.atanh,
           "pow4": lambda x: x**4, "pow5": lambda x: x**5, "pow1_4": lambda x: x**sp.Rational(1, 4),
           # real odd roots: sympy's real_root is the real branch on all reals
           "pow1_3": lambda x: sp.real_root(x, 3), "pow1_5": lambda x: sp.real_root(x, 5),
           **{f"mult{k}": _sp_scale(k, False) for k in (2, 3, 4, 5)},
           **{f"div{k}": _sp_scale(k, True) for k in (2, 3, 4, 5)}}
    stack = []
    n_const = 0
    for tok in reversed(prefix):
        a = ARITY.get(tok)
        if a is None:
            if is_var(tok):
                stack.append(sp.Symbol(tok))
            elif tok == CONSTANT:
                stack.append(sp.Symbol(f"c{n_const}"))
                n_const += 1
            elif tok == "pi":
                stack.append(sp.pi)
            elif tok == "e":
                stack.append(sp.E)
            elif tok in ("inf", "-inf", "nan"):
                stack.append({"inf": sp.oo, "-inf": -sp.oo, "nan": sp.nan}[tok])
            else:
                v = float(tok)
                stack.append(sp.Integer(int(v)) if v == int(v) and abs(v) < 1e15 else sp.Float(tok))
            continue
        if a == 1:
            x = stack.pop()
            if tok == "neg":
                stack.append(-x)
            elif tok == "inv":
                stack.append(1 / x)
            elif tok == "pow2":
                stack.append(x**2)
            elif tok == "pow3":
                stack.append(x**3)
            else:
                stack.append(fns[tok](x))
        else:
            x = stack.pop()
            y = stack.pop()
            stack.append({"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q,
                          "/": lambda p, q: p / q, "pow": lambda p, q: p**q}[tok](x, y))
    return stack[0]


def sympy_prefix(expr) -> list[str]:
    """Shortest prefix spelling (our tokens) of a SymPy expression."""
    import sympy as sp

    names = {sp.Abs: "abs", sp.exp: "exp", sp.log: "log", sp.sin: "sin", sp.cos: "cos", sp.tan: "tan",
             sp.asin: "asin", sp.acos: "acos", sp.atan: "atan", sp.sinh: "sinh", sp.cosh: "cosh", sp.tanh: "tanh",
             sp.asinh: "asinh", sp.acosh: "acosh", sp.atanh: "atanh"}

    def num(v) -> list[str]:
        try:
            f = float(v)
        except (TypeError, ValueError):
            return ["nan"]
        if not math.isfinite(f):
            return ["nan"]
        return [str(int(f)) if f == int(f) and abs(f) < 1e16 else repr(f)]

    def conv(e) -> list[str]:
        if e.is_Symbol:
            return [CONSTANT] if str(e).startswith("c") else [str(e)]
        if e is sp.pi:
            return ["pi"]
        if e is sp.E:
            return ["e"]
        if e.is_Number:
            return num(e)
        if e.is_Add:
            pos: list[Any] = []
            neg: list[Any] = []
            for t in e.as_ordered_terms():
                c, _ = t.as_coeff_Mul()
                (neg if c.is_Number and c < 0 else pos).append(t)
            parts_pos = [conv(t) for t in pos]
            parts_neg = [conv(-t) for t in neg]
            if parts_pos:
                out = parts_pos[0]
                for p in parts_pos[1:]:
                    out = ["+"] + out + p
            else:
                out = ["neg"] + parts_neg.pop(0)
            for p in parts_neg:
                out = ["-"] + out + p
            return out
        if e.is_Mul:
            c, rest = e.as_coeff_Mul()
            numf, denf = [], []
            for f in sp.Mul.make_args(rest):
                if f.is_Pow and f.exp.is_Number and f.exp < 0:
                    denf.append(conv(f.base ** (-f.exp)))
                else:
                    numf.append(conv(f))
            sign = False
            lead = None
            if c == -1:
                sign = True
            elif c != 1:
                lead = num(c)
            if lead is not None:
                numf.insert(0, lead)

            def prod(items):
                out = items[0]
                for it in items[1:]:
                    out = ["*"] + out + it
                return out

            if numf and denf:
                out = ["/"] + prod(numf) + prod(denf)
            elif denf:
                out = ["inv"] + prod(denf)
            else:
                out = prod(numf) if numf else ["1"]
            return ["neg"] + out if sign else out
        if e.is_Pow:
            b, x = e.base, e.exp
            if b is sp.E:
                return ["exp"] + conv(x)
            if x == 2:
                return ["pow2"] + conv(b)
            if x == 3:
                return ["pow3"] + conv(b)
            if x == sp.Rational(1, 2):
                return ["sqrt"] + conv(b)
            if x == -1:
                return ["inv"] + conv(b)
            if x.is_Number and x < 0:
                return ["inv"] + conv(b ** (-x))
            return ["pow"] + conv(b) + conv(x)
        f = names.get(e.func)
        if f is not None and len(e.args) == 1:
            return [f] + conv(e.args[0])
        # anything else (I, zoo, Piecewise, sign, ...): operator token + arguments
        out = [type(e).__name__]
        for a in e.args:
            out += conv(a)
        return out

    return conv(expr)


def _sympy_worker(conn, timeout: float) -> None:  # pragma: no cover - runs in a child process
    import signal

    # Ctrl-C in a terminal reaches the whole process group: the parent stops and kills this worker,
    # which must not print a traceback of its own (issue 31). Ignored before anything else (the SymPy
    # import takes a second or more on a loaded machine, and a Ctrl-C then must not reach it either).
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    import sympy as sp

    class _Timeout(Exception):
        pass

    def handler(signum, frame):
        raise _Timeout()

    signal.signal(signal.SIGALRM, handler)
    while True:
        msg = conn.recv()
        if msg is None:
            return
        t0 = time.perf_counter()
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                e = to_sympy(msg)
                s = sp.simplify(e)
                out = sympy_prefix(s)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            conn.send(("ok", time.perf_counter() - t0, len(out)))
        except _Timeout:
            conn.send(("timeout", timeout, None))
        except Exception as exc:  # noqa: BLE001 - any SymPy failure is one counted error
            conn.send(("error", time.perf_counter() - t0, type(exc).__name__))


class _SympyRunner:
    def __init__(self, timeout: float):
        import multiprocessing as mp

        self.timeout = timeout
        self.ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        self.proc: BaseProcess | None = None
        self.conn: Connection | None = None
        self.restarts = 0

    def _start(self):
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_sympy_worker, args=(child, self.timeout), daemon=True)
        self.proc.start()
        self.conn = parent

    def run(self, prefix: list[str]):
        if self.proc is None or not self.proc.is_alive():
            self._start()
        assert self.proc is not None and self.conn is not None
        self.conn.send(prefix)
        if self.conn.poll(self.timeout + 10.0):
            return self.conn.recv()
        self.proc.kill()
        self.proc.join()
        self.proc = None
        self.restarts += 1
        return ("timeout", self.timeout, None)

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(2)
            except (BrokenPipeError, OSError):
                pass
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join()


# ----------------------------------------------------------------------------- benchmark
def bench(n: int = 1000, seed: int = 0, timeout: float = 1.0, max_ops: int = 10, mode: str = "sound",
          mask_constants: bool = False, progress=None) -> dict:
    """Side-by-side benchmark against ``sympy.simplify``; returns a dict of figures.

    Keys: n, seed, timeout, mode, rows (compared), undefined (skipped inputs),
    median_speed_ratio (per-expression SymPy time / our time, median), ours_median_ms,
    sympy_median_ms, ours_len_ratio / sympy_len_ratio (mean output/input length),
    ours_longer_rate / sympy_longer_rate, sympy_timeouts, sympy_errors, cores.
    ``progress(side, done, total)`` is told after each expression of each pass (side "ours", then "sympy").
    """
    from mlx26.core.simplify.engine import simplify
    from mlx26.core.simplify.errors import ExpressionError

    exprs = random_expressions(n, seed=seed, max_ops=max_ops)
    simplify(["x1"], mode=mode, mask_constants=mask_constants)  # load rules, warm up
    runner = _SympyRunner(timeout)
    ratios, ours_t, sym_t = [], [], []
    ours_len, sym_len = [], []
    ours_longer = sym_longer = timeouts = errors = undefined = 0
    # pass 1: ours on every row (kept apart from SymPy so neither evicts the other's caches)
    ours = []
    for j, e in enumerate(exprs):
        t0 = time.perf_counter()
        try:
            out = simplify(e, mode=mode, mask_constants=mask_constants)
        except ExpressionError:
            undefined += 1
            continue
        finally:
            if progress:
                progress("ours", j + 1, len(exprs))
        ours.append((e, out, time.perf_counter() - t0))
    # pass 2: SymPy on the same rows
    try:
        for i, (e, out, t_ours) in enumerate(ours):
            status, t_sym, lo = runner.run(e)
            if status == "timeout":
                timeouts += 1
                lo = len(e)
            elif status == "error":
                errors += 1
                lo = len(e)
            ratios.append(t_sym / max(t_ours, 1e-9))
            ours_t.append(t_ours)
            sym_t.append(t_sym)
            ours_len.append(len(out) / len(e))
            sym_len.append(lo / len(e))
            ours_longer += len(out) > len(e)
            sym_longer += lo > len(e)
            if progress:
                progress("sympy", i + 1, len(ours))
    finally:
        runner.close()
    rows = len(ratios)
    return {
        "n": n, "seed": seed, "timeout": timeout, "mode": mode, "mask_constants": mask_constants,
        "max_ops": max_ops, "rows": rows, "undefined": undefined,
        "median_speed_ratio": statistics.median(ratios) if rows else float("nan"),
        "ours_median_ms": 1000 * statistics.median(ours_t) if rows else float("nan"),
        "sympy_median_ms": 1000 * statistics.median(sym_t) if rows else float("nan"),
        "ours_len_ratio": statistics.fmean(ours_len) if rows else float("nan"),
        "sympy_len_ratio": statistics.fmean(sym_len) if rows else float("nan"),
        "ours_longer_rate": ours_longer / rows if rows else float("nan"),
        "sympy_longer_rate": sym_longer / rows if rows else float("nan"),
        "sympy_timeouts": timeouts, "sympy_errors": errors, "sympy_restarts": runner.restarts,
        "cores": os.cpu_count(),
    }


def throughput(n: int = 100_000, seed: int = 0, workers: int = 1, max_ops: int = 10, mode: str = "sound") -> dict:
    """Expressions per second of ``simplify_many`` on ``n`` generated expressions."""
    from mlx26.core.simplify.engine import get_engine, simplify_many

    exprs = random_expressions(n, seed=seed, max_ops=max_ops)
    get_engine(mode)  # load rules before forking
    t0 = time.perf_counter()
    out = simplify_many(exprs, workers=workers, mode=mode)
    dt = time.perf_counter() - t0
    errs = sum(1 for o in out if isinstance(o, Exception))
    return {"n": n, "workers": workers, "seconds": dt, "expr_per_s": n / dt, "errors": errs}


# ----------------------------------------------------------------------------- decontamination recall
# Nguyen-1..12 (Uy et al. 2011), typed in from the published list (the same formulas as core/sr/suites.py).
NGUYEN = [
    "x1**3 + x1**2 + x1", "x1**4 + x1**3 + x1**2 + x1", "x1**5 + x1**4 + x1**3 + x1**2 + x1",
    "x1**6 + x1**5 + x1**4 + x1**3 + x1**2 + x1", "sin(x1**2)*cos(x1) - 1", "sin(x1) + sin(x1 + x1**2)",
    "log(x1 + 1) + log(x1**2 + 1)", "sqrt(x1)", "sin(x1) + sin(x2**2)", "2*sin(x1)*cos(x2)", "x1**x2",
    "x1**4 - x1**3 + x2**2/2 - x2",
]


def _respell(tree, rng, rename: dict, rescale: bool):
    """Rename variables, rescale maskable literals, shuffle the operands of + and * chains."""
    if isinstance(tree, str):
        if tree in rename:
            return rename[tree]
        if rescale and tree not in ("0", "1", "-1", "pi", "e") and tree[0].isdigit():
            return repr(round(float(tree) * rng.uniform(0.3, 4.0), 3))
        return tree
    op = tree[0]
    if op in ("+", "*"):
        items, stack = [], [tree]
        while stack:
            u = stack.pop()
            if isinstance(u, tuple) and u[0] == op:
                stack.extend(u[1:])
            else:
                items.append(_respell(u, rng, rename, rescale))
        rng.shuffle(items)
        t = items[0]
        for x in items[1:]:
            t = (op, t, x)
        return t
    if op == "pow":  # keep literal exponents (they are not constants of the skeleton)
        return (op, _respell(tree[1], rng, rename, rescale), _respell(tree[2], rng, rename, False))
    return (op,) + tuple(_respell(c, rng, rename, rescale) for c in tree[1:])


def _mutations(tree) -> list:
    """Near misses: one operator, exponent, variable or term changed (non-equivalent spellings)."""
    swaps = {"sin": "cos", "cos": "sin", "log": "exp", "sqrt": "abs", "pow2": "pow3", "pow3": "pow2", "+": "-",
             "-": "+", "*": "/"}
    out = []

    def walk(t, path):
        if isinstance(t, str):
            if t == "x1":
                out.append(_replace(tree, path, "x2"))
            return
        if t[0] in swaps:
            out.append(_replace(tree, path, (swaps[t[0]],) + t[1:]))
        if t[0] == "pow" and isinstance(t[2], str) and t[2].isdigit():
            out.append(_replace(tree, path, ("pow", t[1], str(int(t[2]) + 1))))
        for i, c in enumerate(t[1:]):
            walk(c, path + (i + 1,))

    walk(tree, ())
    out.append(("+", tree, "x1"))
    return out


def _replace(t, path, new):
    if not path:
        return new
    i = path[0]
    return t[:i] + (_replace(t[i], path[1:], new),) + t[i + 1:]


def decontam_recall(seed: int = 0, per_formula: int = 10, sympy_forms: bool = True) -> dict:
    """Recall of ``Decontaminator`` (test set: Nguyen-1..12) on equivalent spellings made by renaming
    variables, rescaling maskable constants and reordering terms, and on SymPy's expand/factor/
    simplify/trigsimp forms; precision on near misses (one operator, exponent, variable or term
    changed) that are checked to be non-equivalent skeletons.  Canonical keys vs the first-pass
    keys side by side."""
    import random

    from mlx26.core.simplify.equiv import Decontaminator, equivalent
    from mlx26.core.simplify.errors import ExpressionError
    from mlx26.core.simplify.parse import parse_infix_tree, to_infix, tree_to_prefix

    rng = random.Random(seed)
    trees = [parse_infix_tree(f) for f in NGUYEN]
    spellings: list[list[str]] = []
    for t in trees:
        for _ in range(per_formula):
            names = ["x1", "x2", "x3"]
            rng.shuffle(names)
            ren = dict(zip(["x1", "x2", "x3"], names, strict=True))
            spellings.append(tree_to_prefix(_respell(t, rng, ren, rescale=True)))
    sym_forms: list[list[str]] = []
    if sympy_forms:
        import sympy as sp

        for t in trees:
            e = to_sympy(tree_to_prefix(t))
            seen = {str(e)}
            for f in (sp.expand, sp.factor, sp.simplify, sp.trigsimp, sp.expand_log, sp.expand_trig):
                try:
                    g = f(e)
                except Exception:  # noqa: BLE001 - a SymPy failure just gives no spelling
                    continue
                if str(g) in seen:
                    continue
                seen.add(str(g))
                try:
                    from mlx26.core.simplify.parse import parse_prefix

                    sym_forms.append(parse_prefix(sympy_prefix(g)))
                except ExpressionError:
                    continue
    # near misses, kept only when not equivalent (as skeletons, renaming allowed) to any Nguyen formula
    from mlx26.core.simplify.engine import simplify

    masked = [simplify(tree_to_prefix(t), mask_constants=True) for t in trees]
    misses: list[list[str]] = []
    for t in trees:
        for m in _mutations(t):
            p = tree_to_prefix(m)
            try:
                sm = simplify(p, mask_constants=True)
            except ExpressionError:
                continue
            if any(equivalent(sm, q, allow_renaming=True, n_challenges=2, n_points=64) for q in masked):
                continue
            misses.append(p)
    out: dict = {"test_formulas": len(trees), "respellings": len(spellings), "sympy_forms": len(sym_forms),
                 "near_misses": len(misses)}
    for label, kw in (("canonical", {"canonical": True}), ("first_pass", {"canonical": False})):
        for name, rows, want_drop in (("respellings", spellings, True), ("sympy_forms", sym_forms, True),
                                      ("near_misses", misses, False)):
            d = Decontaminator([tree_to_prefix(t) for t in trees], **kw)
            kept = list(d.filter(rows))
            frac = (len(rows) - len(kept)) / len(rows) if rows else float("nan")
            if want_drop:
                out[f"{label}_recall_{name}"] = frac
                out[f"{label}_missed_{name}"] = [to_infix(r) for r in kept][:5]
            else:
                out[f"{label}_precision_{name}"] = 1.0 - frac
                out[f"{label}_false_drops"] = [to_infix(r) for r in rows if r not in kept][:5]
    return out


# ----------------------------------------------------------------------------- sympy's own test inputs
_SYMPY_TEST_FILES = ("test_simplify.py", "test_trigsimp.py", "test_powsimp.py", "test_radsimp.py",
                     "test_ratsimp.py", "test_fu.py", "test_sqrtdenest.py")
_SIMPLIFIERS = ("simplify", "trigsimp", "powsimp", "radsimp", "ratsimp", "cancel", "together", "expand", "factor",
                "fu", "sqrtdenest", "logcombine", "powdenest", "nsimplify", "collect")


def sympy_test_inputs(limit: int | None = None) -> list[list[str]]:
    """Arguments of simplifier calls in the installed SymPy's own simplify test files, re-extracted
    now (never vendored): each ``simplify(<expr>)``-style call's first argument is evaluated in a
    namespace of SymPy names and real symbols, renamed to ``x1..xn`` and converted to our prefix
    tokens; anything outside our vocabulary (I, Piecewise, gamma, ...) is skipped."""
    import ast
    import os

    import sympy as sp
    from mlx26.core.simplify.errors import ExpressionError
    from mlx26.core.simplify.parse import parse_prefix

    base = os.path.join(os.path.dirname(sp.__file__), "simplify", "tests")
    ns: dict = {k: getattr(sp, k) for k in dir(sp) if not k.startswith("_")}
    for name in "abcdefghijklmnopqrstuvwxyz":
        ns[name] = sp.Symbol(name, real=True)
    for name in ("alpha", "beta", "gamma_", "theta", "phi", "omega", "tau", "mu", "sigma"):
        ns[name] = sp.Symbol(name, real=True)
    out: list[list[str]] = []
    seen: set = set()
    for fname in _SYMPY_TEST_FILES:
        path = os.path.join(base, fname)
        if not os.path.exists(path):
            continue
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _SIMPLIFIERS
                    and node.args):
                continue
            src = ast.unparse(node.args[0])
            if src in seen:
                continue
            seen.add(src)
            try:
                e = eval(compile(src, "<sympy-test>", "eval"), dict(ns))  # noqa: S307 - sympy's own test source
                e = sp.sympify(e)
                if not isinstance(e, sp.Expr) or e.has(sp.I, sp.zoo, sp.oo, sp.nan) or not e.free_symbols:
                    continue
                syms = sorted(e.free_symbols, key=str)
                e = e.xreplace({s: sp.Symbol(f"x{i + 1}", real=True) for i, s in enumerate(syms)})
                p = parse_prefix(sympy_prefix(e))
            except (ExpressionError, Exception):  # noqa: BLE001 - outside our vocabulary: skipped
                continue
            out.append(p)
            if limit and len(out) >= limit:
                return out
    return out


def sound_on_points(prefix: list[str], out: list[str], seed: int = 1) -> bool:
    """Our output equals the input wherever the input is finite and well-conditioned (256 points)."""
    import numpy as np
    from mlx26.core.simplify.ops import evaluate

    rng = np.random.default_rng(seed)
    nv = max([int(t[1:]) for t in prefix if is_var(t)] or [1])
    X = np.concatenate([rng.uniform(-3.0, 3.0, size=(192, nv)), 10 ** rng.uniform(-2, 1.5, size=(64, nv))])
    y, yo = evaluate(prefix, X), evaluate(out, X)
    yp = evaluate(prefix, X * (1.0 + 1e-10 * rng.choice([-1.0, 1.0], size=X.shape)))
    with np.errstate(all="ignore"):
        stable = np.isfinite(y) & np.isfinite(yp) & (np.abs(yp - y) <= 1e-4 * np.abs(y) + 1e-7)
        ok = np.isfinite(yo[stable]) & (
            np.abs(y[stable] - yo[stable]) <= 1e-6 * np.maximum(np.abs(y[stable]), np.abs(yo[stable])) + 1e-9)
    if bool(np.all(ok)):
        return True
    # float64 cancellation in the input (cosh(30)**2 - sinh(30)**2): decide at 80 digits
    from mlx26.core.simplify.canon import evaluate_mp

    for i in np.flatnonzero(stable)[~ok]:
        a, b = evaluate_mp(prefix, X[i]), evaluate_mp(out, X[i])
        if a is None or b is None or abs(a - b) > 1e-6 * max(abs(a), abs(b)) + 1e-9:
            return False
    return True


def soundness_report(exprs: list[list[str]], mode: str = "sound") -> dict:
    """Rows, refusals (undefined constants), soundness failures, longer outputs, mean length ratio."""
    from mlx26.core.simplify.engine import simplify
    from mlx26.core.simplify.errors import ExpressionError

    rows = refused = bad = longer = 0
    ratio = 0.0
    examples: list[tuple[str, str]] = []
    for e in exprs:
        try:
            out = simplify(e, mode=mode)
        except ExpressionError:
            refused += 1
            continue
        rows += 1
        longer += len(out) > len(e)
        ratio += len(out) / len(e)
        if mode == "sound" and not sound_on_points(e, out):
            bad += 1
            if len(examples) < 3:
                examples.append((" ".join(e), " ".join(out)))
    return {"rows": rows, "refused": refused, "unsound": bad, "longer": longer,
            "len_ratio": ratio / rows if rows else float("nan"), "unsound_examples": examples}


def rules_contribution(exprs: list[list[str]], mode: str = "sound") -> dict:
    """What the rule files add on top of the built-in arithmetic (AC matching on): outputs with all
    rules vs identities only vs no rules; rows the mined rules shorten further."""
    from mlx26.core.simplify.engine import simplify
    from mlx26.core.simplify.errors import ExpressionError
    from mlx26.core.simplify.ruleset import IDENTITY_RULES, RuleSet, load_rules

    sets = {"all": None, "identities_only": load_rules(IDENTITY_RULES), "no_rules": RuleSet([], {"note": "empty"})}
    lens: dict = {k: [] for k in sets}
    for e in exprs:
        try:
            outs = {k: simplify(e, mode=mode, rules=rs) for k, rs in sets.items()}
        except ExpressionError:
            continue
        for k, o in outs.items():
            lens[k].append((len(e), len(o)))
    n = len(lens["all"])
    mined_shorter = sum(a[1] < b[1] for a, b in zip(lens["all"], lens["identities_only"], strict=True))
    any_shorter = sum(a[1] < b[1] for a, b in zip(lens["all"], lens["no_rules"], strict=True))
    return {"rows": n, "mined_rules_shorten": mined_shorter, "rules_shorten_vs_none": any_shorter,
            **{f"len_ratio_{k}": sum(o / i for i, o in v) / n if n else float("nan") for k, v in lens.items()}}


def corpus_report(path, mode: str = "sound") -> dict:
    """Parse rate of a corpus file (e.g. SimpliPy's raw_skeletons.json) and soundness on its rows."""
    from mlx26.core.simplify.corpus import load_corpus

    rows = load_corpus(path)
    parsed = [p for _, p in rows if isinstance(p, list)]
    errors = [str(p) for _, p in rows if not isinstance(p, list)]
    rep = soundness_report(parsed, mode)
    return {"path": str(path), "corpus_rows": len(rows), "parsed": len(parsed), "parse_errors": errors[:5], **rep}
