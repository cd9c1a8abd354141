"""Hints that fit the command (issue 31): a hint never names an option the command lacks; a mistyped
subcommand of a group with a default subcommand is a did-you-mean, not a path; an output extension
mlx26 cannot write is refused (exit 2) before any work."""

from __future__ import annotations

import json
import re

import pytest
from mlx26.cli._reference import help_text


def _options_of(*path: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", help_text(list(path))[1].split("\nOptions:\n", 1)[1]))


def _hinted_options(stderr: str) -> set[str]:
    hint = next((line for line in stderr.splitlines() if line.startswith("Hint: ")), "")
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", hint))


@pytest.mark.parametrize(("argv", "stdin"), [
    (["llm", "ledger", "-"], '{"purpose": \n'),
    (["io", "convert", "-", "--input-format", "jsonl"], "not json\n"),
    (["io", "convert", "-", "--input-format", "json"], "[1, \n"),
    (["dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", "--input-format", "jsonl"], "{bad\n"),
    (["judge-audit", "metrics", "-", "--input-format", "jsonl"], "{bad\n"),
])
def test_malformed_input_hints_name_only_options_the_command_has(run_cli, argv, stdin):
    result = run_cli(*argv, stdin=stdin)
    assert result.code == 2, result.stderr
    assert result.error_lines[0].startswith("Error: ") and "invalid JSON" in result.error_lines[0]
    command = [a for a in argv if not a.startswith("-") and a == a.lower()][:2]
    hinted = _hinted_options(result.stderr)
    assert hinted <= _options_of(*command), f"{argv}: hint names {hinted - _options_of(*command)}"


def test_the_input_format_hint_is_kept_where_the_option_exists(run_cli):
    result = run_cli("io", "convert", "-", "--input-format", "jsonl", stdin="not json\n")
    assert "--input-format lines" in result.stderr
    result = run_cli("llm", "ledger", "-", stdin="not json\n")
    assert "--input-format" not in result.stderr and "one JSON object" in result.stderr


def test_select_batch_pool_hint_names_no_input_format(run_cli, tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text("{bad\n")
    result = run_cli("select-batch", "--pool", pool, "--val", pool, "--budget", "8")
    assert result.code == 2 and "--input-format" not in result.stderr
    assert "--input-format" not in _options_of("select-batch", "run")


@pytest.mark.parametrize(("argv", "message"), [
    (["simplify", "rnu", "-"], "Error: No such command 'rnu'. Did you mean 'run'?"),
    (["table-decompose", "evla"], "Error: No such command 'evla'. Did you mean 'eval'?"),
    (["score-code", "detetc", "-"], "Error: No such command 'detetc'. Did you mean 'detect'?"),
])
def test_a_mistyped_subcommand_is_not_read_as_a_path(run_cli, argv, message):
    result = run_cli(*argv, stdin="x1\n")
    assert result.code == 2
    assert result.error_lines[0] == message
    assert len(result.error_lines) == 2


def test_a_file_named_like_a_subcommand_is_still_an_input(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rnu").write_text("x1*x2/x2\n")
    result = run_cli("simplify", "rnu", "--format", "jsonl")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["simplified"] == "x1"


@pytest.mark.parametrize("word", ["no-such-file.txt", "run.txt", "./rnu"])
def test_an_unrelated_word_or_a_path_still_goes_to_the_default_subcommand(run_cli, word):
    result = run_cli("simplify", word)
    assert result.code == 2 and result.error_lines[0] == f"Error: input file not found: {word}"


@pytest.mark.parametrize("name", ["out.parquet", "out.yaml", "out.yml", "out.xlsx"])
def test_an_output_extension_mlx26_cannot_write_is_refused(run_cli, tmp_path, name):
    out = tmp_path / name
    result = run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "-o", out)
    assert result.code == 2
    assert result.error_lines[0].startswith("Error: cannot write ")
    assert "--format" in result.error_lines[1]
    assert not out.exists()


@pytest.mark.parametrize("order", [["-o", "X", "--format", "auto"], ["--format", "auto", "-o", "X"], ["-o", "X"]])
def test_the_extension_is_refused_before_any_work(run_cli, tmp_path, order):
    # the command body would first report the missing input: the extension error comes from parsing
    argv = [str(tmp_path / "out.parquet") if a == "X" else a for a in order]
    result = run_cli("io", "convert", tmp_path / "missing.csv", *argv)
    assert result.code == 2 and "cannot write '.parquet' files" in result.error_lines[0]


def test_an_explicit_format_or_no_extension_is_written(run_cli, tmp_path):
    odd = tmp_path / "cal.dat"
    assert run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "-o", odd, "--format", "json").code == 0
    assert json.loads(odd.read_text())["sigma"] > 0
    bare = tmp_path / "cal"
    assert run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "-o", bare).code == 0
    assert json.loads(bare.read_text())["sigma"] > 0
    assert run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "-o", "/dev/null").code == 0


def test_a_command_writing_its_own_text_keeps_its_extensions(run_cli, tmp_path):
    out = tmp_path / "table.md"
    result = run_cli("table-decompose", "--example", "statcan", "--emit", "markdown", "-o", out)
    assert result.code == 0, result.stderr
    assert out.read_text().lstrip().startswith("|")


@pytest.mark.parametrize("typed, choices, meant", [
    ("learning_rate", ["learning_starts", "lr", "gamma"], "lr"),   # spelling alone would say learning_starts
    ("weight-decay", ["l2", "lr"], "l2"),
    ("discount", ["gamma", "tau"], "gamma"),
    ("total_timesteps", ["steps", "num_steps"], "steps"),        # never PPO's rollout length num_steps
    ("gamm", ["gamma", "tau"], "gamma"),                         # spelling still works
])
def test_did_you_mean_matches_on_meaning_before_spelling(typed, choices, meant):
    from mlx26.core.common.errors import did_you_mean

    assert did_you_mean(typed, choices) == f"Did you mean '{meant}'?"


def test_set_learning_rate_suggests_lr(run_cli):
    result = run_cli("train", "rl", "--algo", "dqn", "--set", "learning_rate=1e-3", "--steps", "10")
    assert result.code == 2
    assert result.error_lines[0] == "Error: Unknown hyperparameter 'learning_rate' for dqn. Did you mean 'lr'?"
