"""Wall time of ``mlx26 --help`` against the interpreter's own start-up, in one run.

    python benchmarks/cli_startup.py [--repeats 15]

Absolute times on a shared 2-core machine are noise; the ratios are the figure. Goal: the
``--help`` median under 0.3 s, i.e. a small multiple of a bare ``python -c pass``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

from _results import record


def wall(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    exe = shutil.which("mlx26", path=os.path.dirname(sys.executable)) or "mlx26"
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
        "mlx26 --help": [exe, "--help"],
        "mlx26 --version": [exe, "--version"],
        "mlx26 io convert --help": [exe, "io", "convert", "--help"],
    }
    print(f"cores: {os.cpu_count()}  repeats: {args.repeats}  (median wall time)")
    base = wall(cases["python -c pass"], args.repeats)
    help_time = None
    figures: dict = {"repeats": args.repeats, "cases": {}}
    for name, cmd in cases.items():
        t = wall(cmd, args.repeats)
        if name == "mlx26 --help":
            help_time = t
        figures["cases"][name] = {"median_s": t, "over_python": t / base}
        print(f"{name:28s} {t * 1000:8.1f} ms   {t / base:5.2f}x python start-up")
    assert help_time is not None
    figures.update(help_s=help_time, help_over_python=help_time / base,
                   subcommand_help_s=figures["cases"]["mlx26 io convert --help"]["median_s"],
                   load_avg_1min=os.getloadavg()[0])
    record("cli_startup", figures, data=[{"name": "none", "source": "no data: wall time of process start-up"}])
    verdict = "meets" if help_time < 0.3 else "MISSES"
    print(f"mlx26 --help: {help_time:.3f} s — {verdict} the < 0.3 s goal")


if __name__ == "__main__":
    main()
