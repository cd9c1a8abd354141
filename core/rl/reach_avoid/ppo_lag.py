"""PPO-Lagrangian baseline for reach-avoid (``--algo ppo-lag``), run beside RAPC (Pan et al.,
ICML 2026, reconstruction) as the paper's standard constrained-RL comparison.

Minimise expected cost subject to P(success) ≥ p with a Lagrange multiplier, in the style of
Ray, Achiam & Amodei 2019 (safety-starter-agents): the penalised objective
(L_cost + λ L_success) / (1 + λ) of two PPO-clip surrogates on separately normalised
advantages, A_success being the GAE of the success indicator (reward 1 on reaching G,
episodes end in G ∪ F); λ ← max(0, λ + η_λ (p − ŝ)) with ŝ
the empirical success rate of the rollout's finished episodes. It shares rollouts, critics and
defaults with :mod:`.rapc` (same code path), without projection and without the certificate.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mlx26.core.rl.algos.ppo import check_rollout_shape
from mlx26.core.rl.hparams import TrainConfig, doc
from mlx26.core.rl.reach_avoid.rapc import check_config, constrained_ppo, load_policy

__all__ = ["Hyperparams", "check_config", "load_policy", "train"]


@dataclass
class Hyperparams:
    p: float = doc(0.9, "required success probability, in (0, 1]")
    gamma_ra: float = doc(0.99, "discount of the success critic, in (0, 1)")
    gamma: float = doc(0.99, "cost discount")
    gae_lambda: float = doc(0.95, "GAE λ for both critics")
    lr: float = doc(3e-4, "Adam learning rate")
    lambda_lr: float = doc(0.5, "step size of the Lagrange multiplier")
    lambda_init: float = doc(1.0, "initial Lagrange multiplier")
    num_envs: int = doc(4, "parallel environments")
    num_steps: int = doc(128, "steps per env per rollout")
    num_minibatches: int = doc(4, "minibatches per epoch")
    update_epochs: int = doc(4, "epochs per rollout")
    clip_coef: float = doc(0.2, "surrogate clipping ε")
    ent_coef: float = doc(0.01, "entropy bonus")
    max_grad_norm: float = doc(0.5, "gradient-norm clip")
    hidden: tuple = doc((64, 64), "actor and critic hidden sizes")

    def validate(self) -> None:
        if not 0 < self.p <= 1:
            raise ValueError(f"ppo-lag: p must be in (0, 1], got {self.p}")
        if not 0 < self.gamma_ra < 1:
            raise ValueError(f"ppo-lag: gamma_ra must be in (0, 1), got {self.gamma_ra}")
        check_rollout_shape("ppo-lag", self.num_envs, self.num_steps, self.num_minibatches)


def train(cfg: TrainConfig) -> Iterator[dict]:
    return constrained_ppo(cfg, lagrangian=True)
