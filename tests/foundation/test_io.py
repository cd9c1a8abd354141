"""The I/O contract through `mlx26 io convert`: every format, stdin and file, TTY vs pipe, errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess

import pytest

RECORDS = [{"id": "1", "name": "alpha", "score": "0.5"}, {"id": "2", "name": "beta, gamma", "score": "-3"}]


def _as_text(fmt: str, records=RECORDS) -> str:
    if fmt == "json":
        return json.dumps(records, indent=2)
    if fmt == "jsonl":
        return "".join(json.dumps(r) + "\n" for r in records)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(records[0]), delimiter="\t" if fmt == "tsv" else ",",
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


def _parse(fmt: str, text: str) -> list[dict]:
    if fmt == "json":
        return json.loads(text)
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return list(csv.DictReader(io.StringIO(text), delimiter="\t" if fmt == "tsv" else ","))


IN_FORMATS = ["json", "jsonl", "csv", "tsv"]
OUT_FORMATS = ["json", "jsonl", "csv", "tsv"]


@pytest.mark.parametrize("source", ["stdin", "file"])
@pytest.mark.parametrize("fmt_in", IN_FORMATS)
@pytest.mark.parametrize("fmt_out", OUT_FORMATS)
def test_round_trip_every_format(run_cli, tmp_path, source, fmt_in, fmt_out):
    text = _as_text(fmt_in)
    if source == "stdin":
        result = run_cli("io", "convert", "-", "--format", fmt_out, stdin=text)
    else:
        path = tmp_path / f"records.{fmt_in}"
        path.write_text(text)
        result = run_cli("io", "convert", path, "--format", fmt_out)
    assert result.code == 0, result.stderr
    assert result.stderr == ""
    assert _parse(fmt_out, result.stdout) == RECORDS


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "tsv"])
def test_sniffing_without_extension(run_cli, tmp_path, fmt):
    path = tmp_path / "records.data"
    path.write_text(_as_text(fmt))
    result = run_cli("io", "convert", path, "--format", "jsonl")
    assert result.code == 0, result.stderr
    assert _parse("jsonl", result.stdout) == RECORDS


def test_plain_lines_and_json_scalars_become_value_records(run_cli):
    lines = run_cli("io", "convert", "-", "--format", "jsonl", stdin="x1 + x1\n\nsin(x1, 2)\n")
    assert _parse("jsonl", lines.stdout) == [{"value": "x1 + x1"}, {"value": "sin(x1, 2)"}]
    forced = run_cli("io", "convert", "-", "--input-format", "lines", "--format", "jsonl", stdin="a,b\n")
    assert _parse("jsonl", forced.stdout) == [{"value": "a,b"}]
    scalars = run_cli("io", "convert", "-", "--format", "csv", stdin="[1, 2.5]")
    assert scalars.stdout == "value\n1\n2.5\n"


def test_lines_output_round_trips_lines_input(run_cli):
    result = run_cli("io", "convert", "-", "--format", "lines", stdin="a b\n1.5\n")
    assert result.stdout == "a b\n1.5\n"
    wide = run_cli("io", "convert", "-", "--format", "lines", stdin='{"a": 1, "b": 2}\n')
    assert wide.stdout == '{"a": 1, "b": 2}\n'


def test_detect_types_and_exact_float_round_trip(run_cli):
    result = run_cli("io", "convert", "-", "--detect-types", "--format", "jsonl",
                     stdin="a,b,c\n007,0.1,x\n-3,1e-300,\n")
    assert _parse("jsonl", result.stdout) == [{"a": 7, "b": 0.1, "c": "x"}, {"a": -3, "b": 1e-300, "c": ""}]
    back = run_cli("io", "convert", "-", "--format", "csv", stdin=result.stdout)
    assert back.stdout == "a,b,c\n7,0.1,x\n-3,1e-300,\n"


def test_bom_blank_lines_and_nested_values(run_cli, tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffa,b\n\n1,2\n".encode())
    assert _parse("jsonl", run_cli("io", "convert", path, "--format", "jsonl").stdout) == [{"a": "1", "b": "2"}]
    nested = run_cli("io", "convert", "-", "--format", "csv", stdin='{"a": {"b": [1, 2]}}\n')
    assert nested.stdout == 'a\n"{""b"": [1, 2]}"\n'


def test_auto_format_tty_vs_pipe(run_cli):
    piped = run_cli("io", "convert", "-", stdin="a,b\n1,2\n")
    assert piped.stdout == '{"a": "1", "b": "2"}\n'  # records → JSONL when piped
    tty = run_cli("io", "convert", "-", stdin="a,b\n1,2\n", tty=True)
    assert "┃" in tty.stdout or "│" in tty.stdout  # a rich table for humans
    assert "a" in tty.stdout and "2" in tty.stdout
    single = run_cli("info")
    assert json.loads(single.stdout)["version"]  # one result → JSON when piped


def test_output_format_from_extension(run_cli, tmp_path):
    out = tmp_path / "out.csv"
    result = run_cli("io", "convert", "-", "-o", out, stdin='{"a": 1}\n')
    assert result.code == 0 and result.stdout == ""
    assert out.read_text() == "a\n1\n"


def test_refuses_to_overwrite_without_force(run_cli, tmp_path):
    out = tmp_path / "keep.jsonl"
    out.write_text("precious\n")
    result = run_cli("io", "convert", "-", "-o", out, stdin='{"a": 1}\n')
    assert result.code == 2
    assert "refusing to overwrite" in result.error_lines[0] and "--force" in result.stderr
    assert out.read_text() == "precious\n"
    forced = run_cli("io", "convert", "-", "-o", out, "--force", stdin='{"a": 1}\n')
    assert forced.code == 0 and out.read_text() == '{"a": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.jsonl"]  # no temp files left


def test_written_files_get_ordinary_permissions(run_cli, tmp_path):
    import os
    import stat

    mask = os.umask(0o027)
    try:
        fresh = tmp_path / "fresh.jsonl"
        assert run_cli("io", "convert", "-", "-o", fresh, stdin='{"a": 1}\n').code == 0
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o640  # 0666 minus umask, not mkstemp's 0600
        shared = tmp_path / "shared.jsonl"
        shared.write_text("old\n")
        shared.chmod(0o664)
        assert run_cli("io", "convert", "-", "-o", shared, "--force", stdin='{"a": 1}\n').code == 0
        assert stat.S_IMODE(shared.stat().st_mode) == 0o664  # a replaced file keeps its mode
    finally:
        os.umask(mask)


def test_links_fifos_and_devices_are_never_replaced(run_cli, tmp_path):
    import os
    import threading

    real = tmp_path / "real.json"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert run_cli("io", "convert", "-", "-o", link, "--force", stdin='{"a": 1}\n').code == 0
    assert link.is_symlink() and real.read_text() == '{"a": 1}\n'  # the link stays, its target is replaced
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "missing.jsonl")
    refused = run_cli("io", "convert", "-", "-o", dangling, stdin='{"a": 1}\n')
    assert refused.code == 2 and "refusing to overwrite" in refused.stderr and dangling.is_symlink()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    assert run_cli("io", "convert", "-", "-o", fifo, "--format", "jsonl", stdin='{"a": 1}\n').code == 0
    reader.join(10)
    assert got == ['{"a": 1}\n'] and fifo.is_fifo()  # written through, not replaced by a file
    assert run_cli("io", "convert", "-", "-o", os.devnull, stdin='{"a": 1}\n').code == 0
    assert not os.path.isfile(os.devnull)
    assert run_cli("io", "convert", "-", "-o", "", stdin='{"a": 1}\n').code == 2


def test_stdin_is_strict_utf8_even_under_the_c_locale(mlx26_exe, subprocess_env):
    env = {**subprocess_env, "LC_ALL": "C", "LANG": "C"}  # Python then reads stdin with surrogateescape
    env.pop("PYTHONIOENCODING", None)
    bad = subprocess.run([mlx26_exe, "io", "convert", "-"], input=b'{"a": "\xff\xfe"}\n', capture_output=True,
                         env=env, timeout=120)
    assert bad.returncode == 2 and bad.stdout == b""
    assert b"not UTF-8" in bad.stderr and len(bad.stderr.decode().strip().splitlines()) == 1
    bom = subprocess.run([mlx26_exe, "io", "convert", "-", "--format", "jsonl"], input=b"\xef\xbb\xbfa,b\n1,2\n",
                         capture_output=True, env=env, timeout=120)
    assert bom.returncode == 0 and bom.stdout == b'{"a": "1", "b": "2"}\n'


def test_failed_write_leaves_old_file_intact(tmp_path):
    from mlx26.cli._io import emit

    out = tmp_path / "old.jsonl"
    out.write_text("old\n")

    def records():
        yield {"a": 1}
        raise RuntimeError("boom mid-stream")

    with pytest.raises(RuntimeError):
        emit(records(), str(out), "jsonl", force=True)
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["old.jsonl"]


@pytest.mark.parametrize(
    ("args", "stdin", "needle"),
    [
        (["io", "convert", "-"], '{"a": 1}\n{"a": \n', "line 2: invalid JSON"),
        (["io", "convert", "missing.csv"], "", "input file not found"),
        (["io", "convert", "-", "--bogus"], "", "No such option"),
        (["io", "convert", "-", "--format", "xml"], "", "xml"),
        (["io", "convert", "-", "--input-format", "yaml"], "", "yaml"),
        (["io", "convert", "-"], "a,b\n1,2,3\n", "line 2: 3 fields"),
        (["io", "convert", "-"], b"a\n\xff\xfe\n", "not UTF-8"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(run_cli, tmp_path, args, stdin, needle):
    out = tmp_path / "out.jsonl"
    result = run_cli(*args, "-o", out, stdin=stdin)
    assert result.code == 2
    assert result.error_lines[0].startswith("Error:") and needle in result.error_lines[0]
    assert len(result.error_lines) <= 2 and all(line.startswith(("Error:", "Hint:")) for line in result.error_lines)
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_stdin_terminal_fails_fast(run_cli):
    result = run_cli("io", "convert", "-", stdin=None)
    assert result.code == 2 and "nothing piped to stdin" in result.stderr


def test_broken_pipe_exits_quietly(tmp_path, mlx26_exe, subprocess_env):
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"i": i, "pad": "x" * 50}) + "\n" for i in range(50_000)))
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; '{mlx26_exe}' io convert '{big}' | head -n1"],
                          capture_output=True, text=True, env=subprocess_env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"i": 0, "pad": "x" * 50}
    assert proc.stderr == ""


def test_stdin_and_file_agree_through_entry_point(tmp_path, mlx26_exe, subprocess_env):
    path = tmp_path / "r.csv"
    path.write_text(_as_text("csv"))
    via_file = subprocess.run([mlx26_exe, "io", "convert", str(path)], capture_output=True, text=True,
                              env=subprocess_env, timeout=60)
    via_stdin = subprocess.run([mlx26_exe, "io", "convert", "-"], input=_as_text("csv"), capture_output=True,
                               text=True, env=subprocess_env, timeout=60)
    assert via_file.returncode == via_stdin.returncode == 0
    assert via_file.stdout == via_stdin.stdout and _parse("jsonl", via_file.stdout) == RECORDS


def test_progress_is_silent_when_stderr_is_not_a_terminal(capsys):
    from mlx26.cli._io import progress

    assert list(progress(range(5), total=5)) == [0, 1, 2, 3, 4]
    assert capsys.readouterr().err == ""


def test_json_output_is_strict_non_finite_numbers_become_null():
    import numpy as np
    from mlx26.cli._io import to_json

    assert to_json({"a": float("nan"), "b": [np.float64("inf"), 1.5], "c": np.array([np.nan, 2.0])}) == \
        '{"a": null, "b": [null, 1.5], "c": [null, 2.0]}'
    assert json.loads(to_json({"x": -float("inf")})) == {"x": None}
    assert to_json({"a": 1.0, "s": "NaN"}) == '{"a": 1.0, "s": "NaN"}'  # strings are left alone


class _Tty(io.StringIO):
    def isatty(self):
        return True

    def getvalue(self):
        import re

        return re.sub(r"\x1b\[[0-9;]*m", "", super().getvalue())  # colour codes take no columns


@pytest.mark.parametrize("width", [80, 120])
def test_terminal_tables_fit_or_fall_back_to_vertical_records(monkeypatch, width):
    from mlx26.cli._io import _write

    monkeypatch.setenv("COLUMNS", str(width))
    narrow = [{"mechanism": "gaussian", "sigma": 1.0810234567, "note": "x" * 200}, {"mechanism": "multi", "sigma": 0.25}]
    out = _Tty()
    _write(out, narrow, "table", False, None)
    lines = out.getvalue().splitlines()
    assert all(len(line) <= width for line in lines)
    assert "mechanism" in lines[1] and "1.081" in out.getvalue() and "1.0810234567" not in out.getvalue()
    assert "…" in out.getvalue() and len(lines) == 6  # one line per row: long text is cut, not wrapped
    wide = [{f"column_{i}": 0.123456789 * i for i in range(20)} for _ in range(2)]
    out = _Tty()
    _write(out, wide, "table", False, "t", ("column_19",))  # the command's order comes first
    text = out.getvalue()
    assert all(len(line) <= width for line in text.splitlines())
    header = next(line for line in text.splitlines() if "column_" in line)
    shown = header.count("column_")
    assert header.split()[1] == "column_19" and 2 <= shown < 20
    assert f"{20 - shown} more column(s): --columns all" in text
    from mlx26.cli import _io

    token = _io._COLUMNS.set(["*"])  # --columns all: too wide for the terminal → one block per record
    try:
        out = _Tty()
        _write(out, wide, "table", False, "t")
    finally:
        _io._COLUMNS.reset(token)
    text = out.getvalue()
    assert all(len(line) <= width for line in text.splitlines())
    assert "column_19 │ 2.346" in text and text.count("─[ ") == 2


def test_data_formats_keep_full_precision_and_text():
    from mlx26.cli._io import _write

    out = io.StringIO()
    _write(out, [{"sigma": 1.0810234567, "note": "x" * 200}], "jsonl", False, None)
    assert "1.0810234567" in out.getvalue() and "x" * 200 in out.getvalue()
