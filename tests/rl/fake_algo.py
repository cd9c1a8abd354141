"""A stand-in for a later issue's algorithm (e.g. RAPC): proves the registry contract."""

from __future__ import annotations

from dataclasses import dataclass

from mlx26.core.rl.hparams import doc


@dataclass
class Hyperparams:
    p: float = doc(0.9, "a probability")

    def validate(self) -> None:
        if not 0 < self.p <= 1:
            raise ValueError(f"p must be in (0, 1], got {self.p}")


class _Zero:
    def reset(self, seed: int) -> None:
        pass

    def __call__(self, obs):
        return 0


def load_policy(state, env):
    return _Zero()


def train(cfg):
    for step in range(1, cfg.steps + 1):
        yield {"step": step, "phase": "train", "p": cfg.hp.p}
