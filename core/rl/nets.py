"""Small torch building blocks: the MLP of the FQL reference (GELU, optional LayerNorm after
each hidden activation, variance-scaling "fan_avg" uniform init) and a Q ensemble."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn


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
