"""Typed errors shared by every core and the CLI (no paper).

A core states *why* it stopped by the class it raises; the CLI maps only these classes (and typer's
own usage errors) to a one-line message and an exit code:

- ``InputError`` — bad user input: an option out of range, a malformed or unreadable file (exit 2).
- ``RunFailure`` — a failure found while running: a solver that did not converge, bad data met
  mid-run, a child process that died (exit 1).
- ``BackendMissing`` — a requested backend, device or optional extra is absent (exit 3).

Anything else that escapes a command — a plain ``ValueError`` from numpy, a ``RuntimeError`` from
torch — is a bug, and the CLI reports it as an internal error instead of blaming the user's input.
``InputError`` subclasses ``ValueError`` (and ``RunFailure`` ``RuntimeError``) so code that catches
the built-in class keeps working.

Only the standard library is imported: this module is on the ``--help`` path.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_BACKEND = 3


class Mlx26Error(Exception):
    """An error with a one-line message, an optional hint and an exit code."""

    exit_code = EXIT_RUNTIME

    def __init__(self, message: str, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = str(message)
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(Mlx26Error, ValueError):
    """Bad option, unreadable or malformed input, value out of range (exit 2)."""

    exit_code = EXIT_USAGE


class RunFailure(Mlx26Error, RuntimeError):
    """Bad data found while running, a solver that did not converge, a failed subprocess (exit 1)."""

    exit_code = EXIT_RUNTIME


class BackendMissing(Mlx26Error):
    """A requested backend, device or optional extra is not installed (exit 3)."""

    exit_code = EXIT_BACKEND


def did_you_mean(name: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """``"Did you mean 'x'?"`` for the closest choice, or None when nothing is close."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=cutoff)
    return f"Did you mean '{close[0]}'?" if close else None


def unknown_name(kind: str, name: str, choices: Iterable[str], hint: str | None = None, *,
                 cutoff: float = 0.6, shown: int = 24, suffix: str = "") -> InputError:
    """``Unknown <kind> 'name'. Did you mean …?`` with the valid names (or ``hint``) as the hint.

    ``suffix`` is appended to the suggestion (``':'`` for backend specs such as ``scripted:``);
    at most ``shown`` names are listed, so a registry of hundreds stays one line.
    """
    names = [str(c) for c in choices]
    suggestion = did_you_mean(name, names, cutoff)
    if suggestion and suffix:
        suggestion = suggestion.replace("'?", f"{suffix}'?")
    message = f"Unknown {kind} '{name}'." + (f" {suggestion}" if suggestion else "")
    listed = names if len(names) <= shown else [*names[:shown], "…"]
    return InputError(message, hint=hint or ("choose one of: " + ", ".join(listed)))
