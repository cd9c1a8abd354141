"""Spiking neurons against closed forms, autograd of the surrogate primitives and (when installed) spikingjelly."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.spike.neurons import (  # noqa: E402
    SpikingNeuron,
    firing_report,
    heaviside,
    recording,
    surrogate_grad,
    surrogate_primitive,
)


@pytest.mark.parametrize("x", [0.0, 0.25, 0.375, 0.5, 0.75, 1.0, 1.75, 2.5])  # exact in binary floating point
def test_if_soft_reset_spike_count_is_floor_of_integrated_current(x):
    # IF with soft reset on a constant current x ≥ 0: after t steps it has fired min(t, floor(t x / θ)) times
    # (at most one spike per step).
    T, theta = 12, 1.0
    n = SpikingNeuron("if", theta)
    s = n(torch.full((T, 1), x))
    counts = s.squeeze(1).cumsum(0)
    for t in range(T):
        assert counts[t] == min(t + 1, math.floor((t + 1) * x / theta))


def test_lif_matches_hand_recursion():
    tau, theta, xs = 2.0, 1.0, [0.8, 1.5, 0.2, 2.4, 0.0, 1.1]
    n = SpikingNeuron("lif", theta, tau=tau)
    s = n(torch.tensor(xs)[:, None]).squeeze(1).tolist()
    v, want = 0.0, []
    for x in xs:
        v = v + (x - v) / tau
        f = 1.0 if v >= theta else 0.0
        v -= f * theta
        want.append(f)
    assert s == want


def test_ternary_spikes_fire_both_ways_and_hard_reset_zeroes():
    n = SpikingNeuron("if", 1.0, ternary=True)
    s = n(torch.tensor([[1.2], [-2.5], [0.1]])).squeeze(1).tolist()
    assert s == [1.0, -1.0, -1.0]  # v: 1.2→0.2 ; 0.2-2.5=-2.3→-1.3 ; -1.3+0.1=-1.2 → fires −1
    h = SpikingNeuron("if", 1.0, reset="hard")
    assert h(torch.tensor([[1.5], [0.6], [0.6]])).squeeze(1).tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("kind", ["atan", "sigmoid"])
def test_surrogate_is_the_derivative_of_its_primitive(kind):
    z = torch.linspace(-3, 3, 101, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(surrogate_primitive(z, kind).sum(), z)
    assert torch.allclose(g, surrogate_grad(z.detach(), kind), atol=1e-12)
    # The forward is the exact Heaviside step, the backward the surrogate.
    z2 = z.detach().clone().requires_grad_(True)
    out = heaviside(z2, kind)
    assert torch.equal(out.detach(), (z2.detach() >= 0).double())
    out.sum().backward()
    assert torch.allclose(z2.grad, surrogate_grad(z2.detach(), kind))


def test_dead_fraction_counts_only_valid_positions():
    n = SpikingNeuron("if", 1.0)
    x = torch.zeros(2, 1, 3, 2)  # T=2, B=1, N=3 tokens, 2 channels
    x[:, 0, 2, 1] = 5.0  # channel 1 fires only on token 2, which is padding
    valid = torch.tensor([[True, True, False]])
    with recording(n):
        n(x, valid)
    st = n.stats()
    assert st["dead_fraction"] == 1.0 and st["firing_rate"] == 0.0
    with recording(n):
        n(x)
    assert n.stats()["dead_fraction"] == 0.5
    rep = firing_report(torch.nn.Sequential(n))
    assert rep["neurons"] == 2 and rep["dead_fraction"] == 0.5


@pytest.mark.parametrize("bad", [dict(theta=0.0), dict(theta=-1.0), dict(theta=float("nan")),
                                 dict(kind="lif", tau=1.0), dict(kind="izhikevich"), dict(surrogate="relu")])
def test_bad_neuron_arguments_are_input_errors(bad):
    with pytest.raises(InputError):
        SpikingNeuron(**bad)


def test_matches_spikingjelly_ifnode_when_installed():
    sj = pytest.importorskip("spikingjelly.activation_based.neuron")
    torch.manual_seed(0)
    x = torch.rand(8, 4, 16) * 1.5
    ref = sj.IFNode(v_threshold=1.0, v_reset=None, step_mode="m")(x)
    assert torch.equal(SpikingNeuron("if", 1.0)(x), ref)
