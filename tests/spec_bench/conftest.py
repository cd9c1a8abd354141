"""Shared fixtures of the spec-bench tests: the zoo's tiny target/draft pair, loaded once."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

PROMPTS = ["def add(a, b):\n    return a + b\n\ndef sub(a, b):", "Question: Zoe has 43 books. A friend gives her 4.",
           "The quick brown fox jumps over the lazy dog. The quick brown"]


@pytest.fixture(scope="session")
def models():
    from mlx26.core.spec_bench.run import load_pair

    return load_pair("tiny-llama", "tiny-llama-draft")


@pytest.fixture(scope="session")
def prompt_ids(models):
    return [models["tokenizer"](p)["input_ids"] for p in PROMPTS]
