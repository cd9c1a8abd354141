"""Gradient features: vmap(grad) against a plain autograd loop, CountSketch, row cleaning."""

from __future__ import annotations

import numpy as np
import pytest
from mlx26.core.select_batch.features import check_dims, clean_rows

TEXTS = ["def add(a, b):\n    return a + b\n", "Question: Mia has 3 apples. She buys 4 more.\nAnswer: 7\n",
         "The quick brown fox jumps over the lazy dog, again and again.", "x = [i * i for i in range(10)]"]


def test_clean_rows_drops_and_counts():
    G = np.array([[1.0, 0.0], [np.nan, 1.0], [0.0, 0.0], [3.0, 4.0], [np.inf, 0.0]])
    clean, keep, dropped = clean_rows(G)
    assert dropped == 3 and keep.tolist() == [True, False, False, True, False]
    np.testing.assert_allclose(clean, [[1.0, 0.0], [0.6, 0.8]])
    with pytest.raises(ValueError, match="every pool gradient row"):
        clean_rows(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="dimension 3 but validation gradients have 2"):
        check_dims(np.ones((2, 3)), np.ones((1, 2)))


def test_clean_rows_normalises_huge_finite_rows_and_refuses_complex():
    # ‖[3e200, 4e200]‖ overflows float64 in a plain norm; the row is still a valid direction.
    clean, keep, dropped = clean_rows(np.array([[3e200, 4e200], [1.0, 0.0], [1e-300, 0.0]]))
    assert dropped == 1 and keep.tolist() == [True, True, False]
    np.testing.assert_allclose(clean, [[0.6, 0.8], [1.0, 0.0]])
    with pytest.raises(ValueError, match="real numbers"):
        clean_rows(np.ones((2, 2)) + 1j)


def test_count_sketch_preserves_inner_products_and_is_seeded():
    torch = pytest.importorskip("torch")
    from mlx26.core.select_batch.features import count_sketch

    gen = torch.Generator().manual_seed(0)
    X = torch.randn(6, 20000, generator=gen, dtype=torch.float64)
    X[1] = X[0] + 0.5 * X[1]
    S = count_sketch(X, 2048, seed=3)
    assert torch.equal(S, count_sketch(X, 2048, seed=3)) and not torch.equal(S, count_sketch(X, 2048, seed=4))
    exact, approx = X @ X.T, S @ S.T
    scale = torch.sqrt(torch.outer(exact.diag(), exact.diag()))
    assert float(((approx - exact) / scale).abs().max()) < 0.12  # JL-type error ~ 1/sqrt(2048)


@pytest.fixture(scope="module")
def zoo():
    pytest.importorskip("transformers")
    import torch
    from mlx26.core.zoo import load_model, load_tokenizer

    torch.set_num_threads(1)
    return load_model, load_tokenizer("tiny-llama")


def _reference(model, feat, params, hidden_detached: bool):
    """Per-example gradients by a plain autograd loop, one example at a time."""
    import torch
    from mlx26.core.select_batch.features import inner_llama

    ids, mask = feat.encode(TEXTS)
    base = inner_llama(model)
    rows = []
    for i in range(len(TEXTS)):
        n = int(mask[i].sum())
        x = ids[i: i + 1, :n]
        if hidden_detached:  # the LM head only: the trunk is a constant
            with torch.no_grad():
                h = base.model(input_ids=x).last_hidden_state
            logits = h @ params[0].T
        else:
            logits = model(input_ids=x).logits
        loss = torch.nn.functional.cross_entropy(logits[0, :-1], x[0, 1:])
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        rows.append(torch.cat([g.reshape(-1) for g in grads]).double().numpy())
    return np.stack(rows)


@pytest.mark.parametrize("grad_params", ["last-layer", "last-block", "lora"])
def test_vmap_features_equal_autograd_loop(zoo, grad_params):
    if grad_params == "lora":
        pytest.importorskip("peft")
    from mlx26.core.select_batch.features import Featurizer, inner_llama

    load_model, tok = zoo
    feat = Featurizer(load_model("tiny-llama"), tok, grad_params, proj_dim=0, seq_len=32)
    got = feat.features(TEXTS)
    base = inner_llama(feat.model)
    if grad_params == "last-layer":
        params = [base.lm_head.weight]
    elif grad_params == "last-block":
        params = list(base.model.layers[-1].parameters())
    else:
        params = [p for name, p in base.model.layers[-1].named_parameters() if "lora_" in name]
        assert params and all(p.requires_grad for p in params)
    for p in params:
        p.requires_grad_(True)
    ref = _reference(feat.model, feat, params, hidden_detached=grad_params == "last-layer")
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, atol=2e-5 * np.abs(ref).max())
    projected = Featurizer(feat.model, tok, grad_params, proj_dim=64, seq_len=32).features(TEXTS)
    assert projected.shape == (len(TEXTS), 64 if ref.shape[1] > 64 else ref.shape[1])


def test_features_are_computed_in_bounded_chunks(zoo, monkeypatch):
    """A large pool must not hold one full gradient per text at once: at most FEATURE_CHUNK per call,
    and chunking does not change the features (rows match the autograd reference)."""
    import mlx26.core.select_batch.features as features
    from mlx26.core.select_batch.features import Featurizer, inner_llama

    load_model, tok = zoo
    feat = Featurizer(load_model("tiny-llama"), tok, "last-layer", proj_dim=0, seq_len=32)
    sizes: list[int] = []
    inner = feat._features
    monkeypatch.setattr(feat, "_features", lambda texts: sizes.append(len(texts)) or inner(texts))
    monkeypatch.setattr(features, "FEATURE_CHUNK", 3)
    got = feat.features(TEXTS)
    assert sizes == [3, 1]
    head = inner_llama(feat.model).lm_head.weight
    head.requires_grad_(True)
    ref = _reference(feat.model, feat, [head], hidden_detached=True)
    np.testing.assert_allclose(got, ref, atol=2e-5 * np.abs(ref).max())


def test_cached_encoding_equals_the_tokenizers_own_padding_and_truncation(zoo, monkeypatch):
    """encode() reuses each text's token ids; the batch must be what the tokenizer itself returns, at every
    sequence length, in any order, with repeats, on either padding side — and tokenise each text once."""
    import mlx26.core.select_batch.features as features
    from mlx26.core.select_batch.features import Featurizer

    torch = pytest.importorskip("torch")
    load_model, tok = zoo
    feat = Featurizer(load_model("tiny-llama"), tok, "last-layer", proj_dim=0, seq_len=32)
    texts = [*TEXTS, TEXTS[0] * 20, "", TEXTS[1]]
    calls: list[int] = []
    real = feat.tokenizer
    monkeypatch.setattr(feat, "tokenizer", type("Counting", (), {
        "__call__": lambda _self, batch, **kw: calls.append(len(batch)) or real(batch, **kw),
        "pad_token_id": real.pad_token_id, "padding_side": real.padding_side})())
    for seq_len in (32, 5, 32):
        feat.seq_len = seq_len
        for batch in (texts, texts[::-1], texts[2:4]):
            ids, mask = feat.encode(batch)
            want = real(batch, return_tensors="pt", padding=True, truncation=True, max_length=seq_len)
            assert torch.equal(ids, want["input_ids"]) and torch.equal(mask, want["attention_mask"])
    assert calls == [len(set(texts)), len(set(texts))]  # once per distinct text and length
    feat.tokenizer = real
    real.padding_side = "left"
    try:
        ids, mask = feat.encode(texts)
        want = real(texts, return_tensors="pt", padding=True, truncation=True, max_length=32)
        assert torch.equal(ids, want["input_ids"]) and torch.equal(mask, want["attention_mask"])
    finally:
        real.padding_side = "right"
    monkeypatch.setattr(features, "TOKEN_CACHE_MAX", 2)  # a bounded cache: cleared, still correct
    feat.seq_len = 7
    ids, _ = feat.encode(texts)
    assert torch.equal(ids, real(texts, return_tensors="pt", padding=True, truncation=True, max_length=7)["input_ids"])
