"""FQL — Flow Q-Learning (Park, Li & Levine, 2025), torch port of the reference JAX agent
(seohongpark/fql ``agents/fql.py``).

A one-step policy μ_ω(s, z) is distilled from the K-step Euler flow of the BC flow policy
v_θ and trained to maximise Q:  L = L_FM(θ) + α·‖μ_ω(s, z) − flow(s, z)‖² − Q(s, μ_ω(s, z))
(the Q term optionally divided by mean |Q|). The critic's target actions and the evaluation
policy are μ_ω. Defaults as in the reference (batch 256, lr 3e-4, γ 0.99, K 10, α 10, 4×512
networks; ``--set preset=small`` for 2×256 on CPU).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch
from mlx26.core.rl.algos import flow
from mlx26.core.rl.hparams import TrainConfig
from mlx26.core.rl.nets import VectorField

check_config = flow.check_config

# The reference's per-environment settings (seohongpark/fql README, OGBench single-task commands), matched
# on the env name after ``ogbench:``; the first matching prefix wins (visual variants before plain ones).
# D4RL antmaze/adroit rows of that table are not listed: those envs cannot be made here.
ENV_DEFAULTS: tuple[tuple[str, dict], ...] = (
    ("visual-cube-double", {"alpha": 100.0}),
    ("visual-scene", {"alpha": 100.0}),
    ("visual-cube-single", {"alpha": 300.0}),
    ("visual-puzzle", {"alpha": 300.0}),
    ("cube-single", {"alpha": 300.0}),
    ("cube-double", {"alpha": 300.0}),
    ("scene", {"alpha": 300.0}),
    ("puzzle-3x3", {"alpha": 1000.0}),
    ("puzzle-4x4", {"alpha": 1000.0}),
    ("antmaze-large", {"alpha": 10.0, "q_agg": "min"}),
    ("antmaze-giant", {"alpha": 10.0, "q_agg": "min", "discount": 0.995}),
    ("humanoidmaze-medium", {"alpha": 30.0, "discount": 0.995}),
    ("humanoidmaze-large", {"alpha": 30.0, "discount": 0.995}),
    ("antsoccer-arena", {"alpha": 10.0, "discount": 0.995}),
)


def env_defaults(env_id: str) -> dict:
    """The reference FQL hyperparameters for ``env_id`` ({} when the table has no row for it)."""
    name = env_id.removeprefix("ogbench:")
    if name == env_id:
        return {}
    for prefix, values in ENV_DEFAULTS:
        if name.startswith(prefix):
            return dict(values)
    return {}


@dataclass
class Hyperparams(flow.FlowHyperparams):
    pass


class FQLAgent(flow.FlowAgent):
    def __init__(self, obs_dim: int, act_dim: int, hp: Hyperparams):
        super().__init__(obs_dim, act_dim, hp)
        self.onestep = VectorField(obs_dim, act_dim, hp.actor_hidden, with_time=False,
                                   layer_norm=hp.actor_layer_norm)

    def actor_parameters(self):
        return list(self.flow.parameters()) + list(self.onestep.parameters())

    def policy_actions(self, obs: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        return self.onestep(obs, noise).clamp(-1, 1)

    def target_actions(self, next_obs: torch.Tensor) -> torch.Tensor:
        return self.policy_actions(next_obs, self.noise(next_obs))

    def actor_loss(self, b):
        obs = b["observations"]
        fm = flow.bc_flow_loss(self.flow, obs, b["actions"], self.rows)
        noise = self.noise(b["actions"])
        with torch.no_grad():
            target = self.flow_actions(obs, noise)
        actions = self.onestep(obs, noise)
        distill = ((actions - target) ** 2).mean()
        q = self.critic(obs, actions.clamp(-1, 1)).mean(0)
        q_loss = -q.mean()
        if self.hp.normalize_q_loss:
            q_loss = q_loss / self.global_mean(q.abs().mean().detach()).clamp_min(1e-6)
        loss = fm + self.hp.alpha * distill + q_loss
        return loss, {"bc_flow_loss": fm.item(), "distill_loss": distill.item(), "q_loss": q_loss.item()}


def load_policy(state: dict, env) -> flow.FlowPolicy:
    return flow.load_flow_policy(FQLAgent, Hyperparams, state)


def train(cfg: TrainConfig) -> Iterator[dict]:
    yield from flow.train_loop(cfg, FQLAgent)


HANDLES_STOP = True  # flow.train_loop polls cfg.stop and writes its own checkpoint
