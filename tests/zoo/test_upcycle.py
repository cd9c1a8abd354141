"""Sparse upcycling (zoo preset tiny-moe-upcycled): the MoE starts as the dense model, experts as copies."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
torch.set_num_threads(1)

from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.zoo import load_model  # noqa: E402
from mlx26.core.zoo.upcycle import upcycle  # noqa: E402

IDS = torch.tensor([[1, 50, 60, 70, 999, 3000, 12, 7, 4000]])


@pytest.fixture(scope="module")
def dense():
    return load_model("tiny-llama-draft")


@pytest.mark.parametrize(("experts", "top_k"), [(8, 2), (4, 1), (3, 3)])
def test_without_noise_the_moe_is_the_dense_model(dense, experts, top_k):
    moe = upcycle(dense, experts, top_k, noise=0.0, seed=experts)
    with torch.no_grad():
        a, b = dense(IDS).logits, moe(IDS).logits
    assert float((a - b).abs().max()) <= 1e-4 * float(a.abs().max())
    W = moe.model.layers[1].mlp.experts.gate_up_proj
    assert all(torch.equal(W[0], W[e]) for e in range(experts))


def test_noise_jitters_each_expert_relative_to_the_dense_weight(dense):
    moe = upcycle(dense, 8, 2, noise=0.01, seed=3)
    down = moe.model.layers[0].mlp.experts.down_proj.detach()
    src = dense.model.layers[0].mlp.down_proj.weight.detach()
    rel = ((down - src) / src).flatten(1)
    assert float(rel.std()) == pytest.approx(0.01, rel=0.05)
    assert not torch.equal(down[0], down[1])
    with torch.no_grad():  # close to the dense model, not equal
        gap = float((dense(IDS).logits - moe(IDS).logits).abs().max())
    assert 0 < gap < 0.05 * float(dense(IDS).logits.abs().max())


@pytest.mark.parametrize("segments", [2, 8])
def test_fine_grained_with_every_segment_chosen_once_is_the_dense_model(dense, segments):
    # E = k = G: each token takes every segment once; equal router logits give weights 1/G, undone by the G scale.
    moe = upcycle(dense, segments, segments, noise=0.0, segments=segments)
    for layer in moe.model.layers:
        torch.nn.init.zeros_(layer.mlp.gate.weight)
    with torch.no_grad():
        a, b = dense(IDS).logits, moe(IDS).logits
    assert float((a - b).abs().max()) <= 1e-4 * float(a.abs().max())
    assert moe.config.intermediate_size == dense.config.intermediate_size // segments


def test_fine_grained_experts_are_segment_copies(dense):
    moe = upcycle(dense, 32, 8, noise=0.0, segments=8, seed=1)
    mlp, experts = dense.model.layers[0].mlp, moe.model.layers[0].mlp.experts
    width = dense.config.intermediate_size // 8
    for e in (0, 5, 13, 31):
        g = e % 8
        rows = slice(g * width, (g + 1) * width)
        assert torch.equal(experts.gate_up_proj[e][:width], mlp.gate_proj.weight[rows])
        assert torch.equal(experts.gate_up_proj[e][width:], mlp.up_proj.weight[rows])
        assert torch.equal(experts.down_proj[e], mlp.down_proj.weight[:, rows] * 8)
    # in expectation over near-uniform routing the MLP is the dense one: the logits stay close
    with torch.no_grad():
        gap = float((dense(IDS).logits - moe(IDS).logits).abs().max())
    assert gap < 0.5 * float(dense(IDS).logits.abs().max())


def test_refuses_what_it_cannot_upcycle(dense):
    with pytest.raises(InputError, match="segments"):
        upcycle(dense, 32, 8, segments=5)  # 192 is not a multiple of 5
    with pytest.raises(InputError, match="segments"):
        upcycle(dense, 12, 4, segments=8)  # 12 experts are not copies of 8 segments
    with pytest.raises(InputError, match="top-k"):
        upcycle(dense, 4, 5)
    with pytest.raises(InputError, match="Llama"):
        upcycle(load_model("tiny-moe"), 4, 2)


def test_shipped_upcycled_model_records_its_source():
    from mlx26.core.zoo.registry import read_manifest

    manifest = read_manifest("tiny-moe-upcycled")
    assert manifest["upcycled_from"]["model"] == "tiny-llama-draft"
    assert manifest["config"]["num_local_experts"] == 8
    source = read_manifest("tiny-llama-draft")
    # trained on past its source: held-out bits/byte at least as good as the dense model's (the bar)
    assert manifest["eval"]["bits_per_byte"] <= source["eval"]["bits_per_byte"]
    model = load_model("tiny-moe-upcycled")
    assert type(model).__name__ == "MixtralForCausalLM"


def test_shipped_fine_grained_model_records_its_segments():
    from mlx26.core.zoo.registry import read_manifest

    manifest = read_manifest("tiny-moe-fine")
    assert manifest["upcycled_from"]["model"] == "tiny-llama-draft" and manifest["upcycled_from"]["segments"] == 8
    config = manifest["config"]
    assert config["num_local_experts"] == 32 and config["num_experts_per_tok"] == 8
    assert config["intermediate_size"] <= config["hidden_size"] // 2  # fine-grained: expert width ≤ H/2
    source = read_manifest("tiny-llama-draft")
    assert manifest["eval"]["bits_per_byte"] <= source["eval"]["bits_per_byte"]
    assert manifest["eval"]["dead_experts"] == 0
