"""`mlx26 llm chat|serve|ledger` through the CLI: outputs, stdin vs argument, error paths, entry point."""

from __future__ import annotations

import json
import subprocess

import pytest


@pytest.mark.parametrize("sub", ["chat", "serve", "ledger"])
def test_help(run_cli, sub):
    result = run_cli("llm", sub, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


def test_chat_prints_text_and_records(run_cli, rules_file):
    text = run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", "add 2 and 3")
    assert text.code == 0 and text.stdout == "sum of 2 and 3\n" and text.stderr == ""
    record = json.loads(run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", "add 2 and 3",
                                "--format", "json").stdout)
    assert record["text"] == "sum of 2 and 3" and record["model"] == "rules-model"
    assert record["usage_source"] == "estimated" and record["completion_tokens"] == 4
    many = run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", "turns", "--n", "2")
    assert [json.loads(line)["text"] for line in many.stdout.splitlines()] == ["first", "second"]


@pytest.mark.parametrize("source", ["argument", "dash", "implicit"])
def test_chat_prompt_from_argument_or_stdin(run_cli, rules_file, source):
    args = {"argument": ["capital of france"], "dash": ["-"], "implicit": []}[source]
    result = run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", *args, stdin="capital of france")
    assert result.code == 0 and result.stdout == "Paris.\n"


def test_chat_tty_stdin_fails_at_once(run_cli):
    result = run_cli("llm", "chat", "--llm", "scripted:demo", stdin=None)
    assert result.code == 2 and "nothing piped to stdin" in result.stderr


def test_chat_messages_file_system_and_raw(run_cli, rules_file, tmp_path):
    convo = tmp_path / "convo.jsonl"
    convo.write_text('{"role": "user", "content": "story"}\n{"role": "assistant", "content": "ok"}\n')
    result = run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", "--messages", convo, "add 1 and 9",
                     "--system", "story")
    assert result.stdout == "sum of 1 and 9\n"
    only_file = run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", "--messages", convo, "--format", "json")
    assert json.loads(only_file.stdout)["text"].startswith("once upon")
    raw = run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", "--raw", "add 4 and 4")
    assert raw.stdout == "sum of 4 and 4\n"
    both = run_cli("llm", "chat", "--llm", "scripted:demo", "--raw", "--system", "x", "y")
    assert both.code == 2 and "--raw" in both.stderr


def test_chat_stream_and_length_warning(run_cli, rules_file):
    result = run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", "story", "--stream", "--max-tokens", "3")
    assert result.code == 0 and "once upon a time".startswith(result.stdout.strip())
    assert result.error_lines == ["Warning: the reply stopped at --max-tokens 3 (finish_reason=length)."]
    quiet = run_cli("llm", "chat", "--llm", f"scripted:{rules_file}", "story", "--max-tokens", "3", "--quiet")
    assert quiet.stderr == ""


def test_chat_record_then_replay_notice(run_cli, rules_file, tmp_path):
    calls = tmp_path / "calls.jsonl"
    first = run_cli("llm", "chat", "--llm", f"record:{calls}=scripted:{rules_file}", "story")
    again = run_cli("llm", "chat", "--llm", f"replay:{calls}", "story")
    assert first.stdout == again.stdout and again.code == 0
    assert again.error_lines == [f"replayed from scripted:{rules_file}"]


def test_chat_output_file_not_overwritten(run_cli, tmp_path):
    out = tmp_path / "reply.json"
    assert run_cli("llm", "chat", "--llm", "scripted:demo", "hello", "-o", out).code == 0
    assert json.loads(out.read_text())["backend"] == "scripted"
    again = run_cli("llm", "chat", "--llm", "scripted:demo", "hello", "-o", out)
    assert again.code == 2 and "--force" in again.stderr


@pytest.mark.parametrize(("args", "code", "needle"), [
    (["x"], 2, "no LLM backend chosen"),
    (["--llm", "scriptd:demo", "x"], 2, "Did you mean 'scripted:'"),
    (["--llm", "scripted:missing.json", "x"], 2, "not found"),
    (["--llm", "replay:missing.jsonl", "x"], 2, "not found"),
    (["--llm", "scripted:demo", "x", "--temperature", "3"], 2, "temperature"),
    (["--llm", "scripted:demo", "x", "--n", "0"], 2, "--n"),
    (["--llm", "scripted:demo", "x", "--prices", "nope.json"], 2, "price table not found"),
])
def test_chat_usage_errors(run_cli, args, code, needle, monkeypatch):
    monkeypatch.delenv("MLX26_LLM", raising=False)
    result = run_cli("llm", "chat", *args)
    assert result.code == code, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_chat_no_rule_is_runtime_error_with_hint(run_cli, tmp_path):
    rules = tmp_path / "r.json"
    rules.write_text('[{"match": "^only$", "reply": "x"}]')
    result = run_cli("llm", "chat", "--llm", f"scripted:{rules}", "other")
    assert result.code == 1 and result.error_lines[0].startswith("Error: no scripted rule")
    assert result.error_lines[1].startswith("Hint: add a catch-all rule")


def test_serve_self_test_report(run_cli):
    result = run_cli("llm", "serve", "--llm", "scripted:demo", "--self-test", "--quiet", "--fault", "429",
                     "--fault-count", "1", "--retry-after", "0", "--format", "json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and report["models"] == ["scripted-demo"] and report["stream_text_matches"]
    assert report["http_attempts"] == 6  # 5 requests + 1 retry after the 429
    assert report["base_url"].startswith("http://127.0.0.1:")


@pytest.mark.parametrize(("args", "needle"), [
    (["--host", "0.0.0.0"], "--allow-remote"),
    (["--fault", "teapot"], "Unknown fault mode"),
    (["--require-key-env", "MLX26_TEST_UNSET_VAR"], "not set"),
])
def test_serve_usage_errors(run_cli, args, needle):
    result = run_cli("llm", "serve", "--llm", "scripted:demo", "--self-test", *args)
    assert result.code == 2 and needle in result.stderr and "Traceback" not in result.stderr


def test_serve_self_test_fails_on_malformed(run_cli):
    result = run_cli("llm", "serve", "--llm", "scripted:demo", "--self-test", "--quiet", "--fault", "malformed")
    assert result.code == 1 and "malformed JSON" in result.error_lines[0]


def test_ledger_reads_stdin_and_rejects_bad_lines(run_cli):
    lines = "".join(json.dumps({"purpose": p, "model": "m", "prompt_tokens": a, "completion_tokens": b,
                                "cost_usd": c}) + "\n" for p, a, b, c in [("x", 1, 2, 0.5), ("y", 3, 4, 0.25),
                                                                           ("x", 5, 6, 0.0)])
    rows = [json.loads(x) for x in run_cli("llm", "ledger", "-", stdin=lines).stdout.splitlines()]
    assert rows[-1] == {"purpose": "TOTAL", "calls": 3, "refused": 0, "cached": 0, "prompt_tokens": 9,
                        "completion_tokens": 12, "total_tokens": 21, "cost_usd": 0.75, "estimated_calls": 0}
    assert rows[0]["purpose"] == "x" and rows[0]["total_tokens"] == 14
    bad = run_cli("llm", "ledger", "-", stdin='{"purpose": "x", "prompt_tokens": "many"}\n')
    assert bad.code == 2 and "prompt_tokens" in bad.stderr


def test_entry_point_pipeline(mlx26_exe, subprocess_env):
    proc = subprocess.run(f"echo 'What is 2+2?' | '{mlx26_exe}' llm chat --llm scripted:demo --format jsonl | head -n 1",
                          shell=True, capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["text"] == "4"


def test_chat_messages_from_stdin_and_prompt_from_stdin_conflict(run_cli, tmp_path):
    message = '{"role": "user", "content": "hi"}\n'
    result = run_cli("llm", "chat", "--llm", "scripted:demo", "--messages", "-", "-", stdin=message)
    assert result.code == 2 and "cannot both read stdin" in result.stderr and result.stdout == ""
    assert run_cli("llm", "chat", "--llm", "scripted:demo", "--messages", "-", stdin=message).code == 0
    bad = tmp_path / "m.jsonl"
    bad.write_text('{"role": "user"}\n')
    result = run_cli("llm", "chat", "--llm", "scripted:demo", "--messages", bad, "hello")
    assert result.code == 2 and "message 1: needs a string 'role' and a string 'content'" in result.stderr
