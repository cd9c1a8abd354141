"""bench-rationality: (1) exact risk propagation vs Monte Carlo (time, agreement); (2) our DQN vs
stable-baselines3's DQN (optional anchor), both trained briefly on CliffWalking-v1 and scored by the
same exact risk function. Ratios are the figure (shared 2-core machine); agents are tiny local runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from _results import record
from mlx26.core.rationality import envs, mdp, risk

STEPS = int(os.environ.get("RAT_BENCH_STEPS", "20000"))
SEEDS = int(os.environ.get("RAT_BENCH_SEEDS", "5"))
# The regulariser / domain-randomisation / shift sweep behind the docs page's claims table
# (= make reproduce-rationality); RAT_BENCH_SWEEP_SEEDS=0 skips it.
SWEEP_SEEDS = int(os.environ.get("RAT_BENCH_SWEEP_SEEDS", "5"))
SWEEP_STEPS = int(os.environ.get("RAT_BENCH_SWEEP_STEPS", "5000"))
# Both agents train on the same env: CliffWalking's own tables (eps = 0) truncated at H = 100 steps,
# the horizon they are scored at; plain CliffWalking-v1 has no time limit.
ENV = envs.register_slip_env("CliffWalking-v1", 0.0, 0.0, 100)


def exact_vs_mc(env_id: str, eps: float, H: int, n: int) -> dict:
    m = mdp.from_gym(env_id)
    P, R = mdp.slip(m, eps)
    v = mdp.backward_induction(P, R, m.D, H)
    pi = np.random.default_rng(1).integers(0, m.n_actions, m.n_states)
    t0 = time.perf_counter()
    exact = risk.expected_risk(v, P, m.D, m.mu0, pi).risk
    t1 = time.perf_counter()
    s, a = risk.sample_trajectories(P, m.D, m.mu0, pi, n, H, np.random.default_rng(0))
    f = risk.trajectory_risks(v, s, a)
    t2 = time.perf_counter()
    se = f.std(ddof=1) / np.sqrt(n)
    print(f"{env_id:18s} eps={eps:<4g} H={H:<4d} exact={exact:10.4f} ({(t1 - t0) * 1e3:7.2f} ms)  "
          f"MC[{n}]={f.mean():10.4f} ± {1.96 * se:.4f} ({(t2 - t1) * 1e3:8.1f} ms)  "
          f"rel.diff={abs(f.mean() - exact) / exact:.4f}  MC/exact time={(t2 - t1) / (t1 - t0):.0f}x")
    return {"eps": eps, "horizon": H, "episodes": n, "exact": exact, "mc": float(f.mean()), "mc_ci95": 1.96 * se,
            "rel_diff": abs(f.mean() - exact) / exact, "within_ci": bool(abs(f.mean() - exact) <= 1.96 * se),
            "mc_over_exact_time": (t2 - t1) / (t1 - t0)}


def score(m, table, eps_deploy: float, H: int) -> float:
    P, R = mdp.slip(m, eps_deploy)
    v = mdp.backward_induction(P, R, m.D, H)
    return risk.expected_risk(v, P, m.D, m.mu0, table).risk


def ours(seed: int):
    from mlx26.core.rl import checkpoint, registry, runner

    # The same hyperparameters as the sb3 run below (the rest are equal defaults: lr 2.3e-3, batch 64,
    # buffer 1e5, gamma 0.99, target update every 10 steps, final epsilon 0.04, grad clip 10).
    over = {"hidden": "64,64", "learning_starts": "500", "train_freq": "100", "gradient_steps": "50",
            "exploration_fraction": "0.3"}
    cfg = runner.build_config("dqn", ENV, over, steps=STEPS, seed=seed, eval_episodes=1)
    with tempfile.TemporaryDirectory() as tmp:
        cfg.out = tmp
        t0 = time.perf_counter()
        for _ in runner.run(cfg):
            pass
        dt = time.perf_counter() - t0
        state = checkpoint.load(tmp)
    pol = registry.module("dqn").load_policy(state, None)
    eye = np.eye(48, dtype=np.float32)
    return np.array([pol(eye[s]) for s in range(48)]), dt


def sb3(seed: int):
    import gymnasium as gym
    from stable_baselines3 import DQN

    env = gym.make(ENV)
    model = DQN("MlpPolicy", env, learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=500,
                gamma=0.99, train_freq=100, gradient_steps=50, target_update_interval=10,
                exploration_fraction=0.3, exploration_final_eps=0.04, policy_kwargs={"net_arch": [64, 64]},
                seed=seed, device="cpu", verbose=0)
    t0 = time.perf_counter()
    model.learn(STEPS)
    dt = time.perf_counter() - t0
    return np.array([int(model.predict(s, deterministic=True)[0]) for s in range(48)]), dt


def run_sweep(seeds: int, steps: int) -> dict:
    """``mlx26 rationality sweep`` (the docs' command) in a subprocess; its summary and bound checks."""
    exe = shutil.which("mlx26", path=os.path.dirname(sys.executable)) or "mlx26"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sweep.jsonl")
        subprocess.run([exe, "rationality", "sweep", "--seeds", str(seeds), "--steps", str(steps), "-o", out,
                        "--force", "--quiet"], check=True)
        with open(out, encoding="utf-8") as fh:
            recs = [json.loads(line) for line in fh if line.strip()]
    runs = [r for r in recs if not r.get("summary")]
    summary = {}
    for row in (r for r in recs if r.get("summary")):
        key = row["variant"].split(" ")[0] if row["hypothesis"] != "shift" else f"shift_{row['variant']}"
        summary[key] = row
        if "diff_ci95" in row:
            print(f"sweep {row['hypothesis']:21s} {row['variant']:22s} "
                  + (f"mean risk {row['mean_risk']:.1f} " if "mean_risk" in row else "")
                  + f"diff {row.get('diff_vs_baseline', row.get('diff_max_minus_min')):+.1f} "
                  f"CI [{row['diff_ci95'][0]:.1f}, {row['diff_ci95'][1]:.1f}] {row['direction']}")
    ext = sum(bool(r["extrinsic_bound_holds"]) for r in runs)
    intr = sum(bool(r["intrinsic_bound_holds"]) for r in runs)
    print(f"sweep: {len(runs)} runs; extrinsic bound >= measured in {ext}, intrinsic in {intr}")
    shifts = [v for k, v in summary.items() if k.startswith("shift_")]
    return {"seeds": seeds, "steps": steps, "runs": len(runs), "extrinsic_bound_holds": ext,
            "intrinsic_bound_holds": intr, "summary": summary,
            "shift_all_increase": all(v["direction"] == "increases" for v in shifts),
            "shift_min_ci_low": min(v["diff_ci95"][0] for v in shifts) if shifts else None,
            "shift_variants": len(shifts)}


def main() -> None:
    print(f"bench-rationality on {os.cpu_count()} cores")
    print("== exact distribution propagation vs vectorised Monte Carlo (random policy) ==")
    figures: dict = {"exact_vs_mc": {
        "cliff": exact_vs_mc("CliffWalking-v1", 0.1, 100, 10_000),
        "frozenlake8x8": exact_vs_mc("FrozenLake8x8-v1", 0.0, 200, 10_000),
        "taxi": exact_vs_mc("Taxi-v4", 0.1, 200, 10_000)}}
    print(f"== DQN on CliffWalking-v1, {STEPS} steps, scored by the same exact risk (tiny local runs) ==")
    m = mdp.from_gym("CliffWalking-v1")
    try:
        import stable_baselines3  # noqa: F401
        have_sb3 = True
    except ImportError:
        have_sb3 = False
        print("stable-baselines3 anchor absent: pip install 'mlx26[sb3]' (keep torch pinned) to compare")
    rows = []
    for seed in range(SEEDS):
        t_ours, dt = ours(seed)
        line = (f"seed {seed}: mlx26 dqn risk@eps0={score(m, t_ours, 0.0, 100):8.2f} "
                f"risk@eps0.1={score(m, t_ours, 0.1, 100):8.2f} ({dt:5.1f} s)")
        if have_sb3:
            t_sb3, dt3 = sb3(seed)
            line += (f" | sb3 dqn risk@eps0={score(m, t_sb3, 0.0, 100):8.2f} "
                     f"risk@eps0.1={score(m, t_sb3, 0.1, 100):8.2f} ({dt3:5.1f} s) | time ours/sb3={dt / dt3:.2f}")
            rows.append((score(m, t_ours, 0.1, 100), score(m, t_sb3, 0.1, 100), dt, dt3))
        print(line, flush=True)
    if rows:
        r = np.asarray(rows)
        print(f"mean over {len(rows)} seeds: risk@eps0.1 mlx26 {r[:, 0].mean():.2f} vs sb3 {r[:, 1].mean():.2f} "
              f"(ratio {r[:, 0].mean() / r[:, 1].mean():.2f}); train time ours/sb3 {r[:, 2].sum() / r[:, 3].sum():.2f}")
        figures["dqn_vs_sb3"] = {"steps": STEPS, "seeds": len(rows), "risk_ours": r[:, 0].mean(),
                                 "risk_sb3": r[:, 1].mean(), "risk_ratio": r[:, 0].mean() / r[:, 1].mean(),
                                 "time_ratio": r[:, 2].sum() / r[:, 3].sum()}
    if SWEEP_SEEDS:
        print(f"== sweep: {SWEEP_SEEDS} seeds x {SWEEP_STEPS} steps (mlx26 rationality sweep, tiny local DQNs) ==",
              flush=True)
        figures["sweep"] = run_sweep(SWEEP_SEEDS, SWEEP_STEPS)
    record("rationality", figures,
           data=[{"name": "gymnasium toy-text tables", "source": "CliffWalking-v1, FrozenLake8x8-v1, Taxi-v4 "
                  "transition tables from gymnasium (env.unwrapped.P); agents are tiny DQNs trained here"}])


if __name__ == "__main__":
    main()
