"""`mlx26 simplify` through the CLI: stdin vs file, JSONL ids, per-line errors, subcommands."""

from __future__ import annotations

import json
import subprocess

import pytest

EXPRS = "x1*x2/x2\nx1 - x1\nneg(neg(x1))\nx1 + x1\n"


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("sub", ["run", "equiv", "mine", "decontam", "bench"])
def test_help(run_cli, sub):
    result = run_cli("simplify", sub, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_known_cases_stdin_and_file(run_cli, tmp_path, source):
    if source == "stdin":
        result = run_cli("simplify", "-", stdin=EXPRS)
    else:
        path = tmp_path / "exprs.txt"
        path.write_text(EXPRS)
        result = run_cli("simplify", path)
    assert result.code == 0, result.stderr
    rows = _records(result.stdout)
    assert [r["prefix"] for r in rows] == ["x1", "0", "x1", "* 2 x1"]
    assert [r["id"] for r in rows] == [1, 2, 3, 4]
    assert all(r["len_out"] <= r["len_in"] for r in rows)


def test_bare_form_equals_run_subcommand(run_cli):
    assert run_cli("simplify", "-", stdin=EXPRS).stdout == run_cli("simplify", "run", "-", stdin=EXPRS).stdout


def test_jsonl_ids_expr_and_prefix(run_cli):
    text = '{"id": "a", "expr": "x1*x2/x2"}\n{"id": "b", "prefix": ["-", "x1", "x1"]}\n{"id": "c", "prefix": "neg neg x2"}\n'
    rows = _records(run_cli("simplify", "-", stdin=text).stdout)
    assert [(r["id"], r["prefix"]) for r in rows] == [("a", "x1"), ("b", "0"), ("c", "x2")]


def test_commas_in_expressions_are_not_csv(run_cli):
    rows = _records(run_cli("simplify", "-", stdin="pow(x1, 2)\n").stdout)
    assert len(rows) == 1 and rows[0]["input"] == "pow(x1, 2)"


def test_modes_and_masking(run_cli):
    sound = _records(run_cli("simplify", "-", stdin="exp(log(x1))\nsqrt(x1**2)\n").stdout)
    assert all(r["prefix"] != "x1" for r in sound)  # not valid for x1 <= 0
    lossy = _records(run_cli("simplify", "-", "--mode", "lossy", stdin="exp(log(x1))\nsqrt(x1**2)\n").stdout)
    assert [r["prefix"] for r in lossy] == ["x1", "x1"]
    masked = _records(run_cli("simplify", "-", "--mask-constants", stdin="x3*sin(2+1)/(x3*x3)\n").stdout)
    assert masked[0]["simplified"] == "<constant>/x3"


BAD = ["(x1 + 2", "foo(x1)", "1/0", "1e999", "", "neg(" * 1200 + "x1" + ")" * 1200]


def test_bad_lines_become_error_records_and_stream_continues(run_cli):
    text = "\n".join([*BAD, "x1 - x1"]) + "\n"
    result = run_cli("simplify", "-", stdin=text)
    assert result.code == 0
    rows = _records(result.stdout)
    assert len(rows) == len(BAD) + 1
    assert all("error" in r and r["error"] for r in rows[:-1])
    assert rows[-1]["prefix"] == "0"
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stdout
    strict = run_cli("simplify", "-", "--strict", stdin=text)
    assert strict.code == 1 and strict.stdout == result.stdout


def test_wrong_prefix_arity_is_a_record_error(run_cli):
    rows = _records(run_cli("simplify", "-", stdin='{"prefix": "+ x1"}\n').stdout)
    assert "error" in rows[0]


def test_unknown_mode(run_cli):
    result = run_cli("simplify", "-", "--mode", "lossless", stdin=EXPRS)
    assert result.code == 2 and "Unknown mode 'lossless'" in result.stderr


def test_workers_agree_with_single_process(run_cli):
    from mlx26.core.simplify import random_expressions, to_infix

    text = "".join(to_infix(e) + "\n" for e in random_expressions(600, seed=3, max_ops=6))
    one = run_cli("simplify", "-", stdin=text)
    two = run_cli("simplify", "-", "--workers", "2", stdin=text)
    assert one.code == two.code == 0 and one.stdout == two.stdout


def test_equiv_exit_codes(run_cli):
    same = run_cli("simplify", "equiv", "x1*(x2+1)", "x1*x2 + x1", "--format", "json")
    assert same.code == 0 and json.loads(same.stdout)["equivalent"] is True
    differ = run_cli("simplify", "equiv", "sin(x1)", "cos(x1)")
    assert differ.code == 1
    bad = run_cli("simplify", "equiv", "sin(x1", "x1")
    assert bad.code == 2 and "cannot parse" in bad.stderr


def test_decontam_drops_equivalents(run_cli, tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("x1+x1\nsin(x2)\nx2*x1\nx1*x1*x1\n")
    test = tmp_path / "test.txt"
    test.write_text("2*x1\nx1*x2\n")
    result = run_cli("simplify", "decontam", "--train", train, "--test", test)
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == ["sin(x2)", "x1*x1*x1"]
    assert "kept 2 of 4" in result.stderr


def test_decontam_refuses_an_unparsable_test_row(run_cli, tmp_path):
    """A test expression we cannot read is contamination we cannot check: exit 2, nothing written."""
    train = tmp_path / "train.txt"
    train.write_text("sin(x1)\n")
    test = tmp_path / "test.txt"
    test.write_text("x1+\ncos(x2)\n")
    result = run_cli("simplify", "decontam", "--train", train, "--test", test)
    assert result.code == 2 and result.stdout == ""
    assert "1 of 2 test expressions could not be parsed" in result.stderr


def test_mine_is_deterministic(run_cli, tmp_path):
    args = ["simplify", "mine", "--max-len", "3", "--n-vars", "1", "--operator", "neg", "--operator", "+",
            "--no-constants"]
    a, b = run_cli(*args), run_cli(*args)
    assert a.code == 0, a.stderr
    assert a.stdout == b.stdout
    rules = json.loads(a.stdout)
    assert rules["provenance"]["seed"] == 0 and rules["rules"]
    out = tmp_path / "rules.json"
    assert run_cli(*args, "-o", out).code == 0 and out.read_text() == a.stdout
    assert run_cli(*args, "-o", out).code == 2  # no overwrite without --force


def test_custom_rules_file_is_used(run_cli, tmp_path):
    out = tmp_path / "rules.json"
    run_cli("simplify", "mine", "--max-len", "3", "--n-vars", "1", "--operator", "neg", "-o", out)
    result = run_cli("simplify", "-", "--rules", out, stdin="neg(neg(x1))\n")
    assert _records(result.stdout)[0]["prefix"] == "x1"


def test_head_closes_pipe_quietly(mlx26_exe, subprocess_env, tmp_path):
    from mlx26.core.simplify import random_expressions, to_infix

    path = tmp_path / "many.txt"
    path.write_text("".join(to_infix(e) + "\n" for e in random_expressions(5000, seed=1, max_ops=5)))
    proc = subprocess.run(f"set -o pipefail; '{mlx26_exe}' simplify '{path}' | head -n 1", shell=True,
                          executable="/bin/bash", capture_output=True, text=True, env=subprocess_env, timeout=300)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["id"] == 1


@pytest.mark.parametrize("text", ["[1, 2]", '{"rules": "abc"}', '{"rules": [{"rhs": "_0"}]}', "{bad"])
def test_malformed_rules_file_is_one_line_input_error(run_cli, tmp_path, text):
    rules = tmp_path / "rules.json"
    rules.write_text(text)
    result = run_cli("simplify", "-", "--rules", rules, stdin="x1+0\n")
    assert result.code == 2 and result.stdout == "" and "internal error" not in result.stderr
    assert result.error_lines[0].startswith(f"Error: rules file {rules}")


def test_negative_seed_is_a_usage_error_naming_the_option(run_cli):
    result = run_cli("simplify", "equiv", "x1", "x1", "--seed", "-1")
    assert result.code == 2 and "'--seed'" in result.stderr


@pytest.mark.parametrize("args", [["equiv", "x1", "x1", "--rtol", "nan"], ["equiv", "x1", "x1", "--rtol", "-1"],
                                  ["equiv", "x1", "x1+1", "--rtol", "inf"], ["bench", "--n", "2", "--timeout", "-1"],
                                  ["bench", "--n", "2", "--timeout", "nan"]])
def test_tolerances_and_timeouts_out_of_range_are_usage_errors(run_cli, args):
    result = run_cli("simplify", *args)
    assert result.code == 2 and result.stdout == "" and "must be in (0," in result.error_lines[0]
