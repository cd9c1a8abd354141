"""`mlx26 rpa-distill` through the CLI: the pipeline via stdin and files, outputs, and every error path."""

from __future__ import annotations

import json
import subprocess

import pytest

SUBS = ["envs", "record", "translate", "build", "verify", "run", "compare", "demo"]


@pytest.mark.parametrize("sub", SUBS)
def test_help(run_cli, sub):
    result = run_cli("rpa-distill", sub, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


def _record(run_cli, env="synthetic/login-user", n=3, *extra):
    result = run_cli("rpa-distill", "record", "--env", env, "-n", str(n), *extra)
    assert result.code == 0, result.stderr
    return result.stdout


def test_record_jsonl_schema(run_cli):
    rows = [json.loads(line) for line in _record(run_cli).splitlines()]
    assert len(rows) == 3 and [r["seed"] for r in rows] == [0, 1, 2]
    assert all(r["success"] and r["task"] == "synthetic/login-user" and r["fields"]["username"] for r in rows)
    assert all("elements" in s and "action" in s and "usage" in s for r in rows for s in r["steps"])


def test_record_react_counts_tokens(run_cli):
    result = run_cli("rpa-distill", "record", "--env", "synthetic/click-option", "-n", "2", "--agent", "react")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.code == 0 and "scripted ReAct policy" in result.stderr
    assert all(r["success"] and r["tokens"]["prompt_tokens"] > 0 and r["tokens"]["calls"] == 2 for r in rows)


@pytest.mark.parametrize("via", ["stdin", "file"])
def test_build_verify_run(run_cli, tmp_path, via):
    demos = _record(run_cli, "synthetic/click-checkboxes")
    fn = tmp_path / "fn.py"
    if via == "stdin":
        result = run_cli("rpa-distill", "build", "-", "--out", str(fn), "--format", "json", stdin=demos)
    else:
        (tmp_path / "d.jsonl").write_text(demos)
        result = run_cli("rpa-distill", "build", str(tmp_path / "d.jsonl"), "--out", str(fn), "--format", "json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["task"] == "synthetic/click-checkboxes" and summary["needs_llm"] == 0
    assert "for item in fields[\"targets\"]" in fn.read_text()
    rounds = json.loads(run_cli("rpa-distill", "verify", str(fn), "-n", "30", "--format", "json").stdout)
    assert rounds[0]["success_rate"] == 1.0 and rounds[0]["tokens"] == 0
    ok = run_cli("rpa-distill", "run", str(fn), "--params", '{"targets": ["amber", "pine"]}', "--format", "json")
    assert ok.code == 0 and json.loads(ok.stdout)["success"]
    assert len(json.loads(ok.stdout)["actions"]) == 3
    again = run_cli("rpa-distill", "build", "-", "--out", str(fn), stdin=demos)
    assert again.code == 2 and "refusing to overwrite" in again.stderr


def test_translate_adds_selectors(run_cli):
    result = run_cli("rpa-distill", "translate", "-", stdin=_record(run_cli, "synthetic/click-link"))
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.code == 0 and all(s["selector"]["tag"] == "a" for r in rows for s in r["steps"])


def test_failed_episodes_are_excluded_with_a_warning(run_cli, tmp_path):
    rows = [json.loads(line) for line in _record(run_cli, "synthetic/enter-text", 4).splitlines()]
    rows[1]["success"], rows[1]["reward"] = False, -1.0
    text = "\n".join(json.dumps(r) for r in rows)
    result = run_cli("rpa-distill", "build", "-", "--out", str(tmp_path / "f.py"), "--format", "json", stdin=text)
    assert result.code == 0 and "trajectory 2 (seed 1) failed" in result.stderr
    assert json.loads(result.stdout)["demos"] == 3


def test_mixed_task_ids_refused(run_cli, tmp_path):
    text = _record(run_cli, "synthetic/enter-text", 2) + _record(run_cli, "synthetic/click-link", 2)
    result = run_cli("rpa-distill", "build", "-", "--out", str(tmp_path / "f.py"), stdin=text)
    assert result.code == 2 and result.error_lines[0].startswith("Error: the demonstrations mix task ids")
    assert not (tmp_path / "f.py").exists()


def test_action_on_missing_element_names_the_step(run_cli, tmp_path):
    rows = [json.loads(line) for line in _record(run_cli, "synthetic/login-user", 2).splitlines()]
    rows[1]["steps"][1]["action"]["ref"] = "e9999"
    text = "\n".join(json.dumps(r) for r in rows)
    result = run_cli("rpa-distill", "translate", "-", stdin=text)
    assert result.code == 2
    assert "trajectory 2 step 2" in result.stderr and "e9999" in result.stderr and "missing from its snapshot" in \
        result.stderr


def test_generated_code_outside_whitelist_is_rejected(run_cli, tmp_path):
    fn = tmp_path / "evil.py"
    fn.write_text('TASK = "synthetic/click-button"\n\n\ndef rpa(api, fields):\n    __import__("os").system("x")\n')
    for sub in ("run", "verify"):
        result = run_cli("rpa-distill", sub, str(fn))
        assert result.code == 2 and "generated code rejected" in result.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (["record", "--env", "synthetic/nope"], "Unknown env"),
    (["record", "--env", "synthetic/click-button", "--agent", "gpt"], "Unknown agent"),
    (["record", "--env", "miniwob/click-button", "--agent", "oracle", "-n", "0"], "-n"),
    (["translate", "-"], "holds no trajectories"),
    (["build", "-", "--out", "-"], "--out needs a file name"),
])
def test_usage_errors(run_cli, args, needle):
    result = run_cli("rpa-distill", *args, stdin="")
    assert result.code == 2 and needle in result.stderr
    assert not __import__("pathlib").Path("-").exists()  # never a file literally named "-"


def test_verify_refuses_demos_of_another_task_before_running(run_cli, tmp_path):
    fn, demos = tmp_path / "fn.py", tmp_path / "demos.jsonl"
    assert run_cli("rpa-distill", "build", "-", "--out", str(fn), "-q", "--format", "json",
                   stdin=_record(run_cli, "synthetic/login-user")).code == 0
    demos.write_text(_record(run_cli, "synthetic/click-button"))
    result = run_cli("rpa-distill", "verify", str(fn), "-n", "2", "--fallback", "react", "--demos", str(demos),
                     "--repair", "1", "-q")
    assert result.code == 2 and result.stdout == ""
    assert result.error_lines[0] == ("Error: --demos holds trajectories of synthetic/click-button, but the function "
                                     "runs synthetic/login-user.")


@pytest.mark.parametrize(("path", "value", "needle"), [
    (("task",), 5, "line 1: 'task' must be an environment name string"),
    (("steps",), [5], "trajectory 1 step 1: no action recorded"),
    (("steps", 0, "elements"), "abc", "trajectory 1 step 1: malformed snapshot"),
    (("steps", 0, "elements", 0, "tag"), None, "trajectory 1 step 1: malformed snapshot"),
])
def test_malformed_trajectories_are_usage_errors(run_cli, tmp_path, path, value, needle):
    trajs = [json.loads(line) for line in _record(run_cli).splitlines()]
    node = trajs[0]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    result = run_cli("rpa-distill", "build", "-", "--out", str(tmp_path / "fn.py"),
                     stdin="".join(json.dumps(t) + "\n" for t in trajs))
    assert result.code == 2 and needle in result.error_lines[0], result.stderr
    assert not (tmp_path / "fn.py").exists()


@pytest.mark.parametrize(("params", "needle"), [
    ('{"targets": 5}', "Error: synthetic/click-checkboxes: field 'targets' must be a list of strings, got 5."),
    ('{"target": ["Share"]}', "Error: synthetic/click-checkboxes has no field 'target'."),
])
def test_run_params_of_the_wrong_name_or_shape(run_cli, tmp_path, params, needle):
    fn = tmp_path / "fn.py"
    assert run_cli("rpa-distill", "build", "-", "--out", str(fn), "-q", "--format", "json",
                   stdin=_record(run_cli, "synthetic/click-checkboxes")).code == 0
    result = run_cli("rpa-distill", "run", str(fn), "--params", params)
    assert result.code == 2 and result.error_lines[0] == needle and result.stdout == ""
    ok = run_cli("rpa-distill", "run", str(fn), "--params", '{"targets": ["alpha", "beta"]}', "--format", "json")
    assert ok.code == 0 and json.loads(ok.stdout)["success"] is True


def test_binary_function_file_is_a_one_line_usage_error(run_cli, tmp_path):
    fn = tmp_path / "fn.py"
    fn.write_bytes(b"\x00\x01\xff")
    for sub in ("run", "verify"):
        result = run_cli("rpa-distill", sub, str(fn))
        assert result.code == 2 and result.error_lines[0] == f"Error: {fn} is not UTF-8 text, so not an RPA function."


def test_not_a_trajectory(run_cli):
    result = run_cli("rpa-distill", "translate", "-", stdin='{"task": "x"}\n')
    assert result.code == 2 and "stdin line 1: not a trajectory" in result.stderr


def test_run_unsolved_exits_1_and_bad_params(run_cli, tmp_path):
    fn = tmp_path / "fn.py"
    assert run_cli("rpa-distill", "build", "-", "--out", str(fn), "-q", "--format", "json",
                   stdin=_record(run_cli, "synthetic/click-button")).code == 0
    assert run_cli("rpa-distill", "run", str(fn), "--params", "[1]").code == 2
    assert run_cli("rpa-distill", "run", str(fn), "--env", "synthetic/click-link").code == 2
    text = fn.read_text().replace('fields["target"]', '"NoSuchButton"')
    fn.write_text(text)
    result = run_cli("rpa-distill", "run", str(fn))
    assert result.code == 1 and "not solved" in result.stderr


def test_subprocess_entry_point(mlx26_exe, subprocess_env, tmp_path):
    demos = subprocess.run([mlx26_exe, "rpa-distill", "record", "--env", "synthetic/choose-list", "-n", "3"],
                           capture_output=True, text=True, env=subprocess_env, check=True).stdout
    proc = subprocess.run([mlx26_exe, "rpa-distill", "build", "-", "--out", str(tmp_path / "fn.py")], input=demos,
                          capture_output=True, text=True, env=subprocess_env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["task"] == "synthetic/choose-list"
    assert "api.select(" in (tmp_path / "fn.py").read_text()


@pytest.mark.parametrize("args", [["record", "--env", "miniwob/click-button"],
                                  ["compare", "--env", "miniwob/enter-text", "-n", "1"]])
def test_missing_browser_exits_3(run_cli, monkeypatch, args):
    monkeypatch.setenv("MINIWOB_CHROMEDRIVER", "/nonexistent/chromedriver")
    result = run_cli("rpa-distill", *args)
    assert result.code == 3 and "needs a headless browser" in result.stderr and "Hint: apt-get install" in \
        result.stderr


def test_verify_repair_writes_the_repaired_function(run_cli, tmp_path):
    from mlx26.core.rpa_distill import make_env, record_episode
    from mlx26.core.rpa_distill.oracle import OracleAgent

    env = make_env("synthetic/login-user")
    demos = [record_episode(env, OracleAgent("login-user"), s, params={"banner": False}) for s in range(3)]
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(d) for d in demos))
    fn, fixed = tmp_path / "fn.py", tmp_path / "fixed.py"
    assert run_cli("rpa-distill", "build", str(tmp_path / "d.jsonl"), "--out", str(fn), "-q").code == 0
    result = run_cli("rpa-distill", "verify", str(fn), "-n", "30", "--fallback", "react", "--demos",
                     str(tmp_path / "d.jsonl"), "--repair", "1", "--out", str(fixed), "--format", "json", "-q")
    rounds = json.loads(result.stdout)
    assert result.code == 0 and len(rounds) == 2 and rounds[0]["fallbacks"] > 0 and rounds[1]["fallbacks"] == 0
    assert "Accept cookies" in fixed.read_text() and "Accept cookies" not in fn.read_text()
    assert run_cli("rpa-distill", "verify", str(fn), "--repair", "1").code == 2
