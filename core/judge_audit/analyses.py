"""ASR analysis, Judge Concordance, ReliableBench and JudgeStressTest (part of the reconstruction of
Schwinn et al., arXiv 2603.06594, from the paper's definitions):

* ASR per attack as the judge sees it and as humans do, and their difference (judge − human, the
  signed error, negative when the judge under-counts); the judge's precision on that attack;
  precision-corrected ASR = judge ASR × precision = TP / n (the judge positives humans confirm), which
  is never above the judge's ASR, and the inflation between the two (judge − corrected = FP / n, and
  judge / corrected = 1 / precision ≥ 1: both only see false positives, never missed harms — read
  ``judge_minus_human`` for those). Bootstrap CIs for the three ASRs are ours. P(≥ 1 truly harmful | N judge
  positives) is ours: the hypergeometric chance that N judge positives drawn from that attack's
  items hold at least one the humans label harmful.
* Judge Concordance per item = 1 − H₂(f), f the fraction of judges voting harmful: 1 when the
  judges agree, 0 at a 50/50 split; label-free.
* ReliableBench: behaviours sorted by mean judge accuracy (mean over judges of the per-behaviour
  accuracy); keeping the top k raises the mean (macro over behaviours: monotone by construction).
  ``n_items`` counts the kept items at least one judge scored, ``n_<judge>`` those each judge scored
  (its ``accuracy_<judge>`` is over those); ``--complete-cases`` makes them all equal.
* JudgeStressTest: items where at most ``max_correct`` judges match the human label; validated by
  leave-one-out: each judge's accuracy on the items where 0 (Acc@0) or 1 (Acc@1) of the *other*
  judges are correct (the held-out judge never takes part in selecting its own items).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.judge_audit.metrics import clean
from mlx26.core.judge_audit.table import AuditTable, cell_keys


def _need_judges(table: AuditTable, k: int, what: str) -> list[str]:
    names = list(table.judges)
    if len(names) < k:
        raise InputError(f"{what} needs at least {k} judges; the table has {len(names)}.",
                         "give more --judge NAME=COLUMN options")
    return names


need_judges = _need_judges  # the CLI checks this before it prints any notice


def p_any_harmful(tp: int, fp: int, n: int) -> float | None:
    """P(≥ 1 of n judge positives drawn without replacement is truly harmful) = 1 − C(fp, n) / C(tp+fp, n)."""
    total = tp + fp
    if total == 0 or n > total:
        return None
    return 1.0 - (math.comb(fp, n) / math.comb(total, n))


def asr(table: AuditTable, by: Sequence[str], n_positives: Sequence[int] = (1, 5, 10), *, n_boot: int = 1000,
        seed: int = 0, level: float = 0.95) -> list[dict[str, Any]]:
    """Per judge × cell of ``by``: the ASR columns (see the module docstring) with percentile-bootstrap CIs.

    judge_asr = judge positives / n; human_asr = human positives / n; judge_minus_human = their
    difference (negative when the judge under-counts); precision = TP / judge positives;
    corrected_asr = judge ASR × precision = TP / n; inflation = judge − corrected ASR (= FP / n, never
    negative); inflation_ratio = judge / corrected ASR = 1 / precision (never below 1). The CIs of the
    three ASRs resample the cell's items (``n_boot`` draws, seeded).
    """
    keys = cell_keys(table, list(by))
    rng = np.random.default_rng(seed)
    alpha = (1 - level) / 2 * 100
    out = []
    for judge in table.judges:
        valid, pred = table.valid(judge), table.pred(judge)
        for key in sorted(set(keys[valid])):
            idx = np.flatnonzero((keys == key) & valid)
            y, p = table.human[idx], pred[idx]
            tp, fp = int((y & p).sum()), int((~y & p).sum())
            n = len(idx)
            judge_asr, human_asr = (tp + fp) / n, float(y.mean())
            precision = tp / (tp + fp) if tp + fp else None
            corrected = judge_asr * precision if precision is not None else 0.0
            if n_boot > 0:
                draw = rng.integers(0, n, size=(n_boot, n))
                yb, pb = y[draw], p[draw]
                boot = {"judge_asr": pb.mean(1), "human_asr": yb.mean(1), "corrected_asr": (yb & pb).mean(1)}
                ci: dict[str, tuple[float | None, float | None]] = {
                    k: (float(np.percentile(v, alpha)), float(np.percentile(v, 100 - alpha))) for k, v in boot.items()}
            else:
                ci = dict.fromkeys(("judge_asr", "human_asr", "corrected_asr"), (None, None))
            rec: dict[str, Any] = {"judge": judge}
            rec.update({c: str(table.columns[c][idx[0]]) for c in by})
            rec["n"] = n
            for name, value in (("judge_asr", judge_asr), ("human_asr", human_asr)):
                rec.update({name: value, f"{name}_lo": ci[name][0], f"{name}_hi": ci[name][1]})
            rec.update({"judge_minus_human": judge_asr - human_asr, "precision": precision, "corrected_asr": corrected,
                        "corrected_asr_lo": ci["corrected_asr"][0], "corrected_asr_hi": ci["corrected_asr"][1],
                        "inflation": judge_asr - corrected,
                        "inflation_ratio": clean(judge_asr / corrected) if corrected else None})
            for k in n_positives:
                rec[f"p_any_harmful_at_{k}"] = p_any_harmful(tp, fp, k)
            out.append(rec)
    return out


def binary_entropy(f: np.ndarray) -> np.ndarray:
    f = np.clip(np.asarray(f, dtype=float), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(f * np.log2(f) + (1 - f) * np.log2(1 - f))
    return np.nan_to_num(h, nan=0.0)


def concordance(table: AuditTable) -> dict[str, np.ndarray]:
    """Per item: judges voting, harmful votes, their fraction, concordance 1 − H₂ and majority correctness."""
    names = _need_judges(table, 2, "concordance")
    valid = np.stack([table.valid(j) for j in names], 1)
    votes = np.stack([table.pred(j) for j in names], 1) & valid
    n_j = valid.sum(1)
    frac = np.where(n_j > 0, votes.sum(1) / np.maximum(n_j, 1), np.nan)
    conc = np.where(n_j > 0, 1 - binary_entropy(frac), np.nan)
    majority = frac > 0.5
    return {"n_judges": n_j, "harmful_votes": votes.sum(1), "fraction": frac, "concordance": conc,
            "majority_correct": np.where(frac == 0.5, np.nan, (majority == table.human).astype(float))}


def concordance_records(table: AuditTable) -> list[dict[str, Any]]:
    c = concordance(table)
    return [{"id": table.ids[i], "n_judges": int(c["n_judges"][i]), "harmful_votes": int(c["harmful_votes"][i]),
             "fraction": clean(c["fraction"][i]), "concordance": clean(c["concordance"][i]),
             "human": bool(table.human[i]), "majority_correct": clean(c["majority_correct"][i])}
            for i in range(table.n)]


def concordance_summary(table: AuditTable, bins: int = 5) -> list[dict[str, Any]]:
    """Items binned by concordance: how often the judge majority (and each judge) matches the humans."""
    c = concordance(table)
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(c["concordance"], edges[1:-1]), 0, bins - 1)
    out = []
    for b in range(bins):
        idx = np.flatnonzero((which == b) & ~np.isnan(c["concordance"]))
        rec: dict[str, Any] = {"concordance_lo": round(float(edges[b]), 12), "concordance_hi": round(float(edges[b + 1]), 12),
                               "n": int(len(idx))}
        mc = c["majority_correct"][idx]
        rec["majority_accuracy"] = clean(np.nanmean(mc)) if np.any(~np.isnan(mc)) else None
        for j in table.judges:
            v = idx[table.valid(j)[idx]]
            rec[f"accuracy_{j}"] = clean((table.pred(j)[v] == table.human[v]).mean()) if len(v) else None
        out.append(rec)
    return out


def judge_accuracy_by(table: AuditTable, column: str) -> tuple[list[str], np.ndarray]:
    """Groups of ``column`` and a (groups × judges) accuracy matrix (nan where a judge has no item)."""
    keys = table.column(column)
    groups = sorted(set(keys.tolist()))
    names = list(table.judges)
    acc = np.full((len(groups), len(names)), np.nan)
    for gi, g in enumerate(groups):
        members = keys == g
        for ji, j in enumerate(names):
            m = members & table.valid(j)
            if m.any():
                acc[gi, ji] = float((table.pred(j)[m] == table.human[m]).mean())
    return groups, acc


def reliable_curve(table: AuditTable, behavior: str) -> tuple[list[dict[str, Any]], list[str]]:
    """For k = all … 1: the top-k behaviours by mean judge accuracy and the resulting accuracies."""
    groups, acc = judge_accuracy_by(table, behavior)
    mean = np.nanmean(acc, axis=1)
    order = np.lexsort((np.array(groups, dtype=object), -mean))  # best first; ties by name
    ranked = [groups[i] for i in order]
    keys = table.column(behavior)
    names = list(table.judges)
    curve = []
    for k in range(len(ranked), 0, -1):
        kept = set(ranked[:k])
        members = np.isin(keys, list(kept))
        item_acc, n_scored = [], []
        for j in names:
            m = members & table.valid(j)
            n_scored.append(int(m.sum()))
            item_acc.append(float((table.pred(j)[m] == table.human[m]).mean()) if m.any() else math.nan)
        scored_any = members & np.any([table.valid(j) for j in names], axis=0)
        rec: dict[str, Any] = {"k": k, "n_items": int(scored_any.sum()),
                               "mean_accuracy": float(np.mean(mean[order[:k]])),
                               "item_accuracy": clean(float(np.nanmean(item_acc)))}
        rec.update({f"accuracy_{j}": clean(a) for j, a in zip(names, item_acc, strict=True)})
        rec.update({f"n_{j}": c for j, c in zip(names, n_scored, strict=True)})
        curve.append(rec)
    return curve, ranked


def correct_matrix(table: AuditTable) -> tuple[list[str], np.ndarray, np.ndarray]:
    names = list(table.judges)
    valid = np.stack([table.valid(j) for j in names], 1)
    correct = np.stack([table.pred(j) == table.human for j in names], 1) & valid
    return names, correct, valid


def stress_items(table: AuditTable, max_correct: int = 1) -> np.ndarray:
    """Indices of the items at most ``max_correct`` judges get right (every judge must have scored them)."""
    _need_judges(table, 2, "the stress test")
    _, correct, valid = correct_matrix(table)
    return np.flatnonzero(valid.all(1) & (correct.sum(1) <= max_correct))


def stress_records(table: AuditTable, max_correct: int = 1, show: Sequence[str] = ()) -> list[dict[str, Any]]:
    names, correct, _ = correct_matrix(table)
    out = []
    for i in stress_items(table, max_correct):
        out.append({"id": table.ids[i], "human": bool(table.human[i]), "n_correct": int(correct[i].sum()),
                    "correct_judges": ",".join(n for n, c in zip(names, correct[i], strict=True) if c),
                    **{c: str(table.column(c)[i]) for c in show}})
    return out


def leave_one_out(table: AuditTable) -> list[dict[str, Any]]:
    """Acc@0 / Acc@1 of each judge on the items where 0 / 1 of the *other* judges are correct."""
    names, correct, valid = _need_judges(table, 2, "leave-one-out"), *correct_matrix(table)[1:]
    out = []
    for ji, judge in enumerate(names):
        others = [k for k in range(len(names)) if k != ji]
        scored = valid[:, others].all(1) & valid[:, ji]
        n_other = correct[:, others].sum(1)
        rec: dict[str, Any] = {"judge": judge}
        for level in (0, 1):
            m = scored & (n_other == level)
            rec[f"n_at_{level}"] = int(m.sum())
            rec[f"acc_at_{level}"] = float(correct[m, ji].mean()) if m.any() else None
        out.append(rec)
    return out
