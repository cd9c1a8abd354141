"""Run a transcript's code against its tests in a child process with resource limits and a timeout.

Part of the vulnerability-games auditor (arXiv 2602.12124 reconstruction). Only reached with ``--run-tests``:
the code and tests are written to a fresh temporary folder and run by ``python -I`` (isolated mode: no user
site, no PYTHON* variables) with an empty environment, stdin closed, CPU time, address space, file size and
open-file limits (``resource.setrlimit``, POSIX), and a wall-clock timeout after which the whole process group
is killed. Passing = exit status 0 **and** a random sentinel printed by the harness after the tests ran: the
code and tests run inside a runner (``exec`` of candidate.py) that writes the sentinel to stdout only when they
return, so code that leaves early with ``os._exit(0)``, ``sys.exit(0)``/``SystemExit``, ``quit()`` or by
closing stdout is reported as ``harness-tampering``, not as a pass. This limits accidents and the obvious
harness exploits; it is not a security boundary against hostile code (code that reads the runner can forge the
sentinel): run untrusted transcripts in a container.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from mlx26.core.common.errors import BackendMissing


@dataclass(frozen=True)
class Outcome:
    passed: bool
    status: str          # passed | failed | timeout | harness-tampering (exit 0 before the tests ran)
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


_RUNNER = """import os, sys
_sentinel = {sentinel!r}
del sys.argv[1:]
_g = {{"__name__": "__main__", "__file__": "candidate.py"}}
with open("candidate.py", encoding="utf-8") as _fh:
    _src = _fh.read()
exec(compile(_src, "candidate.py", "exec"), _g)
sys.stdout.flush()
os.write(1, ("\\n" + _sentinel + "\\n").encode())
"""


def run_tests(code: str, tests: str, timeout: float = 5.0, memory_mb: int = 512) -> Outcome:
    if os.name != "posix":
        raise BackendMissing("--run-tests needs POSIX resource limits (Linux or macOS).")
    sentinel = "mlx26-tests-ran-" + secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="mlx26-vuln-") as tmp:
        with open(os.path.join(tmp, "candidate.py"), "w", encoding="utf-8") as fh:
            fh.write(code + "\n\n" + tests + "\n")
        runner = os.path.join(tmp, "runner.py")
        with open(runner, "w", encoding="utf-8") as fh:
            fh.write(_RUNNER.format(sentinel=sentinel))
        out_path = os.path.join(tmp, "stdout.txt")  # a file: RLIMIT_FSIZE bounds it, unlike a pipe
        with open(out_path, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-I", runner], cwd=tmp, env={"PATH": "/usr/bin:/bin"},
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE,
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
        with open(out_path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(out_path) - 4096))
            lines = fh.read().decode("utf-8", "replace").splitlines()
        tail = err.decode("utf-8", "replace")[-300:]
        if proc.returncode != 0:
            return Outcome(False, "failed", proc.returncode, tail)
        ran = bool(lines) and lines[-1].strip() == sentinel
        return Outcome(ran, "passed" if ran else "harness-tampering", proc.returncode, tail)
