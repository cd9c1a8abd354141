"""Every injected fault gives the right client behaviour: retry then success, or one line naming URL and model."""

from __future__ import annotations

import time

import pytest
from mlx26.core.llm import LLMError, get_backend

pytest.importorskip("httpx")


def backend(server, **kw):
    kw.setdefault("backoff_s", 0.01)
    return get_backend(f"openai:{server.base_url}#rules-model", **kw)


def where(server):
    return f"{server.base_url} (model rules-model)"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("modes", [["429"], ["500"], ["429", "500"]])
def test_transient_faults_are_retried_within_budget(serve, modes, stream):
    server = serve(modes, count=2, retry_after=0)
    llm = backend(server, max_retries=2)
    deltas: list[str] = []
    result = llm.chat("add 5 and 6", on_token=deltas.append if stream else None)
    assert result.text == "sum of 5 and 6" and llm.attempts == 3
    assert result.usage.source == "server"
    if stream:
        assert "".join(deltas) == result.text


def test_retry_after_is_honoured(serve):
    server = serve(["429"], count=1, retry_after=0.6)
    llm = backend(server, max_retries=1)
    start = time.perf_counter()
    assert llm.chat("add 1 and 1").text == "sum of 1 and 1"
    assert time.perf_counter() - start >= 0.6  # waited as told, not the 0.01 s backoff


def test_retry_after_beyond_the_cap_fails_at_once(serve):
    server = serve(["429"], retry_after=120)
    llm = backend(server, max_retries=3, max_retry_wait=5)
    start = time.perf_counter()
    with pytest.raises(LLMError, match="retry after 120 s") as info:
        llm.chat("x")
    assert time.perf_counter() - start < 3 and llm.attempts == 1
    assert str(info.value).startswith(f"LLM server {where(server)}: HTTP 429")


@pytest.mark.parametrize("mode", ["429", "500"])
def test_retry_budget_exhausted_is_one_line(serve, mode):
    server = serve([mode], retry_after=0)
    llm = backend(server, max_retries=2)
    with pytest.raises(LLMError) as info:
        llm.chat("x")
    message = str(info.value)
    assert message.startswith(f"LLM server {where(server)}: HTTP {mode}") and "after 3 attempts" in message
    assert "\n" not in message and llm.attempts == 3 and info.value.hint


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_json_is_an_error_not_a_retry(serve, stream):
    server = serve(["malformed"])
    llm = backend(server, max_retries=3)
    with pytest.raises(LLMError, match="malformed JSON") as info:
        llm.chat("story", on_token=(lambda d: None) if stream else None)
    assert where(server) in str(info.value) and llm.attempts == 1


def test_cut_stream_is_an_error_after_partial_text(serve):
    server = serve(["cut"])
    llm = backend(server, max_retries=3)
    deltas: list[str] = []
    with pytest.raises(LLMError, match="stream was cut") as info:
        llm.chat("story", on_token=deltas.append)
    assert where(server) in str(info.value) and llm.attempts == 1
    assert deltas and "once upon a time".startswith("".join(deltas))


def test_cut_reply_without_stream_is_retried(serve):
    server = serve(["cut"], count=1)
    llm = backend(server, max_retries=1)
    assert llm.chat("story").text.startswith("once upon a time") and llm.attempts == 2
    server.faults.reset(["cut"])
    with pytest.raises(LLMError, match="connection broken"):
        backend(server, max_retries=1).chat("story")


def test_timeout_is_honoured(serve):
    server = serve(["slow"], slow_s=1.5)
    llm = backend(server, timeout=0.3, max_retries=1)
    start = time.perf_counter()
    with pytest.raises(LLMError, match="0.3 s timeout") as info:
        llm.chat("x")
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0 and llm.attempts == 2  # two 0.3 s waits + backoff; the reply would take 1.5 s each
    assert "--timeout" in info.value.hint


def test_slow_reply_within_timeout_succeeds(serve):
    server = serve(["slow"], slow_s=0.3)
    assert backend(server, timeout=5).chat("capital of france").text == "Paris."


@pytest.mark.parametrize("stream", [False, True])
def test_length_finish_reason_is_reported(serve, stream):
    server = serve(["length"])
    result = backend(server).chat("story", on_token=(lambda d: None) if stream else None)
    assert result.finish_reason == "length" and result.text.startswith("once") and result.usage.completion_tokens <= 4


def test_connection_refused_is_one_line(serve):
    server = serve()
    url = server.base_url
    server.stop()
    llm = get_backend(f"openai:{url}#m", max_retries=1, backoff_s=0.01)
    with pytest.raises(LLMError, match="cannot connect") as info:
        llm.chat("x")
    assert str(info.value).startswith(f"LLM server {url} (model m):") and "running" in info.value.hint


def test_api_key_sent_from_env_and_never_shown(serve, monkeypatch):
    server = serve(api_key="top-secret-key")
    monkeypatch.delenv("MLX26_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMError, match="HTTP 401") as info:
        backend(server).chat("x")
    assert "MLX26_LLM_API_KEY" in info.value.hint
    monkeypatch.setenv("MLX26_LLM_API_KEY", "top-secret-key")
    llm = backend(server)
    assert llm.chat("capital of france").text == "Paris."
    assert "top-secret" not in repr(llm) + llm.label + str(llm.capabilities())
    monkeypatch.setenv("MY_KEY", "top-secret-key")
    monkeypatch.delenv("MLX26_LLM_API_KEY")
    assert backend(server, api_key_env="MY_KEY").chat("capital of france").text == "Paris."
    with pytest.raises(ValueError, match="NOT_SET_KEY"):
        backend(server, api_key_env="NOT_SET_KEY")


def test_model_resolved_from_server_when_omitted(serve):
    server = serve()
    llm = get_backend(f"openai:{server.base_url}")
    assert llm.chat("capital of france").text == "Paris." and llm.model == "rules-model"


def test_unknown_model_is_not_retried(serve):
    server = serve()
    llm = get_backend(f"openai:{server.base_url}#nope", max_retries=3)
    with pytest.raises(LLMError, match="HTTP 404.*rules-model"):
        llm.chat("x")
    assert llm.attempts == 1


@pytest.mark.parametrize("mode", ["500", "malformed", "cut"])
def test_cli_reports_one_line_without_traceback(serve, run_cli, mode):
    server = serve([mode], retry_after=0)
    result = run_cli("llm", "chat", "--llm", f"openai:{server.base_url}#rules-model", "story", "--retries", "1",
                     "--stream")
    assert result.code == 1
    assert result.error_lines[0].startswith(f"Error: LLM server {where(server)}")
    assert len(result.error_lines) <= 2 and "Traceback" not in result.stderr


def test_cli_retry_then_success(serve, run_cli):
    server = serve(["429", "500"], count=2, retry_after=0)
    result = run_cli("llm", "chat", "--llm", f"openai:{server.base_url}#rules-model", "add 2 and 2")
    assert result.code == 0 and result.stdout == "sum of 2 and 2\n" and result.stderr == ""
