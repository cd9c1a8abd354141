"""Engines: greedy equality with transformers' own greedy generate, AL identities, lossless sampling (chi^2)."""

from __future__ import annotations

import pytest
from mlx26.core.common.errors import InputError
from mlx26.core.spec_bench import engines as E


def _hf_greedy(model, ids, n):
    import torch

    out = model.generate(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                         max_new_tokens=n, do_sample=False, eos_token_id=2, pad_token_id=0)
    return out[0, len(ids):].tolist()


@pytest.mark.parametrize("k", [4, pytest.param(1, marks=pytest.mark.slow)])
def test_every_engine_equals_plain_greedy_token_for_token(models, prompt_ids, k):
    target, draft, eos = models["target"], models["draft"], models["eos"]
    for ids in prompt_ids:
        reference = _hf_greedy(target, ids, 20)  # independent: transformers' greedy search
        plain = E.plain_decode(target, ids, 20, eos_ids=eos)
        ours = E.speculative_decode(target, E.ModelDrafter(draft), ids, 20, k, eos_ids=eos)
        lookup = E.speculative_decode(target, E.NgramDrafter(), ids, 20, k, eos_ids=eos)
        assisted = E.hf_assisted(target, draft, ids, 20, k, eos_ids=eos)
        assert plain.tokens == reference
        assert ours.tokens == reference and lookup.tokens == reference and assisted.tokens == reference
        for gen in (ours, lookup, assisted):
            al = gen.acceptance_length
            assert 1 <= al <= k + 1
            assert al == len(gen.tokens) / gen.target_calls
        for gen in (ours, lookup):  # per-step log: each step emits accepted + 1 tokens
            assert sum(s.accepted + 1 for s in gen.steps) == len(gen.tokens)
            assert len(gen.steps) == gen.target_calls
            assert all(0 <= s.accepted <= s.drafted <= k for s in gen.steps)


def test_k_must_be_positive(models, prompt_ids):
    with pytest.raises(InputError, match="-k must be >= 1"):
        E.speculative_decode(models["target"], E.NgramDrafter(), prompt_ids[0], 4, 0)
    with pytest.raises(InputError, match="-k must be >= 1"):
        E.hf_assisted(models["target"], models["draft"], prompt_ids[0], 4, -1)


def test_mismatched_vocabularies_are_a_clear_error(models):
    from mlx26.core.zoo import load_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    small = LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2))
    with pytest.raises(InputError, match="vocabularies differ"):
        E.check_vocab(models["tokenizer"], load_tokenizer("byte"), models["target"], small)


def _tiny_lm(seed, vocab=6):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32)
    model = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # sharpen the random init so p and q differ visibly
        model.lm_head.weight.mul_(8.0)
    return model


def _chi2_spec(vocab, n, max_new, k, temperature=1.0):
    """chi^2 p-value of 2-token continuations from spec decoding vs the target's exact joint p(x1) p(x2|x1)."""
    import numpy as np
    import torch
    from scipy.stats import chisquare

    prompt = [1, 3]
    target, draft = _tiny_lm(1, vocab), _tiny_lm(2, vocab)
    with torch.inference_mode():
        p1 = torch.softmax(target(input_ids=torch.tensor([prompt])).logits[0, -1] / temperature, -1)
        exact = np.zeros((vocab, vocab))
        for a in range(vocab):
            p2 = torch.softmax(target(input_ids=torch.tensor([prompt + [a]])).logits[0, -1] / temperature, -1)
            exact[a] = (p1[a] * p2).double().numpy()
    gen = torch.Generator().manual_seed(0)
    counts = np.zeros((vocab, vocab))
    for _ in range(n):
        out = E.speculative_decode(target, E.ModelDrafter(draft), prompt, max_new, k, temperature=temperature,
                                   generator=gen)
        counts[out.tokens[0], out.tokens[1]] += 1
    expected = exact.ravel() / exact.sum() * n
    keep = expected >= 5  # chi^2 needs expected counts >= 5; pool the rest into one cell
    obs = np.append(counts.ravel()[keep], counts.ravel()[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    with torch.inference_mode():  # the draft really differs from the target (otherwise the test could not fail)
        q1 = torch.softmax(draft(input_ids=torch.tensor([prompt])).logits[0, -1], -1)
    assert float((p1 - q1).abs().sum()) > 0.2
    return chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def test_rejection_sampling_preserves_the_target_distribution():
    """k = 1 over 2 new tokens: accept, reject + residual, and the bonus token all occur."""
    assert _chi2_spec(vocab=4, n=500, max_new=2, k=1) > 0.001


@pytest.mark.slow
def test_rejection_sampling_preserves_the_target_distribution_k2():
    assert _chi2_spec(vocab=6, n=1500, max_new=3, k=2) > 0.001


def test_a_wrong_acceptance_rule_fails_the_same_chi2(monkeypatch):
    """Negative control with the very test above (vocab 4, n = 500, 2-token joint through the decoder): a
    verifier that accepts every draft samples x1 from q instead of p, and the chi^2 rejects it."""

    def accept_all(torch, logits, drafts, qs, temperature, generator):
        probs = torch.softmax(logits[len(drafts)] / temperature, dim=-1)
        return len(drafts), int(torch.multinomial(probs, 1, generator=generator))

    monkeypatch.setattr(E, "_verify", accept_all)
    assert _chi2_spec(vocab=4, n=500, max_new=2, k=1) < 0.001
