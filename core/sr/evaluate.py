"""Recovery metrics and suite evaluation of ``mlx26 sr eval`` (Flash-ANSR, arXiv 2602.08885).

Per problem: the method sees ``n_train`` points, the metrics use as many fresh points of the same
support. **Numeric recovery**: FVU ≤ float32 eps (1.19e-7) on the held-out points. **Symbolic
recovery**: the best expression (fitted constants kept) is equivalent to the true one by our
equivalence checker (``mlx26.core.simplify.equivalent``, ``rtol=1e-4`` for fitted constants,
``domain="intersection"``: the data only show one domain). **Length ratio**: tokens of the best
(simplified) expression over tokens of the simplified true expression. The same metrics are
computed for the baselines (their expressions are parsed by our parser; an unparsable one counts
as not symbolically recovered). Our choices of tolerance, following the paper's definitions.
"""

from __future__ import annotations

import time

import numpy as np
from mlx26.core.sr import spec


def _true_prefix(expr: str) -> list[str]:
    from mlx26.core.simplify import parse_infix, simplify

    return simplify(parse_infix(expr), mode="sound")


def suite_problems(name: str, seed: int = 0, n: int = 100):
    """[(name, true prefix (numeric), X_train, y_train, X_test, y_test)] of a suite."""
    from mlx26.core.simplify.ops import evaluate

    rng = np.random.default_rng(seed)
    out = []
    if name == "synthetic":
        from mlx26.core.sr.infer import numeric_prefix
        from mlx26.core.sr.train import heldout_problems

        for i, p in enumerate(heldout_problems(n)):
            h = p.X.shape[0] // 2
            out.append((f"synthetic-{i}", numeric_prefix(p.skeleton, p.constants), p.X[:h], p.y[:h], p.X[h:], p.y[h:]))
        return out
    from mlx26.core.sr.suites import suite

    for p in suite(name):
        prefix = _true_prefix(p.expression)
        Xs = []
        for _ in range(2):
            X = rng.uniform(p.low, p.high, size=(4 * p.n_train, p.n_vars))
            y = evaluate(prefix, X)
            ok = np.isfinite(y)
            Xs.append((X[ok][: p.n_train], y[ok][: p.n_train]))
        out.append((p.name, prefix, Xs[0][0], Xs[0][1], Xs[1][0], Xs[1][1]))
    return out


def metrics(true_prefix: list[str], pred_prefix: list[str] | None, predict, X_test, y_test) -> dict:
    from mlx26.core.simplify import equivalent
    from mlx26.core.sr.infer import fvu

    with np.errstate(all="ignore"):
        yhat = np.asarray(predict(X_test), dtype=float)
    f = fvu(y_test, yhat)
    sym = False
    if pred_prefix is not None:
        try:
            sym = equivalent(true_prefix, pred_prefix, rtol=1e-4, domain="intersection")
        except Exception:  # noqa: BLE001 - an expression our checker cannot handle is not recovered
            sym = False
    return {"fvu": f, "numeric": bool(f <= spec.FLOAT32_EPS), "symbolic": bool(sym)}


def run_ours(problems, model, sampler: str, n_candidates: int, seed: int = 0, **kw) -> list[dict]:
    from mlx26.core.common.errors import RunFailure
    from mlx26.core.sr.expr import compile_skeleton
    from mlx26.core.sr.infer import numeric_prefix, search

    rows = []
    for i, (name, truth, Xtr, ytr, Xte, yte) in enumerate(problems):
        t0 = time.perf_counter()
        try:
            r = search(Xtr, ytr, model=model, sampler=sampler, n_candidates=n_candidates, seed=seed + i, **kw)
        except RunFailure:
            rows.append({"problem": name, "method": f"flash-ansr/{sampler}", "fvu": float("inf"), "numeric": False,
                         "symbolic": False, "length": None, "length_ratio": None,
                         "wall_s": time.perf_counter() - t0, "expression": None})
            continue
        wall = time.perf_counter() - t0
        b = r["best"]
        f = compile_skeleton(b.skeleton)
        m = metrics(truth, numeric_prefix(b.skeleton, b.constants), lambda X, f=f, b=b: f(X, b.constants), Xte, yte)
        rows.append({"problem": name, "method": f"flash-ansr/{sampler}", **m, "length": b.length,
                     "length_ratio": b.length / len(truth), "wall_s": wall, "expression": b.expression()})
    return rows


def run_baseline(problems, name: str, seed: int = 0, budget: str = "small") -> list[dict]:
    from mlx26.core.sr.baselines import fit_baseline

    rows = []
    for i, (pname, truth, Xtr, ytr, Xte, yte) in enumerate(problems):
        t0 = time.perf_counter()
        res = fit_baseline(name, Xtr, ytr, seed=seed + i, budget=budget)
        wall = time.perf_counter() - t0
        m = metrics(truth, res["prefix"], res["predict"], Xte, yte)
        rows.append({"problem": pname, "method": name, **m, "length": res["length"],
                     "length_ratio": res["length"] / len(truth) if res["length"] else None, "wall_s": wall,
                     "expression": res["expression"]})
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    """One record per method: recovery rates (%), median FVU, median length and length ratio, wall time."""
    out = []
    for method in dict.fromkeys(r["method"] for r in rows):
        rs = [r for r in rows if r["method"] == method]
        lens = [r["length"] for r in rs if r["length"]]
        ratios = [r["length_ratio"] for r in rs if r["length_ratio"]]
        out.append({"method": method, "problems": len(rs),
                    "numeric_recovery_pct": round(100 * float(np.mean([r["numeric"] for r in rs])), 1),
                    "symbolic_recovery_pct": round(100 * float(np.mean([r["symbolic"] for r in rs])), 1),
                    "median_fvu": float(np.median([r["fvu"] for r in rs])),
                    "median_length": float(np.median(lens)) if lens else None,
                    "median_length_ratio": round(float(np.median(ratios)), 3) if ratios else None,
                    "wall_s": round(float(np.sum([r["wall_s"] for r in rs])), 2)})
    return out
