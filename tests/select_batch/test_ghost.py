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


def test_reservoir_keeps_unselected_candidates_at_most_k_steps():
    """Amortised selection: every window holds batch × buffer distinct candidates; a candidate waits ≤ K
    steps (so no feature row is older than K); selected ones leave; only new draws (and anchors on their
    own schedule) are featurised; the greedy sees the same features a fresh computation would give at
    the step they joined."""
    pytest.importorskip("transformers")
    from mlx26.core.select_batch.data import demo_rows, parse_rows
    from mlx26.core.select_batch.train import SelectTrainer, TrainConfig

    pool = parse_rows(enumerate(demo_rows("train", 60, 0), 1), "pool")
    val = parse_rows(enumerate(demo_rows("val", 3, 0), 1), "val")
    K, B, buffer = 3, 2, 4
    cfg = TrainConfig(method="partitionsel", steps=8, batch=B, buffer=buffer, seq_len=16, proj_dim=64, reservoir=K,
                      anchor_every=4, eval_every=8)
    trainer = SelectTrainer(pool, val, cfg)
    windows, joined, fresh = [], {}, []
    real = trainer._select

    def spy(cand, step):
        windows.append(list(cand))
        for i in cand:
            joined.setdefault(i, step)
            assert step - joined[i] < K  # waiting ≤ K steps
            assert trainer._cache.get(i, (step,))[0] >= step - K + 1 or i not in trainer._cache
        out = real(cand, step)
        for i in out[0]:
            joined.pop(i, None)  # selected: it leaves (a later draw of it is a new candidate)
        for i in [j for j in joined if j not in cand]:
            joined.pop(i)
        return out

    trainer._select = spy
    fresh = [r["fresh"] for r in trainer.run() if r["step"] > 0]
    assert all(len(w) == B * buffer == len(set(w)) for w in windows)
    anchors = [len(val) if s in (1, 5) else 0 for s in range(1, 9)]
    new_rows = [f - a for f, a in zip(fresh, anchors, strict=True)]
    assert new_rows[0] == B * buffer and all(B <= n <= B * buffer for n in new_rows[1:])
    assert sum(new_rows) < 0.6 * B * buffer * 8  # far fewer rows than a fresh window every step
    with pytest.raises(ValueError, match="other staleness scheme"):
        TrainConfig(reservoir=2, refresh=3).validate(100)


def test_feature_prefix_changes_only_the_features():
    pytest.importorskip("transformers")
    from mlx26.core.select_batch.data import demo_rows, parse_rows
    from mlx26.core.select_batch.train import SelectTrainer, TrainConfig

    pool = parse_rows(enumerate(demo_rows("train", 16, 0), 1), "pool")
    val = parse_rows(enumerate(demo_rows("val", 3, 0), 1), "val")
    cfg = TrainConfig(method="partitionsel", steps=1, batch=2, buffer=2, seq_len=32, proj_dim=64, feature_len=8)
    trainer = SelectTrainer(pool, val, cfg)
    short = trainer._sharded_features([pool[0].text])
    assert trainer.feat.seq_len == 32  # restored after the features
    trainer.config.feature_len = 0
    full = trainer._sharded_features([pool[0].text])
    trainer.feat.seq_len = 8
    explicit = trainer.feat.features([pool[0].text])  # the same text cut to 8 tokens by the featurizer itself
    assert not np.allclose(short, full) and np.allclose(short, explicit)
