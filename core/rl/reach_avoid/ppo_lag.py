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

from mlx26.core.rl.hparams import TrainConfig
from mlx26.core.rl.reach_avoid.rapc import ConstrainedHyperparams, check_config, constrained_ppo, load_policy

__all__ = ["HANDLES_STOP", "Hyperparams", "check_config", "load_policy", "train"]

HANDLES_STOP = True  # the shared constrained_ppo() loop checkpoints on SIGINT/SIGTERM


@dataclass
class Hyperparams(ConstrainedHyperparams):
    def validate(self) -> None:
        self.check_common("ppo-lag")


def train(cfg: TrainConfig) -> Iterator[dict]:
    return constrained_ppo(cfg, lagrangian=True)
