"""`--batch B`: batch decode equals per-sequence decode, and the costs scale as the batching model says."""

from __future__ import annotations

import pytest

SMALL = {"context": 100, "decode_steps": 3, "budget": 32, "model": "tiny-llama"}


def _profile(model, pipeline, batch, seed=0, ops=None, **overrides):
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.profiler import ProfileOptions, profile

    opts = ProfileOptions(pipeline=pipeline, batch=batch, seed=seed, **{**SMALL, **overrides})
    return profile(opts, model, ops or TorchOps())


@pytest.mark.parametrize("pipeline", ["dense", "quest", "indexer"])
def test_batch_decode_equals_each_sequence_alone(tiny_model, torch1, monkeypatch, pipeline):
    """Each sequence of a batch-2 run decodes as it does alone at batch 1: same greedy ids, same logits (fp32).
    The lone run gets that sequence's context and the same --seed (the indexer's projections follow the seed)."""
    from mlx26.core.profile_memory import profiler

    both = _profile(tiny_model, pipeline, 2)
    assert both["last_logits"].shape[0] == 2
    contexts = profiler.context_ids(profiler.ProfileOptions(batch=2, **SMALL), tiny_model.config.vocab_size)
    for b in range(2):
        monkeypatch.setattr(profiler, "context_ids", lambda opts, vocab, b=b: contexts[b:b + 1])
        alone = _profile(tiny_model, pipeline, 1)
        assert both["tokens"][b] == alone["tokens"][0]
        torch1.testing.assert_close(both["last_logits"][b], alone["last_logits"][0], rtol=1e-5, atol=5e-5)
    assert both["tokens"][0] != both["tokens"][1]  # different contexts, not one sequence twice


def test_sequence_b_is_the_context_of_seed_plus_b(torch1):
    from mlx26.core.profile_memory.profiler import ProfileOptions, context_ids

    batch = context_ids(ProfileOptions(batch=3, seed=5, context=64), 1000)
    assert batch.shape == (3, 64)
    for b in range(3):
        assert torch1.equal(batch[b], context_ids(ProfileOptions(seed=5 + b, context=64), 1000)[0])


def test_fpga_emu_batch_equals_torch_batch(tiny_model):
    """--device fpga with batch > 1: each sequence's kernels read that sequence's cache views in place."""
    from mlx26.core.profile_memory.ops import FpgaOps, in_place_view
    from mlx26.core.profile_memory.runner import LlamaRunner

    runner = LlamaRunner(tiny_model, 64, batch=3)
    assert all(in_place_view(runner.sequence(b).k_cache[0][:, :20]) for b in range(3))
    torch_run = _profile(tiny_model, "quest", 3)
    fpga_run = _profile(tiny_model, "quest", 3, ops=FpgaOps("emu"))
    assert fpga_run["tokens"] == torch_run["tokens"]
    assert (fpga_run["last_logits"] - torch_run["last_logits"]).abs().max().item() < 1e-4


def test_batch_costs(tiny_model):
    """Other: one batched forward per step, so FLOPs × B and bytes = weights once + activations × B.
    Memory-processing (and apply): each sequence has its own KV, so every count × B exactly."""
    from mlx26.core.profile_memory.costs import PIPELINE_STAGES

    steps, batch = SMALL["decode_steps"], 4
    one, four = (_profile(tiny_model, "quest", b)["costs"] for b in (1, batch))
    assert four["other"].flops == batch * one["other"].flops
    size, hidden = 4, tiny_model.config.hidden_size
    activations = size * 2 * hidden  # one row in and out per step and sequence (linear_cost's model)
    assert four["other"].bytes == one["other"].bytes + (batch - 1) * steps * activations
    assert four["other"].bytes < 1.01 * one["other"].bytes  # the weights dominate
    for stage in PIPELINE_STAGES:
        a, b = one[stage], four[stage]
        assert (b.flops, b.bytes, b.irregular, b.in_bytes, b.out_bytes) == \
            (batch * a.flops, batch * a.bytes, batch * a.irregular, batch * a.in_bytes, batch * a.out_bytes)
        assert b.kernel_bytes == {k: batch * v for k, v in a.kernel_bytes.items()}


def test_runner_batch_checks(tiny_model, torch1):
    from mlx26.core.common.errors import InputError
    from mlx26.core.profile_memory.runner import LlamaRunner

    with pytest.raises(InputError, match="--batch"):
        LlamaRunner(tiny_model, 16, batch=0)
    runner = LlamaRunner(tiny_model, 16, batch=2)
    with pytest.raises(InputError, match="prefill_batch"):
        runner.prefill(torch1.zeros(4, dtype=torch1.long))
    with pytest.raises(InputError, match="batch 2"):
        runner.prefill_batch(torch1.zeros(3, 4, dtype=torch1.long))


@pytest.mark.parametrize("pipeline", ["rag", "memory"])
def test_prompt_pipelines_refuse_batch(pipeline):
    from mlx26.core.common.errors import InputError
    from mlx26.core.profile_memory.profiler import ProfileOptions, validate

    validate(ProfileOptions(pipeline=pipeline, context=600, batch=1))
    with pytest.raises(InputError, match="one prompt per request"):
        validate(ProfileOptions(pipeline=pipeline, context=600, batch=2))
