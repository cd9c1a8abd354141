"""Flash-ANSR benchmark (arXiv 2602.08885): ours vs pyoperon vs gplearn on Nguyen-1..8, side by side, one run.

    python benchmarks/sr.py [--candidates 256] [--budget small] [--seed 0]     # make bench-sr

Each method sees the same 20 points per problem (the Nguyen sampling ranges) and is scored on 20
fresh points: numeric recovery (FVU <= float32 eps), symbolic recovery (our equivalence checker),
median FVU, median expression length (tokens after our simplification, for every method) and wall
time. Ours: the shipped tiny model (trained on SYNTHETIC data, minutes on one CPU thread) and the
prior-only ablation at the same candidate budget. PySR is not run: it needs a Julia runtime
downloaded at first use. Prints ratios against each anchor and the core count. Then (``--heldout``)
the model against the prior on the 100 held-out SYNTHETIC problems at 64 candidates, as
``mlx26 sr eval --suite synthetic --sampler model --sampler prior --candidates 64`` does. Then
(``--decontam-audit``) the training pool's decontamination: the same 8000 prior skeletons filtered with the
two hash layers only and with the equivalence layer too (time and drops of each), and an independent audit
of both kept pools: a seeded sample compared by the equivalence checker with every test skeleton of the same
variable count (no buckets, no dimension filter), counting the kept skeletons that are test-equivalent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from _results import record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=256)
    ap.add_argument("--budget", default="small", help="baseline budget: tiny | small")
    ap.add_argument("--suite", default="nguyen8")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--json", help="also write the per-problem records to this JSON file")
    ap.add_argument("--heldout", type=int, default=100,
                    help="also compare model vs prior on this many held-out SYNTHETIC problems (= mlx26 sr eval "
                         "--suite synthetic --sampler model --sampler prior); 0 skips")
    ap.add_argument("--heldout-candidates", type=int, default=64)
    ap.add_argument("--decontam-audit", type=int, default=300,
                    help="kept skeletons of each pool to audit with the checker (0 skips the decontamination part)")
    args = ap.parse_args(argv)
    import torch
    from mlx26.core.sr import evaluate as E
    from mlx26.core.sr.train import HELDOUT_SEED, load

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
    heldout = None
    if args.heldout:
        print(f"  model vs prior on {args.heldout} held-out SYNTHETIC problems, {args.heldout_candidates} candidates ...",
              file=sys.stderr, flush=True)
        hp = E.suite_problems("synthetic", seed=args.seed, n=args.heldout)
        hrows = E.run_ours(hp, model, "model", args.heldout_candidates, seed=args.seed)
        hrows += E.run_ours(hp, None, "prior", args.heldout_candidates, seed=args.seed)
        heldout = {s["method"].replace("/", "_"): s for s in E.summarise(hrows)}
        heldout |= {"problems": len(hp), "candidates": args.heldout_candidates}
        for s in E.summarise(hrows):
            print(f"held-out SYNTHETIC {s['method']:18} numeric {s['numeric_recovery_pct']:5.1f}%  symbolic "
                  f"{s['symbolic_recovery_pct']:5.1f}%  median FVU {s['median_fvu']:.2e}  median length "
                  f"{s['median_length']}  wall {s['wall_s']:.1f} s")
    decontam = audit_decontamination(manifest, args.decontam_audit, args.seed) if args.decontam_audit else None
    figures = {"suite": args.suite, "problems": len(probs), "candidates": args.candidates, "budget": args.budget,
               "seed": args.seed, "model": args.model, "model_parameters": manifest["parameters"],
               "methods": {s["method"].replace("/", "_"): s for s in summ},
               "solved": {m.replace("/", "_"): [r["problem"] for r in rows if r["method"] == m and r["numeric"]]
                          for m in by},
               "ratios": {a.replace("/", "_"): {
                   "length": ours["median_length"] / by[a]["median_length"] if by[a]["median_length"] else None,
                   "wall": ours["wall_s"] / max(by[a]["wall_s"], 1e-9)} for a in ("pyoperon", "gplearn", "flash-ansr/prior")},
               # the shipped weights' own training record (written by `mlx26 sr train`, read from the manifest)
               "heldout": heldout,
               "decontamination": decontam,
               "training": {k: manifest["train"][k] for k in ("steps", "loss_first", "loss_last", "loss_drop", "wall_s")},
               "training_data": {k: manifest["data"][k] for k in ("pool_drawn", "pool_kept")}
               | {"decontam_dropped": manifest["data"]["decontam"]["dropped"],
                  "decontam_dropped_equiv": manifest["data"]["decontam"]["dropped_equiv"],
                  "decontam_equiv_checks": manifest["data"]["decontam"]["equiv_checks"],
                  "decontam_dim_skipped": manifest["data"]["decontam"].get("dim_skipped", 0)}}
    record("sr", figures, data=[
        {"name": args.suite, "source": "Nguyen-1..8 formulas (the benchmark's published definitions), 20 sampled points "
         "each to fit and 20 fresh to score (seeded)"},
        *([{"name": "synthetic held-out", "source": f"SYNTHETIC: {args.heldout} problems drawn from the prior (skeletons "
            f"affine in the variables skipped) with "
            f"seed {HELDOUT_SEED}, excluded from the training pool"}] if args.heldout else []),
        {"name": f"flash-ansr/{args.model}", "source": f"the shipped {args.model} model ({manifest['parameters']} "
         f"parameters) trained here on the SYNTHETIC prior stream: `{manifest['command']}`"}])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"summary": summ, "rows": rows}, fh, indent=2, default=str)
    return 0


def audit_decontamination(manifest: dict, n_audit: int, seed: int) -> dict:
    """Hash layers vs hash + equivalence layer on the shipped model's pool, each kept pool audited by the checker."""
    from mlx26.core.sr.decontam import audit, default_test_index
    from mlx26.core.sr.sampler import PriorConfig, skeletons
    from mlx26.core.sr.train import heldout_problems

    prior = PriorConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in manifest["prior"].items()
                           if k in PriorConfig.__dataclass_fields__})
    held = [p.skeleton for p in heldout_problems(cfg=prior)]
    drawn = list(skeletons(manifest["data"]["pool_drawn"], seed=manifest["train"]["seed"], cfg=prior))
    out: dict = {"pool_drawn": len(drawn)}
    for name, use_equiv in (("hash_only", False), ("equiv", True)):
        print(f"  decontaminating {len(drawn)} skeletons ({name}) ...", file=sys.stderr, flush=True)
        index = default_test_index(held, use_equiv=use_equiv)
        t = time.perf_counter()
        kept = [s for s in drawn if not index.contaminated(s)]
        seconds = time.perf_counter() - t
        print(f"  auditing {n_audit} kept skeletons ({name}) with the checker ...", file=sys.stderr, flush=True)
        out[name] = dict(index.stats) | {"kept": len(kept), "seconds": round(seconds, 2),
                                         "audit": audit(kept, index, n_audit, seed=seed)}
    out["time_ratio"] = out["equiv"]["seconds"] / max(out["hash_only"]["seconds"], 1e-9)
    for name in ("hash_only", "equiv"):
        o = out[name]
        print(f"decontamination {name:9} dropped {o['dropped']} of {len(drawn)} in {o['seconds']:.1f} s; audit: "
              f"{o['audit']['equivalent_found']} of {o['audit']['sample']} kept skeletons test-equivalent "
              f"({o['audit']['pairs_checked']} checker pairs)")
    return out


if __name__ == "__main__":
    sys.exit(main())
