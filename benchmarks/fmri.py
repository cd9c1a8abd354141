"""Omni-fMRI benchmark (arXiv 2601.23090): dynamic vs uniform vs random patching, side by side, one run.

    python benchmarks/fmri.py [--steps 200] [--seed 0]      # make bench-fmri

On SYNTHETIC data (mlx26.core.fmri.synth: 8 subjects x 64 frames, 32^3, 8-frame clips): tokens per clip,
the tokeniser's reconstruction SSE (random = same token count as dynamic), MAE pretraining time, held-out
masked-reconstruction MSE vs the mean predictor, and linear-probe accuracy (pretrained vs random init) for
subject identity and task/rest. Prints ratios against uniform (the anchor) and the core count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--subjects", type=int, default=8)
    ap.add_argument("--json", help="also write the records to this JSON file")
    args = ap.parse_args(argv)
    import torch
    from mlx26.core.fmri import bench

    torch.set_num_threads(1)  # a shared 2-core machine: one thread keeps the three runs comparable
    t0 = time.perf_counter()
    recs = bench.compare(steps=args.steps, seed=args.seed, subjects=args.subjects,
                         log=lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    by = {r["patching"]: r for r in recs}
    u, d, r = by["uniform"], by["dynamic"], by["random"]
    print(f"fmri benchmark — SYNTHETIC data, {recs[0]['clips']} clips, {args.steps} steps, seed {args.seed}, "
          f"{os.cpu_count()} cores, torch threads 1, {time.perf_counter() - t0:.0f} s total")
    cols = ["tokens_per_clip", "reconstruction_sse", "train_seconds", "train_cpu_seconds", "mae_mse", "mean_predictor_mse",
            "probe_subject_pretrained", "probe_subject_random_init", "probe_condition_pretrained",
            "probe_condition_random_init"]
    short = ["tokens/clip", "tokenizer_SSE", "train_wall_s", "train_cpu_s", "MAE_MSE", "mean_pred_MSE",
             "subj_pretrain", "subj_random", "cond_pretrain", "cond_random"]
    print("patching  " + "  ".join(f"{c:>14}" for c in short))
    for name in ("dynamic", "uniform", "random"):
        print(f"{name:9} " + "  ".join(f"{by[name][c]:>14.4g}" for c in cols))
    print("ratios (SYNTHETIC):")
    print(f"  dynamic / uniform tokens          {d['tokens_per_clip'] / u['tokens_per_clip']:.3f}   (claim <= 0.85)")
    print(f"  dynamic / random tokeniser SSE    {d['reconstruction_sse'] / r['reconstruction_sse']:.3f}   "
          f"(equal token count; claim < 0.5)")
    print(f"  dynamic / uniform MAE MSE         {d['mae_mse'] / u['mae_mse']:.3f}   (claim <= 1.10; relative to the "
          f"mean predictor {(d['mae_mse'] / d['mean_predictor_mse']) / (u['mae_mse'] / u['mean_predictor_mse']):.3f})")
    print(f"  dynamic / uniform train CPU time  {d['train_cpu_seconds'] / u['train_cpu_seconds']:.3f}   (claim < 1; "
          f"wall {d['train_seconds'] / u['train_seconds']:.3f}, noisy on a shared machine)")
    for name in ("dynamic", "uniform", "random"):
        print(f"  {name:8} MAE MSE / mean predictor  {by[name]['mae_mse'] / by[name]['mean_predictor_mse']:.3f}   "
              f"(claim < 1)")
        print(f"  {name:8} probe gain, subject {by[name]['probe_subject_gain_points']:+.1f} pts, "
              f"condition {by[name]['probe_condition_gain_points']:+.1f} pts   (claim >= +10 on a task)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(recs, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
