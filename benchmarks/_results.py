"""Machine-readable benchmark results: every ``make bench-…`` run writes ``benchmarks/results/<name>.json``.

The claims ledger (``mlx26 claims``, ``docs/claims.md``, the README's measured table) reads its figures
from these files only, so a figure printed in the docs can always be traced to the run that produced
it: the exact command, the commit (and whether the tree was dirty), the date, the machine and the data.
A benchmark calls :func:`record` once at the end with the figures its claims use; the file is written
atomically and replaces the previous run's.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(os.environ.get("MLX26_RESULTS_DIR", Path(__file__).resolve().parent / "results"))
REPO = Path(__file__).resolve().parent.parent


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpuinfo(field: str) -> str | None:
    """The first ``field`` line of /proc/cpuinfo (its value), or None where there is none."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(field):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    return _cpuinfo("model name") or platform.processor() or platform.machine()


# Vector extensions that change CPU timings by integer factors: machines that all report "AMD EPYC" differ here
# (bf16 GEMMs are native with avx512_bf16 / AMX and emulated without; a bf16 latency ratio from one is not the
# other's).
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_tile")


def _cpu_flags() -> list[str] | None:
    flags = _cpuinfo("flags")
    return None if flags is None else [f for f in ISA_FLAGS if f in set(flags.split())]


def machine() -> dict[str, Any]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"cores": os.cpu_count(), "cpu": _cpu_model(), "cpu_flags": _cpu_flags(), "platform": platform.platform(),
            "python": platform.python_version(), "torch": _version("torch"), "numpy": _version("numpy"),
            "load_avg_1min": load}


def _jsonable(value: Any) -> Any:
    """Figures as plain JSON: numpy scalars and arrays, tuples and paths become numbers, lists, strings."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return _jsonable(value.tolist())
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def record(name: str, figures: dict[str, Any], *, data: list[dict[str, str]], argv: list[str] | None = None,
           notes: str | None = None) -> Path:
    """Write ``benchmarks/results/<name>.json`` with ``figures`` and the provenance of this run.

    ``data`` names each dataset used and where it comes from: ``[{"name": "hitab-statcan", "source":
    "../shared/data/hitab-statcan (50 real StatCan tables)"}]``, or ``{"name": "synthetic", …}``.
    """
    argv = list(sys.argv if argv is None else argv)
    command = shlex.join(["python", os.path.relpath(argv[0], REPO) if os.path.isabs(argv[0]) else argv[0],
                          *argv[1:]])
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    payload = {
        "benchmark": name,
        "command": command,
        "commit": _git("rev-parse", "--short=12", "HEAD"),
        "dirty": bool(dirty) if dirty is not None else None,
        "date": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "machine": machine(),
        "data": data,
        "figures": _jsonable(figures),
    }
    if notes:
        payload["notes"] = notes
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    target = RESULTS_DIR / f"{name}.json"
    tmp = target.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    print(f"results: {os.path.relpath(target, Path.cwd())}", file=sys.stderr)
    return target
