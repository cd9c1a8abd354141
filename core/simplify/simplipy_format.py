"""Import of rule sets in SimpliPy's published format (``--rules FILE``), re-verified numerically.

Part of the reconstruction of Saegert & Köthe, "Breaking the Simplification Bottleneck in
Amortized Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885; public code
psaegert/simplipy).  The format is reconstructed from memory of SimpliPy's rule files, not
read from them (none is in this repository; a user points ``--rules`` at one): a JSON list
of ``[source, target]`` pairs, each side a prefix token list (or a space-separated prefix
string), pattern variables written ``_0``, ``_1``, ... (``x1``/``x2``-style names are also
accepted and mapped to ``_0``, ``_1`` in order of appearance), constants ``<constant>``,
non-finite values ``float('inf')``/``float('nan')``; optionally wrapped as
``{"rules": [...]}`` next to other keys.  SimpliPy's files carry no soundness labels, so
every imported rule is re-verified with our miner's verifier on fresh random points and
labelled ``sound`` / ``lossy`` (our definitions, docs/simplify.md) or dropped when it does not
hold; ``masked`` when a ``<constant>`` is involved.  ``import_stats`` reports the counts.
"""

from __future__ import annotations

import re

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.simplify.errors import ExpressionError
from mlx26.core.simplify.ops import CONSTANT, NONFINITE_SPELLINGS, is_var

_VARLIKE = re.compile(r"^(x_?[0-9]+|[a-z])$")


def looks_like_simplipy(data) -> bool:
    rows = data.get("rules") if isinstance(data, dict) else data
    return isinstance(rows, list) and bool(rows) and all(
        isinstance(r, list | tuple) and len(r) == 2 for r in rows)


def _tokens(side) -> list[str]:
    toks = side.split() if isinstance(side, str) else [str(t) for t in side]
    return [NONFINITE_SPELLINGS.get(t.lower(), t) for t in toks]


def _wild(lhs: list[str], rhs: list[str]) -> tuple[list[str], list[str]]:
    m: dict[str, str] = {}
    for t in lhs:
        if (is_var(t) or (_VARLIKE.match(t) and t not in ("e",))) and t not in m and not t.startswith("_"):
            m[t] = f"_{len(m)}"
    return [m.get(t, t) for t in lhs], [m.get(t, t) for t in rhs]


def import_rules(data, seed: int = 0, n_verify: int = 2048) -> tuple[list[dict], dict]:
    """``(rules in our format, stats)`` from SimpliPy-format ``data`` (already JSON-decoded)."""
    from mlx26.core.simplify.miner import RuleVerifier
    from mlx26.core.simplify.ruleset import pattern_tree

    if not looks_like_simplipy(data):
        raise InputError("not a SimpliPy rule list: expected [[source, target], ...]")
    rows: list = data["rules"] if isinstance(data, dict) else data
    stats = {"read": len(rows), "sound": 0, "lossy": 0, "rejected": 0, "unverifiable": 0, "malformed": 0}
    parsed = []
    n_wild = 1
    for src, tgt in rows:
        try:
            lt, rt = _wild(_tokens(src), _tokens(tgt))
            lhs, rhs = pattern_tree(lt), pattern_tree(rt)
        except (ExpressionError, TypeError):
            stats["malformed"] += 1
            continue
        if isinstance(lhs, str) or len(lt) <= len(rt):
            stats["malformed"] += 1  # a rule must shorten an operator node
            continue
        wl = {t for t in lt if t.startswith("_")}
        if not {t for t in rt if t.startswith("_")} <= wl:
            stats["malformed"] += 1
            continue
        n_wild = max(n_wild, len(wl))
        parsed.append((lt, rt, lhs, rhs))
    ver = RuleVerifier(np.random.default_rng(seed), n_wild, n_verify, 3, 1e-9)
    out = []
    for lt, rt, lhs, rhs in parsed:
        cl, cr = lt.count(CONSTANT), rt.count(CONSTANT)
        with np.errstate(all="ignore"):
            if cr == 0 and cl == 0:
                verdict = ver.check_plain(lhs, rhs)
            elif cr == 0:
                vs = [ver.check_plain(lhs, rhs, const=float(c)) for c in ver.challenges]
                verdict = None if None in vs else ("sound" if all(v == "sound" for v in vs) else "lossy")
            elif cr == 1 and cl >= 1:
                verdict = ver.check_fitted(lhs, rhs)
            else:
                stats["unverifiable"] += 1
                continue
        if verdict is None:
            stats["rejected"] += 1
            continue
        stats[verdict] += 1
        out.append({"lhs": " ".join(lt), "rhs": " ".join(rt), "sound": verdict == "sound",
                    "masked": bool(cl or cr)})
    return out, stats
