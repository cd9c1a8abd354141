"""RL benchmark: our DQN vs stable-baselines3 DQN on CartPole-v1, side by side in one run,
plus the DFQL diagnostics on toy-modes and (optionally) DFQL vs FQL on OGBench cube-single.

    .venv/bin/python benchmarks/rl.py                      # dqn + toy parts
    .venv/bin/python benchmarks/rl.py --part dqn --seeds 3 --steps 50000
    .venv/bin/python benchmarks/rl.py --part cube --dataset out/rl/cube-single-play-v0.npz --cube-steps 5000

dqn:  identical hyperparameters (RL-Zoo's CartPole-v1 DQN, which both use by default here) and
      budget; evaluation every --eval-every env steps (10 deterministic episodes); reports the
      first step whose mean return ≥ 475, the final return, wall time and the ratios ours/SB3.
toy:  mode shares of BC / FQL / DFQL on mlx26/toy-modes, the surrogate-vs-BPTT gradient cosine,
      and the stability stress (K = 64, 6-layer nets): gradient-norm mean/variance DFQL vs BPTT.
alpha: FQL vs DFQL α sweep on mlx26/toy-modes through the CLI's own path (a fixed 20k-row dataset,
      `rl sweep`, 300 BC warm-up + 400 steps, 128-128 nets, batch 128, 200 eval episodes; eval_success =
      share of actions in the best mode); mean and 95% t-CI over --seeds, best α of each (synthetic env).
cube: DFQL vs FQL success on cube-single-singletask-task2 with locally generated data
      (synthetic "local-oracle-v0" data, small budgets: NOT comparable with the paper's numbers).
Absolute times on a shared machine are noise; the ratios are the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from _results import record


def _first_solved(curve: list[tuple[int, float]], threshold: float = 475.0) -> int | None:
    return next((step for step, ret in curve if ret >= threshold), None)


def ours_dqn(seed: int, steps: int, eval_every: int) -> dict:
    from mlx26.core.rl import runner

    cfg = runner.build_config("dqn", "CartPole-v1", {"log_every": 10**9}, steps=steps, seed=seed,
                              eval_every=eval_every, eval_episodes=10)
    t = time.perf_counter()
    curve = [(r["step"], r["eval_return"]) for r in runner.run(cfg) if r["phase"] == "eval"]
    return {"impl": "mlx26", "seed": seed, "wall_s": time.perf_counter() - t, "curve": curve}


def sb3_dqn(seed: int, steps: int, eval_every: int) -> dict | None:
    try:
        import gymnasium as gym
        from stable_baselines3 import DQN
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.evaluation import evaluate_policy
    except ImportError:
        return None
    import torch

    torch.set_num_threads(int(os.environ.get("MLX26_THREADS", "1") or 1))
    env, eval_env = gym.make("CartPole-v1"), gym.make("CartPole-v1")
    curve: list[tuple[int, float]] = []
    eval_time = [0.0]

    class Every(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps % eval_every == 0:
                t0 = time.perf_counter()
                eval_env.reset(seed=seed)
                mean, _ = evaluate_policy(self.model, eval_env, n_eval_episodes=10, deterministic=True)
                curve.append((self.num_timesteps, float(mean)))
                eval_time[0] += time.perf_counter() - t0
            return True

    # RL-Zoo hyperparameters for CartPole-v1 (our defaults are the same numbers).
    model = DQN("MlpPolicy", env, learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=1000,
                gamma=0.99, target_update_interval=10, train_freq=256, gradient_steps=128,
                exploration_fraction=0.16, exploration_final_eps=0.04, policy_kwargs={"net_arch": [256, 256]},
                seed=seed, device="cpu", verbose=0)
    t = time.perf_counter()
    model.learn(total_timesteps=steps, callback=Every())
    return {"impl": "sb3", "seed": seed, "wall_s": time.perf_counter() - t, "curve": curve}


def part_dqn(args) -> dict:
    rows = []
    for seed in range(args.seeds):
        for fn in (ours_dqn, sb3_dqn):
            r = fn(seed, args.steps, args.eval_every)
            if r is None:
                print("stable-baselines3 not installed: pip install 'mlx26[sb3]'", file=sys.stderr)
                continue
            r["solved_at"] = _first_solved(r["curve"])
            r["final_return"] = r["curve"][-1][1]
            r["best_return"] = max(v for _, v in r["curve"])
            rows.append(r)
            print(f"  dqn {r['impl']:6s} seed {seed}: solved_at={r['solved_at']} final={r['final_return']:.1f} "
                  f"best={r['best_return']:.1f} wall={r['wall_s']:.1f}s", file=sys.stderr, flush=True)
    summary = {}
    for impl in ("mlx26", "sb3"):
        mine = [r for r in rows if r["impl"] == impl]
        if mine:
            solved = [r["solved_at"] for r in mine if r["solved_at"] is not None]
            summary[impl] = {"runs": len(mine), "solved_runs": len(solved),
                             "median_steps_to_475": float(np.median(solved)) if solved else None,
                             "mean_final_return": float(np.mean([r["final_return"] for r in mine])),
                             "mean_wall_s": float(np.mean([r["wall_s"] for r in mine]))}
    if "mlx26" in summary and "sb3" in summary:
        a, b = summary["mlx26"], summary["sb3"]
        summary["ratio_wall_mlx26_over_sb3"] = a["mean_wall_s"] / b["mean_wall_s"]
        if a["median_steps_to_475"] and b["median_steps_to_475"]:
            summary["ratio_steps_to_475_mlx26_over_sb3"] = a["median_steps_to_475"] / b["median_steps_to_475"]
    return {"runs": rows, "summary": summary}


def part_toy(args) -> dict:
    from mlx26.core.rl import toy_experiments as te

    out = {}
    bc = te.train_toy("bc", 600, seed=0)
    out["bc_shares"] = bc["shares"]
    out["cosine_after_bc"] = te.gradient_cosine(bc["agent"], seed=1)
    for algo, kw in (("dfql", {"alpha": 0.1}), ("fql", {"alpha": 10.0})):
        t = time.perf_counter()
        r = te.train_toy(algo, 400, seed=0, bc_steps=300, **kw)
        out[f"{algo}_shares"] = r["shares"]
        out[f"{algo}_ms_per_step"] = (time.perf_counter() - t) / 700 * 1000
    out["stress_K64_depth6"] = te.stress(K=64, depth=6, width=128, batches=16, bc_steps=300)
    out["stress_K10_depth2"] = te.stress(K=10, depth=2, width=128, batches=16, bc_steps=300)
    return out


def part_cube(args) -> dict:
    import subprocess
    import tempfile

    if not args.dataset:
        raise SystemExit("--part cube needs --dataset (make it with `mlx26 rl data make --env "
                         "ogbench:cube-single-singletask-task2-v0 --steps 100000 --out D.npz`)")
    results: dict = {}
    tmp = tempfile.mkdtemp(prefix="bench-rl-cube-")
    jobs = []
    for algo, alpha in (("fql", args.fql_alpha), ("dfql", args.dfql_alpha)):
        for seed in range(args.seeds):
            out = os.path.join(tmp, f"{algo}-{seed}")
            cmd = [sys.executable, "-m", "mlx26.cli.main", "train", "rl", "--algo", algo, "--env",
                   "ogbench:cube-single-singletask-task2-v0", "--dataset", args.dataset, "--steps",
                   str(args.cube_steps), "--alpha", str(alpha), "--set", "preset=small", "--set", "log_every=1000",
                   "--eval-episodes", str(args.cube_episodes), "--seed", str(seed), "--out", out, "--quiet"]
            jobs.append((algo, seed, cmd))
    running: list = []
    t0 = time.perf_counter()
    while jobs or running:
        while jobs and len(running) < args.parallel:
            algo, seed, cmd = jobs.pop(0)
            running.append((algo, seed, subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True),
                            time.perf_counter()))
        algo, seed, proc, start = running.pop(0)
        stdout, _ = proc.communicate()
        last = json.loads(stdout.splitlines()[-1]) if proc.returncode == 0 and stdout.strip() else {}
        results.setdefault(algo, []).append({"seed": seed, "success": last.get("eval_success"),
                                             "return": last.get("eval_return"),
                                             "wall_s": time.perf_counter() - start, "rc": proc.returncode})
    for algo, rows in results.items():
        ok = [r["success"] for r in rows if r["success"] is not None]
        results[algo] = {"runs": rows, "mean_success": float(np.mean(ok)) if ok else None}
    results["wall_s"] = time.perf_counter() - t0
    return results


def part_alpha(args) -> dict:
    import tempfile

    from mlx26.core.rl import datagen, datasets, logs, sweep

    root = tempfile.mkdtemp(prefix="rl-alpha-")
    data = os.path.join(root, "toy.npz")
    train, _, meta = datagen.generate("mlx26/toy-modes", "oracle", steps=20_000, seed=0)
    datasets.save(data, train, meta)
    base = {"bc_steps": 300, "preset": "small", "actor_hidden": (128, 128), "value_hidden": (128, 128),
            "batch_size": 128, "log_every": 700}
    rows = []
    for algo in ("fql", "dfql"):
        for alpha in args.alphas:
            out = os.path.join(root, f"{algo}-a{alpha}")
            runs = [logs.read_run(r["run"]) for r in sweep.run_sweep(
                [algo], "mlx26/toy-modes", list(range(args.seeds)), out, overrides={**base, "alpha": alpha},
                steps=700, eval_episodes=200, dataset=data)]
            row = sweep.summarize(runs, ("eval_success",))[0]
            rows.append({"algo": algo, "alpha": alpha, **{k: row.get(k) for k in
                         ("n", "eval_success_mean", "eval_success_ci_low", "eval_success_ci_high")}})
    best = {a: max((r for r in rows if r["algo"] == a), key=lambda r: r["eval_success_mean"]) for a in ("fql", "dfql")}
    return {"rows": rows, "best": best}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", action="append", choices=["dqn", "toy", "cube", "alpha"],
                    help="repeatable; default: dqn and toy")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--steps", type=int, default=50_000, help="DQN env steps (both implementations)")
    ap.add_argument("--eval-every", type=int, default=5000)
    ap.add_argument("--dataset", default=None, help="cube-single .npz for --part cube")
    ap.add_argument("--cube-steps", type=int, default=5000)
    ap.add_argument("--cube-episodes", type=int, default=20)
    ap.add_argument("--fql-alpha", type=float, default=300.0, help="FQL's cube-single setting")
    ap.add_argument("--dfql-alpha", type=float, default=10.0)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.1, 1.0, 10.0], help="--part alpha grid")
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    args = ap.parse_args(argv)
    parts = args.part or ["dqn", "toy"]
    os.environ.setdefault("MLX26_THREADS", "1")
    report = {"cores": os.cpu_count()}
    for part in parts:
        print(f"[{part}] running …", file=sys.stderr, flush=True)
        report[part] = {"dqn": part_dqn, "toy": part_toy, "cube": part_cube, "alpha": part_alpha}[part](args)
    print(f"cores: {report['cores']}  (MLX26_THREADS={os.environ['MLX26_THREADS']})")
    if "dqn" in report:
        s = report["dqn"]["summary"]
        print(f"CartPole-v1 DQN, {args.steps} env steps, {args.seeds} seed(s), eval every {args.eval_every}:")
        print(f"  {'impl':8s} {'solved':>7s} {'median steps to 475':>20s} {'final return':>13s} {'wall s':>8s}")
        for impl in ("mlx26", "sb3"):
            if impl in s:
                r = s[impl]
                print(f"  {impl:8s} {r['solved_runs']:>3d}/{r['runs']:<3d} {str(r['median_steps_to_475']):>20s} "
                      f"{r['mean_final_return']:>13.1f} {r['mean_wall_s']:>8.1f}")
        for key in ("ratio_steps_to_475_mlx26_over_sb3", "ratio_wall_mlx26_over_sb3"):
            if key in s:
                print(f"  {key}: {s[key]:.2f}")
    if "toy" in report:
        t = report["toy"]
        print("toy-modes (mode shares; best mode first):")
        for k in ("bc_shares", "fql_shares", "dfql_shares"):
            print(f"  {k:12s} {t[k]}")
        print(f"  cosine(DFQL surrogate, BPTT) after BC: {t['cosine_after_bc']:.4f}")
        for k in ("stress_K10_depth2", "stress_K64_depth6"):
            s = t[k]
            print(f"  {k}: grad-norm var DFQL {s['dfql_grad_norm_var']:.4g} vs BPTT {s['bptt_grad_norm_var']:.4g} "
                  f"(ratio {s['var_ratio_dfql_over_bptt']:.3g}); CV {s['dfql_grad_norm_cv']:.3f} vs "
                  f"{s['bptt_grad_norm_cv']:.3f}; cosine {s['cosine_mean']:.3f}")
    if "alpha" in report:
        print(f"toy-modes α sweep (synthetic env), best-mode share, mean [95% t-CI] over {args.seeds} seed(s):")
        for r in report["alpha"]["rows"]:
            lo, hi = r["eval_success_ci_low"], r["eval_success_ci_high"]
            ci = f"[{lo:.3f}, {hi:.3f}]" if lo is not None else ""
            print(f"  {r['algo']:5s} α = {r['alpha']:<6g} {r['eval_success_mean']:.3f} {ci}")
        for algo, r in report["alpha"]["best"].items():
            print(f"  best {algo}: α = {r['alpha']:g} → {r['eval_success_mean']:.3f}")
    if "cube" in report:
        c = report["cube"]
        print(f"cube-single task2, local-oracle-v0 data, {args.cube_steps} steps, {args.seeds} seeds (synthetic data):")
        for algo in ("fql", "dfql"):
            print(f"  {algo:5s} mean success {c[algo]['mean_success']}  per seed "
                  f"{[r['success'] for r in c[algo]['runs']]}")
    name = "rl" if sorted(parts) == ["dqn", "toy"] else "rl_" + "_".join(dict.fromkeys(parts))
    data = []
    if "dqn" in parts:
        data.append({"name": "CartPole-v1", "source": "gymnasium's CartPole-v1 (simulated); stable-baselines3 DQN as the anchor"})
    if "toy" in parts or "alpha" in parts:
        data.append({"name": "mlx26/toy-modes", "source": "SYNTHETIC: our 4-mode toy env and its generated datasets"})
    if "cube" in parts:
        data.append({"name": "cube-single local-oracle-v0", "source": f"SYNTHETIC: locally generated OGBench-layout data ({args.dataset})"})
    record(name, {**report, "args": {k: getattr(args, k) for k in ("seeds", "steps", "eval_every", "alphas")}}, data=data)
    if args.json:
        print(json.dumps(report, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
