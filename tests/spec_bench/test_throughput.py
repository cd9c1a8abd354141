"""Throughput split: exact lengths, entropy tiers, the random-token variant and the overestimation direction."""

from __future__ import annotations

import json

import pytest
from mlx26.core.common.errors import InputError
from mlx26.core.spec_bench import throughput
from mlx26.core.spec_bench.prompts import Prompt, from_records

from tests._data import shared_data


def test_exact_lengths_and_tiers(models):
    tok = models["tokenizer"]
    pool = [Prompt(str(i), "c" if i % 2 else "d", t) for i, t in enumerate(
        ["aaaa aaaa aaaa aaaa", "x = 1\ny = 2\nz = 3", "Colourless green ideas sleep furiously tonight.",
         "1 1 1 1 1 1 1 1", "The committee's quarterly report describes rising costs.", "def f(): pass"])]
    recs = throughput.build(pool, tok, [40, 96], 2, seed=0, context=1024)
    assert {(r["length"], r["tier"]) for r in recs} == {(n, t) for n in (40, 96) for t in throughput_tiers()}
    for r in recs:
        assert len(r["input_ids"]) == r["length"]
        assert r["entropy_bits"] == pytest.approx(throughput.token_entropy(r["input_ids"]), abs=1e-4)
    for n in (40, 96):
        ent = {t: [r["entropy_bits"] for r in recs if r["length"] == n and r["tier"] == t] for t in ("low", "high")}
        assert max(ent["low"]) <= min(ent["high"])
    special = set(tok.all_special_ids)
    assert all(not special & set(r["input_ids"]) for r in recs if r["tier"] == "random")
    assert all(r["data"] == "SYNTHETIC" for r in recs if r["tier"] == "random")


def test_appended_prompts_count_what_padding_added(models):
    tok = models["tokenizer"]
    long_doc = " ".join(f"word{i}" for i in range(200))
    pool = [Prompt("long", "doc", long_doc), Prompt("a", "q", "What is two plus two?"),
            Prompt("b", "q", "What is three plus three?"), Prompt("c", "r", "Name a colour.")]
    encode = lambda t: tok(t, add_special_tokens=False)["input_ids"]  # noqa: E731
    sep = encode("\n\n")
    rows = {p.id: (ids, k) for p, ids, k in throughput.exact_length(pool, encode, 24, sep)}
    assert rows["long"][1] == 0 and rows["long"][0] == encode(long_doc)[:24]  # one document cut to length
    # a short question is padded with the other question of its category first, then the rest of the pool
    k = rows["a"][1]
    assert k >= 1 and rows["a"][0][: len(encode("What is two plus two?")) + len(sep)] == encode(
        "What is two plus two?") + sep
    assert rows["a"][0][len(encode("What is two plus two?")) + len(sep):][:len(encode("What is three plus three?"))] \
        == encode("What is three plus three?")
    recs = throughput.build(pool, tok, [24], 2, seed=0, context=1024)
    assert all(r["appended_prompts"] == 0 for r in recs if r["tier"] == "random")
    assert {r["id"]: r["appended_prompts"] for r in recs if r["data"] == "pool"}.get("long@24", 0) == 0


def throughput_tiers():
    return ("low", "mixed", "high", "random")


def test_length_beyond_context_is_refused(models):
    with pytest.raises(InputError, match="does not fit the target's context of 1024"):
        throughput.build([Prompt("0", "c", "hello")], models["tokenizer"], [2048], 1, context=1024)


def test_entropy_closed_form():
    assert throughput.token_entropy([1, 2, 3, 4]) == pytest.approx(2.0)
    assert throughput.token_entropy([5, 5, 5]) == 0.0


def _random_over_real(target: str, length: int) -> dict:
    from mlx26.core.spec_bench.metrics import al_ratio_interval
    from mlx26.core.spec_bench.run import load_pair, run

    models = load_pair(target, None)
    path = shared_data("spec-bench") / "question.jsonl"
    rows = [(i, json.loads(line)) for i, line in enumerate(path.read_text().splitlines(), 1)]
    real = from_records(rows, str(path))[::10]
    recs = throughput.build(real, models["tokenizer"], [length], 16, seed=0, context=1024)
    prompts = [Prompt(r["id"], r["tier"], r["prompt"]) for r in recs]
    report = run(prompts, models, engine="prompt-lookup", k=4, max_tokens=256, ids=[r["input_ids"] for r in recs])
    rand = [r for r in report["prompts"] if r["category"] == "random"]
    assert len(rand) == 16
    return al_ratio_interval(rand, [r for r in report["prompts"] if r["category"] != "random"])


@pytest.mark.slow
def test_random_over_real_on_both_test_beds():
    """Two cells of benchmarks/spec_bench.py (every 10th Spec-Bench prompt, 16 random-token prompts, 256 new
    tokens, prompt lookup), pinned as regressions of the shipped models, not as the paper's finding: on tiny-llama
    (trained on 128-token windows, so these positions are extrapolation) random tokens give the higher AL at 256
    input tokens, the cell where the old test bed pointed the paper's way; on tiny-llama-1k (trained on 1,024-token
    windows) they give the lower AL at 512 input tokens. docs/spec-bench.md reports every cell."""
    old = _random_over_real("tiny-llama", 256)
    assert old["low"] > 1, old
    new = _random_over_real("tiny-llama-1k", 512)
    assert new["high"] < 1, new


def test_trained_context_comes_from_the_manifest():
    from mlx26.core.zoo.registry import trained_context

    assert trained_context("tiny-llama") == 128  # 1,024 positions, trained on 128-token windows
    assert trained_context("tiny-llama-1k") == 1024
    assert trained_context("someone/not-a-local-model") is None  # a hub id: unknown, never guessed


def test_run_counts_prompts_that_run_past_the_trained_context(models):
    """A prompt counts when prompt + new tokens + k drafts (the positions verification can reach, the same sum the
    context check uses) pass the window; truncation is applied first; a draft's window counts only when drafting."""
    from mlx26.core.spec_bench.run import run

    short = models["tokenizer"]("def f(x):")["input_ids"]
    edge, over = list(range(5, 5 + 122)), list(range(5, 5 + 123))  # 122 + 4 + 2 = 128: inside; 123: one past
    prompts = [Prompt("a", "c", "short"), Prompt("b", "c", "edge"), Prompt("d", "c", "over")]
    report = run(prompts, models, engine="prompt-lookup", k=2, max_tokens=4, ids=[short, edge, over])
    s = report["summary"]
    assert (s["trained_context"], s["draft_trained_context"]) == (128, None)
    assert s["prompts_past_trained_context"] == 1
    cut = run(prompts, models, engine="prompt-lookup", k=2, max_tokens=4, ids=[short, edge, over], truncate=100)
    assert cut["summary"]["prompts_past_trained_context"] == 0
    drafted = run(prompts, models, engine="ours", k=2, max_tokens=4, ids=[short, edge, over])
    assert drafted["summary"]["draft_trained_context"] == 128 and drafted["summary"]["prompts_past_trained_context"] == 1


def test_input_ids_from_another_tokenizer_are_an_input_error(models):
    from mlx26.core.spec_bench.run import run

    for ids in ([1, 2, 5000], [-1, 2, 3]):
        with pytest.raises(InputError, match="not built with this target's tokenizer"):
            run([Prompt("x", "c", "saved")], models, engine="prompt-lookup", k=2, max_tokens=2, ids=[ids])
