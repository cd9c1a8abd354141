"""The step scorers: causality, the fast path equals the explicit features, streaming equals batch, training."""

from __future__ import annotations

import json

import numpy as np
import pytest
from mlx26.core.score_code import load_model
from mlx26.core.score_code.corpus import generate
from mlx26.core.score_code.features import StepFeaturizer, csr
from mlx26.core.score_code.labels import step_labels
from mlx26.core.score_code.linear import train_linear
from mlx26.core.score_code.prm import SHIPPED_DIR, manifest
from mlx26.core.score_code.segment import MODES, segment
from mlx26.core.score_code.stream import StreamScorer


@pytest.fixture(scope="module")
def linear():
    return load_model("linear")


def _steps(text, mode="block"):
    return [s.text for s in segment(text, mode)]


@pytest.mark.parametrize("mode", MODES)
def test_linear_causal_appending_steps_never_changes_earlier_scores(linear, mode):
    for ex in generate(15, seed=11):
        texts = _steps(ex.text, mode)
        full, _ = linear.score_steps(texts)
        for k in range(1, len(texts)):
            assert linear.score_steps(texts[:k])[0] == full[:k]
        assert all(-1 <= s <= 1 for s in full)


def test_fast_dot_equals_explicit_feature_rows(linear):
    w = np.asarray(linear.weights)
    for ex in generate(10, seed=12):
        texts = _steps(ex.text, "line")
        explicit, fast = StepFeaturizer(linear.dim, 4), StepFeaturizer(linear.dim, 4)  # small window: eviction too
        rows = [explicit(t) for t in texts]
        dots = [fast.dot(t, linear.weights) for t in texts]
        assert np.allclose(csr(rows, linear.dim) @ w, dots, atol=1e-9)
        assert fast.truncated == (len(texts) > 4)


@pytest.mark.parametrize("mode", MODES)
def test_stream_equals_batch(linear, mode):
    for ex in generate(6, seed=13):
        steps = segment(ex.text, mode)
        batch, _ = linear.score_steps([s.text for s in steps])
        scorer, got = StreamScorer(linear, mode), []
        for line in ex.text.splitlines():
            got += list(scorer.feed(line))
        got += list(scorer.close())
        assert [g[0] for g in got] == steps
        assert [g[1] for g in got] == pytest.approx(batch, abs=1e-12)


def test_transformer_causal_with_sliding_window():
    torch = pytest.importorskip("torch")
    from mlx26.core.score_code.transformer import TransformerConfig, TransformerPRM, encode_steps

    torch.manual_seed(0)
    model = TransformerPRM(TransformerConfig(vocab=64, d_model=16, n_heads=2, n_layers=1, d_ff=16, max_len=32))
    texts = _steps(generate(1, seed=14)[0].text, "line")
    ids, _ = encode_steps(texts, 64)
    assert len(ids) > 3 * 32  # several windows
    full, exceeded = model.score_steps(texts)
    assert exceeded
    for k in (1, 5, len(texts) // 2, len(texts) - 1):
        assert model.score_steps(texts[:k])[0] == pytest.approx(full[:k], abs=1e-5)
    assert all(-1 <= s <= 1 for s in full)


def test_shipped_models_and_manifest():
    m = manifest()
    assert (SHIPPED_DIR / "linear.npz").is_file()
    assert m["models"]["linear"]["file"] == "linear.npz" and m["seed"] == 0
    sizes = {p.name: p.stat().st_size for p in SHIPPED_DIR.iterdir()}
    # a few MB each: the linear model's 2^20 weights are 4.2 MB dense in ONNX, 1.7 MB compressed in .npz
    assert max(sizes.values()) < 4_500_000 and sum(sizes.values()) < 8_000_000, sizes
    json.dumps(m)


def test_shipped_linear_separates_held_out_vulnerable_steps(linear):
    """A seed the shipped model never saw: vulnerable steps score lower than safe ones (AUC > 0.9)."""
    pos, neg = [], []
    for ex in generate(150, seed=99_001):
        steps = segment(ex.text, "block")
        scores, _ = linear.score_steps([s.text for s in steps])
        for s, y in zip(scores, step_labels(steps, [(n, n) for n in ex.vulnerable_lines]), strict=True):
            (pos if y else neg).append(s)
    pos_a, neg_a = np.array(pos), np.array(neg)
    auc = (pos_a[:, None] < neg_a[None, :]).mean()
    assert auc > 0.9


def test_training_is_deterministic_and_learns():
    exs = generate(30, seed=21)
    texts, labels = [], []
    for ex in exs:
        steps = segment(ex.text, "block")
        texts.append([s.text for s in steps])
        labels.append(step_labels(steps, [(n, n) for n in ex.vulnerable_lines]))
    a, info = train_linear(texts, labels, dim=1 << 12, max_iter=40)
    b, _ = train_linear(texts, labels, dim=1 << 12, max_iter=40)
    assert a.weights == b.weights
    assert info["train_step_accuracy"] > 0.95
    with pytest.raises(ValueError, match="both"):
        train_linear(texts, [[0] * len(t) for t in texts], dim=1 << 10)
