"""Calibration and the fused forward inside the real tiny-moe model."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
torch.set_num_threads(1)

from mlx26.core.quantize_moe import calibrate, lowrank  # noqa: E402
from mlx26.kernels import quantize_moe as kern  # noqa: E402


@pytest.fixture(scope="module")
def model():
    from mlx26.core.zoo import load_model

    return load_model("tiny-moe")


def test_tileq_forward_equals_eager_inside_the_model(model):
    kern.register()
    ids = torch.randint(3, 4096, (2, 40), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        model.set_experts_implementation("eager")
        eager = model(input_ids=ids).logits
        model.set_experts_implementation("tileq")
        fused = model(input_ids=ids).logits
        model.set_experts_implementation("tileq_loop")
        loop = model(input_ids=ids).logits
    model.set_experts_implementation("eager")
    assert float((fused - eager).abs().max()) <= 1e-4 and float((loop - eager).abs().max()) <= 1e-4


def test_expert_without_routed_tokens_warns_and_uses_identity_scale(model):
    name, module = calibrate.find_experts(model)[0]
    x = torch.randn(50, 128)
    idx = torch.randint(0, 8, (50, 2))
    idx[idx == 3] = 4
    w = torch.full((50, 2), 0.5)
    warnings = []
    st = calibrate.layer_stats(name, module, x, idx, w, True, warnings.append)
    assert len(warnings) == 1 and "expert 3" in warnings[0] and "identity" in warnings[0]
    dn = st.projections["down_proj"]
    assert dn.count[3] == 0 and dn.hessians[3] is None and st.routed[3] == 0
    assert torch.equal(lowrank.activation_scale(dn.abs_sum, dn.count)[3], torch.ones(192, dtype=torch.float64))
    # the expert's own routed tokens, independently: tokens whose top-k contains e
    assert int(st.routed[0]) == int((idx == 0).any(-1).sum())
