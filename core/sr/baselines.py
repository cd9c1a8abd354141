"""Genetic-programming anchors of ``mlx26 sr eval`` / ``benchmarks/sr.py``: pyoperon and gplearn.

The Flash-ANSR paper (Saegert & Köthe, ICML 2026, arXiv 2602.08885) compares against PySR, which
needs a Julia runtime downloaded at first use and cannot run here; the issue names pyoperon (Operon,
C++ GP with local search, PyPI wheel) and gplearn (pure-Python GP) as the runnable anchors. Both run
with one thread and a fixed seed, on the same operator set as ours where they have it. Their
expressions are parsed by our parser (gplearn's protected ``sqrt``/``log`` become ``sqrt abs`` /
``log abs``; its protected division is read as plain division) and simplified by our engine to
count length the same way for every method; prediction uses their own ``predict``.
"""

from __future__ import annotations

import re

import numpy as np

BUDGETS = {  # (gplearn population, generations), (operon population, generations)
    "tiny": ((100, 3), (100, 5)),
    "small": ((500, 10), (1000, 100)),
}

_GP_MAP = {"add": ["+"], "sub": ["-"], "mul": ["*"], "div": ["/"], "sqrt": ["sqrt", "abs"], "log": ["log", "abs"],
           "neg": ["neg"], "inv": ["inv"], "sin": ["sin"], "cos": ["cos"], "abs": ["abs"]}


def gplearn_prefix(program: str) -> list[str]:
    """Our prefix tokens for a gplearn program string such as ``add(mul(X0, X0), 0.5)``."""
    from mlx26.core.simplify.ops import format_number

    out: list[str] = []
    for tok in re.findall(r"[A-Za-z_]+[0-9]*|-?[0-9.]+(?:e-?[0-9]+)?", program):
        if tok in _GP_MAP:
            out.extend(_GP_MAP[tok])
        elif re.fullmatch(r"X[0-9]+", tok):
            out.append(f"x{int(tok[1:]) + 1}")
        else:
            out.append(format_number(float(tok)))
    return out


def _simplified(prefix: list[str] | None) -> list[str] | None:
    from mlx26.core.simplify import simplify
    from mlx26.core.simplify.errors import ExpressionError

    if prefix is None:
        return None
    try:
        return simplify(prefix, mode="sound")
    except (ExpressionError, RecursionError):
        return None


def fit_baseline(name: str, X: np.ndarray, y: np.ndarray, seed: int = 0, budget: str = "small") -> dict:
    """Fit one anchor; returns expression, our prefix (or None), length, and a predict function."""
    from mlx26.core.common.errors import unknown_name
    from mlx26.core.sr import spec

    if name not in spec.BASELINES:
        raise unknown_name("baseline", name, spec.BASELINES)
    if budget not in BUDGETS:
        raise unknown_name("budget", budget, BUDGETS)
    if name == "gplearn":
        from mlx26.core.common.errors import BackendMissing

        try:
            from gplearn.genetic import SymbolicRegressor
        except ImportError as exc:
            raise BackendMissing("gplearn is not installed", "pip install 'mlx26[sr-bench]'") from exc
        pop, gens = BUDGETS[budget][0]
        est = SymbolicRegressor(population_size=pop, generations=gens, random_state=seed, n_jobs=1,
                                function_set=("add", "sub", "mul", "div", "sin", "cos", "log", "sqrt", "neg", "inv"),
                                verbose=0)
        est.fit(X, y)
        text = str(est._program)
        prefix = _simplified(gplearn_prefix(text))
        length = len(prefix) if prefix else int(est._program.length_)
        return {"expression": text, "prefix": prefix, "length": length, "predict": est.predict}
    try:
        from pyoperon.sklearn import SymbolicRegressor as Operon
    except ImportError as exc:
        from mlx26.core.common.errors import BackendMissing

        raise BackendMissing("pyoperon is not installed", "pip install 'mlx26[sr-bench]'") from exc
    pop, gens = BUDGETS[budget][1]
    est = Operon(random_state=seed, n_threads=1, population_size=pop, generations=gens, max_length=30,
                 allowed_symbols="add,sub,mul,div,constant,variable,sin,cos,exp,log,sqrt")
    est.fit(X, y)
    text = est.get_model_string(est.model_, 12)
    prefix = None
    try:
        from mlx26.core.simplify import parse_infix

        prefix = _simplified(parse_infix(re.sub(r"X(\d+)", lambda m: f"x{m.group(1)}", text)))
    except Exception:  # noqa: BLE001 - an Operon string our parser does not read: length from Operon
        prefix = None
    length = len(prefix) if prefix else int(est.stats_.get("model_length", 0))
    return {"expression": text, "prefix": prefix, "length": length, "predict": est.predict}
