"""Small torch building blocks: the MLP of the FQL reference (GELU, optional LayerNorm after
each hidden activation, variance-scaling "fan_avg" uniform init), a Q ensemble, and the PPO
actor-critic (tanh MLPs, orthogonal init; cleanrl) that ``ppo``, ``rapc``, ``ppo-lag`` and ``certify`` share."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical, Normal


def _init(layer: nn.Linear) -> nn.Linear:
    fan_avg = (layer.in_features + layer.out_features) / 2
    bound = math.sqrt(3.0 / fan_avg)
    nn.init.uniform_(layer.weight, -bound, bound)
    nn.init.zeros_(layer.bias)
    return layer


class MLP(nn.Sequential):
    def __init__(self, in_dim: int, hidden: Sequence[int], out_dim: int, *, layer_norm: bool = False,
                 activation: type[nn.Module] = nn.GELU, ref_init: bool = True):
        layers: list[nn.Module] = []
        d = in_dim
        for h in hidden:
            lin = nn.Linear(d, h)
            layers += [_init(lin) if ref_init else lin, activation()]
            if layer_norm:
                layers.append(nn.LayerNorm(h))
            d = h
        last = nn.Linear(d, out_dim)
        layers.append(_init(last) if ref_init else last)
        super().__init__(*layers)


class QEnsemble(nn.Module):
    """``n`` independent Q(s, a) MLPs; ``forward`` → ``[n, batch]``."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: Sequence[int], n: int = 2, layer_norm: bool = True):
        super().__init__()
        self.qs = nn.ModuleList([MLP(obs_dim + act_dim, hidden, 1, layer_norm=layer_norm) for _ in range(n)])

    def forward(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        x = torch.cat([obs, act], dim=-1)
        return torch.stack([q(x).squeeze(-1) for q in self.qs])


class VectorField(nn.Module):
    """v(s, a, t) (the flow policy) or μ(s, z) (the one-step policy, ``with_time=False``)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: Sequence[int], with_time: bool = True,
                 layer_norm: bool = False):
        super().__init__()
        self.with_time = with_time
        self.net = MLP(obs_dim + act_dim + int(with_time), hidden, act_dim, layer_norm=layer_norm)

    def forward(self, obs: torch.Tensor, act: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        parts = [obs, act] + ([t] if self.with_time and t is not None else [])
        return self.net(torch.cat(parts, dim=-1))


def polyak(target: nn.Module, source: nn.Module, tau: float) -> None:
    with torch.no_grad():
        for tp, p in zip(target.parameters(), source.parameters(), strict=True):
            tp.mul_(1 - tau).add_(p, alpha=tau)


def tanh_mlp(i: int, hidden, o: int, std: float) -> nn.Sequential:
    """The cleanrl PPO MLP: tanh hidden layers, orthogonal init (gain √2; last layer ``std``), zero biases."""
    layers: list[nn.Module] = []
    for h in hidden:
        lin = nn.Linear(i, h)
        nn.init.orthogonal_(lin.weight, np.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers += [lin, nn.Tanh()]
        i = h
    last = nn.Linear(i, o)
    nn.init.orthogonal_(last.weight, std)
    nn.init.zeros_(last.bias)
    return nn.Sequential(*layers, last)


class ActorCritic(nn.Module):
    """The PPO actor and critic (shared by ``ppo``, ``rapc`` and ``ppo-lag``): categorical or Gaussian head."""

    def __init__(self, obs_dim: int, space: dict, hidden):
        super().__init__()
        self.discrete = space["discrete"]
        out = space["n_actions"] if self.discrete else space["action_dim"]
        self.critic = tanh_mlp(obs_dim, hidden, 1, 1.0)
        self.actor = tanh_mlp(obs_dim, hidden, out, 0.01)
        if not self.discrete:
            self.log_std = nn.Parameter(torch.zeros(out))

    def dist(self, x: torch.Tensor):
        if self.discrete:
            return Categorical(logits=self.actor(x))
        mean = self.actor(x)
        return Normal(mean, self.log_std.exp().expand_as(mean))

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)


class DeterministicPolicy:
    """Mode of the policy (argmax / mean), clipped to the action bounds."""

    def __init__(self, agent: ActorCritic, space: dict):
        self.agent, self.space = agent, space

    def reset(self, seed: int) -> None:
        pass

    def __call__(self, obs: np.ndarray):
        with torch.no_grad():
            d = self.agent.dist(torch.as_tensor(obs, dtype=torch.float32).reshape(1, -1))
            if self.agent.discrete:
                return int(d.probs.argmax().item())
            return np.clip(d.mean[0].numpy(), self.space["action_low"], self.space["action_high"])


def load_actor_critic_policy(state: dict) -> DeterministicPolicy:
    """The deterministic policy of a checkpoint whose ``models["agent"]`` is an :class:`ActorCritic`."""
    agent = ActorCritic(int(np.prod(state["space"]["obs_shape"])), state["space"], tuple(state["config"]["hp"]["hidden"]))
    agent.load_state_dict(state["models"]["agent"])
    return DeterministicPolicy(agent.eval(), state["space"])
