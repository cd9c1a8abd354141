"""Run a transcript's code against its tests in a child process with resource limits and a timeout.

Part of the vulnerability-games auditor (arXiv 2602.12124 reconstruction). Only reached with ``--run-tests``:
the code and tests are written to a fresh temporary folder and run by ``python -I`` (isolated mode: no user
site, no PYTHON* variables) with an empty environment, stdin closed, CPU time, address space, file size and
open-file limits (``resource.setrlimit``, POSIX), and a wall-clock timeout after which the whole process group
is killed. Passing = exit status 0. This limits accidents, it is not a security boundary against hostile code:
run untrusted transcripts in a container.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from mlx26.core.common.errors import BackendMissing


@dataclass(frozen=True)
class Outcome:
    passed: bool
    status: str          # passed | failed | timeout
    returncode: int | None
    stderr_tail: str


def _limits(cpu_s: int, memory_mb: int) -> None:  # runs in the child before exec
    import resource

    os.setsid()
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_tests(code: str, tests: str, timeout: float = 5.0, memory_mb: int = 512) -> Outcome:
    if os.name != "posix":
        raise BackendMissing("--run-tests needs POSIX resource limits (Linux or macOS).")
    with tempfile.TemporaryDirectory(prefix="mlx26-vuln-") as tmp:
        path = os.path.join(tmp, "candidate.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(code + "\n\n" + tests + "\n")
        proc = subprocess.Popen([sys.executable, "-I", path], cwd=tmp, env={"PATH": "/usr/bin:/bin"},
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=lambda: _limits(max(1, int(timeout) + 1), memory_mb))
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
            return Outcome(False, "timeout", None, "")
        tail = err.decode("utf-8", "replace")[-300:]
        return Outcome(proc.returncode == 0, "passed" if proc.returncode == 0 else "failed", proc.returncode, tail)
