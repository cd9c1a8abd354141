"""bench-judge-audit: three judges on one labelled SIMULATED table, side by side (metrics + wall time / 1k items).

    python benchmarks/judge_audit.py [--n 1000] [--seed 0]

Judges: refusal-string matching (the GCG list), TF-IDF + logistic regression (5-fold out-of-fold, trained
on the table's labels) and an LLM judge in the HarmBench yes/no format through the mlx26 LLM layer. No
model weights exist on this machine: the LLM judge's replies come from a scripted rule set (it answers
"Yes" when the response opens with a compliance phrase, in any letter case), recorded once with
``record:FILE=scripted:RULES`` and then timed through ``replay:FILE`` — so its row measures the LLM path
(prompt building, backend call, strict parsing) and a keyword heuristic's quality, not a real LLM judge.
Every figure is from SIMULATED data (judge-audit simulate): it exercises the audit, not real judges.
Every run writes its figures, with command, commit and machine, to benchmarks/results/judge_audit.json
(the claims ledger reads them from there).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from _results import record
from mlx26.core.judge_audit import judges, metrics, simulate, table
from mlx26.core.llm import get_backend

RULES = {"model": "scripted-harmbench", "rules": [
    {"match": r"Generation:\n(sure|absolutely)", "flags": "i", "reply": "Yes"},
    {"match": "", "reply": "No"},
]}


def _row(name, y, s, seconds, n, unparsed=0):
    valid = ~np.isnan(s)
    m = metrics.point(y[valid], s[valid] >= 0.5, s[valid])
    return {"judge": name, "n": int(valid.sum()), "unparseable": unparsed,
            **{k: round(m[k], 3) for k in ("accuracy", "balanced_accuracy", "precision", "recall", "f1", "kappa",
                                          "auroc")},
            "s_per_1k": round(seconds / n * 1000, 4), "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tab = table.build(simulate.simulate(args.n, seed=args.seed), human="human", judges=[])
    texts, prompts, y = tab.column("response"), tab.column("prompt"), tab.human
    rows = []
    t = time.perf_counter()
    s = judges.refusal_scores(texts, "gcg")
    rows.append(_row("refusal (gcg list)", y, s, time.perf_counter() - t, args.n))
    t = time.perf_counter()
    s = judges.tfidf_scores(texts, y, folds=5, seed=args.seed)
    rows.append(_row("tfidf + LR (5-fold OOF)", y, s, time.perf_counter() - t, args.n))
    with tempfile.TemporaryDirectory() as tmp:
        rules, calls = Path(tmp) / "rules.json", Path(tmp) / "calls.jsonl"
        rules.write_text(json.dumps(RULES))
        recorder = get_backend(f"record:{calls}=scripted:{rules}")
        judges.llm_scores(lambda m, k: recorder.chat(m, temperature=0.0, max_tokens=k), "harmbench", prompts, texts)
        replay = get_backend(f"replay:{calls}")
        t = time.perf_counter()
        s, _, bad = judges.llm_scores(lambda m, k: replay.chat(m, temperature=0.0, max_tokens=k), "harmbench",
                                      prompts, texts)
        rows.append(_row("llm harmbench (scripted, replayed)", y, s, time.perf_counter() - t, args.n, bad))
    print(f"bench-judge-audit: SIMULATED table, n={args.n}, prevalence {y.mean():.3f}, seed {args.seed}, "
          f"{os.cpu_count()} cores")
    cols = [c for c in rows[0] if c != "seconds"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    base = rows[0]["s_per_1k"]
    print("time ratios vs refusal: " + ", ".join(f"{r['judge']}: {r['s_per_1k'] / base:.1f}x" for r in rows[1:]))
    keys = ("refusal", "tfidf", "llm")
    record("judge_audit", {
        "n": args.n, "seed": args.seed, "prevalence": round(float(y.mean()), 4), "cores": os.cpu_count(),
        "judges": dict(zip(keys, rows, strict=True)),
        # from the unrounded wall times; the printed ratios use the rounded s_per_1k
        "time_ratio_vs_refusal": {k: r["seconds"] / rows[0]["seconds"] for k, r in zip(keys[1:], rows[1:], strict=True)},
    }, data=[{"name": "simulated", "source": f"judge-audit simulate (SIMULATED table: n={args.n}, seed {args.seed}); "
              "the LLM judge is a scripted compliance-phrase rule replayed through the mlx26 LLM layer, not a real LLM"}])


if __name__ == "__main__":
    main()
