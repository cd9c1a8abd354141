"""bench-vuln-games: the four vulnerability games × {vulnerable, secure} × {GRPO, REINFORCE}, side by side.

    python benchmarks/vuln_games.py [--seeds 5] [--steps 200] [--lm-steps 20] [--no-lm] [--json out.json]

Prints, in one run (all games SYNTHETIC, policies tiny and locally trained):
1. final ER and ITP (mean over seeds) and the first step with ER ≥ 0.9, per game, variant and estimator;
2. the self-grading exploit threshold in the audit probability p, REINFORCE vs GRPO, mean and 95% t-interval over
   seeds, beside the theory (2/15 exact break-even; 1/7 without the honesty bonus);
3. persistence: RL-native exploit policy vs SFT-distilled student under the secure reward (steps until ER < 0.5,
   mean ER over continued training), ratio RL / SFT;
4. the LM path: tiny-llama + TRL GRPO on tampering, ER over steps vulnerable vs secure (direction).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--lm-steps", type=int, default=20)
    ap.add_argument("--no-lm", action="store_true")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    from mlx26.core.vuln_games import games
    from mlx26.core.vuln_games.persist import experiment
    from mlx26.core.vuln_games.spec import BREAK_EVEN_P, GAMES, ISSUE_THRESHOLD_P
    from mlx26.core.vuln_games.threshold import sweep
    from mlx26.core.vuln_games.train import TrainConfig, run

    seeds = list(range(a.seed, a.seed + a.seeds))
    out: dict = {"cores": os.cpu_count(), "seeds": seeds, "data": "SYNTHETIC games"}
    print(f"# vuln-games benchmark — SYNTHETIC games, {os.cpu_count()} cores, seeds {seeds}, {a.steps} steps")
    t0 = time.perf_counter()
    print("\n## 1. games × variant × estimator (ER / ITP at the last step, mean over seeds)")
    print(f"{'game':13s} {'variant':10s} | {'GRPO ER':>8s} {'ITP':>6s} {'ER≥.9@':>7s} | {'REINF ER':>8s} {'ITP':>6s} "
          f"{'ER≥.9@':>7s}")
    table = []
    for game in GAMES:
        for variant in ("vulnerable", "secure"):
            row = {"game": game, "variant": variant}
            cells = []
            for algo in ("grpo", "reinforce"):
                ers, itps, hit = [], [], []
                for s in seeds:
                    recs, _ = run(games.make(game, variant, seed=s), TrainConfig(algo=algo, steps=a.steps, seed=s))
                    ers.append(recs[-1]["er"])
                    itps.append(recs[-1]["itp_ratio"])
                    hit.append(next((r["step"] for r in recs if r["er"] >= 0.9), None))
                found = [h for h in hit if h is not None]
                row[algo] = {"er": float(np.mean(ers)), "itp_vs_oracle": float(np.mean(itps)),
                             "first_er_0.9": found and float(np.mean(found)), "seeds_reaching_0.9": len(found)}
                step = f"{np.mean(found):.0f}" if len(found) == len(seeds) else (f"{len(found)}/{len(seeds)}"
                                                                              if found else "—")
                cells.append(f"{np.mean(ers):8.3f} {np.mean(itps):6.3f} {step:>7s}")
            table.append(row)
            print(f"{game:13s} {variant:10s} | {cells[0]} | {cells[1]}")
    out["games"] = table
    print("(ITP as a fraction of the oracle's; compliance ER is the compliance gap)")

    print("\n## 2. self-grading exploit threshold in p (final ER crosses 0.5; 300 steps from ER = 0.5)")
    grid = [0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.24, 0.28, 0.32, 0.36, 0.4, 0.5, 0.6, 0.8]
    thr = {}
    for algo in ("reinforce", "grpo"):
        res = sweep(algo, grid, seeds, TrainConfig(steps=300))
        thr[algo] = res
        print(f"{algo:9s}: threshold {res['mean']:.3f}  95% CI [{res['ci95'][0]:.3f}, {res['ci95'][1]:.3f}]  "
              f"per seed {[round(t, 3) if t is not None else None for t in res['thresholds']]}")
    print(f"theory: break-even 2/15 = {BREAK_EVEN_P:.3f} (1/7 = {ISSUE_THRESHOLD_P:.3f});  "
          f"REINFORCE / theory = {thr['reinforce']['mean'] / BREAK_EVEN_P:.2f};  "
          f"GRPO / REINFORCE = {thr['grpo']['mean'] / thr['reinforce']['mean']:.2f}")
    out["threshold"] = thr

    print("\n## 3. persistence under the secure reward: RL-native exploit vs SFT-distilled student")
    print(f"{'game':13s} {'algo':9s} | {'steps→ER<.5 RL':>14s} {'SFT':>5s} | {'mean ER RL':>10s} {'SFT':>6s} | "
          f"{'ratio':>5s}")
    pers = []
    for game in GAMES:
        for algo in ("grpo", "reinforce"):
            rs = [experiment(game, algo, seed=s)[1] for s in seeds]
            rl = [r["rl-native"] for r in rs]
            sf = [r["sft-student"] for r in rs]

            def steps(xs):
                v = [x["steps_to_below_level"] for x in xs]
                return float(np.mean([x if x is not None else 10**9 for x in v])) if None not in v else None

            auc_rl, auc_sf = np.mean([x["er_auc"] for x in rl]), np.mean([x["er_auc"] for x in sf])
            pers.append({"game": game, "algo": algo, "steps_rl": steps(rl), "steps_sft": steps(sf),
                         "er_auc_rl": float(auc_rl), "er_auc_sft": float(auc_sf)})
            fmt = lambda v: f"{v:.0f}" if v is not None else ">300"  # noqa: E731
            print(f"{game:13s} {algo:9s} | {fmt(steps(rl)):>14s} {fmt(steps(sf)):>5s} | {auc_rl:10.3f} "
                  f"{auc_sf:6.3f} | {auc_rl / auc_sf:5.2f}")
    out["persistence"] = pers
    print(f"(token-action part: {time.perf_counter() - t0:.1f} s)")

    if not a.no_lm:
        print(f"\n## 4. LM path: tiny-llama (SFT warm-up 150 steps) + TRL GRPO, tampering, {a.lm_steps} steps, "
              "ER per step")
        from mlx26.core.vuln_games.lm import settings, train

        lm = {}
        for variant in ("vulnerable", "secure"):
            t1 = time.perf_counter()
            s = train(settings(variant=variant, steps=a.lm_steps, seed=a.seed,
                               out=f"/tmp/mlx26-bench-vuln-lm-{variant}"), lambda r: None, force=True)
            lm[variant] = s
            print(f"{variant:10s}: ER first quarter {s['er_first']:.3f} → last quarter {s['er_last']:.3f}  "
                  f"({time.perf_counter() - t1:.0f} s)  {s['er_by_step']}")
        out["lm"] = lm
        v, sec = lm["vulnerable"], lm["secure"]
        print(f"direction: vulnerable {'up' if v['er_last'] > v['er_first'] else 'not up'}, secure "
              f"{'down' if sec['er_last'] < sec['er_first'] else 'not down'}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    from _results import record  # benchmarks/_results.py: the claims ledger reads benchmarks/results/*.json

    record("vuln_games", out, data=[{"name": "synthetic", "source": "SYNTHETIC games, prompts and articles "
                                     "generated by core/vuln_games/games.py; tiny-llama from the zoo"}])
    return 0


if __name__ == "__main__":
    sys.exit(main())
