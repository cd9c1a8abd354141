"""Token-action policies trained by GRPO (group-std normalisation, no KL) and REINFORCE (mean baseline).

Part of the vulnerability-games reconstruction (arXiv 2602.12124; the paper trains LMs with verl's GRPO). Here a
policy is a table of logits, one softmax per context of a :class:`~.games.Game`, so a loophole is found or not in
seconds and the two estimators can be compared exactly:

* GRPO — per step, ``prompts`` contexts, ``group`` sampled actions each; advantage (r − mean_g) / (std_g + 1e-4)
  within each group (a group with equal rewards gets 0), no KL term, no clipping (one update per batch, so the
  importance ratio is 1);
* REINFORCE — the same batch, advantage r − mean of the whole batch (the mean baseline).

The update is ∇ log π(a|c) · A averaged over the batch, applied with Adam (β = 0.9, 0.999): the same optimiser for
both estimators, so differences come from the advantage. ER, ITP and the expected reward are computed exactly
from the probabilities every ``log_every`` steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.vuln_games.games import Game
from mlx26.core.vuln_games.spec import TOKEN_ALGOS


@dataclass(frozen=True)
class TrainConfig:
    algo: str = "grpo"
    steps: int = 200
    prompts: int = 8
    group: int = 8
    lr: float = 0.05
    seed: int = 0
    log_every: int = 10


def check(cfg: TrainConfig) -> None:
    if cfg.algo not in TOKEN_ALGOS:
        raise unknown_name("token-action algorithm", cfg.algo, TOKEN_ALGOS)
    if cfg.steps < 0:
        raise InputError(f"--steps must be ≥ 0, got {cfg.steps}.")
    if cfg.prompts < 1 or cfg.group < 2:
        raise InputError(f"need --prompts ≥ 1 and --group ≥ 2 (GRPO compares within a group), got "
                         f"{cfg.prompts} and {cfg.group}.")
    if not (np.isfinite(cfg.lr) and cfg.lr > 0):
        raise InputError(f"--lr must be a positive number, got {cfg.lr}.")
    if cfg.log_every < 1:
        raise InputError(f"--log-every must be ≥ 1, got {cfg.log_every}.")


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class Adam:
    def __init__(self, shape: tuple[int, ...], lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
        self.m, self.v, self.t = np.zeros(shape), np.zeros(shape), 0
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps

    def ascend(self, theta: np.ndarray, grad: np.ndarray) -> None:
        self.t += 1
        self.m = self.b1 * self.m + (1 - self.b1) * grad
        self.v = self.b2 * self.v + (1 - self.b2) * grad * grad
        mh, vh = self.m / (1 - self.b1 ** self.t), self.v / (1 - self.b2 ** self.t)
        theta += self.lr * mh / (np.sqrt(vh) + self.eps)


def advantages(algo: str, r: np.ndarray) -> np.ndarray:
    """``r``: rewards (prompts × group). GRPO: group-standardised; REINFORCE: minus the batch mean."""
    if algo == "grpo":
        return (r - r.mean(axis=1, keepdims=True)) / (r.std(axis=1, keepdims=True) + 1e-4)
    return r - r.mean()


def policy_gradient(probs: np.ndarray, ctx: np.ndarray, act: np.ndarray, adv: np.ndarray) -> np.ndarray:
    """Mean over the batch of A · ∇_θ log π(a | c) for a softmax table θ (shape contexts × actions)."""
    grad = np.zeros_like(probs)
    flat_c, flat_a, flat_adv = ctx.ravel(), act.ravel(), adv.ravel()
    np.add.at(grad, (flat_c, flat_a), flat_adv)
    np.add.at(grad, flat_c, -flat_adv[:, None] * probs[flat_c])
    return grad / flat_adv.size


def sample(probs: np.ndarray, ctx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cdf = probs[ctx].cumsum(axis=-1)
    u = rng.random(ctx.shape + (1,))
    return np.minimum((u > cdf).sum(axis=-1), probs.shape[1] - 1)


def record(game: Game, theta: np.ndarray, step: int, algo: str, reward: float | None = None) -> dict[str, Any]:
    probs = softmax(theta)
    rec = {"step": step, "game": game.name, "variant": game.variant, "algo": algo, **game.metrics(probs)}
    rec["itp_ratio"] = rec["itp"] / game.oracle_itp if game.oracle_itp else None
    if reward is not None:
        rec["reward"] = reward
    return rec


def train(game: Game, cfg: TrainConfig, theta: np.ndarray | None = None, *, phase: str | None = None
          ) -> Iterator[tuple[dict[str, Any], np.ndarray]]:
    """Yield (record, logits) at step 0 and every ``log_every`` steps (and the last); ``theta`` is updated in place."""
    check(cfg)
    rng = np.random.default_rng(cfg.seed)
    theta = np.zeros((len(game.contexts), len(game.actions))) if theta is None else theta
    opt = Adam(theta.shape, cfg.lr)
    extra = {"phase": phase} if phase else {}
    yield {**record(game, theta, 0, cfg.algo), **extra}, theta
    rewards_seen = []
    for step in range(1, cfg.steps + 1):
        probs = softmax(theta)
        ctx = np.repeat(rng.choice(len(game.contexts), size=cfg.prompts, p=game.context_p)[:, None], cfg.group, 1)
        act = sample(probs, ctx, rng)
        r = np.asarray(game.rewards(ctx, act, rng), dtype=float).reshape(ctx.shape)
        opt.ascend(theta, policy_gradient(probs, ctx, act, advantages(cfg.algo, r)))
        rewards_seen.append(float(r.mean()))
        if step % cfg.log_every == 0 or step == cfg.steps:
            yield {**record(game, theta, step, cfg.algo, float(np.mean(rewards_seen))), **extra}, theta
            rewards_seen = []


def run(game: Game, cfg: TrainConfig, theta: np.ndarray | None = None) -> tuple[list[dict[str, Any]], np.ndarray]:
    recs, last = [], theta
    for rec, current in train(game, cfg, theta):
        recs.append(rec)
        last = current
    assert last is not None
    return recs, last
