"""Selective scans: sequential and chunked equal a naive float64 loop (and mambapy's pscan); κ = 0 decouples
the streams; carried state with no forgetting equals one long scan; the state stays bounded over 10⁴ steps."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mlx26.core.wifi_pose import model as M  # noqa: E402
from mlx26.core.wifi_pose import ssm as S  # noqa: E402


def _inputs(b=2, t=23, d=5, n=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, t, d, generator=g)
    delta = torch.nn.functional.softplus(torch.randn(b, t, d, generator=g))
    a = -torch.rand(d, n, generator=g) * 2 - 0.05
    bb = torch.randn(b, t, n, generator=g)
    h0 = torch.randn(b, d, n, generator=g)
    return x, delta, a, bb, h0


@pytest.mark.parametrize("chunk", [1, 4, 7, 16, 64])
def test_scans_equal_naive_reference(chunk):
    x, delta, a, b, h0 = _inputs()
    ref, ref_t = S.scan_reference(x, delta, a, b, h0)
    seq, seq_t = S.scan_sequential(x, delta, a, b, h0)
    par, par_t = S.scan_chunked(x, delta, a, b, h0, chunk=chunk)
    for h in (seq, par):
        assert (h.double() - ref).abs().max() < 1e-5
    assert (seq_t.double() - ref_t).abs().max() < 1e-5 and (par_t.double() - ref_t).abs().max() < 1e-5


def test_scan_equals_mambapy_pscan():
    pscan = pytest.importorskip("mambapy.pscan").pscan
    x, delta, a, b, _ = _inputs(t=32)
    ours, _ = S.scan_chunked(x, delta, a, b, chunk=8)
    theirs = pscan(torch.exp(delta.unsqueeze(-1) * a), S._u(x, delta, b))
    assert (ours - theirs).abs().max() < 1e-5


def test_kappa_zero_gives_two_independent_ssms():
    torch.manual_seed(0)
    layer = M.DualLayer(8, 4)
    ua, up = torch.randn(2, 10, 8), torch.randn(2, 10, 8)
    assert float(layer.kappa.detach().abs().max()) == 0.0  # θ = 0 at init
    oa, op, *_ = layer(ua, up)
    oa2, op2, *_ = layer(ua, up + torch.randn_like(up))  # change only the phase stream
    assert torch.equal(oa, oa2) and not torch.allclose(op, op2)
    with torch.no_grad():
        layer.theta.fill_(0.5)
    ob, *_ = layer(ua, up)
    ob2, *_ = layer(ua, up + torch.randn_like(up))
    assert not torch.allclose(ob, ob2)  # coupled: the amplitude read-out now sees the phase state


def test_persistent_memory_without_forgetting_equals_one_long_scan():
    torch.manual_seed(1)
    layer = M.DualLayer(8, 4, bidirectional=False)
    ua, up = torch.randn(1, 30, 8), torch.randn(1, 30, 8)
    whole_a, whole_p, *_ = layer(ua, up)
    ha = hp = None
    parts_a = []
    for s in range(0, 30, 10):  # three frames, state carried with g = 1
        oa, op, ha, hp, *_ = layer(ua[:, s:s + 10], up[:, s:s + 10], ha, hp)
        parts_a.append(oa)
    assert (torch.cat(parts_a, 1) - whole_a).abs().max() < 1e-5
    net = M.WiFiMamba(12, 6, dim=8, state=4, layers=1, gate=False)
    h = torch.randn(1, 2, 3, 8, 4)
    assert torch.equal(net.carry(h), h)  # no gate: no forgetting
    gated = M.WiFiMamba(12, 6, dim=8, state=4, layers=1, gate=True)
    assert (gated.carry(h).abs() < h.abs()).all()  # the gate only forgets


def test_state_bounded_over_ten_thousand_steps():
    torch.manual_seed(2)
    t, d, n = 10_000, 4, 4
    x = torch.randn(1, t, d) * 3
    delta = torch.nn.functional.softplus(torch.randn(1, t, d)) + 1e-3
    a = -torch.rand(d, n) - 0.01
    b = torch.randn(1, t, n)
    h, _ = S.scan_sequential(x, delta, a, b)
    u = S._u(x, delta, b).abs()
    bound = u.max() / (1 - torch.exp(delta.unsqueeze(-1) * a).max())
    assert torch.isfinite(h).all() and h.abs().max() <= bound
    assert h[:, -1000:].abs().max() <= 2 * h[:, :1000].abs().max()  # no drift upward over the run
