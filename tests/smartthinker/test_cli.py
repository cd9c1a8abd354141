"""`mlx26 reward length`, `mlx26 data arith` and `mlx26 train grpo` through the CLI (exit codes, streams)."""

import json
import subprocess

import pytest

GROUP = "".join(json.dumps({"group": "p1", "length": x, "correct": c}) + "\n"
                for x, c in zip([100, 120, 300, 400, 90, 500, 250, 350], [1, 1, 1, 0, 0, 1, 0, 1], strict=True))


def test_help(run_cli):
    for path in (["reward", "length"], ["data", "arith"], ["train", "grpo"]):
        r = run_cli(*path, "--help")
        assert r.code == 0 and "Examples:" in r.stdout


def test_reward_length_stdin_and_file(run_cli, tmp_path):
    r = run_cli("reward", "length", "-", "--format", "jsonl", stdin=GROUP)
    assert r.code == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["length"] for row in rows] == [100, 120, 300, 400, 90, 500, 250, 350]
    mean = sum(row["reward"] for row in rows) / len(rows)
    assert rows[5]["reward"] == pytest.approx(mean, abs=1e-6) and rows[0]["alpha"] == pytest.approx(0.00127, abs=5e-6)
    f = tmp_path / "g.csv"
    f.write_text("group,length,correct\n" + "".join(f"p1,{x},{c}\n" for x, c in
                 zip([100, 120, 300, 400, 90, 500, 250, 350], ["true", "true", "true", "false", "false", "yes",
                                                                "no", "1"], strict=True)))
    r2 = run_cli("reward", "length", str(f), "--format", "jsonl")
    assert r2.code == 0, r2.stderr
    assert [json.loads(line)["reward"] for line in r2.stdout.splitlines()] == pytest.approx(
        [row["reward"] for row in rows])


def test_reward_length_demo_and_methods(run_cli):
    r = run_cli("reward", "length", "--demo", "--format", "jsonl")
    assert r.code == 0 and len(r.stdout.splitlines()) == 20
    r = run_cli("reward", "length", "--demo", "--method", "thinkprune", "--target-length", "100", "--format", "jsonl")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert all(row["reward"] == (1.0 if row["correct"] and row["length"] <= 100 else 0.0) for row in rows)


def test_reward_length_group_key(run_cli):
    stdin = '{"pid": 3, "length": 10, "correct": true}\n{"pid": 3, "length": 20, "correct": false}\n'
    r = run_cli("reward", "length", "-", "--group-key", "pid", "--format", "jsonl", stdin=stdin)
    assert r.code == 0 and json.loads(r.stdout.splitlines()[0])["reward"] == 1.0
    r = run_cli("reward", "length", "-", stdin=stdin)
    assert r.code == 2 and "row 1 has no 'group' field" in r.stderr and "--group-key" in r.stderr


def test_single_response_group_warns(run_cli):
    r = run_cli("reward", "length", "-", "--format", "jsonl", stdin='{"group": 1, "length": 10, "correct": 1}\n')
    assert r.code == 0 and "single response" in r.stderr and json.loads(r.stdout)["alpha"] == 0
    r = run_cli("reward", "length", "-", "-q", "--format", "jsonl", stdin='{"group": 1, "length": 10, "correct": 1}\n')
    assert r.code == 0 and r.stderr == ""


@pytest.mark.parametrize("stdin, args, needle", [
    ('{"group": 1, "length": 0, "correct": 1}\n', [], "row 1: 'length' must be a positive"),
    ('{"group": 1, "length": 5, "correct": 1}\n{"group": 1, "length": NaN, "correct": 1}\n', [],
     "row 2: 'length' must be a positive"),
    ('{"group": 1, "length": 5, "correct": "maybe"}\n', [], "'correct' must be boolean-like"),
    ('{"group": 1, "length": 5, "correct": 1}\n', ["--method", "l1-max"], "needs --target-length"),
    ('{"group": 1, "length": 5, "correct": 1}\n', ["--method", "kimmi"], "Did you mean 'kimi'"),
    ("", [], "no rows"),
])
def test_reward_length_errors(run_cli, stdin, args, needle):
    r = run_cli("reward", "length", "-", *args, stdin=stdin)
    assert r.code == 2 and needle in r.stderr, r.stderr
    assert r.stdout == ""


def test_reward_length_needs_input_or_demo(run_cli):
    assert run_cli("reward", "length").code == 2
    assert run_cli("reward", "length", "-", "--demo", stdin=GROUP).code == 2


def test_data_arith(run_cli, tmp_path):
    r = run_cli("data", "arith", "--n", "5", "--kind", "gain", "--format", "jsonl")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.code == 0 and len(rows) == 5 and {row["kind"] for row in rows} == {"gain"}
    for row in rows:
        assert row["concise"].endswith(f"Answer: {row['answer']}") and row["verbose"].endswith(f"Answer: {row['answer']}")
        assert len(row["verbose"]) > len(row["concise"]) and row["prompt"].startswith("Question: ")
    out = tmp_path / "a.jsonl"
    assert run_cli("data", "arith", "--n", "5", "--kind", "gain", "-o", str(out)).code == 0
    assert out.read_text() == r.stdout
    r = run_cli("data", "arith", "--kind", "gian")
    assert r.code == 2 and "Did you mean 'gain'" in r.stderr
    assert run_cli("data", "arith", "--style", "terse").code == 2


def test_train_grpo_validates_before_work(run_cli, tmp_path):
    r = run_cli("train", "grpo", "--length-reward", "smartthinkr", "--out", str(tmp_path / "x"))
    assert r.code == 2 and "Did you mean 'smartthinker'" in r.stderr
    r = run_cli("train", "grpo", "--num-generations", "1", "--out", str(tmp_path / "x"))
    assert r.code == 2 and "≥ 2" in r.stderr
    r = run_cli("train", "grpo", "--model", "tiny-lama", "--out", str(tmp_path / "x"))
    assert r.code == 2 and "Did you mean 'tiny-llama'" in r.stderr
    r = run_cli("train", "grpo", "--length-reward", "l1-exact", "--out", str(tmp_path / "x"))
    assert r.code == 2 and "--target-length" in r.stderr
    assert not (tmp_path / "x").exists()


def test_train_grpo_refuses_multi_process(run_cli, tmp_path, monkeypatch):
    pytest.importorskip("trl")
    monkeypatch.setenv("WORLD_SIZE", "2")
    r = run_cli("train", "grpo", "--preset", "micro", "--out", str(tmp_path / "x"))
    assert r.code == 2 and "whole group" in r.stderr


def test_train_grpo_without_grpo_trainer_exits_3(run_cli, tmp_path, monkeypatch):
    import sys
    import types

    fake = types.ModuleType("trl")
    fake.__version__ = "0.0.1"
    monkeypatch.setitem(sys.modules, "trl", fake)
    r = run_cli("train", "grpo", "--preset", "micro", "--out", str(tmp_path / "x"))
    assert r.code == 3 and "has no GRPOTrainer" in r.stderr and "pip install 'mlx26[grpo]'" in r.stderr


def test_entry_point_subprocess(mlx26_exe, subprocess_env):
    proc = subprocess.run([mlx26_exe, "reward", "length", "-", "--format", "jsonl"], input=GROUP,
                          capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 8
    proc = subprocess.run([mlx26_exe, "reward", "length", "-"], input='{"group":1,"length":-1,"correct":1}\n',
                          capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("Error:")
