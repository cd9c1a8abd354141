"""DQN (Mnih et al. 2015), one readable file in the cleanrl spirit (vwxyzjn/cleanrl ``dqn.py``).

Defaults are the RL-Zoo hyperparameters that stable-baselines3 uses for CartPole-v1 (so the
side-by-side benchmark compares like with like): Adam 2.3e-3, batch 64, 100k buffer, 1k
warm-up steps, 128 gradient steps every 256 env steps, hard target update every 10 env steps,
ε decaying 1 → 0.04 over 16% of the run, Huber loss, gradient-norm clip 10, a 256-256 MLP.
Discrete action spaces only. Truncated episodes bootstrap (only true terminations cut the target).

A checkpoint holds everything the loop carries — networks, optimiser, replay buffer, every RNG,
the episode in progress (rebuilt by replaying its actions, :class:`~.common.EpisodeLog`), the
recent returns and the last loss — so ``--resume`` after Ctrl-C (or from any ``--eval-every``
checkpoint) produces the same records and weights as an uninterrupted run with the same seed.
"""


from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from mlx26.core.common.errors import InputError
from mlx26.core.rl.algos import common
from mlx26.core.rl.hparams import TrainConfig, doc
from torch import nn

HANDLES_STOP = True  # train() polls cfg.stop and writes its own checkpoint


@dataclass
class Hyperparams:
    lr: float = doc(2.3e-3, "Adam learning rate")
    batch_size: int = doc(64, "minibatch size")
    buffer_size: int = doc(100_000, "replay buffer capacity")
    learning_starts: int = doc(1000, "env steps before the first update")
    gamma: float = doc(0.99, "discount")
    train_freq: int = doc(256, "env steps between training phases")
    gradient_steps: int = doc(128, "gradient steps per training phase")
    target_update_interval: int = doc(10, "env steps between target-network updates")
    tau: float = doc(1.0, "target update rate (1 = hard copy)")
    exploration_fraction: float = doc(0.16, "fraction of the run over which ε decays")
    start_e: float = doc(1.0, "initial ε")
    end_e: float = doc(0.04, "final ε")
    max_grad_norm: float = doc(10.0, "gradient-norm clip")
    hidden: tuple = doc((256, 256), "Q-network hidden sizes")
    log_every: int = doc(1000, "env steps between training-metric records")
    layer_norm: bool = doc(False, "LayerNorm after each hidden layer (rationality regulariser)")
    l2: float = doc(0.0, "l2 penalty coefficient on the Q-network weights (rationality regulariser)")
    weight_norm: bool = doc(False, "weight normalisation of every linear layer (rationality regulariser)")

    def validate(self) -> None:
        if self.lr <= 0 or self.batch_size < 1 or self.buffer_size < self.batch_size:
            raise InputError("dqn: need lr > 0, batch_size ≥ 1 and buffer_size ≥ batch_size")
        if not 0 <= self.gamma <= 1:
            raise InputError(f"dqn: gamma must be in [0, 1], got {self.gamma}")
        if self.l2 < 0:
            raise InputError(f"dqn: l2 must be ≥ 0, got {self.l2}")


def check_config(cfg: TrainConfig) -> None:
    env = common.env_for(cfg)
    if not hasattr(env.action_space, "n"):
        raise InputError(f"dqn needs a discrete action space; {cfg.env} has {env.action_space}",
                         "use --algo ppo for continuous actions")
    if cfg.dataset:
        raise InputError("dqn is an online algorithm and takes no --dataset")


def q_network(obs_dim: int, n_actions: int, hidden, layer_norm: bool = False, weight_norm: bool = False
              ) -> nn.Module:
    """The Q-MLP; ``layer_norm`` / ``weight_norm`` (defaults off) are the rationality regularisers."""
    wrap = nn.utils.parametrizations.weight_norm if weight_norm else (lambda m: m)
    layers: list[nn.Module] = []
    d = obs_dim
    for h in hidden:
        layers += [wrap(nn.Linear(d, h)), *([nn.LayerNorm(h)] if layer_norm else []), nn.ReLU()]
        d = h
    layers.append(wrap(nn.Linear(d, n_actions)))
    return nn.Sequential(*layers)


def _net(hp: Hyperparams, obs_dim: int, n_actions: int) -> nn.Module:
    return q_network(obs_dim, n_actions, hp.hidden, hp.layer_norm, hp.weight_norm)


class GreedyPolicy:
    def __init__(self, q: nn.Module, device: torch.device):
        self.q, self.device = q, device

    def reset(self, seed: int) -> None:
        pass

    def __call__(self, obs: np.ndarray) -> int:
        with torch.no_grad():
            x = torch.as_tensor(obs, dtype=torch.float32, device=self.device).reshape(1, -1)
            return int(self.q(x).argmax(dim=1).item())


def load_policy(state: dict, env) -> GreedyPolicy:
    hp = Hyperparams(**{**state["config"]["hp"], "hidden": tuple(state["config"]["hp"]["hidden"])})
    q = _net(hp, int(np.prod(state["space"]["obs_shape"])), state["space"]["n_actions"])
    q.load_state_dict(state["models"]["q"])
    return GreedyPolicy(q.eval(), torch.device("cpu"))


class Replay:
    def __init__(self, size: int, obs_dim: int):
        self.obs = np.zeros((size, obs_dim), np.float32)
        self.next_obs = np.zeros((size, obs_dim), np.float32)
        self.actions = np.zeros(size, np.int64)
        self.rewards = np.zeros(size, np.float32)
        self.dones = np.zeros(size, np.float32)
        self.size, self.pos, self.full = size, 0, False

    def add(self, obs, action, reward, next_obs, terminated) -> None:
        i = self.pos
        self.obs[i], self.actions[i], self.rewards[i] = obs, action, reward
        self.next_obs[i], self.dones[i] = next_obs, float(terminated)
        self.pos = (i + 1) % self.size
        self.full = self.full or self.pos == 0

    def __len__(self) -> int:
        return self.size if self.full else self.pos

    def sample(self, n: int, rng: np.random.Generator, device: torch.device):
        idx = rng.integers(0, len(self), size=n)
        t = lambda a: torch.as_tensor(a[idx], device=device)  # noqa: E731
        return t(self.obs), t(self.actions), t(self.rewards), t(self.next_obs), t(self.dones)

    def state(self) -> dict:
        n = len(self)
        return {"obs": self.obs[:n], "next_obs": self.next_obs[:n], "actions": self.actions[:n],
                "rewards": self.rewards[:n], "dones": self.dones[:n], "pos": self.pos, "full": self.full}

    def load(self, s: dict) -> None:
        n = len(s["actions"])
        self.obs[:n], self.next_obs[:n], self.actions[:n] = s["obs"], s["next_obs"], s["actions"]
        self.rewards[:n], self.dones[:n], self.pos, self.full = s["rewards"], s["dones"], s["pos"], s["full"]


def epsilon(hp: Hyperparams, step: int, total: int) -> float:
    duration = max(1.0, hp.exploration_fraction * total)
    return max(hp.end_e, hp.start_e + (hp.end_e - hp.start_e) * step / duration)


def train(cfg: TrainConfig) -> Iterator[dict]:
    hp: Hyperparams = cfg.hp
    device = common.setup(cfg)
    env, eval_env = common.env_for(cfg), common.env_for(cfg)
    obs_dim = int(np.prod(env.observation_space.shape))
    q = _net(hp, obs_dim, int(env.action_space.n)).to(device)
    target = copy.deepcopy(q)
    opt = torch.optim.Adam(q.parameters(), lr=hp.lr)
    buffer = Replay(hp.buffer_size, obs_dim)
    rng = np.random.default_rng(cfg.seed)
    start, progress = 0, None
    if cfg.resume_state:
        s = cfg.resume_state
        q.load_state_dict(s["models"]["q"])
        target.load_state_dict(s["models"]["target"])
        opt.load_state_dict(s["optim"])
        buffer.load(s["buffer"])
        rng.bit_generator.state = s["np_rng"]
        common.set_rng_state(s["rng"])
        start, progress = s["step"], s.get("progress")
    due = common.eval_points(cfg, cfg.steps)
    episode = common.EpisodeLog(env)
    obs = episode.restore(progress["episode"]) if progress else None
    if obs is not None and progress is not None:  # the env is back mid-episode, as at the checkpoint: the run continues exactly
        episode_return, recent, loss_value = progress["episode_return"], list(progress["recent"]), progress["loss"]
    else:  # a fresh run (or a checkpoint written before progress was stored)
        obs, _ = episode.reset(seed=cfg.seed + start)
        episode_return, recent, loss_value = 0.0, list[float](), float("nan")

    def snapshot(step: int) -> dict:
        return {**common.base_state(cfg, step, env), "models": {"q": q.state_dict(), "target": target.state_dict()},
                "optim": opt.state_dict(), "buffer": buffer.state(), "np_rng": rng.bit_generator.state,
                "rng": common.rng_state(),
                "progress": {"episode": episode.state(obs), "episode_return": episode_return, "recent": list(recent),
                             "loss": loss_value}}

    if common.stop_now(cfg) and start < cfg.steps:  # a signal during start-up
        common.interrupt(cfg, start, cfg.steps, snapshot(start))
    for step in range(start + 1, cfg.steps + 1):
        if rng.random() < epsilon(hp, step, cfg.steps):
            action = int(rng.integers(env.action_space.n))
        else:
            with torch.no_grad():
                action = int(q(torch.as_tensor(obs, dtype=torch.float32, device=device)[None]).argmax().item())
        next_obs, reward, terminated, truncated, _ = episode.step(action)
        buffer.add(np.ravel(obs), action, reward, np.ravel(next_obs), terminated)
        episode_return += float(reward)
        obs = next_obs
        if terminated or truncated:
            recent = (recent + [episode_return])[-20:]
            episode_return = 0.0
            obs, _ = episode.reset()
        common.report(cfg, step, cfg.steps)
        if step > hp.learning_starts and step % hp.train_freq == 0:
            for _ in range(hp.gradient_steps):
                o, a, r, o2, d = buffer.sample(hp.batch_size, rng, device)
                with torch.no_grad():
                    y = r + hp.gamma * (1 - d) * target(o2).max(dim=1).values
                pred = q(o).gather(1, a[:, None]).squeeze(1)
                loss = F.smooth_l1_loss(pred, y)
                if hp.l2 > 0:
                    loss = loss + hp.l2 * sum((p**2).sum() for n, p in q.named_parameters() if "bias" not in n)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(q.parameters(), hp.max_grad_norm)
                opt.step()
            loss_value = float(loss.item())
            common.check_finite(step, loss=loss_value)
        if step % hp.target_update_interval == 0:
            from mlx26.core.rl.nets import polyak

            polyak(target, q, hp.tau)
        if step % hp.log_every == 0 or step == cfg.steps:  # the final step is always logged
            yield {"step": step, "phase": "train", "loss": loss_value if np.isfinite(loss_value) else None,
                   "epsilon": round(epsilon(hp, step, cfg.steps), 4),
                   "episode_return": float(np.mean(recent)) if recent else None}
        if due(step):
            yield from common.evaluate_and_save(cfg, step, GreedyPolicy(q, device), eval_env, snapshot(step))
        if step < cfg.steps and common.stop_now(cfg):  # SIGINT/SIGTERM: keep this step's state, exit 130
            common.interrupt(cfg, step, cfg.steps, None if due(step) else snapshot(step))
