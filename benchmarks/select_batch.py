"""Benchmark of `mlx26 select-batch train`: PartitionSel vs independent vs GREATS vs random (the anchor).

Usage:  python benchmarks/select_batch.py [--steps 200] [--out out/select-batch/bench] [--refresh 50]
        [--reservoir 8 16 --anchor-every 64 --feature-len 16] [--methods random partitionsel] [--seeds 3] [--json]

One process, one seed, the same candidate stream for every method: the zoo's tiny-llama
(trained on stdlib code) is fine-tuned for --steps AdamW steps on the three-domain demo mix
(pool 50/30/20 % code/prose/arithmetic from the corpora's train splits), each minibatch of 8
selected from 8 × 8 candidates. The validation mix (a third per domain, held-out splits) is
split in two, alternating within each domain (both halves have the same mix): the first half
guides selection and gives the logged curve, the second half ("test") is never seen by the
selector. Prints, per method, the final validation and test
loss and their ratios to random (target < 1), and the selection time as a fraction of the
step time (target < 25 %), with and without the gradient features. PartitionSel runs three
times: with the exact per-example backward (``vmap``, the old path), with the closed-form
LM-head features (``ghost``, the default) and with ghost features refreshed every --refresh
steps (stale features, an explicit option) and in the amortised mode (--reservoir K: unselected
candidates wait ≤ K steps with their features, anchors every --anchor-every steps, features on the
first --feature-len tokens); the same linear sketch is used on both paths, so
the first two differ in time only (up to float rounding). A last row gives the floor of
fresh features: a plain no-grad forward over the step's candidates and anchors as a
fraction of the step. Also printed: how many distinct examples each run trained on, and the
final validation and test loss per domain as ratios to random. Protocol variations for the
held-out sweep: --pool-size (the default 12 800 makes every candidate of a 200-step run new),
--n-val, --train-weights (default: train on the selection's weights), --eta, --grad-params.
Writes one JSONL log per run and, when matplotlib is installed, curves.png. TINY MODEL, LOCAL
CORPORA; --seeds averages over several seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from _results import record
from mlx26.core.select_batch.data import demo_rows, parse_rows
from mlx26.core.select_batch.train import SelectTrainer, TrainConfig

METHODS = ("random", "partitionsel", "independent", "greats")


def variants(methods: tuple[str, ...], refresh: tuple[int, ...], exact: bool,
             grad_params: str = "last-layer", reservoir: tuple[int, ...] = ()) -> list[tuple[str, str, str, int, int]]:
    """(label, method, feature path, refresh, reservoir) of every run; ``auto`` is the closed form for the head only."""
    auto = "ghost" if grad_params == "last-layer" else "vmap"
    exact = exact and auto == "ghost"  # other parameter sets have only the vmap path
    out = []
    for m in methods:
        if m == "partitionsel" and exact:
            out.append(("partitionsel/vmap", m, "vmap", 1, 0))
        out.append((m if m == "random" else f"{m}/{auto}", m, "auto", 1, 0))
        if m == "partitionsel":
            out.extend((f"partitionsel/{auto} R={R}", m, "auto", R, 0) for R in refresh if R > 1)
            out.extend((f"partitionsel/{auto} K={K}", m, "auto", 1, K) for K in reservoir if K > 0)
    return out


def run(steps: int, out: Path, seed: int, methods: tuple[str, ...], budget_mode: str = "proportional",
        refresh: tuple[int, ...] = (50, 200), exact: bool = True, eval_every: int = 5, n_val: int = 144,
        randomized: bool = False, weighted: bool = True, eta: float = 0.1,
        grad_params: str = "last-layer", pool_size: int = 12_800, reservoir: tuple[int, ...] = (),
        anchor_every: int = 0, feature_len: int = 0) -> dict[str, dict]:
    out.mkdir(parents=True, exist_ok=True)
    pool = parse_rows(enumerate(demo_rows("train", pool_size, seed), 1), "demo pool")
    val_rows, test_rows = stratified_halves(demo_rows("val", 2 * n_val, seed))
    val = parse_rows(enumerate(val_rows, 1), "demo val")
    test = parse_rows(enumerate(test_rows, 1), "demo test")
    results = {}
    for label, method, path, R, K in variants(methods, refresh, exact, grad_params, reservoir):
        start = time.perf_counter()
        amortised = {"reservoir": K, "anchor_every": anchor_every, "feature_len": feature_len} if K else {}
        cfg = TrainConfig(method=method, steps=steps, seed=seed, budget_mode=budget_mode, features=path, refresh=R,
                          eval_every=eval_every, randomized=randomized, weighted=weighted, eta=eta,
                          grad_params=grad_params, **amortised)
        trainer = SelectTrainer(pool, val, cfg, test)
        name = label.replace("/", "-").replace(" ", "-").replace("=", "")
        with open(out / f"{name}-seed{seed}.jsonl", "w", encoding="utf-8") as log:
            for record in trainer.run():
                log.write(json.dumps(record) + "\n")
        results[label] = {**trainer.summary(), "wall_s": time.perf_counter() - start,
                          "curve": [(r["step"], r["val_loss"]) for r in trainer.records if r["val_loss"] is not None]}
        if method != "random":
            results[label]["forward_floor"] = forward_floor(trainer, cfg.batch * cfg.buffer)
        print(f"  {label} (seed {seed}): done in {results[label]['wall_s']:.0f} s", file=sys.stderr)
    return results


def limit_blas_threads() -> object | None:
    """Give numpy/scipy's BLAS (the greedy's small products and NNLS refits) the torch thread count, so "one
    thread" means one thread: with its default of one thread per core next to another job, the greedy took
    2–3× longer in dev runs on the 2-core machine. Needs threadpoolctl (scikit-learn's dependency); without it
    BLAS keeps its default. Returns the limiter (keep it alive) or None."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("threadpoolctl is not installed: numpy's BLAS keeps its own thread count", file=sys.stderr)
        return None
    from mlx26.core.common.threads import torch_threads

    return threadpool_limits(limits=torch_threads() or os.cpu_count() or 1, user_api="blas")


def stratified_halves(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """Alternate the rows of each domain between validation and test, so both halves have the same mix."""
    seen: dict[str, int] = {}
    halves: tuple[list[dict], list[dict]] = ([], [])
    for row in rows:
        k = seen.get(row["domain"], 0)
        seen[row["domain"]] = k + 1
        halves[k % 2].append(row)
    return halves


def forward_floor(trainer: SelectTrainer, n_cand: int) -> float:
    """A plain no-grad forward (logits) over one step's candidates and anchors, as a fraction of
    (that + the mean update time): what fresh features cost even if the gradients were free."""
    import torch
    from mlx26.core.select_batch.features import FEATURE_CHUNK

    texts = [it.text for it in trainer.items[:n_cand]] + [it.text for it in trainer.val_items]
    trainer.model.eval()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        with torch.no_grad():
            for i in range(0, len(texts), FEATURE_CHUNK):
                ids, mask = trainer.feat.encode(texts[i:i + FEATURE_CHUNK])
                trainer.model(input_ids=ids, attention_mask=mask)
        times.append(time.perf_counter() - start)
    fwd = min(times)
    update = trainer.summary()["update_s_mean"]
    return fwd / (fwd + update)


SYNTHETIC_DATA = {"name": "synthetic gradient pools", "source": "SYNTHETIC: 3 domains of 60/45/30 random gradients, "
                  "d = 32, 40 seeds (the utility table)"}


def synthetic_table(seeds: int = 40, budget: int = 12) -> dict:
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
    agnostic = np.mean(np.array(util["gradmatch"]) >= np.array(util["partitionsel"]))
    return {"seeds": seeds, "budget": budget, "partitionsel_beats_independent": float(wins),
            "gradmatch_at_least_partitionsel": float(agnostic),
            **{m: {"utility": float(np.mean(util[m])), "vs_random": float(np.mean(util[m])) / anchor,
                   "conflicting_pairs": float(np.mean(pairs[m]))} for m in methods}}


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
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0, help="First seed.")
    parser.add_argument("--seeds", type=int, default=1, help="Number of seeds (seed, seed+1, …); ratios are averaged.")
    parser.add_argument("--out", type=Path, default=Path("out/select-batch/bench"))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--budget-mode", default="proportional", choices=("proportional", "equal"),
                        help="Per-domain budgets of the budgeted methods (partitionsel, independent, random).")
    parser.add_argument("--refresh", type=int, nargs="*", default=[50, 200],
                        help="Also run PartitionSel with features refreshed every R steps, for each R > 1.")
    parser.add_argument("--reservoir", type=int, nargs="*", default=[8, 16],
                        help="Also run PartitionSel in the amortised mode (reservoir of unselected candidates, "
                             "≤ K steps old), for each K > 0.")
    parser.add_argument("--anchor-every", type=int, default=64, help="Amortised runs: anchors recomputed every N steps.")
    parser.add_argument("--feature-len", type=int, default=16, help="Amortised runs: features on the first T tokens.")
    parser.add_argument("--no-exact", action="store_true", help="Skip the PartitionSel run on the exact vmap path.")
    parser.add_argument("--eval-every", type=int, default=5, help="Validation/test loss every N steps (not timed).")
    parser.add_argument("--n-val", type=int, default=144, help="Validation rows (guide selection); as many test rows.")
    parser.add_argument("--randomized", action="store_true",
                        help="Randomized greedy (draws from the per-domain shortlists, as upstream) for every method.")
    parser.add_argument("--train-weights", default="selection", choices=("selection", "uniform"),
                        help="Train on the selection's weights (GradMatch-style; random and GREATS have unit weights) "
                             "or on uniform weights.")
    parser.add_argument("--eta", type=float, default=0.1, help="Learning rate η of the utility.")
    parser.add_argument("--grad-params", default="last-layer", choices=("last-layer", "last-block", "lora"),
                        help="Parameters whose per-example gradients are the features.")
    parser.add_argument("--pool-size", type=int, default=12_800,
                        help="Pool rows; ≥ steps × batch × buffer (12 800 at the defaults) makes every candidate new.")
    parser.add_argument("--json", action="store_true", help="Print the results as JSON too.")
    parser.add_argument("--synthetic-only", action="store_true", help="Only the synthetic utility table (seconds).")
    args = parser.parse_args()
    _blas_limit = limit_blas_threads()  # held for the whole run
    synthetic = synthetic_table()
    if args.synthetic_only:
        record("select_batch_synthetic", {"synthetic": synthetic}, data=[SYNTHETIC_DATA])
        return
    if "random" not in args.methods:
        parser.error("the anchor 'random' must be among --methods")
    seeds = list(range(args.seed, args.seed + args.seeds))
    per_seed = {s: run(args.steps, args.out, s, tuple(args.methods), args.budget_mode, tuple(args.refresh),
                       not args.no_exact, args.eval_every, args.n_val, args.randomized,
                       args.train_weights == "selection", args.eta, args.grad_params, args.pool_size,
                       tuple(args.reservoir), args.anchor_every, args.feature_len) for s in seeds}
    labels = list(per_seed[seeds[0]])
    anchor = per_seed[seeds[0]]["random"]
    print(f"select-batch benchmark — tiny-llama, local 3-domain mix ({args.pool_size}-row pool), {args.steps} steps, "
          f"seeds {seeds}, "
          f"{os.cpu_count()} CPU cores, {anchor['threads']} torch thread(s); {args.budget_mode} budgets; "
          f"{args.n_val} validation + {args.n_val} test rows; {'randomized' if args.randomized else 'deterministic'} "
          "greedy; "
          f"{args.train_weights} loss weights; η = {args.eta}; {args.grad_params} features; "
          "anchor: random per domain")
    print(f"{'run':<30}{'unique':>7}{'val loss':>10}{'÷ random':>10}{'test loss':>11}{'÷ random':>10}"
          f"{'select/step':>13}{'greedy/step':>13}{'fresh rows':>12}{'wall s':>8}")

    def mean(label: str, key: str) -> float:
        return float(np.mean([per_seed[s][label][key] for s in seeds]))

    def ratio(label: str, key: str) -> float:
        return float(np.mean([per_seed[s][label][key] / per_seed[s]["random"][key] for s in seeds]))

    for label in labels:
        print(f"{label:<30}{mean(label, 'unique_trained'):>7.0f}"
              f"{mean(label, 'final_val_loss'):>10.4f}{ratio(label, 'final_val_loss'):>10.4f}"
              f"{mean(label, 'final_test_loss'):>11.4f}{ratio(label, 'final_test_loss'):>10.4f}"
              f"{100 * mean(label, 'select_fraction'):>12.1f}%{100 * mean(label, 'greedy_fraction'):>12.2f}%"
              f"{mean(label, 'fresh_rows_mean'):>12.1f}{mean(label, 'wall_s'):>8.0f}")
    domains = sorted(anchor.get("final_test_loss_by_domain") or {})
    if domains:
        print("per-domain loss ÷ random (mean over seeds), val | test: " + ", ".join(domains))
        for label in labels:
            if label == "random":
                continue
            cells = []
            for split in ("val", "test"):
                key = f"final_{split}_loss_by_domain"
                ratios = [np.mean([per_seed[s][label][key][d] / per_seed[s]["random"][key][d] for s in seeds])
                          for d in domains]
                cells.append(" ".join(f"{r:.4f}" for r in ratios))
            print(f"  {label:<26}{cells[0]}  |  {cells[1]}")
    floors = [per_seed[s][lb]["forward_floor"] for s in seeds for lb in labels if "forward_floor" in per_seed[s][lb]]
    if floors:
        print(f"{'floor: no-grad forward':<26}{'':>59}{100 * float(np.mean(floors)):>12.1f}%"
              "   (logits over 64 candidates + anchors, no gradient at all)")
    if len(seeds) > 1:
        for label in labels:
            if label != "random":
                vals = [per_seed[s][label]["final_test_loss"] / per_seed[s]["random"]["final_test_loss"] for s in seeds]
                print(f"  {label}: test ÷ random per seed " + " ".join(f"{v:.4f}" for v in vals))
    print(f"initial val loss {anchor['initial_val_loss']:.4f}, test loss {anchor['initial_test_loss']:.4f} (seed "
          f"{seeds[0]}); targets: loss ratio < 1, selection < 25 % of step time")
    def key(label: str) -> str:
        return label.replace("/", "_").replace(" R=", "_R").replace(" K=", "_K")

    figures: dict = {"synthetic": synthetic, "steps": args.steps, "seeds": seeds, "pool_size": args.pool_size, "n_val": args.n_val,
                     "methods": list(args.methods), "reservoir": list(args.reservoir), "anchor_every": args.anchor_every,
                     "feature_len": args.feature_len, "blas_threads_limited": _blas_limit is not None,
                     "budget_mode": args.budget_mode, "train_weights": args.train_weights, "runs": {}}
    for label in labels:
        figures["runs"][key(label)] = {
            "unique_trained": mean(label, "unique_trained"), "val_loss": mean(label, "final_val_loss"),
            "val_vs_random": ratio(label, "final_val_loss"), "test_loss": mean(label, "final_test_loss"),
            "test_vs_random": ratio(label, "final_test_loss"), "select_fraction": mean(label, "select_fraction"),
            "greedy_fraction": mean(label, "greedy_fraction"), "fresh_rows": mean(label, "fresh_rows_mean"),
            "test_vs_random_per_seed": [per_seed[s][label]["final_test_loss"] / per_seed[s]["random"]["final_test_loss"]
                                        for s in seeds],
            "val_vs_random_per_seed": [per_seed[s][label]["final_val_loss"] / per_seed[s]["random"]["final_val_loss"]
                                       for s in seeds]}
    if floors:
        figures["forward_floor"] = float(np.mean(floors))
    name = "select_batch" if seeds == [0] else f"select_batch_seed{seeds[0]}-{seeds[-1]}"
    if args.budget_mode != "proportional":
        name += f"_{args.budget_mode}"
    record(name, figures, data=[
        {"name": "select-batch demo mix", "source": f"the zoo corpora's train splits (code / prose / arithmetic, "
         f"{args.pool_size}-row pool) and held-out splits ({args.n_val} validation + {args.n_val} test rows); local data"},
        {"name": "tiny-llama", "source": "zoo tiny-llama (1.4 M parameters, trained locally on stdlib code)"},
        SYNTHETIC_DATA])
    png = args.out / "curves.png"
    print(f"logs: {args.out}/<run>-seed<S>.jsonl; plot: " + (str(png) if plot(per_seed[seeds[0]], png) else
                                                            "skipped (matplotlib not installed)"))
    if args.json:
        print(json.dumps({s: {m: {k: v for k, v in r.items() if k != "curve"} for m, r in res.items()}
                          for s, res in per_seed.items()}, default=str))


if __name__ == "__main__":
    main()
