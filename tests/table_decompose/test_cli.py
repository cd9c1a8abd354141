"""`mlx26 table-decompose` through the CLI: emit modes, stdin vs file, outputs, errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests._data import shared_data

DATA = Path(__file__).parent / "data"
CSV = ",Sales,\n,2023,2024\nNorth,10,12\nSouth,7,9\n"
LINES = ["North | Sales > 2023 = 10", "North | Sales > 2024 = 12", "South | Sales > 2023 = 7",
         "South | Sales > 2024 = 9"]
OVERLAP = ("<table><tr><td></td><td>A</td><td rowspan=2>B</td></tr>"
           "<tr><td>x</td><td colspan=2>C</td></tr><tr><td>r</td><td>1</td><td>2</td></tr></table>")


@pytest.mark.parametrize("sub", ["run", "eval"])
def test_help(run_cli, sub):
    result = run_cli("table-decompose", sub, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


@pytest.mark.parametrize("source", ["stdin", "file", "default-subcommand"])
def test_lines_stdin_file_and_bare_form(run_cli, tmp_path, source):
    path = tmp_path / "t.csv"
    path.write_text(CSV)
    if source == "stdin":
        result = run_cli("table-decompose", "run", "-", stdin=CSV)
    elif source == "file":
        result = run_cli("table-decompose", "run", path)
    else:
        result = run_cli("table-decompose", path)
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == LINES and result.stderr == ""


def test_statcan_example(run_cli):
    result = run_cli("table-decompose", "--example", "statcan")
    assert result.code == 0
    assert result.stdout.splitlines()[0] == "Aged 2 to 8 years > Food alone > 2004 | Total > Mean grams = 53"


def test_lineage_records(run_cli):
    result = run_cli("table-decompose", "-", "--emit", "lineage", "--format", "jsonl", stdin=CSV)
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 4
    first = records[0]
    assert first["row_path"] == ["North"] and first["col_path"] == ["Sales", "2023"]
    assert first["row_cells"] == [[2, 0]] and first["col_cells"] == [[0, 1], [1, 1]]
    assert first["text"] == "10" and first["number"] == 10 and first["kind"] == "number"
    as_csv = run_cli("table-decompose", "-", "--emit", "lineage", "--format", "csv", stdin=CSV)
    assert as_csv.stdout.splitlines()[0].startswith("row,col,text,kind,number,row_path")


def test_trees_hitab_and_markdown(run_cli):
    trees = json.loads(run_cli("table-decompose", "-", "--emit", "trees", stdin=CSV).stdout)
    assert trees["header_rows"] == 2 and trees["header_cols"] == 1
    assert trees["column_tree"][0]["label"] == "Sales"
    assert [c["label"] for c in trees["column_tree"][0]["children"]] == ["2023", "2024"]
    assert [n["label"] for n in trees["row_tree"]] == ["North", "South"]
    hitab = json.loads(run_cli("table-decompose", "-", "--emit", "hitab-json", stdin=CSV).stdout)
    assert hitab["texts"][0] == ["", "Sales", ""] and hitab["top_header_rows_num"] == 2
    md = run_cli("table-decompose", "-", "--emit", "markdown", stdin=CSV).stdout.splitlines()
    assert md[0] == "|  | Sales > 2023 | Sales > 2024 |" and md[2] == "| North | 10 | 12 |"


def test_hitab_output_reads_back_as_input(run_cli, tmp_path):
    out = tmp_path / "t.json"
    assert run_cli("table-decompose", "--example", "statcan", "--emit", "hitab-json", "-o", out).code == 0
    again = run_cli("table-decompose", out)
    assert again.code == 0
    assert again.stdout.splitlines()[0] == "Aged 2 to 8 years > Food alone > 2004 | Total > Mean grams = 53"


def test_output_file_atomic_and_force(run_cli, tmp_path):
    out = tmp_path / "lines.txt"
    assert run_cli("table-decompose", "-", "-o", out, stdin=CSV).code == 0
    assert out.read_text().splitlines() == LINES
    refused = run_cli("table-decompose", "-", "-o", out, stdin=CSV)
    assert refused.code == 2 and "--force" in refused.stderr
    assert run_cli("table-decompose", "-", "-o", out, "--force", "--emit", "markdown", stdin=CSV).code == 0
    assert out.read_text().startswith("|")


def test_warnings_go_to_stderr_and_quiet_silences_them(run_cli):
    html = ("<table><tr><td></td><td colspan='0'>A</td></tr><tr><td>r</td><td>1</td></tr>")
    result = run_cli("table-decompose", "-", stdin=html)
    assert result.code == 0 and result.stdout == "r | A = 1\n"
    assert "warning: unclosed <table>" in result.stderr and "cell B1: colspan='0' clamped to 1" in result.stderr
    quiet = run_cli("table-decompose", "-", "--quiet", stdin=html)
    assert quiet.stdout == result.stdout and quiet.stderr == ""


@pytest.mark.parametrize("stdin", ["", "a,b,c\n"])
def test_empty_and_header_only_exit_zero_with_notice(run_cli, stdin):
    result = run_cli("table-decompose", "-", stdin=stdin)
    assert result.code == 0 and result.stdout == ""
    assert "no data cells (empty or header-only table)" in result.stderr
    trees = run_cli("table-decompose", "-", "--emit", "trees", stdin=stdin)
    assert trees.code == 0 and json.loads(trees.stdout)["data_cells"] == 0


def test_several_tables_listed_then_chosen(run_cli):
    html = "<table><tr><td>a</td></tr></table><table><caption>T2</caption><tr><td></td><td>2024</td></tr>" \
           "<tr><td>North</td><td>1</td></tr></table>"
    result = run_cli("table-decompose", "-", stdin=html)
    assert result.code == 2
    assert result.error_lines == ["Error: stdin holds 2 tables (#0: 1×1; #1: 2×2 'T2')",
                                  "Hint: choose one with --table-index N"]
    chosen = run_cli("table-decompose", "-", "--table-index", "1", stdin=html)
    assert chosen.code == 0 and chosen.stdout == "North | 2024 = 1\n"


@pytest.mark.parametrize(("args", "stdin", "code", "needle"), [
    (["/no/such/file.html"], "", 2, "input file not found"),
    (["-"], None, 2, "nothing piped to stdin"),
    ([str(DATA / "protected.xlsx")], "", 2, "password-protected"),
    (["-", "--strict"], OVERLAP, 2, "overlapping merged cells C1:C2 ('B') and B2:C2 ('C')"),
    (["--example", "statcn"], "", 2, "Did you mean 'statcan'?"),
    (["--example", "statcan", "x.csv"], "", 2, "either INPUT or --example"),
    (["-", "--emit", "trees", "--format", "csv"], CSV, 2, "--format applies to --emit lineage only"),
    (["-", "--sheet", "x"], CSV, 2, "--sheet applies to XLSX input only"),
    (["-", "--header-cols", "5"], CSV, 2, "--header-cols 5 is out of range"),
    (["-", "--emit", "nope"], CSV, 2, "nope"),
    (["-", "--input-format", "hitab-json"], CSV, 2, "invalid JSON"),
])
def test_errors_one_line_and_exit_code(run_cli, args, stdin, code, needle):
    result = run_cli("table-decompose", *args, stdin=stdin)
    assert result.code == code, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.stderr
    assert len(result.error_lines) <= 2 and "Traceback" not in result.stderr and result.stdout == ""


def test_llm_arbiter_without_the_llm_interface_exits_3(run_cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlx26.core.llm", None)  # as if the LLM interface were not installed
    result = run_cli("table-decompose", "-", "--arbiter", "llm", "--llm", "scripted:demo", stdin=CSV)
    assert result.code == 3 and result.stdout == ""
    assert result.error_lines == ["Error: --arbiter llm needs the mlx26 LLM backend interface (mlx26.core.llm), "
                                  "which this installation does not have", "Hint: use --arbiter rules (the default)"]


TOTALS = ("<table><tr><th></th><th>2024</th></tr><tr><td>All persons</td><td>100</td></tr>"
          "<tr><td style='padding-left:1em'>Men</td><td>48</td></tr></table>")


def _rules(tmp_path, reply: str) -> str:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([{"match": "total row", "reply": reply}, {"match": "", "reply": "no idea"}]))
    return f"scripted:{path}"


def test_llm_arbiter_through_the_llm_interface(run_cli, tmp_path, monkeypatch):
    pytest.importorskip("mlx26.core.llm")
    monkeypatch.delenv("MLX26_LLM", raising=False)
    spec = _rules(tmp_path, '{"choice": "sibling"}')
    cache = tmp_path / "answers.json"
    result = run_cli("table-decompose", "-", "--arbiter", "llm", "--llm", spec, "--llm-cache", cache,
                     "--emit", "lineage", "--format", "jsonl", stdin=TOTALS)
    assert result.code == 0, result.stderr
    records = [json.loads(x) for x in result.stdout.splitlines()]
    assert records[1]["row_path"] == ["Men"] and records[1]["arbitrated"] is True
    assert "total-parent: chose 'sibling' (llm)" in result.stderr
    assert list(json.loads(cache.read_text()).values())[0]["choice"] == "sibling"
    # An invalid answer falls back to the rule: Men stays under the total row.
    bad = run_cli("table-decompose", "-", "--arbiter", "llm", "--llm", _rules(tmp_path, "sibling!"), stdin=TOTALS)
    assert bad.code == 0 and bad.stdout.splitlines()[1] == "All persons > Men | 2024 = 48"
    assert "(fallback)" in bad.stderr
    rules = run_cli("table-decompose", "-", stdin=TOTALS)
    assert rules.stdout == bad.stdout


@pytest.mark.parametrize(("args", "needle"), [([], "no LLM backend chosen"), (["--llm", "tiny"], "Unknown LLM backend")])
def test_llm_arbiter_bad_spec_is_a_usage_error(run_cli, monkeypatch, args, needle):
    pytest.importorskip("mlx26.core.llm")
    monkeypatch.delenv("MLX26_LLM", raising=False)
    result = run_cli("table-decompose", "-", "--arbiter", "llm", *args, stdin=CSV)
    assert result.code == 2 and needle in result.stderr


def test_overlap_without_strict_is_clipped_with_a_case(run_cli):
    result = run_cli("table-decompose", "-", stdin=OVERLAP)
    assert result.code == 0
    assert "span-conflict: chose 'first' (rules)" in result.stderr
    trees = json.loads(run_cli("table-decompose", "-", "--emit", "trees", stdin=OVERLAP).stdout)
    assert [c["kind"] for c in trees["cases"]][:1] == ["span-conflict"]


@pytest.mark.parametrize(("name", "cells", "line"), [
    ("orchard", 28, "North valley > Apples > Early varieties | Tonnes harvested > 2023 = 1,240"),
    ("library", 48, "Spring term > Lost or withdrawn | Books > Printed = (41)"),
    ("transit", 36, "Bus routes > Night route N2 | Weekdays > Off-peak > Mean delay, minutes = 0.8"),
])
def test_xlsx_csv_and_html_examples_agree(run_cli, name, cells, line):
    xlsx = run_cli("table-decompose", "--example", f"{name}-xlsx").stdout.splitlines()
    csv = run_cli("table-decompose", "--example", f"{name}-csv").stdout.splitlines()
    html = run_cli("table-decompose", "--example", f"{name}-html").stdout.splitlines()
    assert xlsx == csv == html and len(xlsx) == cells
    assert line in xlsx


def test_removed_aitqa_example_names_say_why(run_cli):
    result = run_cli("table-decompose", "--example", "aitqa-tab5-xlsx")
    assert result.code == 2 and "AITQA examples were removed" in result.stderr and "orchard-xlsx" in result.stderr


def test_eval_subset_json(run_cli):
    aitqa = shared_data("aitqa")
    result = run_cli("table-decompose", "eval", "--aitqa", aitqa, "--table", "tab-5", "--render", "csv",
                     "--per-table")
    assert result.code == 0, result.stderr
    doc = json.loads(result.stdout)
    overall = doc["renders"]["csv"]["overall"]
    assert overall["tables"] == 1 and overall["both_paths_em"] == 1.0
    assert doc["renders"]["csv"]["per_table"][0]["id"] == "tab-5"
    # --gold with the tables file (or its folder) is the same source
    again = run_cli("table-decompose", "eval", "--gold", aitqa / "aitqa_tables.jsonl", "--table", "tab-5",
                    "--render", "csv", "--per-table")
    assert again.code == 0 and again.stdout == result.stdout


def test_eval_hitab_folder(run_cli, tmp_path):
    run_cli("table-decompose", "--example", "statcan", "--emit", "hitab-json", "-o", tmp_path / "a.json")
    result = run_cli("table-decompose", "eval", "--gold", tmp_path, "--gold-format", "hitab")
    assert result.code == 0 and json.loads(result.stdout)["overall"]["both_paths_em"] == 1.0


@pytest.mark.parametrize(("args", "needle"), [
    (["--gold-format", "hitab"], "needs --gold"),
    (["--gold-format", "hitb"], "Did you mean 'hitab'?"),
    (["--render", "xlxs"], "Did you mean 'xlsx'?"),
    ([], "no AITQA folder given"),
    (["--render", "csv"], "pass --aitqa DIR, a folder holding aitqa_tables.jsonl and aitqa_questions.jsonl"),
    (["--aitqa", "/no/such/dir"], "AITQA folder not found: /no/such/dir"),
    (["--aitqa", "TMP/nothing"], "has no aitqa_tables.jsonl"),
    (["--gold", "/no/such/dir"], "AITQA folder not found"),
    (["--aitqa", "TMP/empty"], "no AITQA tables in"),
    (["--aitqa", "TMP/bad"], "line 2: invalid JSON"),
    (["--aitqa", "TMP/list"], "line 1: not a JSON object"),
    (["--aitqa", "TMP/field"], "AITQA table t1: missing or malformed field"),
    (["--aitqa", "TMP/binary"], "is not UTF-8 text"),
    (["--aitqa", "TMP/empty", "--gold", "TMP/empty"], "not both"),
    (["--aitqa", "TMP/empty", "--gold-format", "hitab"], "--aitqa is the AITQA folder"),
])
def test_eval_errors(run_cli, tmp_path, args, needle):
    files = {"empty": "", "bad": '{"id": "t0", "data": [], "column_header": []}\n{not json\n',
             "list": "[1, 2]\n", "field": '{"id": "t1", "data": [["1"]], "column_header": "Sales"}\n',
             "binary": b"\xff\xfe\x00{"}
    (tmp_path / "nothing").mkdir()
    for name, text in files.items():
        (tmp_path / name).mkdir()
        target = tmp_path / name / "aitqa_tables.jsonl"
        target.write_bytes(text) if isinstance(text, bytes) else target.write_text(text)
    result = run_cli("table-decompose", "eval", *[a.replace("TMP", str(tmp_path)) for a in args])
    assert result.code == 2 and needle in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr.lower()


def test_cli_module_imports_no_core_or_heavy_packages():
    # only the stdlib-only choice lists (core/table_decompose/spec.py; the package __init__ is lazy)
    code = ("import sys; import mlx26.cli.table_decompose; "
            "core = {'mlx26.core.table_decompose', 'mlx26.core.table_decompose.spec'}; "
            "bad = [m for m in sys.modules if m.startswith('mlx26.core.table_decompose') and m not in core]; "
            "bad += [m for m in ('openpyxl', 'numpy', 'pandas') if m in sys.modules]; "
            "assert not bad, bad")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).returncode == 0


def test_entry_point_subprocess(mlx26_exe, subprocess_env):
    proc = subprocess.run([mlx26_exe, "table-decompose", "-", "--emit", "lines"], input=CSV, capture_output=True,
                          text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.splitlines() == LINES
    head = subprocess.run(f"'{mlx26_exe}' table-decompose --example statcan | head -1", shell=True,
                          capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert head.returncode == 0 and head.stdout.startswith("Aged 2 to 8 years") and head.stderr == ""


def test_reruns_are_byte_identical_through_the_cli(run_cli):
    for emit in ("lineage", "trees", "hitab-json", "markdown", "lines"):
        first = run_cli("table-decompose", "--example", "transit-csv", "--emit", emit)
        second = run_cli("table-decompose", "--example", "transit-csv", "--emit", emit)
        assert first.code == second.code == 0 and first.stdout == second.stdout and first.stdout


def test_lines_into_a_json_name_is_refused_with_a_hint(run_cli, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(CSV)
    result = run_cli("table-decompose", path, "-o", tmp_path / "l.json")
    assert result.code == 2 and "--emit lines writes text, not JSON" in result.stderr
    assert "--emit lineage" in result.stderr and not (tmp_path / "l.json").exists()
    assert run_cli("table-decompose", path, "--emit", "lineage", "-o", tmp_path / "l.json").code == 0


def test_llm_options_without_the_llm_arbiter_are_reported_as_ignored(run_cli):
    result = run_cli("table-decompose", "-", "--llm", "scripted:x.json", stdin=CSV)
    assert result.code == 0 and result.stdout.splitlines() == LINES
    assert "--llm ignored with --arbiter rules" in result.stderr


def test_reversed_range_says_so(run_cli, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    for row in [[None, "2023"], ["North", 10]]:
        wb.active.append(row)
    wb.save(tmp_path / "t.xlsx")
    result = run_cli("table-decompose", tmp_path / "t.xlsx", "--range", "Z9:A1")
    assert result.code == 2 and "is reversed" in result.stderr and "--range A1:Z9" in result.stderr


def _own_gold(tmp_path: Path) -> tuple[Path, Path]:
    gold, tables = tmp_path / "gold", tmp_path / "tables"
    gold.mkdir()
    tables.mkdir()
    (gold / "t1.json").write_text(json.dumps({"table": "t1", "split": "tune", "header_rows": [1, 1],
                                              "row_header_cols": ["A"], "row_dims": [],
                                              "columns": {"B": ["2023"], "C": ["2024"]},
                                              "rows": {"2": ["North"], "3": ["South"]}}))
    return gold, tables


def test_gold_table_without_the_html_source_hints_at_source_xlsx(run_cli, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    gold, tables = _own_gold(tmp_path)
    wb = openpyxl.Workbook()
    for row in [[None, "2023", "2024"], ["North", 10, 12], ["South", 7, 9]]:
        wb.active.append(row)
    wb.save(tables / "t1.xlsx")
    result = run_cli("table-decompose", "eval", "--gold-format", "mlx26", "--gold", gold, "--tables", tables)
    assert result.code == 2 and "no t1.html" in result.stderr and "--source xlsx" in result.stderr
    ok = run_cli("table-decompose", "eval", "--gold-format", "mlx26", "--gold", gold, "--tables", tables,
                 "--source", "xlsx")
    assert ok.code == 0 and json.loads(ok.stdout)["formats"]["xlsx"]["overall"]["both_paths_em"] == 1.0


def test_eval_without_openpyxl_scores_the_html_sources_by_default(run_cli, tmp_path, monkeypatch):
    import importlib.util

    gold, tables = _own_gold(tmp_path)
    (tables / "t1.html").write_text("<table><tr><td></td><td>2023</td><td>2024</td></tr><tr><td>North</td>"
                                    "<td>10</td><td>12</td></tr><tr><td>South</td><td>7</td><td>9</td></tr></table>")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openpyxl" else real(name, *a))
    result = run_cli("table-decompose", "eval", "--gold-format", "mlx26", "--gold", gold, "--tables", tables)
    assert result.code == 0, result.stderr
    assert list(json.loads(result.stdout)["formats"]) == ["html"] and "scoring the .html sources only" in result.stderr
