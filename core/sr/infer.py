"""Inference of ``mlx26 sr fit``: sample skeletons, simplify, deduplicate, fit constants, score.

Flash-ANSR (Saegert & Köthe, ICML 2026, arXiv 2602.08885): the decoder proposes many candidate
skeletons (softmax sampling, with a prefix grammar mask so every sample is a complete tree); each is
simplified by our engine (``mlx26.core.simplify``) and deduplicated on its simplified tokens; the
constants of each unique skeleton are fitted by Levenberg–Marquardt (``scipy.optimize.least_squares``,
``method="lm"``, ``restarts`` random starts besides all-ones); candidates are scored by
``log10(max(FVU, eps32)) + λ·length`` (FVU = mean squared error / variance of y, floored at float32
eps so that exact fits are ranked by length). Returned: the best candidate and the Pareto front of
(length, FVU). ``sampler="prior"`` replaces the model by the training prior (the ablation of the
acceptance test). The grammar mask and the floored score are our reconstruction of the details.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.simplify.ops import ARITY, CONSTANT, format_number
from mlx26.core.sr import spec
from mlx26.core.sr.expr import compile_skeleton, n_constants


@dataclass(eq=False)  # identity: the best is found on the front by `in`
class Candidate:
    skeleton: list[str]
    constants: np.ndarray
    fvu: float
    length: int
    score: float = 0.0
    prefix: list[str] = field(default_factory=list)

    def expression(self, digits: int = 6) -> str:
        from mlx26.core.simplify.parse import to_infix

        return to_infix(readable_signs(numeric_prefix(self.skeleton, self.constants, digits)))

    def record(self) -> dict:
        return {"expression": self.expression(), "fvu": float(self.fvu), "length": self.length,
                "score": round(float(self.score), 6), "skeleton": " ".join(self.skeleton),
                "constants": [float(c) for c in self.constants]}  # full precision, in skeleton order


def readable_signs(prefix: list[str]) -> list[str]:
    """``a + (-2)`` -> ``a - 2`` and ``a - (-2)`` -> ``a + 2`` for printing (the value is unchanged)."""
    from mlx26.core.simplify.ops import ARITY

    def negative(tok: str) -> bool:
        if ARITY.get(tok, 0) or not tok.startswith("-"):
            return False
        try:
            return float(tok) < 0
        except ValueError:
            return False

    def build(i: int) -> tuple[list, int]:
        tok, a = prefix[i], ARITY.get(prefix[i], 0)
        kids, j = [], i + 1
        for _ in range(a):
            kid, j = build(j)
            kids.append(kid)
        return [tok, *kids], j

    def emit(node: list) -> list[str]:
        tok, kids = node[0], node[1:]
        if tok in ("+", "-") and len(kids) == 2:
            a, b = kids
            if len(b) == 1 and negative(b[0]):
                return ["-" if tok == "+" else "+", *emit(a), b[0][1:]]
            if tok == "+" and len(a) == 1 and negative(a[0]) and not (len(b) == 1 and negative(b[0])):
                return ["-", *emit(b), a[0][1:]]
        return [tok, *(t for k in kids for t in emit(k))]

    tree, end = build(0)
    return emit(tree) if end == len(prefix) else prefix


def numeric_prefix(skeleton: list[str], constants, digits: int | None = None) -> list[str]:
    out, k = [], 0
    for t in skeleton:
        if t == CONSTANT:
            v = float(constants[k])
            k += 1
            out.append(format_number(float(f"{v:.{digits}g}")) if digits else format_number(v))
        else:
            out.append(t)
    return out


def fvu(y: np.ndarray, yhat: np.ndarray) -> float:
    if not np.all(np.isfinite(yhat)):
        return float("inf")
    with np.errstate(all="ignore"):
        var = float(np.var(y))
        mse = float(np.mean((y - yhat) ** 2))
    return mse / var if var > 0 else (0.0 if mse == 0 else float("inf"))


def fit_constants(skeleton: list[str], X: np.ndarray, y: np.ndarray, restarts: int = 2, seed: int = 0,
                  max_nfev: int = 200) -> tuple[np.ndarray, float]:
    """Best constants (LM with restarts) and the FVU they reach on (X, y)."""
    from scipy.optimize import least_squares

    f = compile_skeleton(skeleton)
    k = n_constants(skeleton)
    if k == 0:
        return np.zeros(0), fvu(y, f(X, np.zeros(0)))
    if X.shape[0] < k:
        return np.ones(k), float("inf")
    with np.errstate(all="ignore"):
        scale = float(np.std(y)) + 1e-12
    rng = np.random.default_rng(seed)

    def res(c):
        r = f(X, c) - y
        return np.where(np.isfinite(r), r, 1e3 * scale)

    best_c, best = np.ones(k), float("inf")
    starts = [np.ones(k)] + [rng.normal(0.0, 2.0, size=k) for _ in range(restarts)]
    for x0 in starts:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                sol = least_squares(res, x0, method="lm", max_nfev=max_nfev)
        except (ValueError, np.linalg.LinAlgError):
            continue
        v = fvu(y, f(X, sol.x))
        if v < best:
            best_c, best = sol.x, v
        if best <= spec.FLOAT32_EPS * 1e-3:
            break
    return best_c, best


def score(fvu_value: float, length: int, parsimony: float) -> float:
    return float(np.log10(max(fvu_value, spec.FLOAT32_EPS)) + parsimony * length)


def pareto(cands: list[Candidate]) -> list[Candidate]:
    front, best = [], float("inf")
    for c in sorted(cands, key=lambda c: (c.length, c.fvu)):
        if c.fvu < best:
            front.append(c)
            best = c.fvu
    return front


def check_data(X: np.ndarray, y: np.ndarray, max_constants: int) -> None:
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise InputError("X and y must have the same number of rows")
    if X.shape[1] > spec.MAX_VARS:
        raise InputError(f"{X.shape[1]} input columns, but the model reads at most {spec.MAX_VARS}",
                         "select at most 3 columns with --x")
    if not np.all(np.isfinite(y)):
        n_bad = int((~np.isfinite(y)).sum())
        raise InputError(f"the target has {n_bad} non-finite value{'' if n_bad == 1 else 's'} (inf or nan)",
                         "drop or repair those rows")
    if not np.all(np.isfinite(X)):
        raise InputError("the inputs have non-finite values")
    if X.shape[0] <= max_constants:
        raise InputError(f"{X.shape[0]} points but candidates may have up to {max_constants} free constants",
                         f"give more than {max_constants} points or lower --max-constants")
    if float(np.var(y)) == 0.0:
        raise InputError("the target is constant: FVU is undefined", "nothing to regress")


def prior_candidates(n: int, n_vars: int, seed: int, operators: tuple[str, ...], max_len: int = 24,
                     max_constants: int = 4) -> list[list[str]]:
    from mlx26.core.sr.sampler import PriorConfig, random_skeleton

    cfg = PriorConfig(max_vars=n_vars, operators=operators, max_len=max_len, max_constants=max_constants)
    rng = random.Random(seed)
    return [random_skeleton(rng, cfg, n_vars=rng.randint(1, n_vars)) for _ in range(n)]


def model_candidates(model, X: np.ndarray, y: np.ndarray, n: int, seed: int, operators: tuple[str, ...],
                     temperature: float = 1.0, max_points: int = 256) -> list[list[str]]:
    """``n`` complete prefix skeletons sampled from the decoder with a grammar mask."""
    import torch
    from mlx26.core.sr.model import EOS, SPECIALS, encode_bits

    cfg = model.cfg
    rng = np.random.default_rng(seed)
    if X.shape[0] > max_points:
        idx = rng.choice(X.shape[0], max_points, replace=False)
        X, y = X[idx], y[idx]
    vocab = list(cfg.vocab)
    nv = X.shape[1]
    off = len(SPECIALS)
    arity = np.array([0] * off + [ARITY.get(t, 0) for t in vocab])
    allowed = np.zeros(off + len(vocab), dtype=bool)
    for i, t in enumerate(vocab):
        if t in ARITY:
            allowed[off + i] = t in operators
        elif t.startswith("x"):
            allowed[off + i] = int(t[1:]) <= nv
        else:
            allowed[off + i] = True
    is_leaf = (arity == 0) & allowed
    is_leaf[:off] = False
    no_binary = allowed & (arity != 2)
    no_binary[:off] = False
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        bits = torch.from_numpy(encode_bits(X, y, cfg.n_vars))[None]
        mem = model.encode(bits).expand(n, -1, -1)
        toks = torch.full((n, 1), 1, dtype=torch.long)
        pending = np.ones(n, dtype=int)
        L = cfg.max_len - 2
        allowed_t = torch.from_numpy(allowed)
        leaf_t = torch.from_numpy(is_leaf)
        nobin_t = torch.from_numpy(no_binary)
        for step in range(L):
            if (pending == 0).all():
                break
            logits = model.decode(mem, toks)[:, -1, :] / max(temperature, 1e-3)
            room = L - step  # tokens still allowed, this one included
            # a binary node needs pending + 1 <= room - 1 afterwards, a unary one pending <= room - 1
            mask = allowed_t[None].repeat(n, 1)
            mask[torch.from_numpy(pending >= room - 1)] = nobin_t
            mask[torch.from_numpy(pending >= room)] = leaf_t
            logits = logits.masked_fill(~mask, float("-inf"))
            nxt = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen).squeeze(1)
            nxt = torch.where(torch.from_numpy(pending == 0), torch.full_like(nxt, EOS), nxt)
            a = arity[nxt.numpy()]
            pending = np.where(pending > 0, pending - 1 + a, 0)
            toks = torch.cat([toks, nxt[:, None]], 1)
    out = []
    for row, p in zip(toks[:, 1:].tolist(), pending, strict=True):
        if p != 0:
            continue
        out.append([vocab[t - off] for t in row if t >= off])
    return out


def search(X: np.ndarray, y: np.ndarray, *, model=None, sampler: str = "model", n_candidates: int = 256,
           seed: int = 0, operators: tuple[str, ...] | None = None, parsimony: float = spec.PARSIMONY,
           restarts: int = 2, max_constants: int = 4, temperature: float = 1.0) -> dict:
    """Best candidate and Pareto front for data (X, y); see the module docstring."""
    from mlx26.core.sr.sampler import simplified_skeleton

    operators = tuple(operators or spec.OPERATOR_WEIGHTS)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    check_data(X, y, max_constants)
    if not (np.isfinite(parsimony) and parsimony >= 0):
        raise InputError(f"--parsimony must be a finite number >= 0, not {parsimony}")
    if sampler == "model":
        if model is None:
            raise InputError("sampler 'model' needs a model")
        raw = model_candidates(model, X, y, n_candidates, seed, operators, temperature)
    elif sampler == "prior":
        raw = prior_candidates(n_candidates, X.shape[1], seed, operators, max_constants=max_constants)
    else:
        from mlx26.core.common.errors import unknown_name

        raise unknown_name("sampler", sampler, spec.SAMPLERS)
    from mlx26.core.sr.sampler import operator_restriction

    restriction = operator_restriction(operators)
    seen: set[str] = set()
    cands: list[Candidate] = []
    for i, r in enumerate(raw):
        s = simplified_skeleton(r, operators=restriction)
        if s is None or n_constants(s) > max_constants:
            continue
        key = " ".join(s)
        if key in seen:
            continue
        seen.add(key)
        c, v = fit_constants(s, X, y, restarts=restarts, seed=seed + i)
        if np.isfinite(v):
            cands.append(Candidate(s, c, v, len(s), score(v, len(s), parsimony)))
    if not cands:
        raise RunFailure(f"none of the {len(raw)} sampled candidates is finite on the data",
                         "raise --candidates or check the data's scale")
    # exact fits tie on the floored score: length, then FVU, decide, so the best is always on the front
    best = min(cands, key=lambda c: (c.score, c.length, c.fvu))
    front = pareto(cands)
    return {"best": best, "pareto": front, "n_sampled": len(raw), "n_unique": len(seen), "n_fitted": len(cands)}
