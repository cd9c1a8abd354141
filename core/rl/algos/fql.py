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
        noise = torch.randn(next_obs.shape[0], self.act_dim, dtype=next_obs.dtype, device=next_obs.device)
        return self.policy_actions(next_obs, noise)

    def actor_loss(self, b):
        obs = b["observations"]
        fm = flow.bc_flow_loss(self.flow, obs, b["actions"])
        noise = torch.randn_like(b["actions"])
        with torch.no_grad():
            target = self.flow_actions(obs, noise)
        actions = self.onestep(obs, noise)
        distill = ((actions - target) ** 2).mean()
        q = self.critic(obs, actions.clamp(-1, 1)).mean(0)
        q_loss = -q.mean()
        if self.hp.normalize_q_loss:
            q_loss = q_loss / q.abs().mean().detach().clamp_min(1e-6)
        loss = fm + self.hp.alpha * distill + q_loss
        return loss, {"bc_flow_loss": fm.item(), "distill_loss": distill.item(), "q_loss": q_loss.item()}


def load_policy(state: dict, env) -> flow.FlowPolicy:
    return flow.load_flow_policy(FQLAgent, Hyperparams, state)


def train(cfg: TrainConfig) -> Iterator[dict]:
    yield from flow.train_loop(cfg, FQLAgent)
