"""Shared fixtures: run the CLI in-process with a chosen stdin and TTY-ness, capture the streams."""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import mlx26.core  # noqa: F401  # first: moves the checkout root behind site-packages (core/_import_path.py)
import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


class _TtyStringIO(io.StringIO):
    def isatty(self) -> bool:
        return True


def _stdin(data: str | bytes | None):
    if data is None:
        return _TtyStringIO()  # an interactive terminal: nothing piped
    raw = data.encode() if isinstance(data, str) else data
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")


@pytest.fixture
def run_cli(monkeypatch, capsys):
    """``run_cli(*args, stdin=..., tty=False)`` → CliResult; stdout is a TTY when ``tty``."""
    from mlx26.cli.main import main

    def run(*args: str, stdin: str | bytes | None = "", tty: bool = False) -> CliResult:
        monkeypatch.setattr(sys, "stdin", _stdin(stdin))
        fake = _TtyStringIO()
        with monkeypatch.context() as patch:
            if tty:
                patch.setattr(sys, "stdout", fake)
            code = main([str(a) for a in args])
        captured = capsys.readouterr()
        out = fake.getvalue() if tty else captured.out
        return CliResult(code, out, captured.err)

    return run


@pytest.fixture
def mlx26_exe() -> str:
    """The installed console script (subprocess tests go through the real entry point)."""
    exe = BIN / "mlx26"
    if not exe.exists():
        pytest.skip("mlx26 entry point not installed in this environment")
    return str(exe)


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("MLX26_DEBUG", None)
    return env
