"""RAPC benchmark (reconstruction of Pan et al., ICML 2026): RAPC vs PPO-Lagrangian vs weighted-sum
PPO on mlx26/ra-point at p = 0.9, same seeds and budget, side by side in one run; the exact LP
optimum on mlx26/ra-grid beside RAPC there; and an end-to-end RAPC run on mlx26/ra-reacher.

    .venv/bin/python benchmarks/rapc.py                       # defaults below (≈ 15-25 CPU-min)
    .venv/bin/python benchmarks/rapc.py --seeds 1 --steps 8192 --reacher-steps 2048   # quick look

Every policy is scored by the same reach-avoid evaluation (deterministic policy, --episodes
episodes, success = reach G before F, cost from info["cost"]), whatever reward it was trained on.
Reports success (with Wilson 95% bounds), unsafe share, mean cost, wall time, and the ratios
RAPC / PPO-Lagrangian. Absolute times on a shared 2-core machine are noise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
from _results import record

METHODS = {
    "rapc": ("rapc", {"compensation": "adaptive", "j_estimate": "returns"}),
    "ppo-lag": ("ppo-lag", {}),
    "weighted(w_goal=5,w_unsafe=0)": ("ppo", {"reward": "weighted", "w_goal": "5", "w_unsafe": "0"}),
    "weighted(w_goal=5,w_unsafe=5)": ("ppo", {"reward": "weighted", "w_goal": "5", "w_unsafe": "5"}),
}


def train_and_score(algo: str, env: str, overrides: dict, steps: int, seed: int, episodes: int) -> dict:
    from mlx26.core.rl import checkpoint, registry, runner
    from mlx26.core.rl.envs import make_env
    from mlx26.core.rl.reach_avoid.metrics import evaluate_reach_avoid

    with tempfile.TemporaryDirectory() as out:
        cfg = runner.build_config(algo, env, dict(overrides), steps=steps, seed=seed, eval_episodes=1, out=out)
        t = time.perf_counter()
        train = [r for r in runner.run(cfg) if r["phase"] == "train"]
        wall = time.perf_counter() - t
        state = checkpoint.load(out)
    eval_env = make_env(env)
    policy = registry.module(algo).load_policy(state, eval_env)
    score = evaluate_reach_avoid(eval_env, policy, episodes, seed=10_000 + seed)
    return {**score, "wall_s": wall, "final_lambda": train[-1].get("lambda")}


def grid_part(p: float, steps: int, seed: int, episodes: int) -> dict:
    from mlx26.core.rl.reach_avoid.grid import DEFAULT_LAYOUT, GridModel
    from mlx26.core.rl.reach_avoid.lp import constrained_optimum

    best = constrained_optimum(GridModel(DEFAULT_LAYOUT), p)
    ours = train_and_score("rapc", "mlx26/ra-grid", {"p": str(p), "num_steps": "64", "lr": "2e-3",
                                                     "lambda_lr": "0.1", "compensation": "adaptive"},
                           steps, seed, episodes)
    return {"p": p, "lp_optimal_cost": best["cost"], "lp_p_ra": best["p_ra"], "rapc": ours}


def certify_part(p: float, cert_p: float, steps: int, seed: int = 0, n_check: int = 500) -> dict:
    """`demo-rapc`'s checkpoint (ra-point, p, adaptive compensation), `rl reach-avoid certify --n-mc 200 --p cert_p`
    on it, then every certified state re-checked with n_check independent rollouts on another seed."""
    from mlx26.core.rl import checkpoint, runner
    from mlx26.core.rl.envs import make_env
    from mlx26.core.rl.nets import ActorCritic
    from mlx26.core.rl.reach_avoid.certify import certify_checkpoint
    from mlx26.core.rl.reach_avoid.certify_point import _batch_policy, clopper_pearson, rollout_p_ra

    with tempfile.TemporaryDirectory() as out:
        cfg = runner.build_config("rapc", "mlx26/ra-point", {"p": str(p), "compensation": "adaptive"}, steps=steps,
                                  seed=seed, eval_episodes=50, out=out)
        for _ in runner.run(cfg):
            pass
        rep = certify_checkpoint(out, n_mc=200, p=cert_p, seed=0, confidence=0.95, n_states=300)
        state = checkpoint.load(out)
    agent = ActorCritic(2, state["space"], tuple(state["config"]["hp"]["hidden"]))
    agent.load_state_dict(state["models"]["agent"])
    xs = np.asarray(rep["certified_states"])
    check: dict = {"rollouts": n_check, "seed": 12345}
    if len(xs):
        hits = rollout_p_ra(make_env("mlx26/ra-point").unwrapped.model, _batch_policy(agent, state["space"]), xs,
                            n_check, rep["mc_horizon"], np.random.default_rng(12345))
        _, upper = clopper_pearson(hits, n_check, 0.05 / len(xs))
        check |= {"p_hat_min": float((hits / n_check).min()), "p_hat_below_p": int((hits / n_check < cert_p).sum()),
                  "rejected_at_confidence": int((upper < cert_p).sum())}
    print(f"certify (ra-point checkpoint, {steps} steps, p = {cert_p}): critic claims {rep['critic_claimed']}, "
          f"refuted {rep['critic_claims_refuted']}, certified {rep['certified']}; independent {n_check}-rollout check: "
          f"lowest p̂ {check.get('p_hat_min')}, {check.get('p_hat_below_p')} below p, "
          f"{check.get('rejected_at_confidence')} rejected at the stated confidence")
    return {"p": cert_p, "train_p": p, "steps": steps, "sampled_states": rep["sampled_states"],
            "critic_claimed": rep["critic_claimed"], "critic_claims_refuted": rep["critic_claims_refuted"],
            "certified": rep["certified"], "confidence": rep["confidence"], "mc_n": rep["mc_n"],
            "independent": check}


def _summarise(rows: dict[str, list[dict]], p: float) -> tuple[dict, dict, list[str]]:
    summary: dict[str, dict] = {}
    print(f"\n{'method':34s} {'success':>8s} {'min/seed':>8s} {'unsafe':>7s} {'cost':>7s} {'wall s':>7s}  meets p?")
    for name, rs in rows.items():
        s = {k: float(np.mean([r[k] for r in rs])) for k in ("success", "unsafe", "cost", "wall_s")}
        s["success_min_seed"] = float(min(r["success"] for r in rs))
        s["meets_p_all_seeds"] = all(r["success_wilson_high"] >= p for r in rs)
        summary[name] = s
        print(f"{name:34s} {s['success']:8.3f} {s['success_min_seed']:8.3f} {s['unsafe']:7.3f} {s['cost']:7.3f} "
              f"{s['wall_s']:7.0f}  {s['meets_p_all_seeds']}")
    ra, lag = summary["rapc"], summary["ppo-lag"]
    ratios = {"cost_rapc_over_ppo_lag": ra["cost"] / lag["cost"], "success_rapc_minus_ppo_lag": ra["success"] - lag["success"],
              "wall_rapc_over_ppo_lag": ra["wall_s"] / lag["wall_s"]}
    print("\nratios RAPC / PPO-Lagrangian: " + ", ".join(f"{k} = {v:.3f}" for k, v in ratios.items()))
    weighted_fails = [n for n in METHODS if n.startswith("weighted") and
                      (not summary[n]["meets_p_all_seeds"] or summary[n]["cost"] > ra["cost"])]
    print(f"weighted-sum settings that violate p or cost more than RAPC: {weighted_fails or 'none'}")
    return summary, ratios, weighted_fails


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=40960, help="env steps per run on ra-point")
    ap.add_argument("--p", type=float, default=0.9)
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--grid-steps", type=int, default=40960)
    ap.add_argument("--reacher-steps", type=int, default=8192)
    ap.add_argument("--certify-p", type=float, default=0.6,
                    help="certify demo-rapc's checkpoint at this p and re-check it independently (0 skips)")
    ap.add_argument("--out", default="out/bench/rapc.json")
    args = ap.parse_args(argv)
    os.environ.setdefault("MLX26_THREADS", "1")
    print(f"# RAPC bench on {os.cpu_count()} cores; ra-point p={args.p}, {args.steps} steps × {args.seeds} seeds", flush=True)
    for algo, extra in METHODS.values():  # warm-up: lazy imports and first-call costs stay out of the timings
        train_and_score(algo, "mlx26/ra-point", extra, 512, 0, 1)
    rows: dict[str, list[dict]] = {name: [] for name in METHODS}
    for seed in range(args.seeds):
        for name, (algo, extra) in METHODS.items():
            overrides = {**extra, **({"p": str(args.p)} if algo != "ppo" else {})}
            r = train_and_score(algo, "mlx26/ra-point", overrides, args.steps, seed, args.episodes)
            rows[name].append(r)
            print(f"  seed {seed} {name:32s} success {r['success']:.3f} [{r['success_wilson_low']:.3f}, "
                  f"{r['success_wilson_high']:.3f}] unsafe {r['unsafe']:.3f} cost {r['cost']:.3f} "
                  f"wall {r['wall_s']:.0f}s", flush=True)
    summary: dict[str, dict] = {}
    ratios: dict[str, float] = {}
    weighted_fails: list[str] = []
    if args.seeds > 0:
        summary, ratios, weighted_fails = _summarise(rows, args.p)
    grid = grid_part(args.p, args.grid_steps, 0, args.episodes) if args.grid_steps > 0 else None
    if grid:
        g = grid["rapc"]
        print(f"\nra-grid p={args.p}: LP optimum cost {grid['lp_optimal_cost']:.3f} (P(RA) {grid['lp_p_ra']:.3f}, untruncated);"
              f" RAPC success {g['success']:.3f} cost {g['cost']:.3f} (cost ratio to LP {g['cost'] / grid['lp_optimal_cost']:.3f})")
    reacher = None
    if args.reacher_steps > 0:
        try:
            reacher = train_and_score("rapc", "mlx26/ra-reacher", {"p": str(args.p), "compensation": "adaptive"},
                                      args.reacher_steps, 0, 50)
            print(f"ra-reacher ({args.reacher_steps} steps): success {reacher['success']:.3f} unsafe {reacher['unsafe']:.3f}"
                  f" cost {reacher['cost']:.3f} wall {reacher['wall_s']:.0f}s")
        except ModuleNotFoundError as exc:
            print(f"ra-reacher skipped: {exc} (pip install 'gymnasium[mujoco]')")
    cert = certify_part(args.p, args.certify_p, args.steps) if args.certify_p > 0 else None
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"args": vars(args), "cores": os.cpu_count(), "runs": rows, "summary": summary, "ratios": ratios,
                   "weighted_fails": weighted_fails, "grid": grid, "reacher": reacher}, fh, indent=1)
    print(f"wrote {args.out}")
    data = [{"name": "mlx26/ra-point", "source": "SYNTHETIC: our reach-avoid point env (simulated)"}]
    if grid:
        data.append({"name": "mlx26/ra-grid", "source": "SYNTHETIC: our reach-avoid grid (exact LP optimum beside RAPC)"})
    if reacher:
        data.append({"name": "mlx26/ra-reacher", "source": "SYNTHETIC: MuJoCo Reacher with reach-avoid sets (simulated)"})
    record("rapc", {"args": {k: v for k, v in vars(args).items() if k != "out"}, "summary": summary, "ratios": ratios,
                    "weighted_fails": weighted_fails, "grid": grid, "reacher": reacher, "certify": cert,
                    "per_seed": {n: [{k: r[k] for k in ("success", "cost", "unsafe", "wall_s")} for r in rs]
                                 for n, rs in rows.items()}}, data=data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
