"""Errors and exit codes shared by every mlx26 command.

Exit codes (CONVENTIONS.md): 0 success, 1 runtime failure, 2 usage or input error,
3 a requested backend, device or optional extra is absent.

Every failure reaches the user as one ``Error: …`` line on stderr, plus at most one
``Hint: …`` line. ``MLX26_DEBUG=1`` re-raises so the plain traceback is shown.
Only the standard library is imported here: this module is on the ``--help`` path.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Iterable

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_BACKEND = 3

# Optional module → the extra that installs it; used to turn ImportError into exit 3 + hint.
EXTRA_FOR_MODULE = {
    "torch": "torch",
    "transformers": "transformers",
    "tokenizers": "transformers",
    "onnxruntime": "onnx",
    "dp_accounting": "dp",
    "sympy": "simplify",
    "httpx": "llm",
    "openai": "llm",
    "openpyxl": "table",
    "gymnasium": "rl",
    "ogbench": "ogbench",
    "mujoco": "ogbench",
    "stable_baselines3": "sb3",
    "safetensors": "zoo",
    "peft": "select",
    "matplotlib": "select",
    "faiss": "profile-memory",
    "hqq": "quantize-moe",
    "bandit": "score-code",
    "miniwob": "rpa",
    "selenium": "rpa",
}


class Mlx26Error(Exception):
    """An error with a one-line message, an optional hint and an exit code."""

    exit_code = EXIT_RUNTIME

    def __init__(self, message: str, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(Mlx26Error):
    """Bad option, unreadable or malformed input, value out of range (exit 2)."""

    exit_code = EXIT_USAGE


class RuntimeFailure(Mlx26Error):
    """Bad data found while running, a solver that did not converge (exit 1)."""

    exit_code = EXIT_RUNTIME


class BackendMissing(Mlx26Error):
    """A requested backend, device or optional extra is not installed (exit 3)."""

    exit_code = EXIT_BACKEND


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """Return "Did you mean 'x'?" for the closest choice, or None."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"Did you mean '{close[0]}'?" if close else None


def unknown_name(kind: str, name: str, choices: Iterable[str]) -> UsageError:
    """``Unknown <kind> 'name'. Did you mean …?`` with the valid names as a hint."""
    choices = sorted(choices)
    suggestion = did_you_mean(name, choices)
    message = f"Unknown {kind} '{name}'." + (f" {suggestion}" if suggestion else "")
    return UsageError(message, hint="choose one of: " + ", ".join(choices))


def require(module: str, extra: str | None = None):
    """Import an optional module or raise BackendMissing with the pip hint (exit 3)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_extra(module.split(".")[0], extra, exc) from exc


def missing_extra(module: str, extra: str | None = None, exc: BaseException | None = None) -> BackendMissing:
    extra = extra or EXTRA_FOR_MODULE.get(module, "all")
    detail = f" ({exc})" if exc is not None and module not in str(exc) else ""
    return BackendMissing(
        f"this command needs the optional package '{module}', which is not installed{detail}.",
        hint=f"pip install 'mlx26[{extra}]'",
    )


def debug_enabled() -> bool:
    return os.environ.get("MLX26_DEBUG", "").strip() not in ("", "0", "false", "no")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def report(message: str, hint: str | None = None) -> None:
    print(f"Error: {_one_line(message)}", file=sys.stderr)
    if hint:
        print(f"Hint: {_one_line(hint)}", file=sys.stderr)


def _is_cli_parse_error(exc: BaseException) -> bool:
    # typer's parser errors (UsageError, BadParameter, NoSuchOption, …) share this duck type;
    # we test for it instead of importing typer/click internals.
    return hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int)


def _parse_error_hint(exc: BaseException, command_names: Iterable[str]) -> str | None:
    message = exc.format_message()  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    if "No such command" in message and "Did you mean" not in message:
        bad = message.split("'")[1] if "'" in message else ""
        names = list(command_names)
        if ctx is not None and hasattr(ctx.command, "list_commands"):
            names = ctx.command.list_commands(ctx)
        suggestion = did_you_mean(bad, names)
        if suggestion:
            return suggestion
    path = ctx.command_path if ctx is not None else "mlx26"
    return f"see '{path} --help'"


def handle(exc: BaseException, command_names: Iterable[str] = ()) -> int:
    """Map an exception to (one printed line, exit code). Re-raise under MLX26_DEBUG."""
    if isinstance(exc, KeyboardInterrupt) or type(exc).__name__ == "Abort":
        print("Error: interrupted.", file=sys.stderr)
        return 130
    if debug_enabled() and not _is_cli_parse_error(exc):
        raise exc
    if isinstance(exc, Mlx26Error):
        report(exc.message, exc.hint)
        return exc.exit_code
    if type(exc).__name__ == "NoArgsIsHelpError":  # a group called bare: its help, laid out, is the answer
        ctx = getattr(exc, "ctx", None)
        print(ctx.get_help() if ctx is not None else exc.format_message(), file=sys.stderr)  # type: ignore[attr-defined]
        return int(exc.exit_code)  # type: ignore[attr-defined]
    if _is_cli_parse_error(exc):
        report(exc.format_message(), _parse_error_hint(exc, command_names))  # type: ignore[attr-defined]
        return int(exc.exit_code)  # type: ignore[attr-defined]
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        err = missing_extra(exc.name.split(".")[0], exc=exc)
        report(err.message, err.hint)
        return err.exit_code
    if isinstance(exc, FileNotFoundError):
        report(f"file not found: {exc.filename or exc}", "check the path")
        return EXIT_USAGE
    if isinstance(exc, (PermissionError, IsADirectoryError, NotADirectoryError)):
        report(f"cannot access {exc.filename or ''}: {exc.strerror or exc}")
        return EXIT_USAGE
    if isinstance(exc, UnicodeDecodeError):  # its args hold the whole input: never echo them
        report(f"input is not {exc.encoding} text (undecodable byte at offset {exc.start})",
               "pass a text file, or convert it first")
        return EXIT_USAGE
    if isinstance(exc, UnicodeEncodeError):  # its args hold the whole text: never echo them
        report(f"text cannot be written as {exc.encoding} (character {exc.object[exc.start:exc.start + 1]!r} "
               f"at offset {exc.start})", "the input holds bytes that are not valid text")
        return EXIT_USAGE
    if isinstance(exc, ValueError):
        # Core modules raise ValueError(message[, hint]) for invalid parameters: they never
        # import the CLI, so this is how a core states a usage error.
        args = [str(a) for a in exc.args]
        report(args[0] if args else type(exc).__name__, args[1] if len(args) > 1 else None)
        return EXIT_USAGE
    if isinstance(exc, (ArithmeticError, RuntimeError)) and not isinstance(exc, NotImplementedError):
        # ... and RuntimeError/ArithmeticError for failures found while running (exit 1).
        report(f"{exc}")
        return EXIT_RUNTIME
    report(f"internal error: {type(exc).__name__}: {exc}",
           "rerun with MLX26_DEBUG=1 for the traceback and report it")
    return EXIT_RUNTIME
