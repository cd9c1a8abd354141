"""record → replay gives identical outputs with the network off; the cache serves repeats and is replayable."""

from __future__ import annotations

import json
import socket

import pytest
from mlx26.core.llm import LLMError, get_backend

CALLS = [("story", {}), ("add 1 and 2", {"max_tokens": 3}), ("turns", {}), ("turns", {}),
         ("capital of france", {"n": 2, "seed": 7})]


def network_off(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network is off in this test")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def no_network(monkeypatch):
    network_off(monkeypatch)


def test_recorded_session_replays_identically_offline(serve, tmp_path, monkeypatch):
    pytest.importorskip("httpx")
    server = serve()
    calls = tmp_path / "calls.jsonl"
    recorder = get_backend(f"record:{calls}=openai:{server.base_url}#rules-model", backoff_s=0.01)
    originals = [recorder.chat(prompt, **kw) for prompt, kw in CALLS]
    streamed: list[str] = []
    originals.append(recorder.chat("story", on_token=streamed.append, max_tokens=5))
    server.stop()
    assert len(calls.read_text().splitlines()) == len(CALLS) + 1
    assert "Authorization" not in calls.read_text()
    network_off(monkeypatch)
    replay = get_backend(f"replay:{calls}")
    assert replay.model == "rules-model"
    again = [replay.chat(prompt, **kw) for prompt, kw in CALLS]
    deltas: list[str] = []
    again.append(replay.chat("story", on_token=deltas.append, max_tokens=5))
    for old, new in zip(originals, again, strict=True):
        assert new.choices == old.choices and new.usage == old.usage and new.model == old.model
        assert new.backend == "replay" and new.replayed_from == f"openai:{server.base_url}#rules-model"
    assert [r.text for r in again[2:4]] == ["first", "second"]  # repeated requests replay in order
    assert "".join(deltas) == again[-1].text


def test_replay_miss_and_bad_files(tmp_path, no_network):
    calls = tmp_path / "calls.jsonl"
    get_backend(f"record:{calls}=scripted:demo").chat("hello")
    replay = get_backend(f"replay:{calls}")
    with pytest.raises(LLMError, match="no recorded call"):
        replay.chat("hello", max_tokens=10)  # different params → different key
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "k"}\n')
    with pytest.raises(ValueError, match="line 1"):
        get_backend(f"replay:{bad}")
    with pytest.raises(ValueError, match="not found"):
        get_backend(f"replay:{tmp_path / 'missing.jsonl'}")


def test_replay_of_several_models_needs_a_model(tmp_path, rules_file):
    calls = tmp_path / "calls.jsonl"
    get_backend(f"record:{calls}=scripted:demo").chat("hello")
    get_backend(f"record:{calls}=scripted:{rules_file}").chat("story")
    with pytest.raises(ValueError, match="holds calls to 2 models") as info:
        get_backend(f"replay:{calls}")
    assert "replay:FILE#MODEL" in info.value.hint
    assert get_backend(f"replay:{calls}#rules-model").chat("story").text.startswith("once upon")
    with pytest.raises(ValueError, match="no calls to model"):
        get_backend(f"replay:{calls}#other")


def test_cache_serves_deterministic_repeats_and_is_replayable(tmp_path, rules_file):
    path = tmp_path / "cache.jsonl"
    cached = get_backend(f"cache:{path}=scripted:{rules_file}")
    first = cached.chat("turns")
    again = cached.chat("turns")  # the scripted rule would now say "second": the cache answers instead
    assert first.text == again.text == "first" and again.cached and not first.cached
    sampled = [cached.chat("turns", temperature=1.0).text for _ in range(2)]
    assert sampled == ["second", "first"]  # temperature > 0 without seed: never cached
    seeded = [cached.chat("turns", temperature=1.0, seed=3).text for _ in range(2)]
    assert seeded[0] == seeded[1]
    assert cached.hits == 2 and cached.misses == 4
    reopened = get_backend(f"cache:{path}=scripted:{rules_file}")
    assert reopened.chat("turns").cached
    replay = get_backend(f"replay:{path}")
    assert replay.chat("turns").text == "first"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 2 and {r["model"] for r in lines} == {"rules-model"}


def test_recording_keeps_the_budget_bounds_so_replay_prices_unmade_calls_the_same(tmp_path, rules_file):
    from mlx26.core.llm import get_backend
    from mlx26.core.llm.cache import CachingBackend
    from mlx26.core.llm.recording import RecordingBackend, ReplayBackend, read_calls
    from mlx26.core.llm.types import ChatParams, ChatRequest

    path = tmp_path / "calls.jsonl"
    rec = RecordingBackend(get_backend(f"scripted:{rules_file}"), str(path))
    rec.chat("add 2 and 3")
    never_sent = ChatRequest.chat("a long planned prompt " * 20, ChatParams.make(max_tokens=8))
    bound = rec.prompt_token_bound(never_sent)
    rec.prompt_token_bound(never_sent)  # asked twice, written once
    bounds: dict[str, int] = {}
    assert len(read_calls(str(path), bounds=bounds)) == 1 and len(bounds) == 1
    replay = ReplayBackend(str(path))
    assert replay.prompt_token_bound(never_sent) == bound  # not the byte bound a replay would guess
    other = ChatRequest.chat("x" * 400, ChatParams.make(max_tokens=8))
    assert replay.prompt_token_bound(other) >= 400 // 4  # unrecorded and unbounded: the generic bound, never 0
    assert CachingBackend(get_backend(f"scripted:{rules_file}"), str(path)).chat("add 2 and 3").cached
