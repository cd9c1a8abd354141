"""Distribution-aware Scaling (DAS): a calibrated, learnable per-channel affine after a linear that feeds a neuron.

Reconstructed from the SpikingLM abstract only ("rescales linear outputs into an activation-friendly
range; its parameters fuse into the preceding linear layer"): the form y' = a ⊙ y + c, the calibration
target and the fusion below are our reading of it. Calibration sets, per output channel j,

    a_j = κθ / std_j(y),   c_j = τθ − a_j · mean_j(y)      (τ = κ = 0.5 by default)

so that the pre-activations the neuron integrates have mean τθ and std κθ over the calibration batch
(statistics over every time step and token). Both stay learnable. For inference the affine folds into
the linear: ``W' = diag(a) W``, ``b' = a ⊙ b + c`` (:func:`fuse_linear`), so it costs nothing.
"""

from __future__ import annotations

import torch
from mlx26.core.common.errors import InputError
from mlx26.core.spike.spec import DAS_KAPPA, DAS_TAU


class DAS(torch.nn.Module):
    def __init__(self, channels: int, theta: float = 1.0, tau: float = DAS_TAU, kappa: float = DAS_KAPPA):
        super().__init__()
        self.a = torch.nn.Parameter(torch.ones(channels))
        self.c = torch.nn.Parameter(torch.zeros(channels))
        self.theta, self.tau, self.kappa = float(theta), float(tau), float(kappa)
        self.capture: list[torch.Tensor] | None = None

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        if self.capture is not None:
            self.capture.append(y.detach().reshape(-1, y.shape[-1]))
        return y * self.a + self.c

    @torch.no_grad()
    def calibrate(self, y: torch.Tensor, eps: float = 1e-6) -> dict:
        """Set a, c from pre-activations ``y`` (..., C); returns the statistics before and after."""
        y = y.reshape(-1, y.shape[-1]).double()
        if y.shape[0] < 2:
            raise InputError("DAS calibration needs at least 2 samples per channel", "use a larger --calib batch")
        mean, std = y.mean(0), y.std(0)
        a = (self.kappa * self.theta) / std.clamp_min(eps)
        self.a.copy_(a.float())
        self.c.copy_((self.tau * self.theta - a * mean).float())
        after = y * a + (self.tau * self.theta - a * mean)
        return {"mean_before": float(mean.mean()), "std_before": float(std.mean()),
                "mean_after": float(after.mean(0).mean()), "std_after": float(after.std(0).mean())}


@torch.no_grad()
def fuse_linear(linear: torch.nn.Linear, das: DAS) -> torch.nn.Linear:
    """A new Linear computing ``das(linear(x))``: W' = diag(a) W, b' = a ⊙ b + c."""
    a, c = das.a.detach(), das.c.detach()
    out = torch.nn.Linear(linear.in_features, linear.out_features, bias=True)
    out.weight.copy_(linear.weight * a[:, None])
    b = linear.bias if linear.bias is not None else torch.zeros_like(a)
    out.bias.copy_(a * b + c)
    return out


class DASLinear(torch.nn.Module):
    """Linear followed by an optional DAS (``das=None`` for the plain SNN); ``fuse()`` folds it in place."""

    def __init__(self, d_in: int, d_out: int, das: bool, theta: float = 1.0, bias: bool = True):
        super().__init__()
        self.linear = torch.nn.Linear(d_in, d_out, bias=bias)
        self.das: DAS | None = DAS(d_out, theta) if das else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        return self.das(y) if self.das is not None else y

    def fuse(self) -> None:
        if self.das is not None:
            self.linear = fuse_linear(self.linear, self.das)
            self.das = None


def das_modules(model: torch.nn.Module) -> list[tuple[str, DAS]]:
    return [(n, m) for n, m in model.named_modules() if isinstance(m, DAS)]


@torch.no_grad()
def calibrate_model(model: torch.nn.Module, run, max_rows: int = 200_000) -> list[dict]:
    """Calibrate every DAS in forward order: ``run()`` does one forward pass over the calibration batch.
    Each DAS is set from the pre-activations seen with every earlier DAS already calibrated."""
    reports = []
    was = model.training
    model.eval()
    for name, das in das_modules(model):
        das.capture = []
        try:
            run()
            y = torch.cat(das.capture)[:max_rows]
        finally:
            das.capture = None
        reports.append({"layer": name, **das.calibrate(y)})
    model.train(was)
    return reports


def fuse_model(model: torch.nn.Module) -> int:
    """Fold every DASLinear's DAS into its linear, in place; returns how many were fused."""
    n = 0
    for m in model.modules():
        if isinstance(m, DASLinear) and m.das is not None:
            m.fuse()
            n += 1
    return n
