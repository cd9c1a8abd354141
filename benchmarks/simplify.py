"""Benchmark the simplify engine against sympy.simplify and measure its throughput.

Reconstructs the speed/efficacy comparison of Saegert & Köthe, "Breaking the
Simplification Bottleneck in Amortized Neural Symbolic Regression" (ICML 2026, arXiv
2602.08885) with our own engine.  Usage:

    .venv/bin/python benchmarks/simplify.py --n 1000 --seed 0 [--throughput-n 100000]

Prints one table: median per-expression speed ratio SymPy/ours, mean output/input length
ratio for both, rate of outputs longer than the input, SymPy timeouts, the core count, and
the throughput (expressions/s) of ``simplify_many`` with 1 process and a 2-worker pool.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from mlx26.core.simplify import bench, throughput


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--max-ops", type=int, default=10)
    ap.add_argument("--mode", default="sound", choices=["sound", "lossy"])
    ap.add_argument("--throughput-n", type=int, default=100_000)
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    args = ap.parse_args(argv)

    r = bench(n=args.n, seed=args.seed, timeout=args.timeout, max_ops=args.max_ops, mode=args.mode,
              progress=lambda s: print(s, file=sys.stderr, flush=True))
    tp = []
    if args.throughput_n > 0:
        for w in (1, 2):
            tp.append(throughput(n=args.throughput_n, seed=args.seed, workers=w, max_ops=args.max_ops, mode=args.mode))
    rows = [
        ("expressions (compared / undefined skipped)", f"{r['rows']} / {r['undefined']}"),
        ("median speed ratio SymPy/ours", f"{r['median_speed_ratio']:.0f}x"),
        ("median time ours / SymPy [ms]", f"{r['ours_median_ms']:.3f} / {r['sympy_median_ms']:.1f}"),
        ("mean length ratio out/in ours", f"{r['ours_len_ratio']:.3f}"),
        ("mean length ratio out/in SymPy", f"{r['sympy_len_ratio']:.3f}"),
        ("outputs longer than input ours", f"{100 * r['ours_longer_rate']:.1f}%"),
        ("outputs longer than input SymPy", f"{100 * r['sympy_longer_rate']:.1f}%"),
        ("SymPy timeouts (> {:.1f} s) / errors".format(r["timeout"]), f"{r['sympy_timeouts']} / {r['sympy_errors']}"),
        ("cores", str(os.cpu_count())),
    ]
    for t in tp:
        rows.append((f"throughput ours, {t['workers']} worker(s), n={t['n']}", f"{t['expr_per_s']:.0f} expr/s"))
    w = max(len(k) for k, _ in rows)
    print(f"simplify benchmark (n={args.n}, seed={args.seed}, mode={args.mode}, max_ops={args.max_ops})")
    print("-" * (w + 20))
    for k, v in rows:
        print(f"{k:<{w}}  {v}")
    if args.json:
        print(json.dumps({"bench": r, "throughput": tp}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
