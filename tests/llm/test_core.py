"""Requests, parameters, token estimates and the scripted backend."""

from __future__ import annotations

import json

import pytest
from mlx26.core.llm import ChatParams, ChatRequest, LLMError, get_backend, normalize_messages
from mlx26.core.llm.tokens import (
    cut_at_stop,
    estimate_tokens,
    pieces,
    token_upper_bound,
    truncate_estimated,
)


def test_messages_normalised_and_validated():
    assert normalize_messages("hi") == ({"role": "user", "content": "hi"},)
    parts = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert normalize_messages(parts) == ({"role": "user", "content": "ab"},)
    for bad in ([], [{"role": "robot", "content": "x"}], [{"role": "user"}], ["text"],
                [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]):
        with pytest.raises(ValueError):
            normalize_messages(bad)


@pytest.mark.parametrize("kwargs", [{"temperature": -0.1}, {"temperature": 2.5}, {"temperature": float("nan")},
                                    {"max_tokens": 0}, {"n": 0}, {"n": 17}, {"seed": 1.5}, {"stop": [""]}])
def test_params_reject_bad_values(kwargs):
    with pytest.raises(ValueError):
        ChatParams.make(**kwargs)


def test_request_key_depends_on_model_messages_and_params():
    base = ChatRequest.chat("hello", ChatParams.make())
    assert base.key("m") == ChatRequest.chat([{"role": "user", "content": "hello"}], ChatParams.make()).key("m")
    assert len(base.key("m")) == 64 and int(base.key("m"), 16) >= 0
    others = {base.key("m2"), ChatRequest.chat("hello!", ChatParams.make()).key("m"),
              ChatRequest.chat("hello", ChatParams.make(max_tokens=10)).key("m"),
              ChatRequest.chat("hello", ChatParams.make(seed=1)).key("m"),
              ChatRequest.completion("hello", ChatParams.make()).key("m")}
    assert len(others) == 5 and base.key("m") not in others
    assert ChatRequest.from_payload(base.payload()) == base


def test_pieces_concatenate_back():
    for text in ("", "one", "  two words\n and\ttabs  ", "émoji 🙂 ok "):
        assert "".join(pieces(text)) == text


def test_estimate_and_truncation():
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    text = "one two three four five six seven"
    cut, was_cut = truncate_estimated(text, 3)
    assert was_cut and text.startswith(cut) and estimate_tokens(cut) <= 3 and cut
    assert truncate_estimated("short", 10) == ("short", False)
    assert cut_at_stop("a STOP b END", ["END", "STOP"]) == ("a ", True)
    assert cut_at_stop("abc", ["x"]) == ("abc", False)


def test_upper_bound_covers_real_tokenizers():
    """The budget bound must not undercount: compare with the zoo's byte and BPE tokenizers."""
    pytest.importorskip("transformers")
    from mlx26.core.zoo import load_tokenizer

    messages = [{"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Ünïcødé, code `x = [i**2 for i in range(9)]` and emoji 🙂🙂."}]
    for name in ("byte", "bpe-4096"):
        tok = load_tokenizer(name)
        ids = tok(tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))["input_ids"]
        assert token_upper_bound((m["content"] for m in messages), len(messages)) >= len(ids), name


def test_scripted_rules_order_groups_and_turns(rules_file):
    llm = get_backend(f"scripted:{rules_file}")
    assert llm.model == "rules-model"
    assert llm.chat("add 2 and 40").text == "sum of 2 and 40"
    assert llm.chat("What is the CAPITAL of France?").text == "Paris."
    assert [llm.chat("turns").text for _ in range(3)] == ["first", "second", "first"]
    assert llm.chat("anything else").text == "fallback reply"
    # the last *user* message decides, not the system prompt
    convo = [{"role": "system", "content": "story"}, {"role": "user", "content": "add 1 and 1"}]
    assert llm.chat(convo).text == "sum of 1 and 1"
    result = llm.chat("add 1 and 2", n=3)
    assert result.texts == ["sum of 1 and 2"] * 3 and result.usage.source == "estimated"
    assert result.usage.completion_tokens == 3 * estimate_tokens("sum of 1 and 2")


def test_scripted_stop_max_tokens_and_stream(rules_file):
    llm = get_backend(f"scripted:{rules_file}")
    deltas: list[str] = []
    full = llm.chat("story", on_token=deltas.append)
    assert "".join(deltas) == full.text and len(deltas) > 5 and full.finish_reason == "stop"
    short = llm.chat("story", max_tokens=4)
    assert short.finish_reason == "length" and full.text.startswith(short.text)
    assert short.usage.completion_tokens <= 4
    stopped = llm.chat("story", stop=["tiny"])
    assert stopped.text == "once upon a time there was a " and stopped.finish_reason == "stop"
    assert llm.complete("capital of france").text == "Paris."


def test_scripted_dollar_handling(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"match": "(?P<item>apple)", "reply": "${item} costs $5 or $$6 ($1)"}]))
    assert get_backend(f"scripted:{path}").chat("apple").text == "apple costs $5 or $6 (apple)"


def test_scripted_no_match_and_bad_files(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"match": "^yes$", "reply": "ok"}]))
    with pytest.raises(LLMError, match="no scripted rule") as info:
        get_backend(f"scripted:{path}").chat("no")
    assert "catch-all" in info.value.hint
    for content, needle in [("{", "cannot parse"), ("[]", "non-empty"), ('[{"reply": "x"}]', "match"),
                            ('[{"match": "(", "reply": "x"}]', "invalid regex"),
                            ('[{"match": "", "reply": "x", "colour": 1}]', "unknown key")]:
        path.write_text(content)
        with pytest.raises(ValueError, match=needle):
            get_backend(f"scripted:{path}")
    with pytest.raises(ValueError, match="not found"):
        get_backend(f"scripted:{tmp_path / 'missing.json'}")


def test_scripted_yaml_and_jsonl(tmp_path):
    (tmp_path / "r.yaml").write_text("model: y\nrules:\n  - match: hi\n    reply: yo\n")
    (tmp_path / "r.jsonl").write_text('{"match": "hi", "reply": "jo"}\n')
    assert get_backend(f"scripted:{tmp_path / 'r.yaml'}").chat("hi").text == "yo"
    assert get_backend(f"scripted:{tmp_path / 'r.jsonl'}").chat("hi").text == "jo"


def test_spec_errors():
    with pytest.raises(ValueError, match="Did you mean 'scripted:'"):
        get_backend("scriptd:x")
    with pytest.raises(ValueError, match="no LLM backend"):
        get_backend("")
    with pytest.raises(ValueError, match="needs the backend it wraps"):
        get_backend("record:calls.jsonl")
    with pytest.raises(ValueError, match="http"):
        get_backend("openai:ftp://x#m")


def test_env_var_selects_backend(monkeypatch):
    monkeypatch.setenv("MLX26_LLM", "scripted:demo")
    assert get_backend().chat("What is 2+2?").text == "4"
