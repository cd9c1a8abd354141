"""Spike2Max against softmax (torch and scipy), its row-sum bounds, masking, and the integer shift form."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from mlx26.core.spike.spike2max import (  # noqa: E402
    LOG2E,
    nearest_pow2_exponent,
    softmax,
    spike2max,
    spike2max_int,
    to_float,
)


def test_exact_spike2max_of_x_log2e_is_softmax():
    special = pytest.importorskip("scipy.special")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 37, generator=g, dtype=torch.float64) * 4
    got = spike2max(x * LOG2E, "exact")
    assert float((got - torch.softmax(x, -1)).abs().max()) <= 1e-6
    assert float((got - torch.from_numpy(special.softmax(x.numpy(), axis=-1))).abs().max()) <= 1e-6
    assert torch.equal(got.argmax(-1), x.argmax(-1))


def test_pow2_rows_sum_within_half_an_octave_and_keep_argmax():
    g = torch.Generator().manual_seed(1)
    for scale in (0.1, 1.0, 5.0):
        x = torch.randn(500, 23, generator=g, dtype=torch.float64) * scale
        p = spike2max(x, "pow2")
        sums = p.sum(-1)
        assert float(sums.min()) >= 2 ** -0.5 - 1e-12 and float(sums.max()) <= 2 ** 0.5 + 1e-12
        assert torch.equal(p.argmax(-1), x.argmax(-1))
        # proportional to the exact form: the divisor is one power of two per row
        ratio = p / spike2max(x, "exact")
        assert torch.allclose(ratio, ratio[:, :1].expand_as(ratio))


def test_pow2_trains_straight_through_the_exact_normalisation():
    """Forward: the shift's value, with or without autograd; backward: the exact form's gradient (the divisor
    as a constant would drop the −p·Σ term of the Jacobian), masked entries get none."""
    g = torch.Generator().manual_seed(2)
    x = (torch.randn(40, 11, generator=g, dtype=torch.float64) * 3).requires_grad_()
    mask = torch.rand(40, 11, generator=g) < 0.8
    mask[0] = False  # a fully masked row: zeros forward, zero (not NaN) gradient
    upstream = torch.randn(40, 11, generator=g, dtype=torch.float64)
    p = spike2max(x, "pow2", mask)
    with torch.no_grad():
        shifted = spike2max(x, "pow2", mask)
    assert torch.allclose(p, shifted, rtol=0, atol=1e-12)
    (grad_pow2,) = torch.autograd.grad((p * upstream).sum(), x)
    (grad_exact,) = torch.autograd.grad((spike2max(x, "exact", mask) * upstream).sum(), x)
    assert torch.allclose(grad_pow2, grad_exact, rtol=0, atol=1e-12)
    assert float(grad_pow2[~mask].abs().max()) == 0.0 and torch.isfinite(grad_pow2).all()
    assert torch.equal(p[0], torch.zeros(11, dtype=p.dtype))
    # with the divisor as a constant the Jacobian would be diagonal, p_j·ln 2: not what training now sees
    constant_divisor = upstream * shifted * math.log(2)
    assert float((grad_pow2 - constant_divisor).abs().max()) > 1e-2


def test_masked_entries_and_fully_masked_rows_are_zero_not_nan():
    x = torch.tensor([[1.0, 5.0, 2.0], [3.0, 4.0, 1.0]])
    mask = torch.tensor([[True, False, True], [False, False, False]])
    for fn in (lambda: spike2max(x, "exact", mask), lambda: spike2max(x, "pow2", mask), lambda: softmax(x, mask)):
        p = fn()
        assert not torch.isnan(p).any()
        assert p[0, 1] == 0 and torch.equal(p[1], torch.zeros(3))
    assert abs(float(spike2max(x, "exact", mask)[0].sum()) - 1) < 1e-6
    ints = spike2max_int(x.long(), mask=mask)
    assert torch.equal(ints[1], torch.zeros(3, dtype=torch.int64)) and ints[0, 1] == 0


def test_nearest_power_of_two_exponent_by_shifts():
    for s in list(range(1, 3000)) + [2**40 - 1, 2**40, 3 * 2**38]:
        want = round(math.log2(s))
        # round(log2 s) and "nearest in log scale" agree except exactly at 2^(e+1/2), never an integer
        assert int(nearest_pow2_exponent(torch.tensor([s]))[0]) == want, s


def test_integer_spike2max_matches_the_float_form_within_fixed_point_error():
    g = torch.Generator().manual_seed(2)
    s = torch.randint(0, 17, (300, 20), generator=g)  # spike-count scores q·k in [0, 16]
    F = 16
    for norm in ("exact", "pow2"):
        got = to_float(spike2max_int(s, F, norm), F)
        want = spike2max(s.double(), norm)
        # each a_j is exact in fixed point (2^-d with d ≤ F); the normalisation rounds once
        assert float((got - want).abs().max()) <= 2.0 ** -F + 1e-12, norm
