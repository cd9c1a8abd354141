"""Stop a long job cleanly on Ctrl-C / SIGTERM: the job polls a flag, saves its work, and the CLI exits 130.

``with stop_requested() as stop:`` installs handlers for SIGINT and SIGTERM that only set ``stop`` (a
``threading.Event``); the training loop checks ``stop.is_set()`` between steps, finishes the step it is on,
and returns what it has, so the command can write a checkpoint before it reports the interruption. A second
Ctrl-C falls through to the previous handler (Python's KeyboardInterrupt), so a stuck job can still be
killed. Outside the main thread (where signals cannot be set) the flag is simply never set.

A job that stopped raises :class:`Interrupted` (built by :func:`interrupted`) after it saved its work: one
``Error:`` line saying where it stopped and what was kept, a ``Hint:`` with the resume command, exit 130.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

from mlx26.core.common.errors import Mlx26Error

EXIT_INTERRUPTED = 130


class Interrupted(Mlx26Error):
    """A job stopped on SIGINT/SIGTERM after saving what it had (exit 130)."""

    exit_code = EXIT_INTERRUPTED


def interrupted(step: int, total: int, saved_step: int | None, folder: str, resume: str) -> Interrupted:
    """``interrupted at step N of T; checkpoint saved at step N in DIR`` (or ``last checkpoint at step M``,
    or ``no checkpoint was written``), with ``continue with: <resume>`` as the hint."""
    if saved_step is None:
        kept = f"no checkpoint was written in {folder}"
    elif saved_step == step:
        kept = f"checkpoint saved at step {step} in {folder}"
    else:
        kept = f"last checkpoint at step {saved_step} in {folder}"
    return Interrupted(f"interrupted at step {step} of {total}; {kept}", f"continue with: {resume}")


@contextlib.contextmanager
def stop_requested() -> Iterator[threading.Event]:
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous: dict[signal.Signals, Any] = {}

    def handler(signum, frame):
        if stop.is_set():  # the second signal: give up waiting for the step to finish
            signal.signal(signum, previous[signum])
            signal.raise_signal(signum)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, handler)
    try:
        yield stop
    finally:
        for sig, h in previous.items():
            signal.signal(sig, h)
