"""DQN / PPO baselines: schedules, tiny runs on discrete and continuous envs (budgets far below solving)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("gymnasium")

from mlx26.core.rl import runner  # noqa: E402
from mlx26.core.rl.algos import dqn  # noqa: E402


def test_epsilon_schedule_is_linear_then_flat():
    hp = dqn.Hyperparams()
    assert dqn.epsilon(hp, 0, 1000) == 1.0
    assert dqn.epsilon(hp, 80, 1000) == pytest.approx(1.0 - 0.96 * 80 / 160)
    assert dqn.epsilon(hp, 160, 1000) == pytest.approx(0.04) and dqn.epsilon(hp, 999, 1000) == 0.04


def test_replay_buffer_wraps_and_round_trips():
    import numpy as np

    buf = dqn.Replay(4, 2)
    for i in range(6):
        buf.add(np.full(2, i), i % 2, float(i), np.full(2, i + 1), i == 5)
    assert len(buf) == 4 and buf.full and sorted(buf.rewards.tolist()) == [2.0, 3.0, 4.0, 5.0]
    copy = dqn.Replay(4, 2)
    copy.load(buf.state())
    assert (copy.obs == buf.obs).all() and copy.pos == buf.pos


@pytest.mark.parametrize("env", ["CartPole-v1", "Pendulum-v1"])
def test_ppo_tiny_runs_discrete_and_continuous(env, tmp_path):
    cfg = runner.build_config("ppo", env, {"num_envs": "2", "num_steps": "32", "num_minibatches": "2",
                                           "update_epochs": "1"}, steps=128, eval_episodes=1, out=str(tmp_path))
    recs = list(runner.run(cfg))
    assert [r["phase"] for r in recs] == ["train", "train", "eval"]
    assert recs[-1]["step"] == 128 and (tmp_path / "metrics.jsonl").read_text().count("\n") == 3


def test_ppo_checkpoint_eval_reproduces(run_cli, tmp_path):
    out = str(tmp_path / "ppo")
    result = run_cli("train", "rl", "--algo", "ppo", "--env", "Pendulum-v1", "--steps", "64", "--set", "num_envs=1",
                     "--set", "num_steps=64", "--set", "num_minibatches=2", "--eval-episodes", "2", "--out", out,
                     "--quiet")
    assert result.code == 0, result.stderr
    last = json.loads(result.stdout.splitlines()[-1])
    ev = json.loads(run_cli("rl", "eval", "--checkpoint", out, "--format", "json").stdout)
    assert ev["eval_returns"] == last["eval_returns"]


def test_ppo_rejects_indivisible_minibatches():
    with pytest.raises(ValueError, match="divisible"):
        runner.build_config("ppo", "CartPole-v1", {"num_envs": "3", "num_steps": "5", "num_minibatches": "4"})
