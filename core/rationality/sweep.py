"""Hypothesis sweeps: regulariser x seed, domain randomisation x seed, shift size.

The agents come from ``train_fn(env_id, seed, overrides, steps) -> (actions (S,), weights)``, which
the caller supplies (the CLI wraps ``mlx26 train rl --algo dqn``), so this module stays free of
``mlx26.core.rl``. Every trained policy is scored by the same exact risk (:func:`score`). A
hypothesis' *direction* is read from a bootstrap 95% CI: of the difference to the baseline
(``none`` / fixed ``eps_train``) for the regulariser and domain-randomisation hypotheses, and of
``risk(max eps_deploy) - risk(min eps_deploy)`` for the shift hypothesis; a CI that covers 0 is
``inconclusive``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.rationality import bounds, mdp, risk
from mlx26.core.rationality.spec import DEFAULT_ENV, HYPOTHESES, PREDICTIONS, REGULARIZERS

DEFAULTS: dict[str, Any] = {
    "env": DEFAULT_ENV, "horizon": 100, "eps_train": 0.1, "eps_deploy": 0.25,
    "eps_grid": [0.0, 0.1, 0.25, 0.4], "dr_range": [0.0, 0.4], "regularizers": list(REGULARIZERS),
    "l2": 1e-4, "seeds": 5, "steps": 3000, "hypotheses": list(HYPOTHESES), "episodes": 200,
    "metric": "grid",
    # small, fast DQN runs (override any with set: {key: value}, as `train rl --set`)
    "set": {"hidden": "64,64", "learning_starts": "500", "train_freq": "100", "gradient_steps": "50",
            "exploration_fraction": "0.3"},
}
REG_OVERRIDES = {"none": {}, "layer_norm": {"layer_norm": "true"}, "weight_norm": {"weight_norm": "true"}}


def resolve(config: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise unknown_name("sweep key", unknown[0], sorted(DEFAULTS))
    cfg = {**DEFAULTS, **config}
    for h in cfg["hypotheses"]:
        if h not in HYPOTHESES:
            raise unknown_name("hypothesis", h, HYPOTHESES)
    for r in cfg["regularizers"]:
        if r not in REGULARIZERS:
            raise unknown_name("regularizer", r, REGULARIZERS)
    for key in ("eps_train", "eps_deploy"):
        mdp.check_eps(cfg[key], key)
    for e in [*cfg["eps_grid"], *cfg["dr_range"]]:
        mdp.check_eps(e, "eps_grid/dr_range")
    mdp.check_horizon(cfg["horizon"])
    if int(cfg["seeds"]) < 1 or int(cfg["steps"]) < 1 or int(cfg["episodes"]) < 1:
        raise InputError("seeds, steps and episodes must be ≥ 1")
    return cfg


def score(m: mdp.TabularMDP, policy, eps_train: float, eps_deploy: float, horizon: int, *, episodes: int = 200,
          seed: int = 0, metric: str = "grid", mu_deploy=None, w1_method: str = "auto",
          train_range: tuple[float, float] | None = None) -> dict[str, Any]:
    """Expected (deployment) / expected (training) / empirical risk, the gap split and the bound terms."""
    P_dep, R_dep = mdp.slip(m, eps_deploy)
    P_tr, _ = mdp.slip(m, eps_train)
    values = mdp.backward_induction(P_dep, R_dep, m.D, horizon)
    mu_dep = m.mu0 if mu_deploy is None else mu_deploy
    dep = risk.expected_risk(values, P_dep, m.D, mu_dep, policy, R_dep)
    tr = risk.expected_risk(values, P_tr, m.D, m.mu0, policy)
    rng = np.random.default_rng(seed)
    lo, hi = train_range if train_range else (eps_train, eps_train)
    states = []
    for _ in range(episodes):  # training trajectories; eps per episode under domain randomisation
        e = float(rng.uniform(lo, hi)) if hi > lo else lo
        P_e = P_tr if e == eps_train else mdp.slip(m, e)[0]
        states.append(risk.sample_trajectories(P_e, m.D, m.mu0, policy, 1, horizon, rng)[0])
    F = risk.trajectory_risks(values, np.concatenate(states), policy=policy)
    parts = risk.gap(dep.risk, tr.risk, float(F.mean()))
    C = bounds.ground_metric(m, metric)
    w1_sa = bounds.w1_slip(m, eps_train, eps_deploy, C, w1_method)
    w1_mu = bounds.w1(m.mu0, mu_dep, C, w1_method)
    ext = bounds.extrinsic_bound(values, P_dep, P_tr, m.D, m.mu0, mu_dep, policy, w1_sa, w1_mu, C)
    intr = bounds.intrinsic_bound(F[None], rng=rng)
    return {"env": m.env_id, "eps_train": eps_train, "eps_deploy": eps_deploy, "horizon": horizon,
            "expected_risk": dep.risk, "expected_risk_train": tr.risk, "empirical_risk": float(F.mean()),
            **parts, "v_star_start": float(mu_dep @ values.V[0]), "policy_value": dep.value,
            "extrinsic_bound": ext["bound"], "extrinsic_bound_holds": bool(ext["bound"] >= abs(parts["extrinsic"]) - 1e-9),
            "intrinsic_bound": intr["bound"], "intrinsic_bound_holds": bool(intr["bound"] >= abs(parts["intrinsic"])),
            "w1_kernel_mean": ext["w1_kernel_mean"], "w1_kernel_max": ext["w1_kernel_max"], "w1_init": w1_mu,
            "lipschitz_max": ext["lipschitz_max"], "rademacher_mc": intr["rademacher_mc"],
            "n_trajectories": episodes, "metric": metric}


def bootstrap_ci(x, n: int = 2000, seed: int = 0) -> tuple[float, float]:
    x = np.asarray(x, float)
    if x.size < 2:
        return float(x.mean()), float(x.mean())
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n, x.size))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def _direction(lo: float, hi: float, n: int) -> str:
    if n < 2:  # a bootstrap over one seed is a point, not an interval: no direction can be read from it
        return "inconclusive (n < 2)"
    return "reduces" if hi < 0 else "increases" if lo > 0 else "inconclusive"


def runs(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The (hypothesis, variant, seed, training env range, hp overrides) of every training run."""
    out = []
    regs = cfg["regularizers"] if "regularizer" in cfg["hypotheses"] or "shift" in cfg["hypotheses"] else ["none"]
    for reg in regs:
        over = {**DEFAULTS["set"], **cfg["set"], **REG_OVERRIDES.get(reg, {"l2": str(cfg["l2"])})}
        for seed in range(int(cfg["seeds"])):
            out.append({"hypothesis": "regularizer", "variant": reg, "seed": seed,
                        "train_range": (cfg["eps_train"], cfg["eps_train"]), "overrides": over})
    if "domain-randomization" in cfg["hypotheses"]:
        for seed in range(int(cfg["seeds"])):
            out.append({"hypothesis": "domain-randomization", "variant": "randomized", "seed": seed,
                        "train_range": tuple(cfg["dr_range"]), "overrides": {**DEFAULTS["set"], **cfg["set"]}})
    return out


def sweep(cfg: dict[str, Any], train_fn: Callable, register_env: Callable) -> Iterator[dict[str, Any]]:
    """Yield one record per training run (scored on every eps in ``eps_grid``), then ``{"summary": …}``."""
    cfg = resolve(cfg)
    m = mdp.from_gym(cfg["env"])
    records = []
    for run in runs(cfg):
        lo, hi = run["train_range"]
        env_id = register_env(cfg["env"], lo, hi, cfg["horizon"])
        actions, _weights = train_fn(env_id, run["seed"], run["overrides"], int(cfg["steps"]))
        eps_tr = (lo + hi) / 2  # the slip family is linear: a uniform eps range averages to its midpoint kernel
        s = score(m, actions, eps_tr, cfg["eps_deploy"], cfg["horizon"], episodes=int(cfg["episodes"]),
                  seed=run["seed"], metric=cfg["metric"], train_range=(lo, hi))
        by_eps = {}
        for e in cfg["eps_grid"]:
            P, R = mdp.slip(m, e)
            v = mdp.backward_induction(P, R, m.D, cfg["horizon"])
            by_eps[f"{e:g}"] = risk.expected_risk(v, P, m.D, m.mu0, actions).risk
        rec = {"hypothesis": run["hypothesis"], "variant": run["variant"], "seed": run["seed"],
               "train_eps_range": [lo, hi], **s, "risk_by_eps_deploy": by_eps}
        records.append(rec)
        yield rec
    yield {"summary": summarize(records, cfg)}


def summarize(records: list[dict[str, Any]], cfg: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    reg = {v: [r for r in records if r["hypothesis"] == "regularizer" and r["variant"] == v]
           for v in cfg["regularizers"]}
    base = np.array([r["expected_risk"] for r in reg.get("none", [])])

    def row(h, variant, xs, ref):
        xs = np.array([r["expected_risk"] for r in xs])
        lo, hi = bootstrap_ci(xs)
        item = {"hypothesis": h, "variant": variant, "n": int(xs.size), "mean_risk": float(xs.mean()),
                "ci95": [lo, hi], "prediction": PREDICTIONS[h]}
        if ref is not None and ref.size and xs.size == ref.size and variant != "none":
            dlo, dhi = bootstrap_ci(xs - ref)  # paired by seed
            item.update(diff_vs_baseline=float((xs - ref).mean()), diff_ci95=[dlo, dhi], direction=_direction(dlo, dhi, int(xs.size)))
        return item

    if "regularizer" in cfg["hypotheses"]:
        out += [row("regularizer", v, xs, base if "none" in reg else None) for v, xs in reg.items() if xs]
    if "domain-randomization" in cfg["hypotheses"]:
        dr = [r for r in records if r["hypothesis"] == "domain-randomization"]
        out.append(row("domain-randomization", f"randomized {cfg['dr_range']}", dr, base))
    if "shift" in cfg["hypotheses"]:
        keys = [f"{e:g}" for e in sorted(cfg["eps_grid"])]
        for v, xs in reg.items():
            if not xs or len(keys) < 2:
                continue
            curve = np.array([[r["risk_by_eps_deploy"][k] for k in keys] for r in xs])
            d = curve[:, -1] - curve[:, 0]
            lo, hi = bootstrap_ci(d)
            out.append({"hypothesis": "shift", "variant": v, "n": len(xs), "eps_deploy": [float(k) for k in keys],
                        "mean_risk_by_eps": curve.mean(axis=0).tolist(), "diff_max_minus_min": float(d.mean()),
                        "diff_ci95": [lo, hi], "direction": _direction(lo, hi, len(xs)),
                        "prediction": PREDICTIONS["shift"]})
    return out


def plot(summary: list[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for row in summary:
        if row["hypothesis"] == "shift":
            ax.plot(row["eps_deploy"], row["mean_risk_by_eps"], marker="o", label=row["variant"])
    ax.set_xlabel("eps_deploy (slip probability)")
    ax.set_ylabel("expected rational risk")
    ax.set_title("risk vs shift per regulariser (mean over seeds)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
