"""RAPC reconstruction, part 2: the LP optimum, ra-point, MuJoCo variants, PPO-Lagrangian and
weighted-sum baselines, reach-avoid evaluation and the sampled ra-point certificate."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
torch = pytest.importorskip("torch")
pytest.importorskip("scipy")

from mlx26.core.rl import checkpoint, envs, registry, runner  # noqa: E402
from mlx26.core.rl.reach_avoid.grid import DEFAULT_LAYOUT, GridModel  # noqa: E402
from mlx26.core.rl.reach_avoid.lp import constrained_optimum, expected_cost  # noqa: E402
from mlx26.core.rl.reach_avoid.metrics import evaluate_reach_avoid  # noqa: E402
from mlx26.core.rl.reach_avoid.point import PointModel, RAPointEnv  # noqa: E402
from mlx26.core.rl.reach_avoid.wrappers import ReachAvoidInfo, WeightedReachAvoidReward  # noqa: E402

SMALL = ("S.#", "..G")
TINY = {"num_envs": "2", "num_steps": "16", "num_minibatches": "2", "update_epochs": "1"}


def _deterministic_policies(model):
    trans = np.flatnonzero(~model.absorbing)
    for choice in itertools.product(range(4), repeat=len(trans)):
        pi = np.zeros(model.n, dtype=int)
        pi[trans] = choice
        yield pi


def test_lp_optimum_brackets_the_deterministic_policies_and_checks_out():
    model = GridModel(SMALL, slip=0.3)
    table = [(expected_cost(model, pi), model.p_ra(pi)[model.start]) for pi in _deterministic_policies(model)]
    finite = [(c, q) for c, q in table if np.isfinite(c)]
    cheapest = min(finite)
    for p in (0.2, 0.5, 0.8, 0.95):
        best = constrained_optimum(model, p)
        assert model.p_ra(best["policy"])[model.start] >= p - 1e-9
        assert expected_cost(model, best["policy"]) == pytest.approx(best["cost"], rel=1e-8)
        feasible = [c for c, q in finite if q >= p - 1e-12]
        assert best["cost"] <= min(feasible) + 1e-9  # randomisation can only help
        assert best["cost"] >= cheapest[0] - 1e-9
        assert best["randomised_states"] <= 1  # one constraint → at most one randomised state
    assert constrained_optimum(model, min(cheapest[1], 0.99) * 0.5)["cost"] == pytest.approx(cheapest[0], rel=1e-9)


def test_lp_cost_grows_with_p_and_rejects_infeasible_levels():
    model = GridModel(DEFAULT_LAYOUT)
    costs = [constrained_optimum(model, p)["cost"] for p in (0.3, 0.6, 0.9, 0.99)]
    assert all(a <= b + 1e-9 for a, b in zip(costs, costs[1:], strict=False))
    trap = GridModel(("S#", "#G"))
    with pytest.raises(ValueError, match="no policy reaches"):
        constrained_optimum(trap, 0.5)
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\]"):
        constrained_optimum(model, 0.0)


class _TabularPolicy:
    def __init__(self, pi):
        self.pi = pi

    def reset(self, seed):
        pass

    def __call__(self, obs):
        return int(self.pi[int(np.argmax(obs))])


def test_reach_avoid_evaluation_agrees_with_the_exact_probability():
    from mlx26.core.rl.reach_avoid.grid import RAGridEnv
    from mlx26.core.rl.reach_avoid.operator import greedy

    env = RAGridEnv(max_steps=2000)
    model = env.model
    pi = greedy(model.P, model.max_p_ra())
    pi_risky = np.ones(model.n, dtype=int) * 2  # always "down"
    for policy in (pi, pi_risky):
        exact = model.p_ra(policy)[model.start]
        res = evaluate_reach_avoid(env, _TabularPolicy(policy), 300, seed=0)
        assert res["success_wilson_low"] - 0.02 <= exact <= res["success_wilson_high"] + 0.02
        assert res["success"] + res["unsafe"] + res["timeout"] == pytest.approx(1.0)
        assert res["cost"] > 0


def test_point_model_dynamics_and_sets():
    m = PointModel(noise=0.0)
    xy = np.array([[-0.5, -0.5], [0.95, 0.95]])
    nxt = m.step(xy, np.array([[1.0, 0.0], [1.0, 1.0]]), np.random.default_rng(0))
    np.testing.assert_allclose(nxt, [[-0.4, -0.5], [1.0, 1.0]])  # walls clip
    assert m.in_goal(np.array([0.6, 0.6]))[0] and m.in_hazard(np.array([0.0, 0.1]))[0]
    np.testing.assert_allclose(m.cost(np.array([[2.0, 0.0]])), [0.1 * (1 + 0.5)])  # actions clip to 1
    noisy = PointModel(noise=0.05)
    steps = noisy.step(np.zeros((20000, 2)) - 0.5, np.zeros((20000, 2)), np.random.default_rng(1)) + 0.5
    assert steps.std() == pytest.approx(0.05, rel=0.03)


def test_point_rejects_overlapping_goal_and_hazard_and_bad_starts():
    with pytest.raises(ValueError, match="G ∩ F must be empty"):
        PointModel(hazards=((0.5, 0.5, 0.2),))
    with pytest.raises(ValueError, match="start box touches"):
        PointModel(start=(0.0, 0.0, 0.1))
    env = RAPointEnv()
    with pytest.raises(ValueError, match="lies in G or F"):
        env.reset(options={"xy": [0.0, 0.0]})


def test_point_env_ends_on_goal_and_hazard():
    env = RAPointEnv(noise=0.0)
    env.reset(seed=0, options={"xy": [0.35, 0.6]})
    _, reward, term, _, info = env.step(np.array([1.0, 0.0]))
    assert term and info["reached"] and not info["unsafe"] and reward == -info["cost"]
    env.reset(seed=0, options={"xy": [-0.45, 0.0]})
    _, _, term, _, info = env.step(np.array([1.0, 0.0]))
    assert term and info["unsafe"] and not info["reached"]


def test_reach_avoid_info_refuses_g_and_f_overlaps_and_bad_starts():
    base = gymnasium.make("MountainCarContinuous-v0")
    env = ReachAvoidInfo(base, goal=lambda o: o[0] > -2, unsafe=lambda o: o[0] > 0.4)
    with pytest.raises(ValueError, match="reset state lies in the goal"):
        env.reset(seed=0)
    env = ReachAvoidInfo(base, goal=lambda o: o[0] > 0.45, unsafe=lambda o: o[0] > -2)
    with pytest.raises(ValueError, match="reset state"):
        env.reset(seed=0)
    env = ReachAvoidInfo(base, goal=lambda o: o[1] != 12.0, unsafe=lambda o: o[1] != 12.0)
    env.unwrapped.reset(seed=0)
    with pytest.raises(ValueError, match="G ∩ F must be empty"):
        env.step(np.array([1.0]))


def test_weighted_reward_formula():
    env = WeightedReachAvoidReward(RAPointEnv(noise=0.0), w_goal=7.0, w_unsafe=3.0)
    env.reset(seed=0, options={"xy": [0.35, 0.6]})
    _, reward, _, _, info = env.step(np.array([1.0, 0.0]))
    assert reward == pytest.approx(-info["cost"] + 7.0)
    env.reset(seed=0, options={"xy": [-0.45, 0.0]})
    _, reward, _, _, info = env.step(np.array([1.0, 0.0]))
    assert reward == pytest.approx(-info["cost"] - 3.0)


def test_weighted_ppo_checks_its_options():
    cfg = runner.build_config("ppo", "mlx26/ra-point", {**TINY, "reward": "weighted", "w_goal": "5", "w_unsafe": "5"},
                              steps=32, eval_episodes=1)
    assert cfg.hp.w_goal == 5.0
    with pytest.raises(ValueError, match="only apply with reward=weighted"):
        runner.build_config("ppo", "mlx26/ra-point", {"w_goal": "5"})
    with pytest.raises(ValueError) as err:
        runner.build_config("ppo", "CartPole-v1", {"reward": "weighted"})
    assert "ReachAvoidInfo" in err.value.hint
    with pytest.raises(ValueError, match="reward must be"):
        runner.build_config("ppo", "mlx26/ra-point", {"reward": "sum"})
    with pytest.raises(ValueError, match="gamma must be in"):
        runner.build_config("ppo", "CartPole-v1", {"gamma": "1.5"})


def test_ppo_lag_runs_and_uses_the_empirical_success_rate(tmp_path):
    assert "ppo-lag" in registry.names()
    cfg = runner.build_config("ppo-lag", "mlx26/ra-grid", {**TINY, "p": "0.9"}, steps=96, eval_episodes=2,
                              out=str(tmp_path))
    train = [r for r in runner.run(cfg) if r["phase"] == "train"]
    assert all(r["conflict_share"] == 0 for r in train)  # no projection in the baseline
    for r in train:  # the estimate is a success rate of finished episodes, i.e. equals the logged success
        assert r["j_ra"] == pytest.approx(r["success"] or 0.0)
    lam = 1.0
    for r in train:
        lam = max(0.0, lam + 0.5 * (0.9 - r["j_ra"]))
        assert r["lambda"] == pytest.approx(lam)
    assert set(checkpoint.load(str(tmp_path))["models"]) == {"agent", "ra_critic"}


def test_rapc_on_ra_point_then_sampled_certificate_and_eval(run_cli, tmp_path):
    out = str(tmp_path / "pt")
    args = [x for kv in TINY.items() for x in ("--set", f"{kv[0]}={kv[1]}")]
    res = run_cli("train", "rl", "--algo", "rapc", "--env", "mlx26/ra-point", "--steps", "64", *args,
                  "--eval-episodes", "2", "--out", out, "--quiet")
    assert res.code == 0, res.stderr
    res = run_cli("rl", "reach-avoid", "certify", "--checkpoint", out, "--p", "0.01", "--n-mc", "5", "--format", "json")
    assert res.code == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["env"] == "mlx26/ra-point" and rep["sampled_states"] == 300
    # the statistical certificate: certified ⊆ tested candidates, each with a Clopper–Pearson lower bound ≥ p
    assert rep["certified"] <= rep["candidates_tested"] <= 300 and len(rep["certified_p_hat"]) == rep["certified"]
    assert all(lo >= 0.01 for lo in rep["certified_cp_lower"])
    res = run_cli("rl", "eval", "--checkpoint", out, "--episodes", "3", "--format", "json")
    assert res.code == 0, res.stderr
    rep = json.loads(res.stdout)
    assert {"ra_success", "ra_unsafe", "ra_cost"} <= set(rep)
    bad = run_cli("rl", "reach-avoid", "certify", "--checkpoint", out, "--p", "1.5")
    assert bad.code == 2 and "p must be in (0, 1]" in bad.stderr


def test_optimum_cli(run_cli):
    res = run_cli("rl", "reach-avoid", "optimum", "--p", "0.7", "--format", "json")
    assert res.code == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["p_ra"] == pytest.approx(0.7) and rep["cost_check"] == pytest.approx(rep["optimal_cost"])
    assert run_cli("rl", "reach-avoid", "optimum", "--p", "0").code == 2
    nan = run_cli("rl", "reach-avoid", "optimum", "--mud-cost", "nan")
    assert nan.code == 2 and "mud_cost must be finite" in nan.stderr


def test_mujoco_variants_report_reach_avoid_info():
    pytest.importorskip("mujoco")
    for name in ("mlx26/ra-reacher", "mlx26/ra-hopper"):
        env = envs.make_env(name)
        env.reset(seed=0)
        env.action_space.seed(0)
        for _ in range(400):
            _, _, term, trunc, info = env.step(env.action_space.sample())
            assert {"reached", "unsafe", "cost"} <= set(info) and info["cost"] > 0
            if term or trunc:
                break
        assert term == (info["reached"] or info["unsafe"])
