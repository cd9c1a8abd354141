"""`mlx26 dp-mix` through the CLI: outputs, formats, stdin vs file, error paths."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess

import pytest


def _json(result):
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("sub", ["calibrate", "compare", "verify", "noise"])
def test_help(run_cli, sub):
    result = run_cli("dp-mix", sub, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


def test_calibrate_reference_point(run_cli):
    out = _json(run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "--format", "json"))
    assert set(out) >= {"mechanism", "eps", "delta", "sensitivity", "sigma", "K", "l1", "l2", "delta_achieved",
                        "worst_shift"}
    assert out["mechanism"] == "multi"
    assert out["sigma"] == pytest.approx(0.3576, rel=2e-3)
    assert out["l1"] == pytest.approx(0.983, rel=2e-3)
    assert out["delta_achieved"] <= 1e-5


def test_calibrate_gaussian_scales_with_sensitivity(run_cli):
    one = _json(run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "-m", "gaussian"))
    two = _json(run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "-m", "gaussian", "-s", "2"))
    assert one["sigma"] == pytest.approx(3.7306, rel=1e-3)
    assert two["sigma"] == pytest.approx(2 * one["sigma"], rel=1e-6)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-e", "0", "-d", "1e-5"], "eps"),
        (["-e", "-1", "-d", "1e-5"], "eps"),
        (["-e", "nan", "-d", "1e-5"], "eps"),
        (["-e", "inf", "-d", "1e-5"], "eps"),
        (["-e", "1", "-d", "0"], "pure"),
        (["-e", "1", "-d", "1"], "delta"),
        (["-e", "1", "-d", "1e-5", "-s", "0"], "sensitivity"),
        (["-e", "1", "-d", "1e-5", "--K", "0"], "--K"),
        (["-e", "1", "-d", "1e-5", "--K", "many"], "--K"),
        (["-e", "1", "-d", "1e-5", "--mechanism", "mutli"], "Did you mean 'multi'?"),
    ],
)
def test_calibrate_bad_input(run_cli, args, needle):
    result = run_cli("dp-mix", "calibrate", *args)
    assert result.code == 2, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle.lower() in result.stderr.lower()
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_delta_zero_explains_and_suggests_laplace(run_cli):
    result = run_cli("dp-mix", "calibrate", "-e", "1", "-d", "0")
    assert "laplace" in result.stderr.lower()


def test_compare_rows_and_ratios(run_cli):
    rows = [json.loads(line) for line in run_cli("dp-mix", "compare", "-e", "4", "-d", "1e-5").stdout.splitlines()]
    by_name = {r["mechanism"]: r for r in rows}
    assert {"multi", "quasi", "gaussian", "staircase"} <= set(by_name)
    assert any("laplace" in name for name in by_name)
    assert by_name["gaussian"]["l1_ratio_to_gaussian"] == pytest.approx(1.0)
    assert by_name["multi"]["l1"] < by_name["gaussian"]["l1"]
    assert all(r["eps"] == 4 and r["delta"] == 1e-5 for r in rows)


def test_compare_grid_repeatable_and_file_agree(run_cli, tmp_path):
    repeated = run_cli("dp-mix", "compare", "-e", "1", "-e", "2", "-d", "1e-3", "-d", "1e-6", "--format", "jsonl")
    grid = tmp_path / "grid.csv"
    grid.write_text("eps,delta\n1,1e-3\n1,1e-6\n2,1e-3\n2,1e-6\n")
    from_file = run_cli("dp-mix", "compare", "--grid", grid, "--format", "jsonl")
    assert repeated.code == from_file.code == 0
    assert repeated.stdout == from_file.stdout
    points = {(json.loads(x)["eps"], json.loads(x)["delta"]) for x in repeated.stdout.splitlines()}
    assert len(points) == 4


def test_compare_needs_points(run_cli):
    result = run_cli("dp-mix", "compare")
    assert result.code == 2 and "--grid" in result.stderr


def test_verify_pass_and_fail(run_cli):
    cal = _json(run_cli("dp-mix", "calibrate", "-e", "4", "-d", "1e-5", "--format", "json"))
    ok = run_cli("dp-mix", "verify", "--sigma", str(cal["sigma"]), "-e", "4", "-d", "1e-5", "--format", "json")
    assert ok.code == 0 and json.loads(ok.stdout)["passed"] is True
    bad = run_cli("dp-mix", "verify", "--sigma", str(0.99 * cal["sigma"]), "-e", "4", "-d", "1e-5", "--format", "json")
    assert bad.code == 1
    result = json.loads(bad.stdout)  # the figures are still reported
    assert result["passed"] is False and result["delta_achieved"] > 1e-5
    assert 0 < result["worst_shift"] < 1  # the worst shift is interior at ε = 4
    assert bad.error_lines[0].startswith("Error: not private") and "exceeds the target" in bad.error_lines[0]


def test_verify_dp_accounting_backend(run_cli):
    pytest.importorskip("dp_accounting")
    out = _json(run_cli("dp-mix", "verify", "-m", "gaussian", "--sigma", "3.75", "-e", "1", "-d", "1e-5",
                        "--backend", "dp-accounting", "--format", "json"))
    assert out["delta_dp_accounting"] == pytest.approx(out["delta_achieved"], rel=1e-3)


NUMBERS = "3\n5\n8\n"


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_noise_lines_stdin_and_file(run_cli, tmp_path, source):
    args = ["-e", "1", "-d", "1e-5", "-s", "1", "--seed", "7"]
    if source == "stdin":
        result = run_cli("dp-mix", "noise", "-", *args, stdin=NUMBERS)
    else:
        path = tmp_path / "numbers.txt"
        path.write_text(NUMBERS)
        result = run_cli("dp-mix", "noise", path, *args)
    assert result.code == 0, result.stderr
    values = [float(x) for x in result.stdout.split()]
    assert len(values) == 3 and values != [3.0, 5.0, 8.0]
    assert "NOT private" in result.stderr  # seeded noise is flagged
    again = run_cli("dp-mix", "noise", "-", *args, stdin=NUMBERS)
    assert again.stdout == result.stdout  # deterministic for a fixed seed


def test_noise_without_seed_uses_os_entropy(run_cli):
    a = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", stdin=NUMBERS)
    b = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", stdin=NUMBERS)
    assert a.code == b.code == 0 and a.stdout != b.stdout
    assert a.stderr == ""


def test_noise_csv_column_keeps_other_columns(run_cli):
    text = "name,age\nann,41\n\"bob, jr\",37\n"
    result = run_cli("dp-mix", "noise", "-", "-e", "2", "-d", "1e-6", "-s", "1", "--column", "age", "--seed", "1",
                     stdin=text)
    assert result.code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["name"] for r in rows] == ["ann", "bob, jr"]
    assert all(math.isfinite(float(r["age"])) for r in rows)


@pytest.mark.parametrize("bad", ["nan", "abc", "inf", ""])
def test_noise_bad_cell_names_line_and_writes_nothing(run_cli, tmp_path, bad):
    out = tmp_path / "out.csv"
    text = f"name,age\nann,41\nbob,{bad}\n"
    result = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", "-c", "age", "-o", out, stdin=text)
    assert result.code == 2
    assert "line 3" in result.error_lines[0] and "--skip-bad" in result.stderr
    assert not out.exists()


def test_noise_skip_bad(run_cli):
    text = "name,age\nann,41\nbob,nan\n"
    result = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", "-c", "age", "--skip-bad",
                     stdin=text)
    assert result.code == 0
    assert len(result.stdout.splitlines()) == 2 and "skipped 1 row" in result.stderr


def test_noise_column_errors(run_cli):
    several = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", stdin="a,b\n1,2\n")
    assert several.code == 2 and "--column" in several.stderr
    missing = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", "-c", "z", stdin="a,b\n1,2\n")
    assert missing.code == 2 and "no column 'z'" in missing.stderr


def test_entry_point_pipeline(mlx26_exe, subprocess_env):
    proc = subprocess.run(f"'{mlx26_exe}' dp-mix compare -e 4 -d 1e-5 --format csv | head -n 2",
                          shell=True, capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.splitlines()[0].startswith("eps,delta,mechanism")


def test_noise_refuses_a_value_too_large_for_a_float(run_cli):
    result = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", stdin="9" * 400 + "\n")
    assert result.code == 2 and "line 1" in result.error_lines[0] and "not a finite number" in result.error_lines[0]


def test_yaml_scalar_for_a_list_option_is_a_one_item_list(run_cli, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("eps: 1\ndelta: 1e-5\n")  # YAML reads 1e-5 as a string, and neither is a list
    result = run_cli("dp-mix", "compare", "--config", config, "--format", "jsonl")
    assert result.code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and {(r["eps"], r["delta"]) for r in rows} == {(1.0, 1e-5)}


@pytest.mark.parametrize(("args", "needle"), [(["calibrate", "-e", "1", "-d", "1e-5", "-s", "1e300"], "[1e-100, 1e100]"),
                                              (["verify", "--sigma", "1e300", "-e", "1", "-d", "1e-5"], "[0.01, 1e6]"),
                                              (["verify", "--sigma", "1e-300", "-e", "1", "-d", "1e-5"], "[0.01, 1e6]")])
def test_scales_outside_the_certified_range_are_usage_errors(run_cli, args, needle):
    result = run_cli("dp-mix", *args)
    assert result.code == 2 and needle in result.error_lines[0] and "Warning" not in result.stderr
