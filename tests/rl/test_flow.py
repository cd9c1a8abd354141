"""DFQL reconstruction properties (gradient identity, cosine, mode shares) and FQL/DFQL runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gymnasium")

from mlx26.core.rl import toy_experiments as te  # noqa: E402
from mlx26.core.rl import toy_modes  # noqa: E402
from mlx26.core.rl.algos import dfql  # noqa: E402
from mlx26.core.rl.nets import MLP, QEnsemble  # noqa: E402


class StateTimeField(torch.nn.Module):
    """v(s, a, t) that ignores a: the case in which the surrogate must equal BPTT exactly."""

    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = MLP(obs_dim + 1, (32, 32), act_dim)

    def forward(self, obs, act, t):
        return self.net(torch.cat([obs, t], dim=-1))


@pytest.mark.parametrize("K", [1, 4, 10])
def test_surrogate_equals_bptt_when_v_ignores_the_action(K):
    torch.manual_seed(K)
    v = StateTimeField(3, 2).double()
    critic = QEnsemble(3, 2, (32, 32)).double()
    obs, noise = torch.randn(64, 3, dtype=torch.float64), torch.randn(64, 2, dtype=torch.float64)
    sur, bptt = dfql.surrogate_and_bptt_grads(v, critic, obs, noise, K)
    assert bptt.abs().max() > 1e-3  # a real gradient, not two zeros
    assert torch.allclose(sur, bptt, atol=1e-6, rtol=0), float((sur - bptt).abs().max())


def test_surrogate_differs_from_bptt_when_v_depends_on_the_action():
    torch.manual_seed(0)
    v = dfql.VectorField(3, 2, (32, 32)).double()
    critic = QEnsemble(3, 2, (32, 32)).double()
    sur, bptt = dfql.surrogate_and_bptt_grads(v, critic, torch.randn(64, 3).double(), torch.randn(64, 2).double(), 8)
    assert (sur - bptt).abs().max() > 1e-6  # the dropped Jacobian terms are real


def test_batched_velocity_pass_matches_a_python_loop():
    torch.manual_seed(1)
    v, critic = dfql.VectorField(2, 2, (16,)), QEnsemble(2, 2, (16,))
    obs, noise, K = torch.randn(5, 2), torch.randn(5, 2), 6
    loss, _ = dfql.direct_flow_loss(v, critic, obs, noise, K, clip=False, normalize=False)
    a_K, path = dfql.rollout(v, obs, noise, K)
    a = a_K.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(critic(obs, a).mean(0).sum(), a)
    loop = -sum((v(obs, path[k], torch.full((5, 1), k / K)) * g).sum(-1).mean() for k in range(K)) / K
    assert torch.allclose(loss, loop, atol=1e-6)


@pytest.fixture(scope="module")
def bc_agent():
    return te.train_toy("bc", 600, seed=0)


def test_bc_only_puts_a_quarter_in_each_mode(bc_agent):
    assert bc_agent["finite"]
    assert all(abs(s - 0.25) <= 0.05 for s in bc_agent["shares"]), bc_agent["shares"]


def test_surrogate_gradient_aligns_with_bptt_after_bc(bc_agent):
    agent = bc_agent["agent"]
    assert te.gradient_cosine(agent, seed=1) > 0.9


def test_dfql_moves_mass_into_the_best_mode():
    result = te.train_toy("dfql", 400, seed=0, bc_steps=300, alpha=0.1)
    assert result["finite"]
    assert result["best_share"] >= 0.7, result["shares"]
    assert result["q_pi"] <= 1.1  # no runaway over-estimation: the true maximum is 1
    assert toy_modes.mode_values()[toy_modes.BEST] == max(toy_modes.mode_values())


def test_stress_reports_finite_gradient_statistics():
    out = te.stress(K=16, depth=3, width=32, batches=4, bc_steps=20)
    for key in ("dfql_grad_norm_var", "bptt_grad_norm_var", "var_ratio_dfql_over_bptt", "cosine_mean"):
        assert np.isfinite(out[key]) and out[key] >= -1
    assert out["dfql_grad_norm_mean"] > 0 and out["bptt_grad_norm_mean"] > 0


@pytest.mark.slow
def test_stress_k64_deep():
    out = te.stress(K=64, depth=6, width=128, batches=16, bc_steps=300)
    assert np.isfinite(out["var_ratio_dfql_over_bptt"]) and out["cosine_mean"] > 0


@pytest.mark.parametrize("algo", ["fql", "dfql"])
def test_offline_cli_run_checkpoint_eval_and_online_phase(run_cli, tmp_path, algo):
    data = str(tmp_path / "toy.npz")
    assert run_cli("rl", "data", "make", "--env", "mlx26/toy-modes", "--steps", "300", "--out", data,
                   "--quiet").code == 0
    out = str(tmp_path / algo)
    result = run_cli("train", "rl", "--algo", algo, "--env", "mlx26/toy-modes", "--dataset", data, "--steps", "20",
                     "--online-steps", "10", "--flow-steps", "4", "--alpha", "3", "--set", "preset=small",
                     "--set", "actor_hidden=32,32", "--set", "value_hidden=32,32", "--set", "batch_size=32",
                     "--set", "log_every=10", "--eval-episodes", "4", "--out", out, "--quiet")
    assert result.code == 0, result.stderr
    recs = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["phase"] for r in recs] == ["train", "train", "online", "eval"]
    cfg = json.loads((tmp_path / algo / "config.json").read_text())
    assert cfg["hp"]["flow_steps"] == 4 and cfg["hp"]["alpha"] == 3.0 and cfg["hp"]["online_steps"] == 10
    ev = json.loads(run_cli("rl", "eval", "--checkpoint", out, "--format", "json").stdout)
    assert ev["eval_returns"] == recs[-1]["eval_returns"] and ev["matches_training_eval"] is True


def test_offline_to_online_resume_extends_the_run(run_cli, tmp_path):
    data = str(tmp_path / "toy.npz")
    assert run_cli("rl", "data", "make", "--env", "mlx26/toy-modes", "--steps", "200", "--out", data,
                   "--quiet").code == 0
    out = str(tmp_path / "r")
    tiny = ["--set", "preset=small", "--set", "actor_hidden=16", "--set", "value_hidden=16", "--set", "batch_size=16",
            "--set", "log_every=10"]
    first = run_cli("train", "rl", "--algo", "dfql", "--env", "mlx26/toy-modes", "--dataset", data, "--steps", "20",
                    "--online-steps", "10", *tiny, "--eval-every", "10", "--eval-episodes", "2", "--out", out,
                    "--quiet")
    assert first.code == 0, first.stderr
    again = run_cli("train", "rl", "--out", out, "--resume", "--steps", "40", "--quiet")
    assert again.code == 0, again.stderr
    phases = [(r["step"], r["phase"]) for r in map(json.loads, again.stdout.splitlines())]
    assert phases == [(40, "train"), (40, "eval"), (50, "online"), (50, "eval")]
