"""Benchmark of `mlx26 select-batch train`: PartitionSel vs independent vs GREATS vs random (the anchor).

Usage:  python benchmarks/select_batch.py [--steps 200] [--out out/select-batch/bench] [--json]

One process, one seed, the same candidate stream for every method: the zoo's tiny-llama
(trained on stdlib code) is fine-tuned for --steps AdamW steps on the three-domain demo mix
(pool 50/30/20 % code/prose/arithmetic from the corpora's train splits), each minibatch of 8
selected from 8 × 8 candidates. The validation mix (a third per domain, held-out splits) is
split in two: the first half guides selection and gives the logged curve, the second half
("test") is never seen by the selector. Prints, per method, the final validation and test
loss and their ratios to random (target < 1), and the selection time as a fraction of the
step time (target < 25 %), with and without the gradient features. Writes one JSONL log per
method and, when matplotlib is installed, curves.png. TINY MODEL, LOCAL CORPORA, ONE SEED.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from mlx26.core.select_batch.data import demo_rows, parse_rows
from mlx26.core.select_batch.train import SelectTrainer, TrainConfig

METHODS = ("random", "partitionsel", "independent", "greats")


def run(steps: int, out: Path, seed: int, methods: tuple[str, ...], budget_mode: str = "proportional"
        ) -> dict[str, dict]:
    out.mkdir(parents=True, exist_ok=True)
    pool = parse_rows(enumerate(demo_rows("train", 1200, seed), 1), "demo pool")
    held = demo_rows("val", 48, seed)
    val = parse_rows(enumerate(held[::2], 1), "demo val")
    test = parse_rows(enumerate(held[1::2], 1), "demo test")
    results = {}
    for method in methods:
        start = time.perf_counter()
        trainer = SelectTrainer(pool, val, TrainConfig(method=method, steps=steps, seed=seed, budget_mode=budget_mode), test)
        with open(out / f"{method}.jsonl", "w", encoding="utf-8") as log:
            for record in trainer.run():
                log.write(json.dumps(record) + "\n")
        results[method] = {**trainer.summary(), "wall_s": time.perf_counter() - start,
                           "curve": [(r["step"], r["val_loss"]) for r in trainer.records if r["val_loss"] is not None]}
        print(f"  {method}: done in {results[method]['wall_s']:.0f} s", file=sys.stderr)
    return results


def synthetic_table(seeds: int = 40, budget: int = 12) -> None:
    """Utility F(S) of every method on the synthetic 3-domain gradient pools, ratio to random."""
    import numpy as np
    from mlx26.core.select_batch import QuadraticUtility, allocate_budgets, select
    from mlx26.core.select_batch.budgets import domain_counts
    from mlx26.core.select_batch.synthetic import make_pool

    methods = ("partitionsel", "independent", "gradmatch", "greats", "random")
    util: dict[str, list[float]] = {m: [] for m in methods}
    pairs: dict[str, list[int]] = {m: [] for m in methods}
    for seed in range(seeds):
        pool = make_pool(seed)
        u = QuadraticUtility.from_features(pool.G, pool.anchors, eta=0.1)
        budgets = allocate_budgets(domain_counts(pool.domains), budget)
        for m in methods:
            sel = select(u, pool.domains, budget, m, budgets, seed=seed)
            util[m].append(sel.utility)
            pairs[m].append(sel.conflicting_pairs)
    anchor = float(np.mean(util["random"]))
    print(f"synthetic gradient pools (3 domains, 60/45/30 items, d = 32), B = {budget}, {seeds} seeds; anchor: random")
    print(f"{'method':<13}{'mean U':>9}{'÷ random':>10}{'conflicting pairs':>19}")
    for m in methods:
        print(f"{m:<13}{np.mean(util[m]):>9.4f}{np.mean(util[m]) / anchor:>10.4f}{np.mean(pairs[m]):>19.2f}")
    wins = np.mean(np.array(util["partitionsel"]) > np.array(util["independent"]))
    print(f"partitionsel > independent in {100 * wins:.0f} % of seeds")


def plot(results: dict[str, dict], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method, r in results.items():
        xs, ys = zip(*r["curve"], strict=True)
        ax.plot(xs, ys, label=method, lw=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats/token)")
    ax.set_title("select-batch train: tiny-llama on the local 3-domain mix (one seed)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("out/select-batch/bench"))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--budget-mode", default="proportional", choices=("proportional", "equal"),
                        help="Per-domain budgets of the budgeted methods (partitionsel, independent, random).")
    parser.add_argument("--json", action="store_true", help="Print the results as JSON too.")
    parser.add_argument("--synthetic-only", action="store_true", help="Only the synthetic utility table (seconds).")
    args = parser.parse_args()
    synthetic_table()
    if args.synthetic_only:
        return
    if "random" not in args.methods:
        parser.error("the anchor 'random' must be among --methods")
    results = run(args.steps, args.out, args.seed, tuple(args.methods), args.budget_mode)
    anchor = results["random"]
    print(f"select-batch benchmark — tiny-llama, local 3-domain mix, {args.steps} steps, seed {args.seed}, "
          f"{os.cpu_count()} CPU cores, {anchor['threads']} torch thread(s); {args.budget_mode} budgets; "
          "anchor: random per domain")
    print(f"{'method':<13}{'val loss':>10}{'÷ random':>10}{'test loss':>11}{'÷ random':>10}"
          f"{'select/step':>13}{'greedy/step':>13}{'wall s':>8}")
    for method, r in results.items():
        print(f"{method:<13}{r['final_val_loss']:>10.4f}{r['final_val_loss'] / anchor['final_val_loss']:>10.4f}"
              f"{r['final_test_loss']:>11.4f}{r['final_test_loss'] / anchor['final_test_loss']:>10.4f}"
              f"{100 * r['select_fraction']:>12.1f}%{100 * r['greedy_fraction']:>12.2f}%{r['wall_s']:>8.0f}")
    print(f"initial val loss {anchor['initial_val_loss']:.4f}, test loss {anchor['initial_test_loss']:.4f}; "
          "targets: loss ratio < 1, selection < 25 % of step time")
    png = args.out / "curves.png"
    print(f"logs: {args.out}/<method>.jsonl; plot: " + (str(png) if plot(results, png) else
                                                         "skipped (matplotlib not installed)"))
    if args.json:
        print(json.dumps({m: {k: v for k, v in r.items() if k != "curve"} for m, r in results.items()}, default=str))


if __name__ == "__main__":
    main()
