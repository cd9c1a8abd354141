"""PPO-clip (Schulman et al. 2017), one readable file in the cleanrl spirit (``ppo.py`` and
``ppo_continuous_action.py`` of vwxyzjn/cleanrl merged): synchronous vector envs, GAE,
clipped surrogate + clipped value loss, entropy bonus, advantage normalisation, linear LR
annealing, gradient-norm clip. Discrete actions → categorical head; Box actions → Gaussian with
a state-independent log-std, clipped to the action bounds when stepping. Defaults are cleanrl's
CartPole settings. Truncated episodes bootstrap from the final observation's value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from mlx26.core.common.errors import InputError
from mlx26.core.rl.algos import common
from mlx26.core.rl.hparams import TrainConfig, doc
from mlx26.core.rl.nets import ActorCritic, DeterministicPolicy, load_actor_critic_policy
from torch import nn

HANDLES_STOP = True  # train() polls cfg.stop at update boundaries and writes its own checkpoint


@dataclass
class Hyperparams:
    lr: float = doc(2.5e-4, "Adam learning rate (annealed linearly to 0)")
    num_envs: int = doc(4, "parallel environments")
    num_steps: int = doc(128, "steps per env per rollout")
    gamma: float = doc(0.99, "discount")
    gae_lambda: float = doc(0.95, "GAE λ")
    num_minibatches: int = doc(4, "minibatches per epoch")
    update_epochs: int = doc(4, "epochs per rollout")
    clip_coef: float = doc(0.2, "surrogate clipping ε")
    ent_coef: float = doc(0.01, "entropy bonus")
    vf_coef: float = doc(0.5, "value-loss weight")
    max_grad_norm: float = doc(0.5, "gradient-norm clip")
    anneal_lr: bool = doc(True, "anneal the learning rate to 0")
    hidden: tuple = doc((64, 64), "actor and critic hidden sizes")
    reward: str = doc("env", "env | weighted (reach-avoid envs: −cost + w_goal·reached − w_unsafe·unsafe)")
    w_goal: float = doc(0.0, "weighted reward: bonus for reaching the goal set")
    w_unsafe: float = doc(0.0, "weighted reward: penalty for entering the unsafe set")

    def validate(self) -> None:
        check_rollout_shape("ppo", self.num_envs, self.num_steps, self.num_minibatches)
        if not 0 < self.gamma <= 1 or not 0 <= self.gae_lambda <= 1:
            raise InputError(f"ppo: gamma must be in (0, 1] and gae_lambda in [0, 1], got {self.gamma}, {self.gae_lambda}")
        if self.reward not in ("env", "weighted"):
            raise InputError(f"ppo: reward must be env or weighted, got '{self.reward}'")
        if self.w_goal < 0 or self.w_unsafe < 0:
            raise InputError("ppo: w_goal and w_unsafe must be ≥ 0")
        if self.reward == "env" and (self.w_goal or self.w_unsafe):
            raise InputError("ppo: w_goal / w_unsafe only apply with reward=weighted", "add --reward weighted")


def log_prob(dist, actions, discrete: bool):
    """Per-sample log-probability; continuous actions sum over action dimensions."""
    return dist.log_prob(actions) if discrete else dist.log_prob(actions).sum(-1)


def log_prob_entropy(dist, actions, discrete: bool):
    """Per-sample log-probability and entropy (summed over dimensions for continuous actions)."""
    entropy = dist.entropy() if discrete else dist.entropy().sum(-1)
    return log_prob(dist, actions, discrete), entropy


def check_rollout_shape(algo: str, num_envs: int, num_steps: int, num_minibatches: int) -> None:
    """PPO-style rollouts: positive sizes, and a batch that splits evenly into minibatches."""
    if num_envs < 1 or num_steps < 1 or num_minibatches < 1:
        raise InputError(f"{algo}: num_envs, num_steps and num_minibatches must be ≥ 1")
    if (num_envs * num_steps) % num_minibatches:
        raise InputError(f"{algo}: num_envs × num_steps must be divisible by num_minibatches")


def check_config(cfg: TrainConfig) -> None:
    if cfg.hp.reward == "weighted":
        from mlx26.core.rl.reach_avoid.rapc import check_config as needs_reach_avoid_info

        needs_reach_avoid_info(cfg)
    if cfg.dataset:
        raise InputError("ppo is an online algorithm and takes no --dataset")
    common.env_for(cfg)


def load_policy(state: dict, env) -> DeterministicPolicy:
    return load_actor_critic_policy(state)


def train(cfg: TrainConfig) -> Iterator[dict]:
    import gymnasium as gym
    from mlx26.core.rl.envs import space_info

    hp: Hyperparams = cfg.hp
    device = common.setup(cfg)
    def make():
        env = common.env_for(cfg)
        if hp.reward == "weighted":
            from mlx26.core.rl.reach_avoid.wrappers import WeightedReachAvoidReward

            env = WeightedReachAvoidReward(env, hp.w_goal, hp.w_unsafe)
        return env

    envs = gym.vector.SyncVectorEnv([make for _ in range(hp.num_envs)],
                                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    eval_env = make()
    space = space_info(eval_env)
    obs_dim = int(np.prod(eval_env.observation_space.shape))
    agent = ActorCritic(obs_dim, space, hp.hidden).to(device)
    opt = torch.optim.Adam(agent.parameters(), lr=hp.lr, eps=1e-5)
    batch = hp.num_envs * hp.num_steps
    n_updates = max(1, cfg.steps // batch)
    start = 0
    if cfg.resume_state:
        s = cfg.resume_state
        agent.load_state_dict(s["models"]["agent"])
        opt.load_state_dict(s["optim"])
        common.set_rng_state(s["rng"])
        start = s["update"]
    due = common.eval_points(cfg, n_updates * batch)
    next_obs, _ = envs.reset(seed=cfg.seed + start)
    next_obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device).reshape(hp.num_envs, -1)
    act_shape = () if space["discrete"] else (space["action_dim"],)
    ep_ret, finished = np.zeros(hp.num_envs), list[float]()

    def snapshot(update: int) -> dict:
        return {**common.base_state(cfg, update * batch, eval_env), "update": update,
                "models": {"agent": agent.state_dict()}, "optim": opt.state_dict(), "rng": common.rng_state()}

    if start < n_updates and common.stop_now(cfg):  # a signal during start-up
        common.interrupt(cfg, start * batch, n_updates * batch, snapshot(start))
    for update in range(start + 1, n_updates + 1):
        if hp.anneal_lr:
            opt.param_groups[0]["lr"] = hp.lr * (1.0 - (update - 1.0) / n_updates)
        obs_b = torch.zeros((hp.num_steps, hp.num_envs, obs_dim), device=device)
        act_b = torch.zeros((hp.num_steps, hp.num_envs, *act_shape), device=device)
        logp_b, rew_b, done_b, val_b = (torch.zeros((hp.num_steps, hp.num_envs), device=device) for _ in range(4))
        for t in range(hp.num_steps):
            obs_b[t] = next_obs
            with torch.no_grad():
                d = agent.dist(next_obs)
                action = d.sample()
                logp = log_prob(d, action, space["discrete"])
                val_b[t] = agent.value(next_obs)
            act_b[t], logp_b[t] = action, logp
            env_action = action.cpu().numpy()
            if not space["discrete"]:
                env_action = np.clip(env_action, space["action_low"], space["action_high"])
            raw_obs, reward, term, trunc, info = envs.step(env_action)
            reward = np.asarray(reward, dtype=np.float64)
            ep_ret += reward
            for i in np.flatnonzero(trunc & ~term):  # bootstrap truncated episodes (SAME_STEP final obs)
                final = torch.as_tensor(np.asarray(info["final_obs"][i], np.float32), device=device).reshape(1, -1)
                with torch.no_grad():
                    reward[i] += hp.gamma * float(agent.value(final))
            for i in np.flatnonzero(term | trunc):
                finished = (finished + [float(ep_ret[i])])[-20:]
                ep_ret[i] = 0.0
            rew_b[t] = torch.as_tensor(reward, dtype=torch.float32, device=device)
            done_b[t] = torch.as_tensor(term | trunc, dtype=torch.float32, device=device)
            next_obs = torch.as_tensor(raw_obs, dtype=torch.float32, device=device).reshape(hp.num_envs, -1)
            common.report(cfg, (update - 1) * batch + (t + 1) * hp.num_envs, n_updates * batch)
        with torch.no_grad():  # GAE
            adv = torch.zeros_like(rew_b)
            last: torch.Tensor | float = 0.0
            next_value = agent.value(next_obs)
            for t in reversed(range(hp.num_steps)):
                nv = next_value if t == hp.num_steps - 1 else val_b[t + 1]
                nonterminal = 1.0 - done_b[t]
                delta = rew_b[t] + hp.gamma * nv * nonterminal - val_b[t]
                last = delta + hp.gamma * hp.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + val_b
        b_obs, b_act = obs_b.reshape(batch, obs_dim), act_b.reshape(batch, *act_shape)
        b_logp, b_adv, b_ret, b_val = logp_b.reshape(-1), adv.reshape(-1), ret.reshape(-1), val_b.reshape(-1)
        mb = batch // hp.num_minibatches
        for _ in range(hp.update_epochs):
            perm = torch.randperm(batch, device=device)
            for s0 in range(0, batch, mb):
                idx = perm[s0:s0 + mb]
                logp, entropy = log_prob_entropy(agent.dist(b_obs[idx]), b_act[idx], space["discrete"])
                ratio = (logp - b_logp[idx]).exp()
                a = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - hp.clip_coef, 1 + hp.clip_coef)).mean()
                v = agent.value(b_obs[idx])
                v_clip = b_val[idx] + (v - b_val[idx]).clamp(-hp.clip_coef, hp.clip_coef)
                v_loss = 0.5 * torch.max((v - b_ret[idx]) ** 2, (v_clip - b_ret[idx]) ** 2).mean()
                loss = pg_loss - hp.ent_coef * entropy.mean() + hp.vf_coef * v_loss
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), hp.max_grad_norm)
                opt.step()
        step = update * batch
        common.check_finite(step, loss=float(loss.item()))
        yield {"step": step, "phase": "train", "policy_loss": float(pg_loss.item()), "value_loss": float(v_loss.item()),
               "entropy": float(entropy.mean().item()), "episode_return": float(np.mean(finished)) if finished else None}
        if due(step) or update == n_updates:
            yield from common.evaluate_and_save(cfg, step, DeterministicPolicy(agent, space), eval_env,
                                                snapshot(update))
        if update < n_updates and common.stop_now(cfg):  # SIGINT/SIGTERM after a finished update: exit 130
            common.interrupt(cfg, step, n_updates * batch, None if due(step) else snapshot(update))
