"""optimize-prompt from the command line: the demo's gain, baselines, trace/report, real paths, errors."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests._data import shared_data


def _json(result):
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def test_demo_gains_at_least_20_points_within_5_rounds_and_says_simulated(run_cli):
    r = run_cli("optimize-prompt", "run", "--demo", "--rounds", "5", "--budget-usd", "0.01", "--format", "json")
    out = _json(r)
    assert out["rounds"] <= 5 and out["gain"] >= 0.20
    assert out["data"].startswith("SIMULATED") and "SIMULATED" in r.stderr
    assert out["usd_spent"] <= 0.01 and out["usd_per_task"] == out["usd_spent"]
    assert set(out["by_purpose"]) == {"meta", "generation", "execution", "judging"}


def test_mrpea_beats_the_spo_style_baseline_at_equal_budget(run_cli):
    gains = {}
    for method in ("mrpea", "spo", "none"):
        out = _json(run_cli("optimize-prompt", "run", "--demo", "--optimizer", method, "--rounds", "20",
                            "--budget-usd", "0.01", "--format", "json"))
        assert out["usd_spent"] <= 0.01
        gains[method] = out["gain"]
    assert gains["none"] == 0
    assert gains["mrpea"] > gains["spo"] > 0


def test_trace_streams_one_record_per_round_and_report_reads_it(run_cli, tmp_path):
    trace = tmp_path / "trace.jsonl"
    out = _json(run_cli("optimize-prompt", "run", "--demo", "--rounds", "3", "--out", trace, "--format", "json"))
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert [x["record"] for x in lines] == ["round"] * 3 + ["summary"]
    assert all(x["data"] == "SIMULATED" for x in lines[:3])
    assert {"prompt", "knowledge_diff", "scores", "cost"} <= set(lines[0])
    assert lines[-1]["prompt"] == out["prompt"]
    rows = _json(run_cli("optimize-prompt", "report", trace, "--format", "json"))
    rows = rows if isinstance(rows, list) else [rows]
    assert [x["round"] for x in rows] == [1, 2, 3, "TOTAL"]
    assert sum(x["tokens"] for x in rows[:3]) == rows[-1]["tokens"] == out["tokens_spent"]
    csv = run_cli("optimize-prompt", "report", trace, "--format", "csv")
    assert csv.stdout.splitlines()[0].startswith("round,")


def test_eval_demo_scores_a_prompt(run_cli):
    base = _json(run_cli("optimize-prompt", "eval", "--demo", "--template", "Q: {input}\nA:", "--format", "json"))
    better = _json(run_cli("optimize-prompt", "eval", "--demo", "--template",
                           "Show each step. End with a final line 'Answer: <number>'.\n{input}", "--format", "json"))
    assert base["n"] == 60 and better["accuracy"] > base["accuracy"]


@pytest.fixture
def sim_servers():
    from mlx26.core.llm.server import LLMServer
    from mlx26.core.optimize_prompt import simulator as sim

    servers = [LLMServer(sim.SimulatedTarget(), port=0).start(), LLMServer(sim.ScriptedOptimizer(), port=0).start()]
    yield servers
    for s in servers:
        s.stop()


def test_runs_against_openai_compatible_servers(run_cli, sim_servers, tmp_path):
    target, optimizer = sim_servers
    task = tmp_path / "task.yaml"
    from mlx26.core.optimize_prompt import simulator as sim

    inputs = list(sim.demo_task(4).inputs)
    task.write_text(json.dumps({"name": "t", "template": "Q: {input}\nA:", "answer_format": "number",
                                "inputs": inputs}), encoding="utf-8")
    ledger = tmp_path / "ledger.jsonl"
    out = _json(run_cli("optimize-prompt", "run", "--task", task, "--llm", f"openai:{target.base_url}#simulated-target",
                        "--optimizer-llm", f"openai:{optimizer.base_url}#scripted-optimizer", "--rounds", "2",
                        "--ledger", ledger, "--budget-tokens", "100000", "--format", "json"))
    assert out["rounds"] == 2 and out["gain"] is None and out["accepted"] >= 1
    assert out["tokens_spent"] > 0
    assert sum(1 for _ in ledger.open()) == sum(r["calls"] for r in out["by_purpose"].values())


def test_real_path_gsm8k_and_bbh_files_with_a_local_model(run_cli):
    gsm = shared_data("gsm8k") / "test.jsonl"
    out = _json(run_cli("optimize-prompt", "run", "--task", gsm, "--n-inputs", "3", "--llm", "hf:tiny-llama",
                        "--rounds", "1", "--n-validation", "1", "--target-max-tokens", "12",
                        "--optimizer-max-tokens", "16", "--eval-data", gsm, "--eval-n", "2", "--eval-offset", "50",
                        "--format", "json"))
    assert out["rounds"] == 1 and out["eval_n"] == 2 and out["target_model"]
    bbh = shared_data("bbh")
    from mlx26.core.optimize_prompt.tasks import load_task

    assert load_task(str(bbh / "date_understanding.json")).answer_format == "mc"
    assert load_task(str(bbh / "multistep_arithmetic_two.json")).answer_format == "number"
    assert load_task(str(bbh / "boolean_expressions.json")).answer_format == "text"


@pytest.mark.parametrize(("args", "message"), [
    (["run", "--demo", "--template", "Solve this."], "no {input} placeholder"),
    (["run", "--demo", "--budget-usd", "0.00001"], "below the first round"),
    (["run", "--demo", "--optimizer", "mrpae"], "Did you mean 'mrpea'"),
    (["run", "--task", "missing.yaml", "--llm", "scripted:demo"], "task file not found"),
    (["run", "--task", "x.yaml"], "--llm"),
    (["run"], "--task"),
    (["eval", "--demo"], "--prompt FILE or --template"),
    (["report", "missing.jsonl"], "missing.jsonl"),
])
def test_bad_input_is_one_line_exit_2(run_cli, args, message):
    r = run_cli("optimize-prompt", *args)
    assert r.code == 2, (r.code, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr


def test_task_file_without_inputs(run_cli, tmp_path):
    task = tmp_path / "empty.yaml"
    task.write_text("template: 'Q: {input}'\ninputs: []\n", encoding="utf-8")
    r = run_cli("optimize-prompt", "run", "--task", task, "--llm", "scripted:demo")
    assert r.code == 2 and "no inputs" in r.stderr


def test_budget_error_writes_no_trace_and_keeps_an_existing_one(run_cli, tmp_path):
    trace = tmp_path / "trace.jsonl"
    r = run_cli("optimize-prompt", "run", "--demo", "--budget-usd", "0.00001", "--out", trace)
    assert r.code == 2 and not trace.exists()
    trace.write_text("keep me\n")
    r = run_cli("optimize-prompt", "run", "--demo", "--out", trace)
    assert r.code == 2 and trace.read_text() == "keep me\n"


def test_unreachable_server_names_url_and_model(run_cli, tmp_path):
    task = tmp_path / "t.yaml"
    task.write_text("template: 'Q: {input}'\ninputs: ['1 + 1?']\nanswer_format: number\n", encoding="utf-8")
    r = run_cli("optimize-prompt", "run", "--task", task, "--llm", "openai:http://127.0.0.1:9/v1#some-model",
                "--rounds", "1")
    assert r.code == 1, r.stderr
    assert "127.0.0.1:9" in r.stderr and "Traceback" not in r.stderr


def test_report_rejects_a_file_that_is_not_a_trace(run_cli, tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"a": 1}\n')
    r = run_cli("optimize-prompt", "report", f)
    assert r.code == 2 and "not an optimize-prompt trace" in r.stderr


def test_installed_entry_point(mlx26_exe, tmp_path):
    p = subprocess.run([mlx26_exe, "optimize-prompt", "run", "--demo", "--rounds", "1", "--quiet"],
                       capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["record"] == "summary" and p.stderr == ""


def test_dry_run_prints_the_first_round_estimate_and_spends_nothing(run_cli, tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    dry = _json(run_cli("optimize-prompt", "run", "--demo", "--dry-run", "--budget-usd", "0.004", "--ledger", ledger,
                        "--format", "json"))
    assert dry["fits"] is False and dry["simulated"] is True
    assert not ledger.exists() or ledger.read_text() == ""
    trace = tmp_path / "t.jsonl"
    _json(run_cli("optimize-prompt", "run", "--demo", "--rounds", "1", "--out", trace, "--format", "json"))
    first = json.loads(trace.read_text().splitlines()[0])
    assert first["estimate"] == {"tokens": dry["first_round_tokens"], "usd": dry["first_round_usd"]}


def test_report_total_row_keeps_held_out_accuracy_apart_from_judge_scores(run_cli, tmp_path):
    trace = tmp_path / "t.jsonl"
    out = _json(run_cli("optimize-prompt", "run", "--demo", "--rounds", "2", "--out", trace, "--format", "json"))
    rows = _json(run_cli("optimize-prompt", "report", trace, "--format", "json"))
    total = rows[-1]
    assert total["incumbent_score"] is None and total["candidate_score"] is None and total["aborted"] is None
    assert (total["accuracy_initial"], total["accuracy_final"]) == (out["accuracy_initial"], out["accuracy_final"])
    assert total["stopped"] == "max rounds reached"
    none = _json(run_cli("optimize-prompt", "run", "--demo", "--optimizer", "none", "--format", "json"))
    assert none["rounds"] == 0 and none["stopped"].startswith("no optimisation")
