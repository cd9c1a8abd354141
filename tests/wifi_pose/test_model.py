"""Model, loss, metrics and ONNX: chunked = sequential at model level, the set loss is invariant to the order
of the ground-truth persons, Hungarian ≤ greedy MPJPE with closed-form cases, onnxruntime = torch to 1e-4."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.wifi_pose import metrics  # noqa: E402
from mlx26.core.wifi_pose import model as M  # noqa: E402


def _net(**kw):
    torch.manual_seed(0)
    net = M.WiFiMamba(27, 20, dim=16, state=4, layers=2, dec_layers=1, queries=4, **kw)
    net.eval()
    return net


def test_chunked_and_sequential_models_agree_with_state():
    net = _net()
    amp, ph = torch.randn(3, 20, 27), torch.randn(3, 20, 27)
    state = torch.randn(*net.zero_state(3).shape) * 0.3
    with torch.no_grad():
        a = net(amp, ph, state)
        net.scan_name = "chunked"
        b = net(amp, ph, state)
    for x, y in zip(a, b, strict=True):
        assert (x - y).abs().max() < 1e-5


def test_query_memory_is_a_normalised_selective_average_of_past_frames():
    """Frame k reads Σ_j c_j q_j with c_j = (1 − r_j) Π_{i>j} r_i / Σ c (written out here, float64), so the
    first frame reads its own queries and zero state equals no state."""
    net = _net()
    torch.manual_seed(3)
    qs = [torch.randn(2, 4, 16) for _ in range(5)]
    state, outs = net.zero_state(2), []
    with torch.no_grad():
        for q in qs:
            y, slot = net.remember(q, state)
            state = torch.cat([state[:-1], slot])
            outs.append(y)
        rs = [torch.exp(-torch.nn.functional.softplus(net.mem_delta(q))).double() for q in qs]
        assert torch.allclose(net.remember(qs[0], None)[0], qs[0], atol=1e-6)
    for k in range(len(qs)):
        weights = [(1 - rs[j]) * torch.prod(torch.stack([rs[i] for i in range(j + 1, k + 1)] or [torch.ones_like(rs[0])]), 0)
                   for j in range(k + 1)]
        ref = sum(w * qs[j].double() for j, w in enumerate(weights)) / sum(weights)
        assert (outs[k].double() - ref).abs().max() < 1e-5
    amp, ph = torch.randn(2, 20, 27), torch.randn(2, 20, 27)
    with torch.no_grad():
        a, b = net(amp, ph, None), net(amp, ph, net.zero_state(2))
    for x, y in zip(a[:2], b[:2], strict=True):
        assert (x - y).abs().max() < 1e-5


def test_without_query_memory_the_state_is_the_scans_alone():
    net = _net(query_memory=False)
    assert net.zero_state(3).shape == (2, 2, 3, 16, 4)
    assert _net().zero_state(3).shape == (3, 2, 3, 16, 4)
    with pytest.raises(InputError, match="queries"):
        M.WiFiMamba(27, 20, dim=16, state=2, queries=4)


def test_params_ratio_at_equal_width():
    for preset in ("tiny", "small"):
        m, t = M.build("mamba", 270, 20, preset), M.build("transformer", 270, 20, preset)
        assert m.dim == t.dim and M.n_params(m) <= 0.7 * M.n_params(t)
    assert M.analytic_flops(M.build("mamba", 270, 20)) > 0


def test_set_loss_is_invariant_to_person_order():
    torch.manual_seed(1)
    kp, logits = torch.randn(2, 4, 14, 3), torch.randn(2, 4)
    gt = torch.full((2, 3, 14, 3), float("nan"))
    gt[0, :3] = torch.randn(3, 14, 3)
    gt[1, :2] = torch.randn(2, 14, 3)
    l1, _ = M.set_loss(kp, logits, gt)
    perm = gt.clone()
    perm[0] = gt[0, [2, 0, 1]]
    perm[1, :2] = gt[1, [1, 0]]
    l2, _ = M.set_loss(kp, logits, perm)
    assert abs(float(l1) - float(l2)) < 1e-6
    exact = torch.nan_to_num(gt)[:, [0, 1, 2, 0]]  # predictions equal to the persons: zero joint loss
    _, info = M.set_loss(exact, logits, gt)
    assert info["kp_l1_m"] < 1e-7


def test_mpjpe_closed_forms_and_hungarian_not_worse_than_greedy():
    rng = np.random.default_rng(0)
    gt = rng.normal(size=(5, 2, 14, 3)).astype(np.float32)
    off = np.array([0.03, 0.0, 0.04], np.float32)  # 50 mm on every joint
    pred = np.concatenate([gt[:, ::-1] + off, rng.normal(size=(5, 2, 14, 3)).astype(np.float32) + 9], 1)
    conf = np.array([[0.9, 0.8, 0.1, 0.2]] * 5)
    ev = metrics.evaluate(pred, conf, gt)
    assert ev["mpjpe_mm"] == pytest.approx(50.0, abs=1e-3) and ev["persons_matched"] == 10
    assert ev["pck3d@100"] == 1.0 and ev["mpjpe_greedy_mm"] == pytest.approx(50.0, abs=1e-3)
    far = metrics.evaluate(pred * 0 + gt[:, [0, 1, 0, 1]] + 2.4 * off, conf, gt)  # 120 mm
    assert far["pck3d@100"] == 0.0 and far["pck3d@150"] == 1.0
    for _ in range(20):
        p = rng.normal(size=(1, 3, 14, 3))
        g = rng.normal(size=(1, 3, 14, 3))
        h = metrics.joint_errors(p, np.ones((1, 3)), g, "hungarian").mean()
        gr = metrics.joint_errors(p, np.ones((1, 3)), g, "greedy").mean()
        assert h <= gr + 1e-9


def test_mean_pose_baseline_is_its_own_mean():
    gt = np.zeros((3, 1, 14, 3), np.float32)
    gt[:, 0, :, 0] = [[1.0], [2.0], [3.0]]
    assert metrics.mean_pose_baseline(gt, gt)["mpjpe_mm"] == pytest.approx(2000 / 3)


def test_onnxruntime_equals_torch(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from mlx26.core.wifi_pose import export as E

    for net in (_net(), M.build("transformer", 27, 20, dim=16)):
        net.eval()
        E.export_onnx(net, tmp_path / f"{net.kind}.onnx")
        assert E.compare(net, tmp_path / f"{net.kind}.onnx", batch=1)["max_abs_diff"] < 1e-4


def test_bench_comparison_is_deterministic_for_a_seed(monkeypatch):
    """Each model's initialisation depends on the seed alone: a second run in the same process (the global
    RNG already consumed) gives the same figures."""
    import sys

    from mlx26.core.wifi_pose import bench

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # the latency part is not under test
    runs = [bench.compare(steps=2, sequences=6, frames=3, window=2, batch=2, seed=5) for _ in range(2)]
    assert [r["mpjpe_mm"] for r in runs[0]] == [r["mpjpe_mm"] for r in runs[1]]
