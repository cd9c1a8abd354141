"""Fixtures for the LLM tests: rules files, loopback servers on port 0 (always stopped), a micro model."""

from __future__ import annotations

import json

import pytest

RULES = {
    "model": "rules-model",
    "rules": [
        {"match": r"^add (\d+) and (\d+)$", "reply": "sum of $1 and $2"},
        {"match": "capital of france", "flags": "i", "reply": "Paris."},
        {"match": "story", "reply": "once upon a time there was a tiny model that only knew one story and told it"},
        {"match": "turns", "replies": ["first", "second"]},
        {"match": "", "reply": "fallback reply"},
    ],
}


@pytest.fixture
def rules_file(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(RULES), encoding="utf-8")
    return str(path)


@pytest.fixture
def serve(rules_file):
    """``serve(faults=..., api_key=...)`` → a started LLMServer on 127.0.0.1:0; all are stopped at teardown."""
    from mlx26.core.llm import get_backend
    from mlx26.core.llm.faults import FaultPlan
    from mlx26.core.llm.server import LLMServer

    servers = []

    def start(faults=None, api_key=None, backend=None, **plan):
        plan_obj = faults if isinstance(faults, FaultPlan) else FaultPlan(faults or (), **plan)
        server = LLMServer(backend or get_backend(f"scripted:{rules_file}"), port=0, faults=plan_obj,
                           api_key=api_key)
        servers.append(server.start())
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def micro_model_dir(tmp_path_factory):
    """A random-init 1-layer Llama with the zoo's byte tokenizer (and its chat template), saved to disk."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from mlx26.core.zoo import load_tokenizer

    tokenizer = load_tokenizer("byte")
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=128, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config)
    path = tmp_path_factory.mktemp("micro-llama")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
