"""``hf:`` local generation: greedy output equals transformers' own generate, exact usage, offline."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from mlx26.core.llm import get_backend  # noqa: E402


@pytest.fixture(scope="module")
def micro(micro_model_dir):
    return get_backend(f"hf:{micro_model_dir}")


def reference_greedy(backend, messages, max_new_tokens):
    """transformers' generate (an independent decoder) with the same prompt ids."""
    ids = backend.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    prompt = backend.tokenizer(ids, add_special_tokens=True, return_tensors="pt")["input_ids"]
    out = backend.lm.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=max_new_tokens,
                              do_sample=False, eos_token_id=sorted(backend.eos_ids),
                              pad_token_id=backend.tokenizer.pad_token_id)
    return prompt.shape[1], out[0, prompt.shape[1]:].tolist()


def test_greedy_matches_transformers_generate(micro):
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]
    result = micro.chat(messages, max_tokens=12)
    n_prompt, ref = reference_greedy(micro, messages, 12)
    assert result.usage.prompt_tokens == n_prompt and result.usage.source == "local"
    assert result.usage.completion_tokens == len(ref)
    expected = micro.tokenizer.decode([t for t in ref if t not in micro.eos_ids], skip_special_tokens=True)
    assert result.text == expected
    assert result.finish_reason == ("stop" if ref[-1] in micro.eos_ids else "length")
    assert micro.prompt_token_bound(micro_request(messages)) == n_prompt  # the budget bound is exact


def micro_request(messages):
    from mlx26.core.llm import ChatParams, ChatRequest

    return ChatRequest.chat(messages, ChatParams.make())


def test_sampling_is_seeded_and_streams(micro):
    a = micro.chat("hi", temperature=1.0, seed=3, max_tokens=10, n=2)
    b = micro.chat("hi", temperature=1.0, seed=3, max_tokens=10, n=2)
    c = micro.chat("hi", temperature=1.0, seed=4, max_tokens=10, n=2)
    assert a.texts == b.texts and a.texts != c.texts and len(a.choices) == 2
    assert a.usage.completion_tokens == 20 or any(ch.finish_reason == "stop" for ch in a.choices)
    deltas: list[str] = []
    streamed = micro.chat("hi", temperature=1.0, seed=3, max_tokens=10, on_token=deltas.append)
    assert "".join(deltas) == streamed.text == a.texts[0]


def test_stop_string_and_context_limit(micro):
    free = micro.chat("abc", temperature=1.0, seed=0, max_tokens=30)
    assert len(free.text) >= 3
    stop = free.text[1:3]
    cut = micro.chat("abc", temperature=1.0, seed=0, max_tokens=30, stop=[stop])
    assert stop not in cut.text and free.text.startswith(cut.text) and cut.finish_reason == "stop"
    with pytest.raises(ValueError, match="context"):
        micro.chat("x" * 200)
    capped = micro.chat("x" * 100, max_tokens=100)  # 128-token context: generation stops at the edge
    assert capped.usage.prompt_tokens + capped.usage.completion_tokens <= 128


def test_plain_concatenation_without_chat_template(micro_model_dir, tmp_path):
    import shutil

    folder = tmp_path / "no-template"
    shutil.copytree(micro_model_dir, folder)
    for name in ("tokenizer_config.json",):
        config = json.loads((folder / name).read_text())
        config.pop("chat_template", None)
        (folder / name).write_text(json.dumps(config))
    for extra in folder.glob("chat_template.*"):
        extra.unlink()
    llm = get_backend(f"hf:{folder}")
    assert not llm.has_template and "plain" in llm.capabilities().notes
    text, _ = llm.render(micro_request([{"role": "user", "content": "hi"}]))
    assert text == "user: hi\nassistant:"
    assert llm.chat("hi", max_tokens=3).usage.prompt_tokens == len(llm.tokenizer(text)["input_ids"])


def test_served_hf_model_matches_direct_call(micro, serve):
    server = serve(backend=micro)
    remote = get_backend(f"openai:{server.base_url}#{micro.model}")
    direct = micro.chat("hello", max_tokens=8)
    via = remote.chat("hello", max_tokens=8, temperature=0)
    assert via.text == direct.text and via.usage.prompt_tokens == direct.usage.prompt_tokens
    assert via.usage.completion_tokens == direct.usage.completion_tokens


@pytest.mark.slow
def test_hf_path_offline_through_cli(micro_model_dir, subprocess_env):
    env = dict(subprocess_env, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "mlx26.cli.main", "llm", "chat", "--llm", f"hf:{micro_model_dir}",
                           "hello", "--max-tokens", "5", "--format", "json"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["backend"] == "hf" and out["usage_source"] == "local" and out["completion_tokens"] <= 5


def test_unknown_hf_model_is_usage_error(run_cli):
    result = run_cli("llm", "chat", "--llm", "hf:no-such-model-xyz", "hi")
    assert result.code == 2 and "Unknown model" in result.stderr


def _zoo_model() -> str | None:
    """tiny-llama (the acceptance model), else its draft while the zoo has not shipped tiny-llama yet."""
    from mlx26.core.zoo import shipped_names

    return next((n for n in ("tiny-llama", "tiny-llama-draft") if n in shipped_names()), None)


@pytest.mark.skipif(_zoo_model() is None, reason="the zoo has shipped no tiny-llama model yet")
def test_zoo_model_served_offline(subprocess_env):
    name = _zoo_model()
    env = dict(subprocess_env, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "mlx26.cli.main", "llm", "serve", "--llm", f"hf:{name}",
                           "--self-test", "--format", "json", "--quiet"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] and report["models"] == [name] and report["completion_tokens"] > 0
    assert report["stream_text_matches"] and report["usage_source"] == "server"
