"""Server sweep against `llm serve --draft`: counters vs the engine's log, no counters → null, unreachable server."""

from __future__ import annotations

import pytest
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.spec_bench import server_bench

pytest.importorskip("httpx")
PROMPTS = ["def add(a, b):", "Question: Zoe has 43 books.", "The quick brown fox"]


@pytest.fixture(scope="module")
def spec_server(models):
    from mlx26.core.llm.server import LLMServer
    from mlx26.core.spec_bench.serving import SpecHFBackend

    backend = SpecHFBackend("tiny-llama", "tiny-llama-draft", 3)
    with LLMServer(backend) as server:
        yield server, backend


def test_sweep_reports_every_level_and_counter_al_equals_engine_log(spec_server):
    server, backend = spec_server
    for level in (1, 2, 4, 8, 16):  # the sweep, 1…16
        start = len(backend.counters.log)
        n = max(4, level)
        row = server_bench.sweep(server.base_url, server.model_name, PROMPTS, [level], requests=n, max_tokens=8)[0]
        log = backend.counters.log[start:]
        engine_al = sum(e["new_tokens"] for e in log) / sum(e["target_calls"] for e in log)
        assert row["ok"] == row["requests"] == n and row["concurrency"] == level
        assert row["spec_counters"] is True
        assert row["acceptance_length"] == pytest.approx(engine_al, rel=1e-12)
        assert 1 <= row["acceptance_length"] <= 4
        assert row["output_tokens"] == sum(e["new_tokens"] for e in log)
        assert row["ttft_median_s"] > 0 and row["throughput_tokens_per_s"] > 0


def test_streamed_text_equals_plain_greedy(spec_server, models):
    import httpx

    server, _ = spec_server
    body = {"model": server.model_name, "prompt": PROMPTS[0], "max_tokens": 12, "temperature": 0}
    text = httpx.post(f"{server.base_url}/completions", json=body, timeout=60).json()["choices"][0]["text"]
    from mlx26.core.spec_bench.engines import plain_decode

    ids = models["tokenizer"](PROMPTS[0])["input_ids"]
    plain = plain_decode(models["target"], ids, 12, eos_ids=models["eos"]).tokens
    assert text == models["tokenizer"].decode([t for t in plain if t not in models["eos"]], skip_special_tokens=True)


def test_metrics_use_vllm_names(spec_server):
    import httpx

    server, _ = spec_server
    text = httpx.get(server.base_url.removesuffix("/v1") + "/metrics").text
    for name in ("vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                 "vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total"):
        assert name in text
    assert "mlx26_llm_requests_total" in text  # the server's own counters are still there


def test_server_without_spec_counters_gives_null_al_never_zero():
    from mlx26.core.llm import get_backend
    from mlx26.core.llm.server import LLMServer

    with LLMServer(get_backend("scripted:demo")) as server:
        row = server_bench.sweep(server.base_url, server.model_name, PROMPTS, [1, 2], requests=2, max_tokens=4)
    assert [r["acceptance_length"] for r in row] == [None, None]
    assert all(r["spec_counters"] is False and r["ok"] == 2 for r in row)


def test_unreachable_server_names_url_and_model():
    with pytest.raises(RunFailure, match=r"http://127.0.0.1:9/v1 \(model 'tiny-llama'\)"):
        server_bench.sweep("http://127.0.0.1:9/v1", "tiny-llama", PROMPTS, [1], timeout=2)


def test_bad_sweep_options():
    with pytest.raises(InputError, match="concurrency"):
        server_bench.sweep("http://127.0.0.1:9/v1", "m", PROMPTS, [0])
    assert server_bench.spec_al(None, {"x": 1.0})["acceptance_length"] is None


def test_prometheus_parser_sums_labels_and_drops_total():
    text = ('# HELP x\nvllm:spec_decode_num_accepted_tokens_per_pos_total{position="0"} 3\n'
            'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="1"} 2\nfoo 1.5\n')
    assert server_bench.parse_prometheus(text) == {"vllm:spec_decode_num_accepted_tokens_per_pos": 5.0, "foo": 1.5}
