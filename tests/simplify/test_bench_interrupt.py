"""Ctrl-C during `simplify bench` (SymPy running in a worker process): exit 130, one line, no worker traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to find the worker")


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _as_a_terminal_starts_it() -> None:
    """SIGINT at its default, unblocked. A pytest-xdist worker of the full suite can be running with SIGINT
    ignored (seen in this suite: inherited from the worker's start or an earlier test's setup), and an
    ignored SIGINT is inherited through exec, so Python would then never raise KeyboardInterrupt and the
    command would run on (POSIX: background jobs of scripts start that way, on purpose)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_ctrl_c_in_the_sympy_pass_exits_130_without_tracebacks(mlx26_exe, subprocess_env):
    proc = subprocess.Popen([mlx26_exe, "simplify", "bench", "--n", "2000", "--timeout", "1", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env,
                            start_new_session=True, preexec_fn=_as_a_terminal_starts_it)
    deadline = time.monotonic() + 60
    while not _children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert workers, "the SymPy worker never started"
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: the whole foreground group gets it
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err == "Error: interrupted.\n", err
    assert out == ""
    time.sleep(0.5)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()], "the worker outlived the command"
