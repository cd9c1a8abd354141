"""RAPC reconstruction: reach-avoid operator, ra-grid, projection, certificates, learner smoke."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")
torch = pytest.importorskip("torch")

from mlx26.core.rl.reach_avoid import certificates as cert  # noqa: E402
from mlx26.core.rl.reach_avoid.grid import DEFAULT_LAYOUT, GridModel, RAGridEnv  # noqa: E402
from mlx26.core.rl.reach_avoid.operator import bellman, fixed_point, greedy, ra_gae  # noqa: E402
from mlx26.core.rl.reach_avoid.projection import project_conflicting  # noqa: E402


def _random_mdp(rng, n=12, actions=None):
    shape = (n, n) if actions is None else (n, actions, n)
    P = rng.random(shape)
    P /= P.sum(-1, keepdims=True)
    r = (rng.random(n) < 0.2).astype(float)
    s = (rng.random(n) < 0.8).astype(float)
    return P, r, s


@pytest.mark.parametrize("actions", [None, 3])
def test_operator_is_a_monotone_gamma_contraction(actions):
    rng = np.random.default_rng(0)
    for _trial in range(200):
        P, r, s = _random_mdp(rng, actions=actions)
        gamma = rng.uniform(0.5, 0.999)
        V1, V2 = rng.random(len(r)), rng.random(len(r))
        gap = np.abs(bellman(V1, P, r, s, gamma) - bellman(V2, P, r, s, gamma)).max()
        assert gap <= gamma * np.abs(V1 - V2).max() + 1e-12
        lo, hi = np.minimum(V1, V2), np.maximum(V1, V2)
        assert (bellman(lo, P, r, s, gamma) <= bellman(hi, P, r, s, gamma) + 1e-15).all()


def _grid_policy():
    m = GridModel(DEFAULT_LAYOUT)
    return m, greedy(m.P, fixed_point(m.P, m.r, m.s, 0.95))


def test_grid_fixed_point_is_below_exact_p_ra_and_approaches_it():
    m, pi = _grid_policy()
    exact = m.p_ra(pi)
    gaps = []
    for gamma in (0.9, 0.99, 0.999, 0.9999):
        v = fixed_point(m.policy_matrix(pi), m.r, m.s, gamma)
        assert (v <= exact + 1e-9).all()
        gaps.append(float((exact - v).max()))
    assert all(a > b for a, b in zip(gaps, gaps[1:], strict=False)) and gaps[-1] < 2e-3
    # γ = 1 value iteration from 0 gives the best achievable P(RA), ≥ this policy's
    assert (m.max_p_ra() >= exact - 1e-9).all()


def test_exact_p_ra_matches_simulation_of_the_env():
    m, pi = _grid_policy()
    exact = m.p_ra(pi)
    env = RAGridEnv()
    hits, n = 0, 400
    for ep in range(n):
        obs, info = env.reset(seed=ep)
        done = False
        while not done:
            obs, reward, term, trunc, info = env.step(int(pi[info["cell"]]))
            assert reward == -info["cost"] and info["cost"] >= 1
            done = term or trunc
        hits += info["reached"]
    lo, hi = cert.wilson(hits, n, z=3.0)
    assert lo <= exact[m.start] <= hi  # 100 steps ≈ infinite horizon here (P(RA) saturates)


def test_grid_rejects_bad_layouts_and_starts_in_g_or_f():
    with pytest.raises(ValueError, match="unknown cell"):
        GridModel(("S.x", "..G"))
    with pytest.raises(ValueError, match="goal"):
        GridModel(("S..", "..."))
    env = RAGridEnv()
    with pytest.raises(ValueError, match="lies in G or F"):
        env.reset(options={"cell": int(np.flatnonzero(env.model.unsafe)[0])})


def test_ra_gae_on_hand_rollouts():
    g = 0.9
    # one env, 3 steps, reaching G at the third: λ = 1 → y = γ³, γ², γ
    z = np.zeros((3, 1))
    term = np.array([[0.0], [0.0], [1.0]])
    y = ra_gae(z, z + 1, np.full((3, 1), 0.5), term, z, term, g, 1.0)
    assert np.allclose(y[:, 0], [g**3, g**2, g])
    # the same ending in F → 0 everywhere with λ = 1
    y = ra_gae(z, z + 1, np.full((3, 1), 0.5), term, z, z, g, 1.0)
    assert np.allclose(y, 0.0)
    # λ = 0 is the one-step operator: y_t = γ V(x_{t+1})
    v = np.array([[0.2], [0.4], [0.6]])
    assert np.allclose(ra_gae(z, z + 1, v, z, z, z, g, 0.0), g * v)
    # a truncation does not leak the next episode: y_0 = γ V(final obs)
    trunc = np.array([[1.0], [0.0], [0.0]])
    y = ra_gae(z, z + 1, v, z, trunc, z, g, 1.0)
    assert np.isclose(y[0, 0], g * 0.2)


def _exploring_start_targets(m, pi, V, rng, E, T, gamma, lam):
    """E parallel T-step rollouts of ``pi`` from uniform non-absorbing cells (restarting there when
    G or F is entered) and their reach-avoid GAE targets bootstrapped from ``V``."""
    inner = np.flatnonzero(~m.absorbing)
    cells = rng.choice(inner, E)
    xs = np.zeros((T, E), int)
    vn, term, tv = np.zeros((T, E)), np.zeros((T, E)), np.zeros((T, E))
    for t in range(T):
        xs[t] = cells
        nxt = m.sample_next(cells, pi[cells], rng)
        vn[t], term[t], tv[t] = V[nxt], m.absorbing[nxt], m.goal[nxt]
        cells = np.where(m.absorbing[nxt], rng.choice(inner, E), nxt)
    return xs, ra_gae(np.zeros((T, E)), np.ones((T, E)), vn, term, np.zeros((T, E)), tv, gamma, lam)


def test_fitted_critic_on_ra_gae_targets_reaches_the_dp_fixed_point():
    """A tabular critic regressed on sampled reach-avoid GAE targets (λ = 0.9) under a fixed
    policy ends within 0.02 of the DP fixed point V_γ (the neural critic is not tested here)."""
    m, pi = _grid_policy()
    gamma, lam = 0.99, 0.9
    v_gamma = fixed_point(m.policy_matrix(pi), m.r, m.s, gamma)
    rng = np.random.default_rng(0)
    inner = np.flatnonzero(~m.absorbing)
    V = m.r.copy()
    E, T = 2000, 32
    for it in range(40):
        xs, y = _exploring_start_targets(m, pi, V, rng, E, T, gamma, lam)
        sums, cnt = np.bincount(xs.ravel(), y.ravel(), m.n), np.bincount(xs.ravel(), minlength=m.n)
        target = np.where(cnt > 0, sums / np.maximum(cnt, 1), V)
        V[inner] += (1.0 if it < 20 else 1.0 / (it - 18)) * (target[inner] - V[inner])
    assert np.abs(V - v_gamma)[inner].max() < 0.02


def test_neural_ra_critic_on_ra_gae_targets_reaches_the_dp_fixed_point():
    """The RAPC critic network (``tanh_mlp`` + sigmoid head, squared error on reach-avoid GAE targets
    bootstrapped from itself) evaluating a fixed policy with exploring starts ends within 0.02 of
    V_γ at every non-absorbing cell. The loss is the sample MSE over a replay of the last 25
    rollouts, computed through per-cell sufficient statistics (exact for one-hot inputs)."""
    from mlx26.core.rl.nets import tanh_mlp

    torch.manual_seed(0)
    m, pi = _grid_policy()
    gamma, lam = 0.99, 0.9
    v_gamma = fixed_point(m.policy_matrix(pi), m.r, m.s, gamma)
    rng = np.random.default_rng(0)
    inner = np.flatnonzero(~m.absorbing)
    net = tanh_mlp(m.n, (64, 64), 1, 1.0)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    eye = torch.eye(m.n)

    def values() -> np.ndarray:
        with torch.no_grad():
            v = torch.sigmoid(net(eye).squeeze(-1)).numpy().astype(float)
        v[m.goal], v[m.unsafe] = 1.0, 0.0  # exact terminal values, as in rapc.py
        return v

    E, T, replay = 1000, 32, []
    for it in range(60):
        V = values()
        xs, y = _exploring_start_targets(m, pi, V, rng, E, T, gamma, lam)
        replay = (replay + [(xs.ravel(), y.ravel())])[-25:]
        X, Y = np.concatenate([r[0] for r in replay]), np.concatenate([r[1] for r in replay])
        cnt = np.bincount(X, minlength=m.n)
        keep = np.flatnonzero(cnt)
        target = torch.as_tensor(np.bincount(X, Y, m.n)[keep] / cnt[keep], dtype=torch.float32)
        weight = torch.as_tensor(cnt[keep] / cnt.sum(), dtype=torch.float32)
        for g in opt.param_groups:
            g["lr"] = 3e-3 if it < 30 else 3e-3 * 30 / it
        for _ in range(50):
            loss = 0.5 * (weight * (torch.sigmoid(net(eye[keep]).squeeze(-1)) - target) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    assert np.abs(values() - v_gamma)[inner].max() < 0.02


def test_symmetric_projection():
    gen = torch.Generator().manual_seed(0)
    seen_conflict = seen_ok = 0
    for _ in range(300):
        g_c, g_ra = torch.randn(20, generator=gen, dtype=torch.float64), torch.randn(20, generator=gen, dtype=torch.float64)
        c, ra, hit = project_conflicting(g_c, g_ra)
        if torch.dot(g_c, g_ra) < 0:
            seen_conflict += 1
            assert hit and torch.dot(c, g_ra) >= -1e-10 and torch.dot(ra, g_c) >= -1e-10
            assert torch.dot(c, ra) >= torch.dot(g_c, g_ra) - 1e-10  # less conflict than before
        else:
            seen_ok += 1
            assert not hit and torch.equal(c, g_c) and torch.equal(ra, g_ra)
    assert seen_conflict > 50 and seen_ok > 50


def test_certificate_from_a_noisy_critic_is_sound():
    m, pi = _grid_policy()
    gamma, p = 0.99, 0.75
    Pp = m.policy_matrix(pi)
    v_gamma = fixed_point(Pp, m.r, m.s, gamma)
    noisy = np.clip(v_gamma + np.random.default_rng(1).normal(0, 0.03, m.n), 0, 1)
    assert cert.violation(noisy, Pp, m.r, m.s, gamma) > 0  # the raw critic is not a certificate
    B = cert.make_certificate(noisy, Pp, m.r, m.s, gamma)
    assert cert.violation(B, Pp, m.r, m.s, gamma) <= 1e-12
    assert (B <= v_gamma + 1e-9).all()
    states = cert.certified(B, p)
    states = states[~m.absorbing[states]]
    assert len(states) >= 5
    assert (m.p_ra(pi)[states] >= p).all()
    mc = cert.monte_carlo_check(m, pi, states, p, n_mc=200, seed=0)
    assert mc["sound_upper"] == 1.0 and mc["sound_lower"] >= 0.95
    with pytest.raises(ValueError, match="p must be"):
        cert.certified(B, 0.0)


def test_wilson_against_a_textbook_value():
    lo, hi = cert.wilson(8, 10)  # Wilson 1927 / Newcombe 1998 table: 0.4902, 0.9433
    assert abs(float(lo) - 0.4902) < 1e-3 and abs(float(hi) - 0.9433) < 1e-3


# ---- the learner through the `train rl` registry -------------------------------------------------

from mlx26.core.rl import checkpoint, envs, registry, runner  # noqa: E402

TINY = {"num_envs": "2", "num_steps": "16", "num_minibatches": "2", "update_epochs": "1", "hidden": "16"}


class NegativeCostGrid(RAGridEnv):
    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        return obs, reward, term, trunc, {**info, "cost": -1.0}


class NaNGrid(RAGridEnv):
    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        return obs * np.nan, reward, False, False, info


def test_rapc_smoke_through_the_registry(tmp_path):
    assert "rapc" in registry.names()
    cfg = runner.build_config("rapc", "mlx26/ra-grid", {**TINY, "p": "0.8", "compensation": "adaptive"},
                              steps=64, eval_episodes=3, out=str(tmp_path))
    records = list(runner.run(cfg))
    train = [r for r in records if r["phase"] == "train"]
    assert [r["step"] for r in train] == [32, 64] and records[-1]["phase"] == "eval"
    assert all(r["lambda"] >= 0 and 0 <= r["j_ra"] <= 1 and 0 <= r["conflict_share"] <= 1 for r in train)
    state = checkpoint.load(str(tmp_path))
    assert set(state["models"]) == {"agent", "ra_critic"}
    env = envs.make_env("mlx26/ra-grid")
    policy = registry.module("rapc").load_policy(state, env)
    obs, _ = env.reset(seed=0)
    assert policy(obs) in range(4)


@pytest.mark.parametrize(("key", "value", "match"), [("p", "0", r"p must be in \(0, 1\]"),
                                                     ("p", "1.5", r"p must be in \(0, 1\]"),
                                                     ("gamma_ra", "1", "gamma_ra must be in"),
                                                     ("compensation", "half", "compensation must be"),
                                                     ("gamma", "1.5", r"gamma must be in \(0, 1\]"),
                                                     ("gae_lambda", "-0.1", r"gae_lambda must be in"),
                                                     ("lambda_init", "-1", "must be ≥ 0")])
def test_rapc_rejects_bad_hyperparameters(key, value, match):
    with pytest.raises(ValueError, match=match):
        runner.build_config("rapc", "mlx26/ra-grid", {key: value})


def test_rapc_names_the_wrapper_for_envs_without_reach_avoid_info():
    with pytest.raises(ValueError) as err:
        runner.build_config("rapc", "CartPole-v1", {})
    assert "reached" in str(err.value.args[0]) and "ReachAvoidInfo" in err.value.hint


def test_rapc_warns_on_negative_costs_and_stops_on_nan_observations(tmp_path):
    envs.register_env("test-negcost", "tests.rl.test_reach_avoid:NegativeCostGrid")
    envs.register_env("test-nan", "tests.rl.test_reach_avoid:NaNGrid")
    try:
        cfg = runner.build_config("rapc", "mlx26/test-negcost", TINY, steps=32, eval_episodes=1)
        with pytest.warns(UserWarning, match="negative cost"):
            list(runner.run(cfg))
        cfg = runner.build_config("rapc", "mlx26/test-nan", TINY, steps=64, eval_episodes=1, out=str(tmp_path))
        with pytest.raises(checkpoint.Divergence, match="non-finite observation"):
            list(runner.run(cfg))
    finally:
        envs.OWN_ENVS.pop("test-negcost")
        envs.OWN_ENVS.pop("test-nan")


def test_certify_cli_on_a_tiny_run(run_cli, tmp_path):
    import json

    out = str(tmp_path / "ra")
    train = run_cli("train", "rl", "--algo", "rapc", "--env", "mlx26/ra-grid", "--steps", "64",
                    *[x for kv in TINY.items() for x in ("--set", f"{kv[0]}={kv[1]}")], "--out", out, "--quiet")
    assert train.code == 0, train.stderr
    res = run_cli("rl", "reach-avoid", "certify", "--checkpoint", out, "--n-mc", "40", "--p", "0.05",
                  "--format", "json")
    assert res.code == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["certified"] == len(report["certified_cells"]) == len(report["mc_p_hat"])
    if report["certified"]:  # soundness: exact P(RA) of every certified cell ≥ p
        assert report["certified_exact_p_ra_min"] >= 0.05
    bad = run_cli("rl", "reach-avoid", "certify", "--checkpoint", out, "--n-mc", "0")
    assert bad.code == 2 and "--n-mc must be" in bad.stderr
    plain = str(tmp_path / "ppo")
    assert run_cli("train", "rl", "--algo", "ppo", "--env", "mlx26/ra-grid", "--steps", "64",
                   *[x for kv in TINY.items() for x in ("--set", f"{kv[0]}={kv[1]}")], "--out", plain,
                   "--quiet").code == 0
    bad = run_cli("rl", "reach-avoid", "certify", "--checkpoint", plain)
    assert bad.code == 2 and bad.error_lines[0].startswith("Error: certify needs a rapc or ppo-lag checkpoint")


def test_clopper_pearson_against_exact_binomial_tails():
    from mlx26.core.rl.reach_avoid.certify_point import clopper_pearson
    from scipy.stats import binom

    lo, hi = clopper_pearson(np.array([0, 7, 20]), 20, 0.05)
    assert lo[0] == 0 and hi[2] == 1
    # the exact one-sided bound is where the binomial tail equals alpha
    assert abs(binom.sf(6, 20, lo[1]) - 0.05) < 1e-9 and abs(binom.cdf(7, 20, hi[1]) - 0.05) < 1e-9


@pytest.mark.slow
def test_point_certificate_is_sound_on_a_trained_checkpoint(tmp_path):
    """Every state certified at p (confidence 0.95) survives an independent 500-rollout check."""
    from mlx26.core.rl.reach_avoid.certify import certify_checkpoint

    cfg = runner.build_config("rapc", "mlx26/ra-point", {"p": "0.9", "compensation": "adaptive"},
                              steps=8192, eval_episodes=5, out=str(tmp_path), seed=0)
    for _ in runner.run(cfg):
        pass
    p = 0.6
    report = certify_checkpoint(str(tmp_path), n_mc=200, p=p, seed=1, confidence=0.95, n_states=200)
    assert report["certified"] >= 5, report  # a real certificate, not an empty one
    assert all(lo >= p for lo in report["certified_cp_lower"])
    _check_independently(tmp_path, report, p, seed=12345)


def _check_independently(folder, report, p, seed, n=500):
    from mlx26.core.rl.nets import ActorCritic
    from mlx26.core.rl.reach_avoid.certify_point import _batch_policy, clopper_pearson, rollout_p_ra

    state = checkpoint.load(str(folder))
    agent = ActorCritic(2, state["space"], tuple(state["config"]["hp"]["hidden"]))
    agent.load_state_dict(state["models"]["agent"])
    model = envs.make_env("mlx26/ra-point").unwrapped.model
    xs = np.asarray(report["certified_states"])
    hits = rollout_p_ra(model, _batch_policy(agent, state["space"]), xs, n, 60, np.random.default_rng(seed))
    m = len(xs)
    _, upper = clopper_pearson(hits, n, 0.05 / m)
    # "below p beyond the stated confidence": the independent rollouts reject P(RA) ≥ p for no state
    assert (upper >= p).all(), (hits / n)[upper < p]
    return hits / n


def test_certify_refuses_a_checkpoint_of_another_env(tmp_path):
    import torch
    from mlx26.core.rl.reach_avoid.certify import certify_checkpoint

    cfg = runner.build_config("rapc", "mlx26/ra-point", TINY, steps=32, eval_episodes=1, out=str(tmp_path))
    for _ in runner.run(cfg):
        pass
    state = checkpoint.load(str(tmp_path))
    torch.save({**state, "env": "mlx26/ra-reacher"}, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match="got rapc on mlx26/ra-reacher"):
        certify_checkpoint(str(tmp_path), n_mc=5)
    torch.save(state, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match="--confidence must be in"):
        certify_checkpoint(str(tmp_path), n_mc=5, confidence=1.0)
    small = certify_checkpoint(str(tmp_path), n_mc=20, p=0.05, candidates="all", n_states=20)
    assert small["candidates_tested"] == 20 and "not a region" in small["what"]
