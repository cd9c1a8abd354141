"""The app skeleton: help, version, lazy imports, exit codes, one-line errors, entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from mlx26.cli import _errors
from mlx26.core import __version__
from mlx26.core.common.errors import InputError, RunFailure


def test_help_lists_commands(run_cli):
    result = run_cli("--help")
    assert result.code == 0
    for name in ("info", "io"):
        assert f"\n  {name} " in result.stdout


def test_version(run_cli):
    result = run_cli("--version")
    assert result.code == 0 and result.stdout.strip() == f"mlx26 {__version__}"


@pytest.mark.parametrize("argv", [["--help"], ["io", "convert", "--help"], ["--version"]])
def test_help_imports_neither_numpy_nor_torch(argv):
    code = (
        "import sys\n"
        "from mlx26.cli.main import main\n"
        f"rc = main({argv!r})\n"
        "heavy = sorted(m for m in ('numpy', 'torch', 'scipy', 'rich', 'yaml') if m in sys.modules)\n"
        "print(rc, heavy, file=sys.stderr)\n"
        "assert rc == 0 and not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_unknown_command_suggests(run_cli):
    result = run_cli("infoo")
    assert result.code == 2
    assert result.error_lines[0] == "Error: No such command 'infoo'. Did you mean 'info'?"
    assert len(result.error_lines) == 2


def test_missing_argument_is_usage_error(run_cli):
    result = run_cli("io", "convert")
    assert result.code == 2


def test_info_reports_extras_and_backends(run_cli):
    info = json.loads(run_cli("info", "--format", "json").stdout)
    for key in ("version", "python", "torch", "transformers", "onnxruntime", "torch_device", "fpga", "data_dir"):
        assert key in info
    assert info["version"] == __version__


def test_info_data_dir_follows_env(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("MLX26_HOME", str(tmp_path))
    assert json.loads(run_cli("info").stdout)["data_dir"] == str(tmp_path)


@pytest.mark.parametrize(
    ("exc", "code", "needle"),
    [
        (_errors.RuntimeFailure("solver did not converge", hint="raise --max-iter"), 1, "solver did not converge"),
        (_errors.UsageError("bad value"), 2, "bad value"),
        (_errors.BackendMissing("no XRT"), 3, "no XRT"),
        (InputError("epsilon must be positive", "try -e 1"), 2, "epsilon must be positive"),
        (RunFailure("diverged"), 1, "diverged"),
        (ValueError("operands could not be broadcast"), 1, "internal error: ValueError"),
        (RuntimeError("mat1 and mat2 shapes cannot be multiplied"), 1, "internal error: RuntimeError"),
        (ModuleNotFoundError("No module named 'torch'", name="torch"), 3, "'torch'"),
        (FileNotFoundError(2, "No such file", "x.csv"), 2, "x.csv"),
        (KeyError("unexpected"), 1, "internal error"),
        (UnicodeDecodeError("utf-8", b"\x00" * 5000 + b"\xff", 5000, 5001, "invalid start byte"), 2,
         "not utf-8 text (undecodable byte at offset 5000)"),
    ],
)
def test_exception_table_maps_to_exit_codes(capsys, exc, code, needle):
    assert _errors.handle(exc) == code
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("Error:") and needle in err[0]
    assert len(err) <= 2 and all(len(line) < 300 for line in err)  # never echo the input


def test_missing_extra_hint_names_the_extra(capsys):
    with pytest.raises(_errors.BackendMissing) as info:
        _errors.require("mlx26_no_such_module_xyz", "torch")
    assert info.value.exit_code == 3
    assert info.value.hint == "pip install 'mlx26[torch]'"
    assert _errors.handle(ModuleNotFoundError("x", name="dp_accounting")) == 3
    assert "pip install 'mlx26[dp]'" in capsys.readouterr().err


@pytest.mark.parametrize(("exc", "code"), [(_errors.UsageError("x"), 2), (_errors.BackendMissing("y"), 3),
                                           (RunFailure("z"), 1), (ValueError("bug"), 1)])
def test_debug_env_shows_the_traceback_and_keeps_the_exit_code(monkeypatch, capsys, exc, code):
    monkeypatch.setenv("MLX26_DEBUG", "1")
    try:
        raise exc
    except Exception as raised:  # a traceback needs a raised exception
        assert _errors.handle(raised) == code
    err = capsys.readouterr().err
    assert "Traceback" in err and "\nError: " in err[err.index("Traceback"):]


def test_unknown_name_did_you_mean():
    err = _errors.unknown_name("mechanism", "mutli", ["multi", "quasi", "gaussian"])
    assert err.message == "Unknown mechanism 'mutli'. Did you mean 'multi'?"
    assert err.exit_code == 2


def test_entry_point_exit_codes(mlx26_exe, subprocess_env, tmp_path):
    ok = subprocess.run([mlx26_exe, "--version"], capture_output=True, text=True, env=subprocess_env, timeout=60)
    assert ok.returncode == 0 and ok.stdout.startswith("mlx26 ")
    bad = subprocess.run([mlx26_exe, "io", "convert", str(tmp_path / "none.csv")], capture_output=True, text=True,
                         env=subprocess_env, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("Error: input file not found")
    assert "Traceback" not in bad.stderr
    debug = subprocess.run([mlx26_exe, "io", "convert", str(tmp_path / "none.csv")], capture_output=True, text=True,
                           env={**subprocess_env, "MLX26_DEBUG": "1"}, timeout=60)
    assert debug.returncode == 2 and "Traceback" in debug.stderr  # MLX26_DEBUG keeps the exit code


@pytest.mark.parametrize("group", [[], ["dp-mix"], ["train"], ["rl", "data"]])
def test_bare_group_prints_its_help_laid_out(run_cli, group):
    result = run_cli(*group)
    assert result.code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Usage: mlx26") and "Commands:" in lines and not result.stderr.startswith("Error:")
