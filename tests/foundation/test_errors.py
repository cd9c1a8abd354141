"""Errors tell the truth: only typed errors are blamed on the user's input.

``InputError`` (exit 2) and ``RunFailure`` (exit 1) from ``core/common/errors.py`` are the only
exceptions the CLI reports as the user's problem or a known runtime failure; any other exception —
a ``ValueError`` from numpy because of a bug, a missing ``mlx26.*`` module — is an internal error.
"""

from __future__ import annotations

import ast
import subprocess

import pytest
from mlx26.cli import _errors
from mlx26.core.common.errors import BackendMissing, InputError, Mlx26Error, RunFailure, unknown_name

from tests.conftest import REPO


def _one_error(capsys) -> list[str]:
    lines = capsys.readouterr().err.splitlines()
    assert lines and lines[0].startswith("Error: ") and len(lines) <= 2, lines
    return lines


def test_input_error_is_exit_2_with_its_hint(capsys):
    assert _errors.handle(InputError("--eps must be > 0, got -1", "try --eps 1")) == 2
    assert _one_error(capsys) == ["Error: --eps must be > 0, got -1", "Hint: try --eps 1"]


def test_run_failure_is_exit_1_without_internal_label(capsys):
    assert _errors.handle(RunFailure("value iteration did not converge in 10 iterations")) == 1
    assert _one_error(capsys) == ["Error: value iteration did not converge in 10 iterations"]


@pytest.mark.parametrize("exc", [ValueError("setting an array element with a sequence."),
                                 RuntimeError("expected scalar type Float but found Double"),
                                 ArithmeticError("overflow"), IndexError("index 3 is out of bounds")])
def test_untyped_exceptions_are_internal_errors(capsys, exc):
    assert _errors.handle(exc) == 1
    lines = _one_error(capsys)
    assert lines[0].startswith(f"Error: internal error: {type(exc).__name__}: ")
    assert "MLX26_DEBUG=1" in lines[1] and "report" in lines[1]


def test_missing_mlx26_module_is_internal_not_an_extra(capsys):
    exc = ModuleNotFoundError("No module named 'mlx26.core.quantize_moe.run'", name="mlx26.core.quantize_moe.run")
    assert _errors.handle(exc) == 1
    text = capsys.readouterr().err
    assert "internal error" in text and "mlx26.core.quantize_moe.run" in text
    assert "pip install 'mlx26[" not in text and "optional package" not in text


def test_missing_third_party_module_names_its_extra(capsys):
    assert _errors.handle(ModuleNotFoundError("No module named 'sympy'", name="sympy")) == 3
    assert "Hint: pip install 'mlx26[simplify]'" in capsys.readouterr().err


def test_typed_errors_keep_the_builtin_bases():
    # Code that catches the built-in class (``except ValueError``) still catches the typed ones.
    assert issubclass(InputError, ValueError) and issubclass(RunFailure, RuntimeError)
    assert InputError("m").exit_code == 2 and RunFailure("m").exit_code == 1 and BackendMissing("m").exit_code == 3
    assert str(InputError("message", "hint")) == "message"
    assert _errors.UsageError is InputError and _errors.RuntimeFailure is RunFailure


def test_unknown_name_suggests_and_lists():
    err = unknown_name("mechanism", "gausian", ["multi", "gaussian", "laplace"])
    assert isinstance(err, InputError) and err.message == "Unknown mechanism 'gausian'. Did you mean 'gaussian'?"
    assert err.hint == "choose one of: multi, gaussian, laplace"
    far = unknown_name("mechanism", "zzz", ["multi", "gaussian"])
    assert far.message == "Unknown mechanism 'zzz'." and "Did you mean" not in far.message
    many = unknown_name("env", "x", [f"e{i}" for i in range(40)], shown=5)
    assert many.hint == "choose one of: e0, e1, e2, e3, e4, …"
    spec = unknown_name("LLM backend", "scriptd:demo", ["scripted", "openai"], "forms", cutoff=0.5, suffix=":")
    assert "Did you mean 'scripted:'?" in spec.message and spec.hint == "forms"


def test_core_input_error_reaches_the_user_as_exit_2(run_cli):
    result = run_cli("dp-mix", "calibrate", "--mechanism", "gausian", "-e", "1", "-d", "1e-5")
    assert result.code == 2 and result.error_lines[0].startswith("Error: ")
    assert "gaussian" in result.stderr and "Traceback" not in result.stderr


def test_a_bug_in_a_core_is_reported_as_internal(run_cli, monkeypatch):
    import mlx26.core.simplify.engine as simplify_core  # what `simplify run` calls per record

    def broken(*args, **kwargs):
        raise ValueError("operands could not be broadcast together with shapes (3,) (4,)")

    monkeypatch.setattr(simplify_core, "simplify", broken)
    result = run_cli("simplify", "-", stdin="x1 + x1\n")
    assert result.code == 1 and result.error_lines[0].startswith("Error: internal error: ValueError: operands")
    assert "MLX26_DEBUG=1" in result.stderr and "Traceback" not in result.stderr


# Cores state user-input problems as InputError and runtime failures as RunFailure; a bare built-in
# raise would be reported as an internal error, so none may remain. Internal-invariant checks that
# are bugs by definition are listed with their reason.
INTERNAL_INVARIANTS = {
    ("core/profile_memory/clock.py", "RuntimeError"): "LapClock used out of order is a programming error",
}


def _bare_raises() -> list[tuple[str, int, str]]:
    files = subprocess.run(["git", "ls-files", "cli", "core", "kernels", "fpga"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    found = []
    for path in files:
        if not path.endswith(".py"):
            continue
        tree = ast.parse((REPO / path).read_text(), path)
        for node in ast.walk(tree):
            target = node.exc if isinstance(node, ast.Raise) else node.value if isinstance(node, ast.Return) else None
            if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) \
                    and target.func.id in ("ValueError", "RuntimeError", "ArithmeticError"):
                if (path, target.func.id) not in INTERNAL_INVARIANTS:
                    found.append((path, node.lineno, target.func.id))
    return found


def test_no_bare_valueerror_or_runtimeerror_is_raised():
    found = _bare_raises()
    assert not found, "raise InputError/RunFailure from mlx26.core.common.errors instead: " + \
        ", ".join(f"{p}:{n} {k}" for p, n, k in found[:10])


def test_every_typed_error_class_maps_to_its_exit_code(capsys):
    for cls, code in ((InputError, 2), (RunFailure, 1), (BackendMissing, 3), (Mlx26Error, 1)):
        assert _errors.handle(cls("x")) == code
        capsys.readouterr()
