"""`mlx26 llm serve` speaks OpenAI's protocol: the `openai` client library itself lists, completes, streams."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import pytest

openai = pytest.importorskip("openai")
httpx = pytest.importorskip("httpx")


def client(server, key="unused", **kw):
    return openai.OpenAI(base_url=server.base_url, api_key=key, max_retries=kw.pop("max_retries", 0), **kw)


def metric(text: str, name: str, **labels: str) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pattern = "^" + re.escape(name) + (r"\{" + re.escape(want) + r"\}" if want else r"(\{[^}]*\})?") + r" (\S+)$"
    return sum(float(m.group(m.lastindex)) for m in re.finditer(pattern, text, re.M))


def test_openai_client_lists_completes_and_reports_usage(serve):
    server = serve()
    c = client(server)
    assert [m.id for m in c.models.list()] == ["rules-model"]
    reply = c.chat.completions.create(model="rules-model", messages=[{"role": "user", "content": "add 3 and 4"}])
    assert reply.choices[0].message.content == "sum of 3 and 4"
    assert reply.choices[0].finish_reason == "stop" and reply.object == "chat.completion"
    # the server reports its backend's counts; scripted counts are ceil(bytes / 4) (+4 per message)
    assert reply.usage.completion_tokens == 4 and reply.usage.prompt_tokens == 3 + 4
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    text = c.completions.create(model="rules-model", prompt="capital of France", max_tokens=8)
    assert text.choices[0].text == "Paris." and text.usage.completion_tokens == 2


def test_openai_client_streams_with_usage(serve):
    server = serve()
    stream = client(server).chat.completions.create(
        model="rules-model", messages=[{"role": "user", "content": "story"}], stream=True,
        stream_options={"include_usage": True})
    deltas, finishes, usage = [], [], None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta.content:
                deltas.append(choice.delta.content)
            if choice.finish_reason:
                finishes.append(choice.finish_reason)
    text = "once upon a time there was a tiny model that only knew one story and told it"
    assert "".join(deltas) == text and len(deltas) > 5 and finishes == ["stop"]
    assert usage.completion_tokens == -(-len(text) // 4)


def test_openai_client_streams_completions_n_and_stop(serve):
    server = serve()
    c = client(server)
    many = c.chat.completions.create(model="rules-model", messages=[{"role": "user", "content": "story"}], n=2,
                                     stop=["tiny"], max_tokens=50)
    assert [ch.message.content for ch in many.choices] == ["once upon a time there was a "] * 2
    parts = {0: "", 1: ""}
    for chunk in c.completions.create(model="rules-model", prompt="story", n=2, max_tokens=3, stream=True):
        for choice in chunk.choices:
            parts[choice.index] += choice.text
    assert parts[0] == parts[1] and "once upon a time".startswith(parts[0].strip()) and parts[0]


def test_openai_client_errors_map_to_its_exceptions(serve):
    server = serve(api_key="s3cret")
    with pytest.raises(openai.AuthenticationError):
        client(server, key="wrong").models.list()
    good = client(server, key="s3cret")
    with pytest.raises(openai.NotFoundError, match="rules-model"):
        good.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.BadRequestError, match="temperature"):
        good.chat.completions.create(model="rules-model", messages=[{"role": "user", "content": "x"}],
                                     temperature=5)
    raw = httpx.post(server.base_url + "/chat/completions", content=b"{nope", timeout=5,
                     headers={"Authorization": "Bearer s3cret"})
    assert raw.status_code == 400 and "JSON" in raw.json()["error"]["message"]
    assert httpx.get(server.base_url[:-3] + "/health", timeout=5).json()["status"] == "ok"  # no key needed


def test_openai_client_retries_a_429_with_retry_after(serve):
    server = serve(["429"], count=1, retry_after=0.2)
    reply = client(server, max_retries=2).chat.completions.create(
        model="rules-model", messages=[{"role": "user", "content": "add 1 and 1"}])
    assert reply.choices[0].message.content == "sum of 1 and 1"
    assert server.metrics.faults["429"] == 1


def test_metrics_count_requests_tokens_and_faults(serve):
    server = serve(["500"], count=1)
    c = client(server)
    with pytest.raises(openai.InternalServerError):
        c.chat.completions.create(model="rules-model", messages=[{"role": "user", "content": "x"}])
    usage = [c.chat.completions.create(model="rules-model", messages=[{"role": "user", "content": p}]).usage
             for p in ("add 1 and 2", "story")]
    text = httpx.get(server.base_url[:-3] + "/metrics", timeout=5).text
    assert "# TYPE mlx26_llm_requests_total counter" in text
    chat = "/v1/chat/completions"
    assert metric(text, "mlx26_llm_requests_total", endpoint=chat, status="200") == 2
    assert metric(text, "mlx26_llm_requests_total", endpoint=chat, status="500") == 1
    assert metric(text, "mlx26_llm_prompt_tokens_total") == sum(u.prompt_tokens for u in usage)
    assert metric(text, "mlx26_llm_completion_tokens_total") == sum(u.completion_tokens for u in usage)
    assert metric(text, "mlx26_llm_faults_injected_total", mode="500") == 1
    assert metric(text, "mlx26_llm_request_duration_seconds_count", endpoint=chat) == 3


def test_server_refuses_non_loopback_and_stops_cleanly(serve):
    from mlx26.core.llm import get_backend
    from mlx26.core.llm.server import LLMServer

    with pytest.raises(ValueError, match="refusing to listen on 0.0.0.0") as info:
        LLMServer(get_backend("scripted:demo"), host="0.0.0.0")
    assert "--allow-remote" in info.value.hint
    server = serve()
    c = client(server)
    c.models.list()  # leaves a keep-alive connection open
    server.stop()
    with pytest.raises(openai.APIConnectionError):
        client(server).models.list()


def test_serve_subprocess_with_openai_client(subprocess_env):
    proc = subprocess.Popen([sys.executable, "-m", "mlx26.cli.main", "llm", "serve", "--llm", "scripted:demo",
                             "--port", "0", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=subprocess_env)
    try:
        ready = json.loads(proc.stdout.readline())
        assert ready["base_url"].startswith("http://127.0.0.1:") and ready["model"] == "scripted-demo"
        c = openai.OpenAI(base_url=ready["base_url"], api_key="x", max_retries=0)
        assert [m.id for m in c.models.list()] == ["scripted-demo"]
        reply = c.chat.completions.create(model="scripted-demo", messages=[{"role": "user", "content": "What is 2+2?"}])
        assert reply.choices[0].message.content == "4" and reply.usage.total_tokens > 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_max_requests_exits_after_replying(subprocess_env):
    proc = subprocess.Popen([sys.executable, "-m", "mlx26.cli.main", "llm", "serve", "--llm", "scripted:demo",
                             "--port", "0", "--max-requests", "1", "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=subprocess_env)
    try:
        ready = json.loads(proc.stdout.readline())
        reply = httpx.post(ready["base_url"] + "/chat/completions", timeout=10, json={
            "model": "scripted-demo", "messages": [{"role": "user", "content": "capital of france"}]})
        assert reply.json()["choices"][0]["message"]["content"] == "Paris."
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
