"""Run an mlx26 command under torchrun (``python -m torch.distributed.run``) on CPU for the DDP tests (issue 41)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def torchrun(*args: str, cwd: Path, nproc: int = 2, module: bool = True,
             timeout: float = 180) -> subprocess.CompletedProcess:
    """``torchrun --nproc-per-node N -m mlx26.cli ARGS`` (``module=False``: the ``mlx26`` console script)."""
    launch = ["-m", "mlx26.cli"] if module else [str(BIN / "mlx26")]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MLX26_THREADS": "1"}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc), "--master-addr",
           "127.0.0.1", "--master-port", str(free_port()), *launch, *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def refused_by_every_rank(done: subprocess.CompletedProcess) -> list[str]:
    """The ``Error:`` lines of a torchrun run that every rank refused with exit 2 (torchrun itself then
    exits non-zero with its failure table)."""
    assert done.returncode != 0
    assert "exitcode  : 2" in done.stderr
    return [line for line in done.stderr.splitlines() if line.startswith("Error:")]
