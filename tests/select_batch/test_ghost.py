"""Closed-form (ghost) LM-head features against the exact vmap(grad) path, and the TensorSketch."""

from __future__ import annotations

import numpy as np
import pytest

TEXTS = ["def add(a, b):\n    return a + b\n", "Question: Mia has 3 apples. She buys 4 more.\nAnswer: 7\n",
         "The quick brown fox jumps over the lazy dog, again and again.", "x = [i * i for i in range(10)]",
         "import os\nprint(os.getcwd())"]


def test_tensor_sketch_of_outer_sums_is_the_linear_map_on_full_matrices():
    """TS(Σ_t x_t y_tᵀ) via FFTs equals the map written entry by entry: Σ_{v,d} G_vd s1 s2 e_{(b1+b2) mod k}."""
    torch = pytest.importorskip("torch")
    from mlx26.core.select_batch.ghost import TensorSketch

    gen = torch.Generator().manual_seed(1)
    V, D, k, n, T = 50, 12, 16, 3, 7
    ts = TensorSketch.make(V, D, k, seed=5)
    x = torch.randn(n * T, V, generator=gen, dtype=torch.float64)
    y = torch.randn(n * T, D, generator=gen, dtype=torch.float64)
    rows = torch.arange(n).repeat_interleave(T)
    got = ts.of_outer_sums(x, y, rows, n)
    G = torch.einsum("tv,td->tvd", x, y).view(n, T, V, D).sum(1)
    ref = torch.zeros(n, k, dtype=torch.float64)
    for v in range(V):  # the definition, one entry at a time
        for d in range(D):
            ref[:, (int(ts.b1[v]) + int(ts.b2[d])) % k] += G[:, v, d] * float(ts.s1[v] * ts.s2[d])
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(ts.sketch_full(G), ref, rtol=1e-10, atol=1e-10)
    same = TensorSketch.make(V, D, k, seed=5)
    assert torch.equal(same.b1, ts.b1) and not torch.equal(TensorSketch.make(V, D, k, seed=6).b1, ts.b1)


def test_tensor_sketch_preserves_inner_products_of_low_rank_gradients():
    torch = pytest.importorskip("torch")
    from mlx26.core.select_batch.ghost import TensorSketch

    gen = torch.Generator().manual_seed(0)
    V, D, n, T = 400, 32, 6, 20
    x = torch.randn(n * T, V, generator=gen, dtype=torch.float64)
    y = torch.randn(n * T, D, generator=gen, dtype=torch.float64)
    rows = torch.arange(n).repeat_interleave(T)
    G = torch.einsum("tv,td->tvd", x, y).view(n, T, V, D).sum(1).reshape(n, -1)
    exact = G @ G.T
    errs = []
    for seed in range(8):
        S = TensorSketch.make(V, D, 2048, seed).of_outer_sums(x, y, rows, n)
        scale = torch.sqrt(torch.outer(exact.diag(), exact.diag()))
        errs.append(float(((S @ S.T - exact) / scale).abs().mean()))
    assert np.mean(errs) < 0.05  # JL-type error ~ 1/sqrt(2048)


@pytest.fixture(scope="module")
def model_and_tok():
    pytest.importorskip("transformers")
    import torch
    from mlx26.core.zoo import load_model, load_tokenizer

    torch.set_num_threads(1)
    return load_model("tiny-llama"), load_tokenizer("tiny-llama")


def test_ghost_equals_vmap_exactly_unprojected_and_projected(model_and_tok):
    from mlx26.core.select_batch.features import Featurizer

    model, tok = model_and_tok
    for proj_dim in (0, 256):
        ghost = Featurizer(model, tok, "last-layer", proj_dim, seq_len=32, path="ghost").features(TEXTS)
        exact = Featurizer(model, tok, "last-layer", proj_dim, seq_len=32, path="vmap").features(TEXTS)
        assert ghost.shape == exact.shape == (len(TEXTS), proj_dim or model.lm_head.weight.numel())
        np.testing.assert_allclose(ghost, exact, atol=1e-5 * np.abs(exact).max())
        K_ghost, K_exact = ghost @ ghost.T, exact @ exact.T  # the inner products the utility uses
        np.testing.assert_allclose(K_ghost, K_exact, rtol=1e-5, atol=1e-5 * np.abs(K_exact).max())
    auto = Featurizer(model, tok, "last-layer", 256, seq_len=32)
    assert auto.resolved_path == "ghost"
    np.testing.assert_array_equal(auto.features(TEXTS), Featurizer(model, tok, "last-layer", 256, seq_len=32,
                                                                   path="ghost").features(TEXTS))


def test_ghost_path_only_for_the_head(model_and_tok):
    from mlx26.core.select_batch.features import Featurizer

    model, tok = model_and_tok
    assert Featurizer(model, tok, "last-block", 64).resolved_path == "vmap"
    with pytest.raises(ValueError, match="last-layer only"):
        Featurizer(model, tok, "last-block", 64, path="ghost")
    with pytest.raises(ValueError, match="Unknown feature path"):
        Featurizer(model, tok, "last-layer", 64, path="fast")


def test_refresh_reuses_features_and_counts_fresh_rows():
    """refresh 1 computes every candidate and anchor each step; refresh R reuses rows younger than R steps."""
    pytest.importorskip("transformers")
    from mlx26.core.select_batch.data import demo_rows, parse_rows
    from mlx26.core.select_batch.train import SelectTrainer, TrainConfig

    pool = parse_rows(enumerate(demo_rows("train", 12, 0), 1), "pool")
    val = parse_rows(enumerate(demo_rows("val", 3, 0), 1), "val")
    fresh = {}
    for R in (1, 100):
        cfg = TrainConfig(method="partitionsel", steps=6, batch=2, buffer=2, seq_len=16, proj_dim=64, refresh=R,
                          eval_every=6)
        trainer = SelectTrainer(pool, val, cfg)
        fresh[R] = [r["fresh"] for r in trainer.run() if r["step"] > 0]
    assert fresh[1] == [4 + 3] * 6
    # 12 rows, 4 a step: steps 1-3 see every row once (all new), then the cache serves steps 4-6.
    assert fresh[100] == [4 + 3, 4, 4, 0, 0, 0]
