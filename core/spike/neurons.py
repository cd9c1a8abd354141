"""Spiking neurons: IF and LIF with soft (or hard) reset, surrogate gradients, ternary bi-spikes, statistics.

Reconstructed from spikingjelly's ``IFNode`` / ``LIFNode`` (multi-step mode) and the surrogate functions
of its ``surrogate`` module, not from SpikingLM (whose code is unavailable):

* IF:  ``v ← v + x_t``;  LIF (``decay_input=True``, as spikingjelly): ``v ← v + (x_t − v) / τ``;
* spike ``s_t = H(v − θ)`` with ``H(z) = 1[z ≥ 0]``; ternary (SpikeLM's bi-directional spikes)
  ``s_t = H(v − θ) − H(−v − θ)`` ∈ {−1, 0, 1};
* soft reset ``v ← v − s_t θ`` (spikingjelly ``v_reset=None``), hard reset ``v ← v (1 − |s_t|)``;
* backward: ``∂s/∂v`` is replaced by a surrogate — atan ``α/2 / (1 + (π α z / 2)²)`` (primitive
  ``arctan(π α z / 2)/π + 1/2``, α = 2 by default) or sigmoid ``α σ(αz)(1 − σ(αz))`` (α = 4).

Every neuron can record, per channel (the last axis), how often it fired over the inputs it saw:
the firing rate and the **dead-neuron fraction** (channels that never fired over a calibration set).
Under ``torch.no_grad`` (inference, ONNX export) the spike is the plain comparison, so the exported
graph holds only Add/Sub/Mul/GreaterOrEqual.
"""

from __future__ import annotations

import math

import torch
from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.spike.spec import NEURONS, SURROGATES

DEFAULT_ALPHA = {"atan": 2.0, "sigmoid": 4.0}


def surrogate_grad(z: torch.Tensor, kind: str = "atan", alpha: float | None = None) -> torch.Tensor:
    """∂H/∂z as the surrogate defines it (closed form)."""
    a = DEFAULT_ALPHA[kind] if alpha is None else alpha
    if kind == "atan":
        return (a / 2) / (1 + (math.pi / 2 * a * z) ** 2)
    if kind == "sigmoid":
        sg = torch.sigmoid(a * z)
        return a * sg * (1 - sg)
    raise unknown_name("surrogate", kind, SURROGATES)


def surrogate_primitive(z: torch.Tensor, kind: str = "atan", alpha: float | None = None) -> torch.Tensor:
    """The smooth function whose derivative the surrogate is (for tests and plots)."""
    a = DEFAULT_ALPHA[kind] if alpha is None else alpha
    if kind == "atan":
        return torch.atan(math.pi / 2 * a * z) / math.pi + 0.5
    return torch.sigmoid(a * z)


class _Heaviside(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z, kind: str, alpha: float):  # type: ignore[override]
        ctx.save_for_backward(z)
        ctx.kind, ctx.alpha = kind, alpha
        return (z >= 0).to(z.dtype)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        (z,) = ctx.saved_tensors
        return grad * surrogate_grad(z, ctx.kind, ctx.alpha), None, None


def heaviside(z: torch.Tensor, kind: str = "atan", alpha: float | None = None) -> torch.Tensor:
    """H(z) forward, surrogate gradient backward (plain comparison when no gradient is needed)."""
    if torch.is_grad_enabled() and z.requires_grad:
        return _Heaviside.apply(z, kind, DEFAULT_ALPHA[kind] if alpha is None else alpha)
    return (z >= 0).to(z.dtype)


def check_neuron_args(kind: str, theta: float, surrogate: str, tau: float) -> None:
    if kind not in NEURONS:
        raise unknown_name("neuron", kind, NEURONS)
    if surrogate not in SURROGATES:
        raise unknown_name("surrogate", surrogate, SURROGATES)
    if not theta > 0 or not math.isfinite(theta):
        raise InputError(f"threshold θ must be > 0, got {theta}", "pass e.g. --theta 1.0")
    if kind == "lif" and not tau > 1:
        raise InputError(f"LIF time constant τ must be > 1, got {tau}")


class SpikingNeuron(torch.nn.Module):
    """Multi-step IF/LIF neuron: input (T, ..., C) real currents → spikes (T, ..., C) in {0, 1} ({−1, 0, 1} ternary)."""

    def __init__(self, kind: str = "if", theta: float = 1.0, surrogate: str = "atan", alpha: float | None = None,
                 tau: float = 2.0, ternary: bool = False, reset: str = "soft"):
        super().__init__()
        check_neuron_args(kind, theta, surrogate, tau)
        if reset not in ("soft", "hard"):
            raise unknown_name("reset", reset, ("soft", "hard"))
        self.kind, self.theta, self.surrogate, self.tau = kind, float(theta), surrogate, float(tau)
        self.alpha = DEFAULT_ALPHA[surrogate] if alpha is None else float(alpha)
        self.ternary, self.reset = ternary, reset
        self.recording = False
        self.reset_stats()

    def reset_stats(self) -> None:
        self.fire_count: torch.Tensor | None = None  # per channel: spikes (|s|) summed over steps and tokens
        self.seen = 0  # steps × tokens per channel

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``valid`` (bool, broadcastable to ``x[0]`` without its channel axis): positions that count in the
        statistics (padding never makes a channel look alive)."""
        v = torch.zeros_like(x[0])
        out = []
        for t in range(x.shape[0]):
            v = v + x[t] if self.kind == "if" else v + (x[t] - v) / self.tau
            s = heaviside(v - self.theta, self.surrogate, self.alpha)
            if self.ternary:
                s = s - heaviside(-v - self.theta, self.surrogate, self.alpha)
            if self.reset == "soft":
                v = v - s * self.theta
            else:
                v = v * (1 - s.abs())
            out.append(s)
        spikes = torch.stack(out)
        if self.recording:
            with torch.no_grad():
                a = spikes.abs()
                if valid is not None:
                    w = valid.unsqueeze(-1).to(a.dtype).expand_as(a[0])
                    a = a * w
                    n_pos = int(w[..., 0].sum()) * spikes.shape[0]
                else:
                    n_pos = spikes.numel() // spikes.shape[-1]
                c = a.reshape(-1, spikes.shape[-1]).sum(0)
                self.fire_count = c if self.fire_count is None else self.fire_count + c
                self.seen += n_pos
        return spikes

    def stats(self) -> dict:
        if self.fire_count is None or not self.seen:
            return {"firing_rate": None, "dead_fraction": None, "channels": None}
        fc = self.fire_count
        return {"firing_rate": float(fc.sum() / (self.seen * fc.numel())),
                "dead_fraction": float((fc == 0).float().mean()), "channels": int(fc.numel())}

    def extra_repr(self) -> str:
        return f"{self.kind}, theta={self.theta}, {self.surrogate}(alpha={self.alpha}), ternary={self.ternary}, {self.reset}"


def neurons_of(model: torch.nn.Module) -> list[tuple[str, SpikingNeuron]]:
    return [(n, m) for n, m in model.named_modules() if isinstance(m, SpikingNeuron)]


class recording:
    """``with recording(model): model(x)`` — fresh per-channel firing statistics for every neuron."""

    def __init__(self, model: torch.nn.Module):
        self.neurons = [m for _, m in neurons_of(model)]

    def __enter__(self):
        for m in self.neurons:
            m.reset_stats()
            m.recording = True
        return self

    def __exit__(self, *exc):
        for m in self.neurons:
            m.recording = False
        return False


def firing_report(model: torch.nn.Module) -> dict:
    """Per-layer firing rate and dead fraction (from the last ``recording``) and the channel-weighted totals."""
    layers, dead, chans, fired, seen = {}, 0.0, 0, 0.0, 0.0
    for name, m in neurons_of(model):
        st = m.stats()
        layers[name] = st
        if st["channels"]:
            dead += st["dead_fraction"] * st["channels"]
            chans += st["channels"]
            fired += float(m.fire_count.sum())  # type: ignore[union-attr]
            seen += m.seen * st["channels"]
    return {"layers": layers, "dead_fraction": dead / chans if chans else None,
            "firing_rate": fired / seen if seen else None, "neurons": chans}
