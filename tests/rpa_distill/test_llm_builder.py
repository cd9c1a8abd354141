"""The LLM builder (issue 33): generation → whitelist → verification on the demos' and fresh instances →
repair with the error fed back, through `mlx26 llm serve` with scripted replies; refusals never run; a
small model's context is respected; hf:tiny-llama runs to a clean failure; the helpers' contracts."""

from __future__ import annotations

import json

import pytest
from mlx26.core.rpa_distill import llm_builder as L

CORRECT = ('```python\ndef rpa(api, fields):\n'
           '    if api.exists({"tag": "button", "text": "Accept cookies"}):\n'
           '        api.click({"tag": "button", "text": "Accept cookies"})\n'
           '    api.type({"tag": "input", "label": "Username"}, fields["username"])\n'
           '    api.type({"tag": "input", "label": "Password"}, fields["password"])\n'
           '    api.click({"tag": "button", "text": "Login"})\n```')
# Misses the cookie banner some instances show, and the button is "Login", not "Log in".
BUGGY = ('```python\ndef rpa(api, fields):\n'
         '    api.type({"tag": "input", "label": "Username"}, fields["username"])\n'
         '    api.type({"tag": "input", "label": "Password"}, fields["password"])\n'
         '    api.click({"tag": "button", "text": "Log in"})\n```')
FORBIDDEN = '```python\nimport os\ndef rpa(api, fields):\n    os.system("echo owned")\n```'


def _rules(tmp_path, rules):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"model": "builder-under-test", "rules": rules}))
    return path


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    from mlx26.core.rpa_distill import pipeline

    with pipeline.opened("synthetic/login-user") as env:
        rows = list(pipeline.record(env, pipeline.make_agent("oracle", "synthetic/login-user"), 3, 0))
    path = tmp_path_factory.mktemp("demos") / "login.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_refused_then_buggy_then_repaired_through_llm_serve(run_cli, demos, tmp_path):
    pytest.importorskip("httpx")
    from mlx26.core.llm import get_backend
    from mlx26.core.llm.server import LLMServer

    rules = _rules(tmp_path, [{"match": "rejected before running", "reply": BUGGY},
                              {"match": "did not solve", "reply": CORRECT},
                              {"match": "Write the function", "reply": FORBIDDEN}])
    fn = tmp_path / "fn.py"
    with LLMServer(get_backend(f"scripted:{rules}"), port=0) as server:
        r = run_cli("rpa-distill", "build", str(demos), "--out", fn, "--builder", "llm", "--llm",
                    f"openai:{server.base_url}#builder-under-test", "--format", "json")
    assert r.code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["verdicts"] == ["refused", "failed", "verified"] and out["builder_used"] == "llm"
    assert out["llm_calls"] == 3 and out["build_tokens"] > 0  # the server's usage fields
    assert "Import" in r.stderr and "no element match" in r.stderr  # what went back to the model
    assert "os.system" not in fn.read_text()
    v = run_cli("rpa-distill", "verify", fn, "-n", "20", "--seed", "7", "--format", "json")
    assert v.code == 0 and json.loads(v.stdout)[0]["success_rate"] == 1.0


def test_only_forbidden_code_is_never_run_and_fails_cleanly(run_cli, demos, tmp_path, monkeypatch):
    calls = []
    import mlx26.core.rpa_distill.llm_builder as mod

    real = mod.check_function
    monkeypatch.setattr(mod, "check_function", lambda *a, **k: calls.append(a) or real(*a, **k))
    rules = _rules(tmp_path, [{"match": "", "reply": FORBIDDEN}])
    fn = tmp_path / "fn.py"
    r = run_cli("rpa-distill", "build", str(demos), "--out", fn, "--builder", "llm", "--llm", f"scripted:{rules}",
                "--repair-budget", "2")
    assert r.code == 1 and "no verified function" in r.stderr and "Traceback" not in r.stderr
    assert "rejected" in r.stderr and not fn.exists() and calls == []


def test_auto_uses_the_synthesiser_when_it_explains_every_slot(run_cli, demos, tmp_path):
    rules = _rules(tmp_path, [{"match": "", "reply": FORBIDDEN}])
    r = run_cli("rpa-distill", "build", str(demos), "--out", tmp_path / "fn.py", "--builder", "auto", "--llm",
                f"scripted:{rules}", "--format", "json")
    out = json.loads(r.stdout)
    assert r.code == 0 and out["builder_used"] == "synth" and out["needs_llm"] == 0 and out["build_tokens"] == 0


@pytest.mark.parametrize("args, needle", [(["--builder", "llm"], "needs an LLM"),
                                          (["--builder", "gpt"], "builder")])
def test_builder_usage_errors(run_cli, demos, tmp_path, args, needle):
    r = run_cli("rpa-distill", "build", str(demos), "--out", tmp_path / "fn.py", *args)
    assert r.code == 2 and needle in r.stderr and not (tmp_path / "fn.py").exists()


def test_against_hf_tiny_llama_runs_without_crashing(run_cli, demos, tmp_path):
    """Quality is not asserted: the 1k-context model gets a prompt fitted to it and fails cleanly, or succeeds."""
    pytest.importorskip("transformers")
    r = run_cli("rpa-distill", "build", str(demos), "--out", tmp_path / "fn.py", "--builder", "llm", "--llm",
                "hf:tiny-llama", "--repair-budget", "1")
    assert r.code in (0, 1) and "Traceback" not in r.stderr and "context" not in r.stderr


class _SmallContext:
    """A backend stand-in with a 700-token context that records every request's size."""

    def __init__(self):
        from mlx26.core.llm import get_backend

        self.inner = get_backend("scripted:demo")
        self.sizes: list[int] = []

    def capabilities(self):
        from dataclasses import replace

        return replace(self.inner.capabilities(), max_context=700)

    def prompt_token_bound(self, request):
        return self.inner.prompt_token_bound(request)

    def chat(self, messages, **kw):
        from mlx26.core.llm.types import ChatParams, ChatRequest

        self.sizes.append(self.prompt_token_bound(ChatRequest.chat(messages, ChatParams.make())))
        return self.inner.chat([{"role": "user", "content": "hello"}], **kw)


def test_requests_are_fitted_to_a_small_context(demos):
    from mlx26.core.rpa_distill import pipeline

    trajs = [json.loads(line) for line in demos.read_text().splitlines()]
    backend = _SmallContext()
    with pipeline.opened("synthetic/login-user") as env:
        result = L.build_with_llm(trajs, backend, env, store=L.synthetic_store("synthetic/login-user"), budget=3)
    assert len(backend.sizes) == 3 and max(backend.sizes) + L.MIN_REPLY_TOKENS <= 700
    from mlx26.core.llm.types import ChatParams, ChatRequest
    from mlx26.core.rpa_distill.translate import translate

    full = [{"role": "system", "content": L.SYSTEM}, {"role": "user", "content": L.build_prompt(
        "synthetic/login-user", translate(trajs)[0], L.nearest(L.synthetic_store("synthetic/login-user"), "login", 3))}]
    assert backend.prompt_token_bound(ChatRequest.chat(full, ChatParams.make())) + L.MIN_REPLY_TOKENS > 700  # shrunk
    assert not result.verified and [a.verdict for a in result.attempts] == ["no code"] * 3


def test_extract_code_forms():
    code = L.extract_code("Here:\n```python\ndef rpa(api, fields):\n    pass\n```\nDone.", "t/x")
    assert code.startswith('"' * 3 + "RPA function written by the LLM builder") and '\nTASK = "t/x"\n' in code
    assert "Done." not in code and "Here:" not in code
    code = L.extract_code('TASK = "t/x"\ndef rpa(api, fields):\n    pass', "t/x")
    assert code.count("TASK =") == 1 and code.endswith("pass\n")
    assert L.extract_code("I cannot help with that.", "t/x") is None


def test_retrieval_prefers_the_closest_instruction():
    store = [{"instruction": "Select the colour red from the list", "source": "a"},
             {"instruction": "Enter the username and the password and press login", "source": "b"},
             {"instruction": "Click the tab named Home", "source": "c"}]
    assert [e["source"] for e in L.nearest(store, "enter the password of user bob, then login", 2)][0] == "b"
    assert L.nearest(store, "anything", 0) == []
    names = [e["task"] for e in L.synthetic_store(exclude="synthetic/login-user")]
    assert "synthetic/login-user" not in names and len(names) >= 5


def test_store_errors_name_the_line(tmp_path):
    bad = tmp_path / "store.jsonl"
    bad.write_text('{"instruction": "x", "source": "y"}\n{"instruction": 3}\n')
    with pytest.raises(Exception, match="line 2"):
        L.read_store(str(bad))
    bad.write_text("not json\n")
    with pytest.raises(Exception, match="line 1"):
        L.read_store(str(bad))


TRANSLATION = json.dumps([
    {"step": 1, "selector": {"tag": "button", "text": "Accept cookies"}},
    {"step": 2, "selector": {"tag": "input", "name": "username"}, "text": 'fields["username"]'},
    {"step": 3, "selector": {"id": "made-up-id"}, "text": 'fields["password"]'},
    {"step": 4, "selector": {"onclick": "x"}},
])


def test_llm_translator_keeps_only_selectors_that_find_the_acted_on_element(demos):
    import tempfile
    from pathlib import Path

    from mlx26.core.llm import get_backend
    from mlx26.core.rpa_distill.align import target
    from mlx26.core.rpa_distill.llm_translate import translate_with_llm
    from mlx26.core.rpa_distill.selectors import find
    from mlx26.core.rpa_distill.translate import translate

    with tempfile.TemporaryDirectory() as tmp:
        rules = _rules(Path(tmp), [{"match": "", "reply": "```json\n" + TRANSLATION + "\n```"}])
        trajs = [json.loads(line) for line in demos.read_text().splitlines()]
        translated, _, _ = translate(trajs)
        report = translate_with_llm(translated, get_backend(f"scripted:{rules}"))
    steps = [s for d in translated for s in d["steps"]]
    assert report["steps"] == len(steps) and report["accepted"] + report["kept_rule_selector"] == len(steps)
    assert report["accepted"] >= 2 and report["tokens"]["calls"] == len(translated)
    assert all(find(s["elements"], s["selector"]) == [target(s)] for s in steps)  # the builders' contract
    assert not any(s["selector"] in ({"id": "made-up-id"}, {"onclick": "x"}) for s in steps)
    assert any(s.get("field") == "username" and s["translated_by"] == "llm" for s in steps)


def test_build_with_the_llm_translator_and_builder(run_cli, demos, tmp_path):
    rules = _rules(tmp_path, [{"match": "Rewrite every action", "reply": TRANSLATION},
                              {"match": "Write the function", "reply": CORRECT}])
    r = run_cli("rpa-distill", "build", str(demos), "--out", tmp_path / "fn.py", "--builder", "llm", "--translator",
                "llm", "--llm", f"scripted:{rules}", "--format", "json")
    assert r.code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["verdicts"] == ["verified"] and out["llm_calls"] == 4 and out["llm_selectors"].endswith("/11")
    t = run_cli("rpa-distill", "translate", str(demos), "--translator", "llm", "--llm", f"scripted:{rules}")
    assert t.code == 0 and "LLM's selector kept" in t.stderr
    assert {s["translated_by"] for line in t.stdout.splitlines() for s in json.loads(line)["steps"]} == {"llm", "rules"}
    bad = run_cli("rpa-distill", "build", str(demos), "--out", tmp_path / "x.py", "--translator", "llm", "--llm",
                  f"scripted:{rules}")
    assert bad.code == 2 and "rule translator" in bad.stderr
