"""Fused experts forward vs the loop reference vs transformers' own eager experts."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
torch.set_num_threads(1)

from mlx26.core.quantize_moe import lowrank, synthetic  # noqa: E402
from mlx26.kernels import quantize_moe as kern  # noqa: E402

E, H, D = 8, 32, 48


def _factors(m, n, r, rows, cols, core=True, seed=0, scale=0.05):
    g = torch.Generator().manual_seed(seed)
    P, Q = int(max(rows)) + 1, int(max(cols)) + 1
    return lowrank.Factors(scale * torch.randn(P, m, r, generator=g), scale * torch.randn(Q, r, n, generator=g),
                           torch.randn(E, r, r, generator=g) if core else None,
                           torch.tensor(rows), torch.tensor(cols))


CASES = {
    "lqer": dict(rows=list(range(E)), cols=list(range(E)), core=False, r=5),
    "tileq-shared": dict(rows=[0] * E, cols=[0] * E, core=True, r=7),
    "tileq-index": dict(rows=[0, 0, 0, 0, 1, 1, 1, 1], cols=[0, 0, 1, 1, 2, 2, 3, 3], core=True, r=4),
    "tileq-unsorted": dict(rows=[2, 0, 1, 0, 2, 1, 0, 2], cols=[1, 0, 1, 0, 0, 1, 1, 0], core=True, r=6),
    "p-equals-e": dict(rows=list(range(E)), cols=list(range(E)), core=True, r=3),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_equals_loop(case):
    c = CASES[case]
    module = synthetic.experts_module(E, H, D, seed=1)
    module.tileq_factors = {"gate_up_proj": _factors(2 * D, H, c["r"], c["rows"], c["cols"], c["core"], 2),
                            "down_proj": _factors(H, D, c["r"], c["rows"], c["cols"], c["core"], 3)}
    x, idx, w = synthetic.routing(300, E, 2, H, seed=4)
    idx[idx == 5] = 6  # expert 5 gets no token
    with torch.inference_mode():
        fused = kern.fused_experts_forward(module, x, idx, w)
        loop = kern.loop_experts_forward(module, x, idx, w)
        base_only = module.tileq_factors
        module.tileq_factors = {}
        plain = kern.loop_experts_forward(module, x, idx, w)
        module.tileq_factors = base_only
    assert float((fused - loop).abs().max()) <= 1e-5
    assert float((loop - plain).abs().max()) > 1e-3  # the correction is really applied


@pytest.mark.parametrize("case", ["lqer", "tileq-unsorted"])
def test_bf16_single_pass_equals_bf16_loop(case):
    """Same precision on both paths: bf16 weights, activations and factors; only summation order differs."""
    c = CASES[case]
    module = synthetic.experts_module(E, H, D, seed=1)
    factors = {"gate_up_proj": _factors(2 * D, H, c["r"], c["rows"], c["cols"], c["core"], 2),
               "down_proj": _factors(H, D, c["r"], c["rows"], c["cols"], c["core"], 3)}
    x, idx, w = synthetic.routing(300, E, 2, H, seed=4)
    with torch.inference_mode():
        module.tileq_factors = factors
        ref = kern.loop_experts_forward(module, x, idx, w)  # fp32
        module.to(torch.bfloat16)
        xb, wb = x.bfloat16(), w.bfloat16()
        fused = kern.single_pass_forward(module, xb, idx, wb)
        loop = kern.loop_experts_forward(module, xb, idx, wb)
    assert fused.dtype == loop.dtype == torch.bfloat16
    scale = float(ref.abs().max())
    assert float((fused.float() - loop.float()).abs().max()) <= 2e-2 * scale
    assert float((loop.float() - ref).abs().max()) <= 5e-2 * scale


def test_decode_sizes_fall_back_to_the_loop_over_hit_experts(monkeypatch):
    """Fewer (token, slot) assignments than experts: the "tileq" forward is the loop, not the single pass."""
    module = synthetic.experts_module(E, H, D, seed=1)
    module.tileq_factors = {"gate_up_proj": _factors(2 * D, H, 4, list(range(E)), list(range(E)), False, 2),
                            "down_proj": _factors(H, D, 4, list(range(E)), list(range(E)), False, 3)}
    calls = []
    monkeypatch.setattr(kern, "single_pass_forward", lambda *a: calls.append(a) or torch.zeros(()))
    for T, single in ((1, False), (3, False), (4, True), (64, True)):  # E = 8, top-2: T·2 < 8 below T = 4
        x, idx, w = synthetic.routing(T, E, 2, H, seed=T)
        calls.clear()
        with torch.inference_mode():
            out = kern.fused_experts_forward(module, x, idx, w)
        assert bool(calls) is single
        if not single:
            assert torch.equal(out, kern.loop_experts_forward(module, x, idx, w))


def test_loop_applies_the_dense_correction():
    """Independent of both kernels: W_e + U C V as dense matrices, through a plain expert MLP."""
    c = CASES["tileq-unsorted"]
    module = synthetic.experts_module(E, H, D, seed=1)
    fg = _factors(2 * D, H, c["r"], c["rows"], c["cols"], True, 2)
    fd = _factors(H, D, c["r"], c["rows"], c["cols"], True, 3)
    module.tileq_factors = {"gate_up_proj": fg, "down_proj": fd}
    x, idx, w = synthetic.routing(50, E, 2, H, seed=5)
    Wg = module.gate_up_proj.detach() + fg.delta()
    Wd = module.down_proj.detach() + fd.delta()
    ref = torch.zeros_like(x)
    for t in range(50):
        for j in range(2):
            e = int(idx[t, j])
            g, u = (Wg[e] @ x[t]).chunk(2)
            ref[t] += w[t, j] * (Wd[e] @ (torch.nn.functional.silu(g) * u))
    with torch.inference_mode():
        assert float((kern.loop_experts_forward(module, x, idx, w) - ref).abs().max()) <= 1e-5
        assert float((kern.fused_experts_forward(module, x, idx, w) - ref).abs().max()) <= 1e-5


@pytest.mark.parametrize("zero", [True, False])
def test_without_correction_equals_transformers_eager(zero):
    module = synthetic.experts_module(E, H, D, seed=2)
    if zero:  # factors present but zero
        f = lambda m, n: lowrank.Factors(torch.zeros(1, m, 4), torch.zeros(1, 4, n), torch.zeros(E, 4, 4),  # noqa: E731
                                         torch.zeros(E, dtype=torch.long), torch.zeros(E, dtype=torch.long))
        module.tileq_factors = {"gate_up_proj": f(2 * D, H), "down_proj": f(H, D)}
    x, idx, w = synthetic.routing(200, E, 2, H, seed=6)
    module.config._experts_implementation = "eager"
    with torch.inference_mode():
        eager = module(x, idx, w)  # transformers' MixtralExperts.forward
        fused = kern.fused_experts_forward(module, x, idx, w)
    assert float((fused - eager).abs().max()) <= 1e-5


def test_registered_in_transformers_experts_interface():
    from transformers.integrations.moe import ALL_EXPERTS_FUNCTIONS

    kern.register()
    assert ALL_EXPERTS_FUNCTIONS.get_interface("tileq", None) is kern.fused_experts_forward
    module = synthetic.experts_module(E, H, D, seed=3)
    x, idx, w = synthetic.routing(64, E, 2, H, seed=7)
    with torch.inference_mode():
        eager = module(x, idx, w)
        module.config._experts_implementation = "tileq"
        via_interface = module(x, idx, w)
    assert float((via_interface - eager).abs().max()) <= 1e-5
