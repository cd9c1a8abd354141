"""`mlx26 spec-bench` through the CLI: happy paths (file and stdin), every documented error path, subprocess."""

from __future__ import annotations

import json
import subprocess

import pytest

LINES = ('{"question_id": 1, "category": "code", "turns": ["def add(a, b):"]}\n'
         '{"question_id": 2, "category": "qa", "turns": ["Question: Zoe has 43 books."]}\n')


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_run_from_file_and_stdin_reports_greedy_match_and_al(run_cli, tmp_path, via):
    path = tmp_path / "q.jsonl"
    path.write_text(LINES)
    args = ["spec-bench", "run", str(path) if via == "file" else "-", "--max-tokens", "6", "-k", "3",
            "--check-greedy", "--format", "json", "-q"]
    res = run_cli(*args, stdin=LINES if via == "stdin" else "")
    assert res.code == 0, res.stderr
    report = json.loads(res.stdout)
    s = report["summary"]
    assert s["greedy_match"] is True and 1 <= s["acceptance_length"] <= 4
    assert s["acceptance_length"] == s["new_tokens"] / s["target_calls"]
    assert [p["greedy_match"] for p in report["prompts"]] == [True, True]
    assert {c["category"] for c in report["by_category"]} == {"code", "qa"}
    assert "CPU-specific" in s["wall_speedup_label"]


def test_select_and_report_round_trip(run_cli, tmp_path):
    split = tmp_path / "split.jsonl"
    res = run_cli("spec-bench", "select", "--embedder", "tfidf", "-n", "3", "--save", str(split), "--format", "jsonl",
                  "-q")
    assert res.code == 0, res.stderr
    rows = [json.loads(x) for x in res.stdout.splitlines()]
    assert all(r["beats_random"] >= 0.9 for r in rows)
    saved = [json.loads(x) for x in split.read_text().splitlines()]
    assert len(saved) == 3 * len(rows)
    again = run_cli("spec-bench", "select", "--embedder", "tfidf", "--save", str(split), "-q")
    assert again.code == 2 and "--force" in again.stderr


@pytest.mark.parametrize(("args", "code", "message"), [
    (["run", "--engine", "medusa"], 2, "Unknown engine 'medusa'"),
    (["run", "-k", "0"], 2, "-k must be >= 1"),
    (["select", "--selector", "kmeans"], 2, "Unknown selector"),
    (["build-throughput", "--length", "4096"], 2, "does not fit the target's context of 1024"),
    (["serve-bench", "--url", "http://127.0.0.1:9/v1"], 2, "--url needs --model"),
    (["serve-bench", "--url", "http://127.0.0.1:9/v1", "--model", "tiny-llama", "--timeout", "2", "--limit", "1"], 1,
     "http://127.0.0.1:9/v1 (model 'tiny-llama')"),
    (["serve-bench", "-c", "1"], 2, "exactly one of --url"),
])
def test_error_paths(run_cli, args, code, message):
    res = run_cli("spec-bench", *args)
    assert res.code == code, res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr


def test_empty_and_over_long_prompts_name_the_row(run_cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"category": "a", "turns": ["ok"]}\n{"category": "a", "turns": [""]}\n')
    res = run_cli("spec-bench", "run", str(bad))
    assert res.code == 2 and "row 2: the prompt is empty" in res.stderr
    long = tmp_path / "long.jsonl"
    long.write_text(json.dumps({"question_id": "big", "category": "a", "turns": ["word " * 1200]}) + "\n")
    res = run_cli("spec-bench", "run", str(long), "--max-tokens", "4")
    assert res.code == 2 and "prompt 'big' (a)" in res.stderr and "context of 1024" in res.stderr
    res = run_cli("spec-bench", "run", str(long), "--max-tokens", "4", "--truncate-prompt-tokens", "64",
                  "--engine", "prompt-lookup", "--format", "json", "-q")
    assert res.code == 0 and json.loads(res.stdout)["prompts"][0]["prompt_tokens"] == 64


def test_mismatched_draft_vocabulary_is_exit_2(run_cli, tmp_path):
    from mlx26.core.zoo import load_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    folder = tmp_path / "byte-draft"
    LlamaForCausalLM(LlamaConfig(vocab_size=260, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                 num_attention_heads=2, num_key_value_heads=2)).save_pretrained(folder)
    load_tokenizer("byte").save_pretrained(folder)
    res = run_cli("spec-bench", "run", "--draft", str(folder), "--limit", "1", "--max-tokens", "2")
    assert res.code == 2 and "vocabularies differ" in res.stderr


def test_llm_serve_draft_needs_a_local_target(run_cli):
    res = run_cli("llm", "serve", "--llm", "scripted:demo", "--draft", "tiny-llama-draft", "--self-test")
    assert res.code == 2 and "--draft needs a local target" in res.stderr


def test_subprocess_entry_point(subprocess_env, tmp_path):
    proc = subprocess.run(["mlx26", "spec-bench", "select", "-", "--embedder", "tfidf", "-n", "1", "--format", "csv",
                           "-q"], input=LINES, capture_output=True, text=True, env=subprocess_env, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("category,")


def test_run_warns_when_prompts_run_past_the_trained_context(run_cli, tmp_path):
    long_text = " ".join(str(i) for i in range(150))  # well over 128 tokens of tiny-llama's tokenizer
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"question_id": 1, "category": "qa", "turns": [long_text]}) + "\n"
                    + json.dumps({"question_id": 2, "category": "qa", "turns": ["def f(x):"]}) + "\n")
    res = run_cli("spec-bench", "run", str(path), "--engine", "prompt-lookup", "--max-tokens", "2", "--format", "json")
    assert res.code == 0, res.stderr
    assert "1 of 2 prompt(s)" in res.stderr and "128-token window tiny-llama was trained on" in res.stderr
    s = json.loads(res.stdout)["summary"]
    assert s["prompts_past_trained_context"] == 1 and s["trained_context"] == 128
    quiet = run_cli("spec-bench", "run", str(path), "--engine", "prompt-lookup", "--max-tokens", "2", "--target",
                    "tiny-llama-1k", "--format", "json")
    assert quiet.code == 0 and "trained on" not in quiet.stderr, quiet.stderr
    assert json.loads(quiet.stdout)["summary"]["prompts_past_trained_context"] == 0
    # with a draft model, the draft's window counts too: tiny-llama-draft saw 128-token windows
    drafted = run_cli("spec-bench", "run", str(path), "--engine", "ours", "--max-tokens", "2", "--target",
                      "tiny-llama-1k", "--format", "json")
    assert drafted.code == 0 and "128-token window tiny-llama-draft was trained on" in drafted.stderr, drafted.stderr
    assert "tiny-llama-draft-1k" in drafted.stderr  # the draft that fits those positions
    paired = run_cli("spec-bench", "run", str(path), "--engine", "ours", "--max-tokens", "2", "--target",
                     "tiny-llama-1k", "--draft", "tiny-llama-draft-1k", "--format", "json")
    assert paired.code == 0 and "trained on" not in paired.stderr, paired.stderr
    assert json.loads(paired.stdout)["summary"]["prompts_past_trained_context"] == 0
    both = run_cli("spec-bench", "run", str(path), "--engine", "ours", "--max-tokens", "2", "--format", "json")
    assert both.code == 0 and "window tiny-llama and tiny-llama-draft were trained on" in both.stderr, both.stderr


def test_build_throughput_warns_past_the_trained_window(run_cli):
    res = run_cli("spec-bench", "build-throughput", "--length", "256", "--per-tier", "1", "--tier", "low",
                  "--format", "json")
    assert res.code == 0 and "tiny-llama was trained on 128-token windows" in res.stderr, res.stderr
    quiet = run_cli("spec-bench", "build-throughput", "--target", "tiny-llama-1k", "--length", "256", "--per-tier", "1",
                    "--tier", "low", "--format", "json")
    assert quiet.code == 0 and "trained on" not in quiet.stderr, quiet.stderr
