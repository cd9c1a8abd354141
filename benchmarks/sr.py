"""Flash-ANSR benchmark (arXiv 2602.08885): ours vs pyoperon vs gplearn on Nguyen-1..8, side by side, one run.

    python benchmarks/sr.py [--candidates 256] [--budget small] [--seed 0]     # make bench-sr

Each method sees the same 20 points per problem (the Nguyen sampling ranges) and is scored on 20
fresh points: numeric recovery (FVU <= float32 eps), symbolic recovery (our equivalence checker),
median FVU, median expression length (tokens after our simplification, for every method) and wall
time. Ours: the shipped tiny model (trained on SYNTHETIC data, minutes on one CPU thread) and the
prior-only ablation at the same candidate budget. PySR is not run: it needs a Julia runtime
downloaded at first use. Prints ratios against each anchor and the core count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=256)
    ap.add_argument("--budget", default="small", help="baseline budget: tiny | small")
    ap.add_argument("--suite", default="nguyen8")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--json", help="also write the per-problem records to this JSON file")
    args = ap.parse_args(argv)
    import torch
    from mlx26.core.sr import evaluate as E
    from mlx26.core.sr.train import load

    torch.set_num_threads(1)  # shared 2-core machine; the anchors run with one thread too
    t0 = time.perf_counter()
    probs = E.suite_problems(args.suite, seed=args.seed)
    model, manifest = load(args.model)
    rows = []
    rows += E.run_ours(probs, model, "model", args.candidates, seed=args.seed)
    rows += E.run_ours(probs, None, "prior", args.candidates, seed=args.seed)
    for b in ("pyoperon", "gplearn"):
        print(f"  running {b} ...", file=sys.stderr, flush=True)
        rows += E.run_baseline(probs, b, seed=args.seed, budget=args.budget)
    summ = E.summarise(rows)
    print(f"sr benchmark — {args.suite} ({len(probs)} problems, 20 points of each formula), candidates "
          f"{args.candidates}, baseline budget {args.budget}, seed {args.seed}, {os.cpu_count()} cores, 1 thread, "
          f"{time.perf_counter() - t0:.0f} s total; model '{args.model}' ({manifest['parameters']} parameters, "
          f"trained on SYNTHETIC data)")
    cols = ["numeric_recovery_pct", "symbolic_recovery_pct", "median_fvu", "median_length", "median_length_ratio",
            "wall_s"]
    print(f"{'method':20}" + "".join(f"{c:>23}" for c in cols))
    for s in summ:
        print(f"{s['method']:20}" + "".join(f"{(s[c] if s[c] is not None else float('nan')):>23.4g}" for c in cols))
    by = {s["method"]: s for s in summ}
    ours = by["flash-ansr/model"]
    print("per problem (numeric recovery / length):")
    for p in probs:
        cells = []
        for m in by:
            r = next(r for r in rows if r["problem"] == p[0] and r["method"] == m)
            cells.append(f"{m}={'Y' if r['numeric'] else 'n'}/{r['length']}")
        print(f"  {p[0]:10} " + "  ".join(cells))
    print("ratios (ours = flash-ansr/model):")
    for a in ("pyoperon", "gplearn", "flash-ansr/prior"):
        o = by[a]
        lr = (ours["median_length"] / o["median_length"]) if o["median_length"] else float("nan")
        print(f"  ours / {a:17} median length {lr:.3f}   wall time {ours['wall_s'] / max(o['wall_s'], 1e-9):.3f}   "
              f"numeric recovery {ours['numeric_recovery_pct']:.1f}% vs {o['numeric_recovery_pct']:.1f}%")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"summary": summ, "rows": rows}, fh, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
