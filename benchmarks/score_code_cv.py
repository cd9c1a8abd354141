"""Cross-validation of the linear PRM's training settings on REAL code (how the shipped ones were chosen).

Usage:  python benchmarks/score_code_cv.py [--sven ../shared/data/sven] [--pair-weight 0 1 3 10]
                                           [--folds 5] [--json]

SVEN's 38 val pairs are the test set and too few to choose settings on (two pairs move ranking
by 5 points), and the 43 calibration pairs are hardly more. This benchmark pools SVEN ``fit`` and
``calibration`` (197 pairs from 113 repositories, none shared with SVEN val), cuts them into
folds by a hash of the repository, and for each setting trains on the other folds (+ the same
ordinary library code and synthetic minority as `score-code train --sven`) and scores the
held-out fold: function-level F1 at the operating point (the threshold that flags ≤ 3 % of the
ordinary calibration files in each group, as the shipped model's) and the ranking rate (fixed
over vulnerable) for every candidate aggregate. bandit (≥ medium) and semgrep (local rules) run on
the same 394 functions, so the PRM's cross-validated figures have an analyzer reference on 5x
more real fixes than SVEN val holds. Nothing here reads SVEN val. One run per setting trains
``folds`` models (about a minute each on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import zlib
from pathlib import Path

from _results import record
from mlx26.core.score_code import realeval as R
from mlx26.core.score_code import realtrain as RT
from mlx26.core.score_code.aggregate import aggregate
from mlx26.core.score_code.corpus import generate
from mlx26.core.score_code.prm import load_model, score_text
from mlx26.core.score_code.source import decode
from mlx26.core.score_code.sven import dedented, load_pairs, split
from mlx26.core.score_code.train import train

DEFAULT_SVEN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sven"


def _say(message: str) -> None:
    print(f"[cv] {message}", file=sys.stderr)


def analyzers_on_pool(sven_dir: str) -> dict:
    """bandit ≥ medium and semgrep on the pooled functions: F1 and ranking (fewer findings = safer)."""
    parts = split(load_pairs(sven_dir))
    pool = parts["fit"] + parts["calibration"]
    texts = {}
    for i, p in enumerate(pool):
        texts[f"{i}/vulnerable"] = dedented(p.before)[0]
        texts[f"{i}/fixed"] = dedented(p.after)[0]
    names = [a for a in ("bandit", "semgrep") if R.available(a)]
    found = R.analyze_texts(names, texts, _say) if names else {}
    out = {}
    for system, findings in found.items():
        pred = [bool(findings.get(f"{i}/{v}")) for i in range(len(pool)) for v in ("vulnerable", "fixed")]
        gold = [v == "vulnerable" for i in range(len(pool)) for v in ("vulnerable", "fixed")]
        fixed = [len(findings.get(f"{i}/fixed", [])) for i in range(len(pool))]
        vulnerable = [len(findings.get(f"{i}/vulnerable", [])) for i in range(len(pool))]
        out[system] = {**R.prf(pred, gold), "ranking": R.ranking(fixed, vulnerable, higher_is_safer=False)}
    return out


def cross_validate(sven_dir: str, pair_weight: float, folds: int, seed: int = 0) -> dict:
    parts = split(load_pairs(sven_dir))
    pool = parts["fit"] + parts["calibration"]
    fold_of = {p: zlib.crc32(p.repo.encode()) % folds for p in pool}
    library = RT.file_records(RT.library_files(RT.FIT_PACKAGES, per_package=40))
    synthetic = [{"code": r["code"], "vulnerable_lines": r["vulnerable_lines"], "source": "synthetic"}
                 for r in (e.to_record() for e in generate(200, seed=seed))]
    benign = {"packages": [f.read_text(encoding="utf-8") for f in RT.library_files(RT.CALIBRATION_PACKAGES, per_package=40)],
              "stdlib": [decode(f.read_bytes(), str(f)).text for f in R.stdlib_sample(150, seed, part="calibration")]}
    tp = fp = fn = 0
    wins = {f"{h}:{t}": 0 for h, t in RT.RANK_AGGREGATES}
    for k in range(folds):
        fit = [p for p in pool if fold_of[p] != k]
        held = [p for p in pool if fold_of[p] == k]
        records = RT.sven_records(fit) + library + synthetic
        weights = [0.3 if r["source"] == "synthetic" else 1.0 for r in records]
        with tempfile.TemporaryDirectory() as folder:
            train(records, folder, models=("linear",), seed=seed, weights=weights, real=True, l2=RT.REAL_L2,
                  layout="split", dim=RT.REAL_DIM, pair_weight=pair_weight)
            model = load_model("linear", folder, fresh=True)

        def scores(code: str, model=model) -> list[float]:
            return score_text(code, model).scores

        def agg(s: list[float]) -> float:
            return aggregate(s, "softmax", tau=0.1) if s else 1.0

        pairs = [(scores(dedented(p.before)[0]), scores(dedented(p.after)[0])) for p in held]
        rule = RT.calibrate([agg(b) for b, _ in pairs], [agg(a) for _, a in pairs],
                            {g: [agg(scores(t)) for t in texts] for g, texts in benign.items()},
                            max_false_alarm=0.03, rule="recall")
        t = rule["threshold"]
        tp += sum(agg(b) <= t for b, _ in pairs)
        fn += sum(agg(b) > t for b, _ in pairs)
        fp += sum(agg(a) <= t for _, a in pairs)
        for h, tau in RT.RANK_AGGREGATES:
            wins[f"{h}:{tau}"] += sum(bool(a and b) and aggregate(a, h, tau=tau) > aggregate(b, h, tau=tau)
                                      for b, a in pairs)
        _say(f"pair weight {pair_weight}: fold {k + 1}/{folds} done ({len(held)} pairs)")
    n = len(pool)
    return {"pair_weight": pair_weight, "pairs": n, "f1": round(2 * tp / (2 * tp + fp + fn), 4),
            "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0, "recall": round(tp / n, 4),
            "ranking": {k: round(v / n, 4) for k, v in wins.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sven", default=str(DEFAULT_SVEN), help="SVEN folder (train/ and val/)")
    ap.add_argument("--pair-weight", type=float, nargs="+", default=[0.0, 1.0, 3.0, 10.0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    rows = [cross_validate(args.sven, w, args.folds) for w in args.pair_weight]
    best = max(rows, key=lambda r: (r["f1"] + max(r["ranking"].values()), -r["pair_weight"]))
    figures = {"folds": args.folds, "pairs": rows[0]["pairs"], "settings": rows,
               "analyzers": analyzers_on_pool(args.sven),
               "by_pair_weight": {str(r["pair_weight"]): r for r in rows}, "best_pair_weight": best["pair_weight"],
               "shipped_pair_weight": RT.REAL_PAIR_WEIGHT, "seconds": round(time.time() - t0)}
    record("score_code_cv", figures, data=[{"name": "sven", "source": f"{args.sven} (eth-sri/sven, MIT): fit + "
                                            "calibration parts, grouped by repository; SVEN val not read"}])
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    aggs = list(rows[0]["ranking"])
    print(f"score-code linear PRM, {args.folds}-fold CV over {rows[0]['pairs']} real SVEN pairs (grouped by "
          "repository; SVEN val untouched)")
    print(f"{'pair weight':>11} {'F1':>6} {'P':>6} {'R':>6}  " + " ".join(f"{a:>11}" for a in aggs))
    for r in rows:
        print(f"{r['pair_weight']:>11g} {r['f1']:>6.3f} {r['precision']:>6.3f} {r['recall']:>6.3f}  "
              + " ".join(f"{r['ranking'][a]:>11.3f}" for a in aggs))
    for system, r in figures["analyzers"].items():
        print(f"{system:>11} {r['f1']:>6.3f} {r['precision']:>6.3f} {r['recall']:>6.3f}  ranking (fewer findings) "
              f"{r['ranking']['rate']:.3f}, ties {r['ranking']['ties']}")
    print(f"best by F1 + best ranking: pair weight {best['pair_weight']:g} (shipped: {RT.REAL_PAIR_WEIGHT:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
