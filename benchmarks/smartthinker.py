"""SmartThinker vs accuracy-only GRPO vs the Kimi-1.5 length reward, from one shared warm-up.

    python benchmarks/smartthinker.py [--warmup-steps 600] [--max-steps 60] [--seed 0] [--out out/bench-smartthinker]

(``make bench-smartthinker`` = ``make bench-train-grpo``.) One SFT warm-up of ``tiny-llama`` on
mixed-verbosity arithmetic chains, then three GRPO runs (TRL's GRPOTrainer, CPU) that start from
that same checkpoint with the same prompts and seed and differ only in the length reward. Prints,
side by side, mean completion length and accuracy on held-out problems before and after GRPO
(greedy and sampled decoding) and the ratios after/before. The data is SYNTHETIC (the zoo's
arithmetic generator) and the model a 1.4M-parameter one trained here: the figures say how the
rewards steer a tiny policy, not what they do to a reasoning LLM on competition maths.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from _results import record


def reward_check(groups: int = 300, seed: int = 0) -> dict:
    """The reward against its definition: the paper's worked example and the group-mean guarantee on random groups."""
    import random

    from mlx26.core.smartthinker import rewards as R

    lengths, correct = [100, 120, 300, 400, 90, 500, 250, 350], [True, True, True, False, False, True, False, True]
    res = R.smartthinker(lengths, correct)
    worked = {"l_opt": res.l_opt, "alpha": res.alpha, "mean_reward": sum(res.rewards) / len(res.rewards),
              "wrong_rewards_zero": all(r == 0.0 for r, c in zip(res.rewards, correct, strict=True) if not c)}
    rng, mixed, held = random.Random(seed), 0, 0
    for _ in range(groups):
        n = rng.randint(2, 10)
        ls, cs = [rng.randint(5, 400) for _ in range(n)], [rng.random() < 0.5 for _ in range(n)]
        r = R.smartthinker(ls, cs).rewards
        if 0 < sum(cs) < n:
            mixed += 1
            held += min(x for x, c in zip(r, cs, strict=True) if c) >= sum(r) / n - 1e-6
    return {"worked_example": worked, "random_groups": groups, "mixed_groups": mixed, "guarantee_holds": held}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warmup-steps", type=int, default=600)
    ap.add_argument("--max-steps", type=int, default=60)
    ap.add_argument("--eval-problems", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default="smartthinker,none,kimi")
    ap.add_argument("--out", default="out/bench-smartthinker")
    args = ap.parse_args(argv)

    from mlx26.core.smartthinker.grpo import settings, train

    out = Path(args.out)
    methods = args.methods.split(",")
    t0 = time.perf_counter()
    quiet = lambda rec: None  # noqa: E731  (records are in each run's metrics.jsonl)
    warm = settings("bench", length_reward="none", max_steps=0, warmup_steps=args.warmup_steps,
                    eval_problems=args.eval_problems, seed=args.seed, out=str(out / "warmup"))
    train(warm, quiet, force=True)
    t_warm = time.perf_counter() - t0
    print(f"warm-up: {args.warmup_steps} SFT steps in {t_warm:.0f} s", file=sys.stderr)
    rows, times = [], {}
    for method in methods:
        t1 = time.perf_counter()
        s = settings("bench", length_reward=method, model=str(out / "warmup" / "warmup"), warmup_steps=0,
                     max_steps=args.max_steps, eval_problems=args.eval_problems, seed=args.seed,
                     out=str(out / method))
        summary = train(s, quiet, force=True)
        times[method] = time.perf_counter() - t1
        metrics = [json.loads(line) for line in (out / method / "metrics.jsonl").read_text().splitlines()]
        grpo = [m for m in metrics if m.get("phase") == "grpo"]
        alphas = [m["alpha"] for m in grpo if "alpha" in m]
        for decode in ("greedy", "sample"):
            b, a = summary["before"][decode], summary["after"][decode]
            rows.append({"method": method, "decode": decode, "len_before": b["mean_length"],
                         "len_after": a["mean_length"], "len_ratio": a["mean_length"] / b["mean_length"],
                         "acc_before": b["accuracy"], "acc_after": a["accuracy"],
                         "acc_delta_pts": 100 * (a["accuracy"] - b["accuracy"])})
        rows[-1]["train_len_first5"] = sum(m["length"] for m in grpo[:5]) / max(1, len(grpo[:5]))
        rows[-1]["train_len_last5"] = sum(m["length"] for m in grpo[-5:]) / max(1, len(grpo[-5:]))
        rows[-1]["mean_alpha"] = sum(alphas) / len(alphas) if alphas else None
        print(f"{method}: {args.max_steps} GRPO steps in {times[method]:.0f} s", file=sys.stderr)

    print(f"# SmartThinker benchmark — SYNTHETIC arithmetic, tiny-llama (1.4M params), {os.cpu_count()} cores; "
          f"warm-up {args.warmup_steps} SFT steps, {args.max_steps} GRPO steps x 4 prompts x 8 generations, "
          f"{args.eval_problems} held-out problems, seed {args.seed}")
    head = ("method", "decode", "len_before", "len_after", "len_ratio", "acc_before", "acc_after", "acc_delta_pts")
    print(" | ".join(f"{h:>13}" for h in head))
    for r in rows:
        print(" | ".join(f"{r[h]:>13.3f}" if isinstance(r[h], float) else f"{r[h]:>13}" for h in head))
    for r in rows[1::2]:
        alpha = "n/a" if r["mean_alpha"] is None else f"{r['mean_alpha']:.4f}"
        print(f"{r['method']}: training-batch mean length, first 5 steps {r['train_len_first5']:.1f} → "
              f"last 5 steps {r['train_len_last5']:.1f}; mean alpha of mixed groups {alpha}")
    base = times.get("none")
    if base:
        print("time ratio vs none: " + ", ".join(f"{m} {t / base:.2f}" for m, t in times.items()))
    (out / "bench.json").write_text(json.dumps({"rows": rows, "seconds": times, "warmup_seconds": t_warm,
                                                "cpu_count": os.cpu_count(), "args": vars(args)}, indent=2) + "\n")
    base_row = {f"{r['method']}_{r['decode']}": r for r in rows}
    check = reward_check()
    w = check["worked_example"]
    print(f"reward check: worked example l_opt {w['l_opt']:g}, alpha {w['alpha']:.5f}, mean reward "
          f"{w['mean_reward']:.4f}; correct >= group mean in {check['guarantee_holds']} of {check['mixed_groups']} "
          f"mixed random groups")
    record("smartthinker" if args.seed == 0 else f"smartthinker_seed{args.seed}",
           {"reward_check": check, "rows": base_row, "seconds": times, "warmup_seconds": t_warm,
            "time_vs_none": {m: t / base for m, t in times.items()} if base else None,
            **{k: getattr(args, k) for k in ("warmup_steps", "max_steps", "eval_problems", "seed")}},
           data=[{"name": "synthetic arithmetic", "source": f"SYNTHETIC: the zoo's arithmetic generator (seed {args.seed}; "
                  f"{args.eval_problems} held-out problems)"},
                 {"name": "tiny-llama", "source": "zoo tiny-llama (1.4 M parameters, trained locally), "
                  f"{args.warmup_steps} SFT warm-up steps here"}])
    return 0


if __name__ == "__main__":
    sys.exit(main())
