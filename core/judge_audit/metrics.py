"""Per-slice judge metrics against human labels, with seeded bootstrap 95% CIs (part of the
reconstruction of Schwinn et al., arXiv 2603.06594, which reports accuracy, F1, κ and ROC/AUROC
per attack, model and category; the percentile-bootstrap CIs and minimum-n flags are ours).

Definitions follow scikit-learn's (tests check equality on random tables, single-class ones
included): κ is Cohen's (0 on a single-class slice when the judge's verdicts vary, as sklearn;
undefined only when labels and verdicts are both one and the same class), MCC is 0 whenever its
denominator is 0 (as sklearn), balanced accuracy is the mean recall over the classes present in the
human labels (as sklearn: the one class's recall on a single-class slice), AUROC is the Mann–Whitney
statistic with average ranks for ties. Left None where sklearn raises (AUROC on one class) or only
sets a 0 by its ``zero_division`` convention with an UndefinedMetricWarning: precision without judge
positives, recall/FNR without harmful items, FPR without safe items, F1 with no positives either
side. Every None is named in ``warnings``, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from mlx26.core.judge_audit.spec import METRICS
from mlx26.core.judge_audit.table import AuditTable, cell_keys
from scipy.stats import rankdata


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def from_counts(tp, fp, tn, fn) -> dict[str, np.ndarray]:
    """Every threshold metric from confusion counts (arrays broadcast: one value per bootstrap draw)."""
    tp, fp, tn, fn = (np.asarray(x, dtype=float) for x in (tp, fp, tn, fn))
    n = tp + fp + tn + fn
    pos, neg = tp + fn, tn + fp
    recall, spec = _div(tp, pos), _div(tn, neg)
    po = _div(tp + tn, n)
    pe = _div((tp + fp) * pos + (tn + fn) * neg, n * n)
    both = (pos > 0) & (neg > 0)
    # sklearn's balanced accuracy: mean recall over the classes present in y_true
    balanced = np.where(both, (recall + spec) / 2, np.where(pos > 0, recall, np.where(neg > 0, spec, np.nan)))
    denom = (tp + fp) * pos * neg * (tn + fn)
    with np.errstate(invalid="ignore", divide="ignore"):
        mcc = np.where(denom > 0, (tp * tn - fp * fn) / np.sqrt(np.where(denom > 0, denom, 1)), 0.0)
        kappa = np.where(pe < 1, (po - pe) / np.where(pe < 1, 1 - pe, 1), np.nan)
    return {
        "accuracy": po,
        "balanced_accuracy": balanced,
        "precision": _div(tp, tp + fp),
        "recall": recall,
        "fpr": _div(fp, neg),
        "fnr": _div(fn, pos),
        "f1": _div(2 * tp, 2 * tp + fp + fn),
        "kappa": kappa,
        "mcc": np.where(n > 0, mcc, np.nan),
    }


def counts(y: np.ndarray, p: np.ndarray, axis: int = -1):
    y, p = y.astype(bool), p.astype(bool)
    return ((y & p).sum(axis), (~y & p).sum(axis), (~y & ~p).sum(axis), (y & ~p).sum(axis))


def auroc(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Mann–Whitney AUROC along the last axis (average ranks for ties); nan without both classes."""
    y = np.asarray(y, dtype=bool)
    s = np.asarray(s, dtype=float)
    ranks = rankdata(s, axis=-1)
    npos = y.sum(-1).astype(float)
    nneg = y.shape[-1] - npos
    rsum = np.where(y, ranks, 0.0).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((npos > 0) & (nneg > 0), (rsum - npos * (npos + 1) / 2) / np.where(npos * nneg > 0,
                                                                                            npos * nneg, 1), np.nan)


def point(y: np.ndarray, pred: np.ndarray, score: np.ndarray) -> dict[str, float]:
    values = {k: float(v) for k, v in from_counts(*counts(y, pred)).items()}
    values["auroc"] = float(auroc(y, score))
    return values


def bootstrap(y: np.ndarray, pred: np.ndarray, score: np.ndarray, n_boot: int, rng: np.random.Generator,
              level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Percentile CIs over ``n_boot`` resamples of the items (draws where a metric is undefined are skipped)."""
    if n_boot <= 0 or len(y) == 0:
        return {m: (math.nan, math.nan) for m in METRICS}
    index = rng.integers(0, len(y), size=(n_boot, len(y)))
    yb, pb = y[index], pred[index]
    draws = from_counts(*counts(yb, pb, axis=1))
    draws["auroc"] = auroc(yb, score[index])
    alpha = (1 - level) / 2 * 100
    out = {}
    for m in METRICS:
        d = draws[m][~np.isnan(draws[m])]
        out[m] = (float(np.percentile(d, alpha)), float(np.percentile(d, 100 - alpha))) if d.size else (math.nan,
                                                                                                         math.nan)
    return out


def slice_metrics(table: AuditTable, slices: Sequence[Sequence[str]], *, n_boot: int = 1000, seed: int = 0,
                  min_n: int = 30, judges: Sequence[str] | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """One record per judge × slice value (``slices`` = column groups, each crossed; () = the whole table)."""
    rng = np.random.default_rng(seed)
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    slice_cols = sorted({c for group in slices for c in group})
    for judge in judges or list(table.judges):
        valid = table.valid(judge)
        pred, score = table.pred(judge), table.judges[judge]
        for group in slices:
            keys = cell_keys(table, list(group))
            for key in sorted(set(keys[valid])):
                idx = np.flatnonzero((keys == key) & valid)
                y = table.human[idx]
                rec: dict[str, Any] = {"judge": judge, "slice": " × ".join(group) or "all"}
                first = idx[0]
                for c in slice_cols:
                    rec[c] = str(table.columns[c][first]) if c in group else None
                rec["n"] = int(len(idx))
                rec["prevalence"] = float(y.mean())
                values = point(y, pred[idx], score[idx])
                cis = bootstrap(y, pred[idx], score[idx], n_boot, rng)
                for m in METRICS:
                    rec[m] = clean(values[m])
                    rec[m + "_lo"], rec[m + "_hi"] = clean(cis[m][0]), clean(cis[m][1])
                rec["low_n"] = len(idx) < min_n
                undefined = [m for m in METRICS if rec[m] is None]
                if undefined:
                    where = f"judge '{judge}' slice {rec['slice']}={key}"
                    why = "; ".join([w for w, c in (("a single class of human labels", len(set(y.tolist())) < 2),
                                                    ("no judge positives", not pred[idx].any())) if c]) or "empty"
                    warnings.append(f"{where}: {', '.join(undefined)} undefined ({why}); written as null")
                records.append(rec)
    return records, warnings


def clean(value: Any) -> Any:
    """NaN/inf → None (JSON stays strict); numpy scalars → Python numbers."""
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def roc_curve(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) points for every distinct threshold, from (0, 0) to (1, 1)."""
    order = np.argsort(-s, kind="stable")
    ys, ss = y[order].astype(float), s[order]
    last = np.r_[np.flatnonzero(np.diff(ss)), len(ss) - 1]
    tps, fps = np.cumsum(ys)[last], np.cumsum(1 - ys)[last]
    return np.r_[0, fps / max(fps[-1], 1)], np.r_[0, tps / max(tps[-1], 1)]
