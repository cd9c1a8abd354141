"""Rule miner: enumerate small expressions, bucket by numeric fingerprint, confirm rules.

Reconstruction (our own algorithm and code) of the data-driven rule discovery of Saegert &
Köthe, "Breaking the Simplification Bottleneck in Amortized Neural Symbolic Regression"
(ICML 2026, arXiv 2602.08885).  Steps:

1. Enumerate, by increasing length (1 .. ``max_len`` tokens), every expression over the
   dummy variables ``_0 .. _{n_vars-1}`` (they become wildcards), at most one
   ``<constant>`` and the literals, whose operands are all *irreducible* (have no shorter
   equivalent found so far).  Values are computed bottom-up and vectorised over all
   candidates of one shape.
2. Fingerprint each candidate by its values on fixed random points (heavy-tailed: signs
   mixed, magnitudes 1e-2..1e2), once on the full real grid (for sound rules) and once on
   positive points (for lossy rules), quantised to ~7 significant digits.  The first
   (shortest) expression of a bucket is its representative; a later, longer member of the
   bucket is a candidate rule ``member -> representative``, found by one dictionary
   look-up instead of all-pairs comparison.  Sources with a ``<constant>`` are also
   looked up under scale- and shift-normalised fingerprints (targets ``<constant>*g``,
   ``g + <constant>``) and as constant functions (target ``<constant>``).
3. Confirm every candidate on fresh points (``rtol``): *sound* if wherever the source is
   finite the target is finite and equal, and wherever the source is undefined (nan from a
   domain error, or ±inf from a pole or an overflow) the target is undefined too (so the
   domain only grows on null sets the random points never hit, such as ``x = 0`` for
   ``x/x``); otherwise *lossy* if equal on positive
   points wherever both are finite.  Constant-bearing targets are fitted with
   ``scipy.optimize.curve_fit`` for each of ``n_challenges`` random values of the source
   constant; such rules are marked ``masked`` (valid for skeletons only).
4. Keep the shortest confirmed target (then the fewest constants; a sound target is
   preferred, a strictly shorter lossy one is kept in addition), drop rules the engine's
   built-in chain arithmetic already performs, and return JSON-ready rules with the full
   parameter set and seed under ``provenance``.  Deterministic for a seed.
"""

from __future__ import annotations

import itertools
import shlex
import warnings
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.simplify.ops import ARITY, CONSTANT, FIRST_PASS_OPERATORS, OPERATORS, evaluate
from mlx26.core.simplify.parse import tree_to_prefix

DEFAULT_LITERALS = ("0", "1", "-1")
MINER_VERSION = 1


def _points(rng: np.random.Generator, n: int, n_vars: int, positive: bool) -> np.ndarray:
    mag = 10.0 ** rng.uniform(-2.0, 2.0, size=(n, n_vars))
    if positive:
        return mag
    sign = np.where(rng.random((n, n_vars)) < 0.5, -1.0, 1.0)
    return mag * sign


def _quantize(V: np.ndarray) -> np.ndarray:
    """Integer codes of values (~7 significant digits); non-finite -> one sentinel."""
    with np.errstate(all="ignore"):
        W = np.where(np.abs(V) < 1e-10, 0.0, V)
        m, e = np.frexp(W)
        q = np.round(m * (1 << 23)).astype(np.int64) * 4096 + e.astype(np.int64)
    q[~np.isfinite(V)] = -(1 << 62)
    return q


def _row_keys(Q: np.ndarray) -> list[bytes]:
    Q = np.ascontiguousarray(Q)
    b = Q.tobytes()
    w = Q.shape[1] * 8
    return [b[i * w:(i + 1) * w] for i in range(Q.shape[0])]


def _apply(op: str, *args: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        out = OPERATORS[op].np_fn(*args)
        out = np.asarray(out, dtype=float)
        if op == "pow":
            a, b = args
            out = np.where(np.isnan(a) | np.isnan(b), np.nan, out)
        out[~np.isfinite(out)] = np.nan
    return out


def _tsize(t) -> int:
    return len(tree_to_prefix(t))


def verify_points(rng: np.random.Generator, n: int, n_vars: int, positive: bool) -> np.ndarray:
    """Verification points: a third heavy-tailed (1e-2..1e2), a third uniform on (-4, 4), a third
    uniform on (-1.2, 1.2) where most domain edges lie (positive halves when ``positive``)."""
    h = n // 3
    heavy = _points(rng, h, n_vars, positive)
    lo = 0.0 if positive else -4.0
    wide = rng.uniform(lo, 4.0, size=(h, n_vars))
    near = rng.uniform(0.0 if positive else -1.2, 1.2, size=(n - 2 * h, n_vars))
    return np.concatenate([heavy, wide, near])


def same_domain(a: np.ndarray, b: np.ndarray) -> bool:
    """Finite on the same points, except near float overflow (finite side above 1e290)."""
    fa, fb = np.isfinite(a), np.isfinite(b)
    mism = fa != fb
    if not mism.any():
        return True
    with np.errstate(all="ignore"):
        huge = (fa & (np.abs(a) > 1e290)) | (fb & (np.abs(b) > 1e290))
    return not np.any(mism & ~huge)


class RuleVerifier:
    def __init__(self, rng: np.random.Generator, n_vars: int, n_verify: int, n_challenges: int, rtol: float):
        self.Xf = verify_points(rng, n_verify, n_vars, positive=False)
        self.Xp = verify_points(rng, n_verify, n_vars, positive=True)
        self.wf = {f"_{i}": self.Xf[:, i] for i in range(n_vars)}
        self.wp = {f"_{i}": self.Xp[:, i] for i in range(n_vars)}
        mag = 10.0 ** rng.uniform(-1.0, 1.0, size=n_challenges)
        self.challenges = mag * np.array([1.0 if i % 2 == 0 else -1.0 for i in range(n_challenges)])
        self.rtol = rtol
        self.min_defined = max(8, n_verify // 20)  # rules must not hold only vacuously

    def ev(self, tree, full: bool, const=None) -> np.ndarray:
        return evaluate(tree_to_prefix(tree), np.zeros((len(self.Xf), 0)), constants=const,
                        wild_values=self.wf if full else self.wp)

    def close(self, a: np.ndarray, b: np.ndarray) -> bool:
        with np.errstate(all="ignore"):
            return bool(np.all(np.abs(a - b) <= self.rtol * np.maximum(np.abs(a), np.abs(b)) + 1e-12))

    def check_plain(self, src, tgt, const=None) -> str | None:
        """'sound', 'lossy' or None for a constant-free target."""
        Ls, Rs = self.ev(src, True, const), self.ev(tgt, True)
        lf, rf = np.isfinite(Ls), np.isfinite(Rs)
        both = lf & rf
        if both.sum() >= self.min_defined and same_domain(Ls, Rs) and self.close(Ls[both], Rs[both]):
            return "sound"
        Lp, Rp = self.ev(src, False, const), self.ev(tgt, False)
        both = np.isfinite(Lp) & np.isfinite(Rp)
        if both.sum() >= self.min_defined and self.close(Lp[both], Rp[both]):
            return "lossy"
        return None

    def check_fitted(self, src, tgt) -> str | None:
        """Rule with one ``<constant>`` in the target: fit it per constant challenge."""
        from scipy.optimize import OptimizeWarning, curve_fit

        tp = tree_to_prefix(tgt)
        verdicts = []
        for c in self.challenges:
            ok_mode = None
            for full in (True, False):
                y = self.ev(src, full, float(c))
                mask = np.isfinite(y)
                if mask.sum() < self.min_defined:
                    continue
                W = self.wf if full else self.wp
                wv = {k: v[mask] for k, v in W.items()}

                def f(_x, k, _wv=wv):
                    return evaluate(tp, np.zeros((len(_x), 0)), constants=float(k), wild_values=_wv)

                xs = np.arange(int(mask.sum()), dtype=float)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", OptimizeWarning)
                        warnings.simplefilter("ignore", RuntimeWarning)
                        popt, _ = curve_fit(f, xs, y[mask], p0=[1.0], maxfev=400)
                except (RuntimeError, ValueError, TypeError):
                    continue
                r = evaluate(tp, np.zeros((len(y), 0)), constants=float(popt[0]), wild_values=W)
                rf = np.isfinite(r)
                if not np.all(rf[mask]):
                    continue
                fit_tol = max(self.rtol, 1e-7)
                with np.errstate(all="ignore"):
                    good = np.all(np.abs(y[mask] - r[mask]) <= fit_tol * np.maximum(np.abs(y[mask]), np.abs(r[mask])) + 1e-10)
                if not good:
                    continue
                if full and same_domain(y, r):
                    ok_mode = "sound"
                else:
                    ok_mode = ok_mode or "lossy"
                break
            if ok_mode is None:
                return None
            verdicts.append(ok_mode)
        return "sound" if all(v == "sound" for v in verdicts) else "lossy"


def mine(max_len: int = 5, n_vars: int = 2, seed: int = 0, literals=DEFAULT_LITERALS, operators=None,
         constants: bool = True, n_points: int = 32, n_verify: int = 2048, n_challenges: int = 3,
         rtol: float = 1e-9, prune_redundant: bool = True, progress=None) -> dict:
    """Mine rewrite rules; returns ``{"provenance": {...}, "rules": [...], "stats": {...}}``.

    ``max_len``: longest source expression (tokens); ``n_vars``: number of wildcards;
    ``literals``: literal leaves; ``operators``: operator names (default: the whole table);
    ``constants``: also enumerate sources with one ``<constant>`` (skeleton rules).
    ``progress``: optional callable receiving one-line status strings.
    """
    ops = list(operators) if operators is not None else list(FIRST_PASS_OPERATORS)
    for o in ops:
        if o not in ARITY:
            raise InputError(f"unknown operator {o!r}")
    unary = [o for o in ops if ARITY[o] == 1]
    binary = [o for o in ops if ARITY[o] == 2]
    rng = np.random.default_rng(seed)
    Xf = _points(rng, n_points, n_vars, positive=False)
    Xp = _points(rng, max(8, (3 * n_points) // 4), n_vars, positive=True)
    c_fp = float(rng.uniform(0.5, 2.0))
    verifier = RuleVerifier(rng, n_vars, n_verify, n_challenges, rtol)
    P = Xf.shape[0]
    provenance = {
        "miner": "mlx26.core.simplify.miner.mine",
        "miner_version": MINER_VERSION,
        "max_len": max_len, "n_vars": n_vars, "seed": seed, "literals": list(literals),
        "operators": ops, "constants": constants, "n_points": n_points, "n_verify": n_verify,
        "n_challenges": n_challenges, "rtol": rtol, "prune_redundant": prune_redundant,
        # every CLI-visible choice, so the line reruns this mining (the rest: mine_from_provenance)
        "command": f"mlx26 simplify mine --max-len {max_len} --n-vars {n_vars} --seed {seed}"
                   + ("".join(f" --operator {shlex.quote(o)}" for o in ops) if ops != list(FIRST_PASS_OPERATORS) else "")
                   + ("" if constants else " --no-constants"),
        "python": f"mlx26.core.simplify.mine(max_len={max_len}, n_vars={n_vars}, seed={seed})",
    }

    # pools[L] = (trees, V (k, P+Q), nconst (k,), varmask (k,))
    pools: dict[int, tuple] = {}
    sound_cls: dict[bytes, tuple] = {}  # fp_full -> (tree, len)
    lossy_cls: dict[bytes, tuple] = {}
    scale_idx: dict[bytes, tuple] = {}
    shift_idx: dict[bytes, tuple] = {}
    candidates: list[tuple] = []  # (src, [targets...], kind)
    n_enum = 0

    def new_leaf_pool():
        trees, rows, ncs, vms = [], [], [], []
        for i in range(n_vars):
            trees.append(f"_{i}")
            rows.append(np.concatenate([Xf[:, i], Xp[:, i]]))
            ncs.append(0)
            vms.append(1 << i)
        for lit in literals:
            trees.append(lit)
            rows.append(np.full(P + Xp.shape[0], float(lit)))
            ncs.append(0)
            vms.append(0)
        if constants:
            trees.append(CONSTANT)
            rows.append(np.full(P + Xp.shape[0], c_fp))
            ncs.append(1)
            vms.append(0)
        return trees, np.array(rows), np.array(ncs), np.array(vms)

    def register(trees, V, ncs, vms, L):
        """Bucket a batch of candidates of length L; return the pool entries kept."""
        nonlocal n_enum
        k = len(trees)
        n_enum += k
        keep = []
        if k == 0:
            return keep
        Qf = _quantize(V[:, :P])
        Qp = _quantize(V[:, P:])
        kf = _row_keys(Qf)
        kp = _row_keys(Qp)
        defined = np.isfinite(V).any(axis=1)
        finite_f = np.isfinite(V[:, :P])
        with np.errstate(all="ignore"):
            # scale/shift normalisation at the first finite non-zero (resp. finite) point
            nzmask = finite_f & (V[:, :P] != 0)
            i_nz = np.argmax(nzmask, axis=1)
            i_f = np.argmax(finite_f, axis=1)
            rows = np.arange(k)
            Vs = V[:, :P] / V[rows, i_nz][:, None]
            Vh = V[:, :P] - V[rows, i_f][:, None]
        ks = _row_keys(_quantize(Vs))
        kh = _row_keys(_quantize(Vh))
        for r in range(k):
            if not defined[r] or vms[r] == 0 and L > 1:
                continue
            t = trees[r]
            if ncs[r] == 0:
                rep = sound_cls.get(kf[r])
                lrep = lossy_cls.get(kp[r])
                targets = []
                if rep is not None and rep[1] < L:
                    targets.append(rep[0])
                if lrep is not None and lrep[1] < L and (rep is None or lrep[1] < rep[1]):
                    targets.append(lrep[0])
                if targets:
                    candidates.append((t, targets, "plain"))
                    if rep is not None and rep[1] < L:
                        continue  # soundly reducible: never an operand of a longer source
                if rep is None:
                    sound_cls[kf[r]] = (t, L)
                    if nzmask[r].any():
                        scale_idx.setdefault(ks[r], (t, L))
                    if finite_f[r].any():
                        shift_idx.setdefault(kh[r], (t, L))
                if lrep is None:
                    lossy_cls[kp[r]] = (t, L)
                if rep is None or rep[1] == L:
                    keep.append(r)
            else:
                # skeleton source with one <constant>
                targets = []
                vf = V[r, :P][finite_f[r]]
                if L > 1 and vf.size and np.all(np.abs(vf - vf[0]) <= 1e-9 * np.abs(vf[0]) + 1e-12):
                    targets.append(CONSTANT)
                rep = sound_cls.get(kf[r])
                if rep is not None and rep[1] < L:
                    targets.append(rep[0])
                g = scale_idx.get(ks[r])
                if g is not None and g[1] + 2 < L:
                    targets.append(("*", CONSTANT, g[0]))
                g = shift_idx.get(kh[r])
                if g is not None and g[1] + 2 < L:
                    targets.append(("+", g[0], CONSTANT))
                if targets:
                    candidates.append((t, targets, "const"))
                    continue
                keep.append(r)
        return keep

    for L in range(1, max_len + 1):
        if L == 1:
            trees, V, ncs, vms = new_leaf_pool()
            keep = register(trees, V, ncs, vms, 1)
            keep = list(range(len(trees)))  # all leaves are operands
            pools[1] = (trees, V, ncs, vms)
            continue
        out_trees: list = []
        out_V: list = []
        out_nc: list = []
        out_vm: list = []
        if L - 1 in pools:
            ct, cV, cnc, cvm = pools[L - 1]
            for op in unary:
                if not ct:
                    break
                V = _apply(op, cV)
                trees = [(op, c) for c in ct]
                keep = register(trees, V, cnc, cvm, L)
                out_trees += [trees[i] for i in keep]
                out_V.append(V[keep])
                out_nc.append(cnc[keep])
                out_vm.append(cvm[keep])
        for op in binary:
            for i in range(1, L - 1):
                j = L - 1 - i
                if i not in pools or j not in pools:
                    continue
                at, aV, anc, avm = pools[i]
                bt, bV, bnc, bvm = pools[j]
                if not at or not bt:
                    continue
                chunk = max(1, 200_000 // max(1, len(bt)))
                for s in range(0, len(at), chunk):
                    ia = np.arange(s, min(len(at), s + chunk))
                    nc = (anc[ia][:, None] + bnc[None, :]).ravel()
                    ok = nc <= 1
                    ii = np.repeat(ia, len(bt))[ok]
                    jj = np.tile(np.arange(len(bt)), len(ia))[ok]
                    if ii.size == 0:
                        continue
                    V = _apply(op, aV[ii], bV[jj])
                    trees = [(op, at[x], bt[y]) for x, y in zip(ii.tolist(), jj.tolist(), strict=True)]
                    vm = avm[ii] | bvm[jj]
                    ncs = anc[ii] + bnc[jj]
                    keep = register(trees, V, ncs, vm, L)
                    out_trees += [trees[q] for q in keep]
                    out_V.append(V[keep])
                    out_nc.append(ncs[keep])
                    out_vm.append(vm[keep])
        if out_V:
            pools[L] = (out_trees, np.concatenate(out_V), np.concatenate(out_nc), np.concatenate(out_vm))
        else:
            pools[L] = ([], np.zeros((0, P + Xp.shape[0])), np.zeros(0, int), np.zeros(0, int))
        if progress:
            progress(f"length {L}: enumerated {n_enum}, pool {len(out_trees)}, candidates {len(candidates)}")

    # ---------------------------------------------------------------- confirmation
    rules: list[dict[str, Any]] = []
    n_rejected = 0
    for src, targets, kind in candidates:
        best_sound = None
        best_lossy = None
        for tgt in sorted(targets, key=lambda t: (_tsize(t), tree_to_prefix(t).count(CONSTANT))):
            has_c = CONSTANT in tree_to_prefix(tgt)
            if kind == "plain" or not has_c:
                verdict = verifier.check_plain(src, tgt, const=float(verifier.challenges[0]) if kind == "const" else None)
                if verdict is not None and kind == "const":
                    # must hold for every challenge value of the source constant
                    for c in verifier.challenges[1:]:
                        v2 = verifier.check_plain(src, tgt, const=float(c))
                        if v2 is None:
                            verdict = None
                            break
                        if v2 == "lossy":
                            verdict = "lossy"
                masked = kind == "const" and has_c
            else:
                verdict = verifier.check_fitted(src, tgt)
                masked = True
            if verdict == "sound" and best_sound is None:
                best_sound = (tgt, masked or kind == "const")
            elif verdict == "lossy" and best_lossy is None and best_sound is None:
                best_lossy = (tgt, masked or kind == "const")
        if best_sound is None and best_lossy is None:
            n_rejected += 1
            continue
        for res, sound in ((best_sound, True), (best_lossy, False)):
            if res is None:
                continue
            tgt, masked = res
            rules.append({"lhs": " ".join(tree_to_prefix(src)), "rhs": " ".join(tree_to_prefix(tgt)),
                          "sound": sound, "masked": bool(masked)})
    n_found = len(rules)
    if prune_redundant:
        rules = _prune(rules)
    rules.sort(key=lambda r: (len(r["lhs"].split()), r["lhs"], not r["sound"], r["rhs"]))
    stats = {"enumerated": int(n_enum), "candidates": len(candidates), "rejected": n_rejected,
             "confirmed": n_found, "rules": len(rules),
             "sound": sum(r["sound"] for r in rules), "lossy": sum(not r["sound"] for r in rules),
             "masked": sum(r["masked"] for r in rules)}
    return {"provenance": provenance, "stats": stats, "rules": rules}


def _canon_wild(lhs: str, rhs: str) -> tuple[str, str]:
    """Rename wildcards in order of first appearance in the left side (_0, _1, ...)."""
    m: dict[str, str] = {}
    for tok in lhs.split():
        if tok.startswith("_") and tok not in m:
            m[tok] = f"_{len(m)}"
    return (" ".join(m.get(t, t) for t in lhs.split()), " ".join(m.get(t, t) for t in rhs.split()))


def _prune(rules: list[dict]) -> list[dict]:
    """Canonicalise wildcard names, deduplicate, and drop rules subsumed by other rules.

    Rules are visited by increasing left-side length; a rule is dropped when the rules
    already kept (all shorter, same or weaker mode/masking requirements), applied by plain
    rewriting, turn its left side into something no longer than its right side.  The
    engine's built-in arithmetic is deliberately not used here, so the file stays a
    self-contained rule set.
    """
    from mlx26.core.simplify.ruleset import compile_rule

    seen = set()
    uniq = []
    for r in rules:
        lhs, rhs = _canon_wild(r["lhs"], r["rhs"])
        k = (lhs, rhs, r["sound"], r["masked"])
        if k in seen:
            continue
        seen.add(k)
        uniq.append({"lhs": lhs, "rhs": rhs, "sound": r["sound"], "masked": r["masked"]})
    uniq.sort(key=lambda r: (len(r["lhs"].split()), r["lhs"], not r["sound"], r["rhs"]))
    kept: list[dict] = []
    index: dict = {}
    for r in uniq:
        cr = compile_rule(r)
        if _tsize(_rewrite(cr.lhs, index, r["sound"], r["masked"])) <= _tsize(cr.rhs):
            continue
        kept.append(r)
        index.setdefault(cr.index_key, []).append(cr)
    return kept


def _rewrite(t, index: dict, sound: bool, masked: bool, budget: int = 32):
    """Apply indexed rules at the root (and to new sub-trees) until none fits; bounded."""
    from mlx26.core.simplify.engine import match_pattern, substitute

    for _ in range(budget):
        if isinstance(t, str):
            return t
        t = (t[0],) + tuple(_rewrite(c, index, sound, masked, 4) for c in t[1:])
        heads = [c[0] if isinstance(c, tuple) else c for c in t[1:]]
        keys = [(t[0],) + tuple(h) for h in itertools.product(*[(h, "*") for h in heads])]
        done = True
        for k in keys:
            for cr in index.get(k, ()):
                if (sound and not cr.sound) or (cr.masked and not masked):
                    continue
                b: dict = {}
                if match_pattern(cr.lhs, t, b):
                    t = substitute(cr.rhs, b)
                    done = False
                    break
            if not done:
                break
        if done:
            return t
    return t


def rules_json(result: dict) -> str:
    """Canonical, byte-stable JSON text of a mined result (provenance, stats, rules)."""
    import json

    data = {"provenance": result["provenance"], "stats": result["stats"], "rules": result["rules"]}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def write_rules(result: dict, path) -> None:
    """Write a mined result as the canonical, byte-stable rules JSON."""
    from pathlib import Path

    Path(path).write_text(rules_json(result))


def mine_from_provenance(provenance: dict) -> dict:
    """Re-run the miner with the parameters recorded in a rules file's provenance."""
    keys = ("max_len", "n_vars", "seed", "literals", "operators", "constants", "n_points", "n_verify",
            "n_challenges", "rtol", "prune_redundant")
    return mine(**{k: provenance[k] for k in keys if k in provenance})
