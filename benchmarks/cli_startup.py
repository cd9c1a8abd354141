"""Wall time of ``mlx26 --help``, every subcommand's ``--help``, ``mlx26 info`` and early input errors,
against the interpreter's own start-up, in one run.

    python benchmarks/cli_startup.py [--repeats 15] [--sub-repeats 5]

Absolute times on a shared 2-core machine are noise; the ratios are the figure. Goals (issue 31):
``mlx26 --help`` median < 0.3 s, every subcommand ``--help`` < 0.4 s, ``mlx26 info`` ≤ 0.5 s, and an
unknown algorithm / env / checkpoint / zoo model reported "well under a second" (we use < 0.5 s).
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


# Early input errors (issue 31, "fast errors"): each must exit 2 before torch is imported.
FAST_ERRORS: dict[str, list[str]] = {
    "train rl --algo nosuch": ["train", "rl", "--algo", "nosuch"],
    "train rl --env NoSuchEnv-v0": ["train", "rl", "--env", "NoSuchEnv-v0", "--steps", "10"],
    "train rl --resume (no run folder)": ["train", "rl", "--resume", "--out", "no/such/run"],
    "zoo path nosuch": ["zoo", "path", "nosuch"],
    "quantize-moe --model nosuch": ["quantize-moe", "--model", "nosuch"],
    "profile-memory --model nosuch": ["profile-memory", "--model", "nosuch"],
    "train grpo --model nosuch": ["train", "grpo", "--model", "nosuch"],
    "select-batch train --resume (no checkpoint)": ["select-batch", "train", "--checkpoint", "no/such.pt", "--resume"],
}


def wall_rc(cmd: list[str], repeats: int) -> tuple[float, int]:
    times, rc = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        times.append(time.perf_counter() - start)
    return statistics.median(times), rc


def subcommand_paths() -> list[list[str]]:
    from mlx26.cli._reference import walk

    return [path for path, _ in walk() if path]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--sub-repeats", type=int, default=5, help="repeats per subcommand --help and per error")
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
    sub: dict[str, float] = {}
    for path in subcommand_paths():
        sub[" ".join(path)], _ = wall_rc([exe, *path, "--help"], args.sub_repeats)
    slowest = max(sub, key=sub.__getitem__)
    print(f"{len(sub)} subcommand --help pages: median of medians {statistics.median(sub.values()) * 1000:.1f} ms, "
          f"slowest {slowest!r} {sub[slowest] * 1000:.1f} ms ({sub[slowest] / base:.2f}x python)")
    info_time, _ = wall_rc([exe, "info", "--format", "json"], args.repeats)
    print(f"{'mlx26 info':28s} {info_time * 1000:8.1f} ms   {info_time / base:5.2f}x python start-up")
    errors: dict[str, dict] = {}
    for name, argv in FAST_ERRORS.items():
        t, rc = wall_rc([exe, *argv], args.sub_repeats)
        errors[name] = {"median_s": t, "over_python": t / base, "exit_code": rc}
        print(f"{name:44s} {t * 1000:8.1f} ms  exit {rc}")
    figures.update(subcommand_help={"pages": len(sub), "max_s": sub[slowest], "slowest": slowest,
                                    "median_s": statistics.median(sub.values()), "max_over_python": sub[slowest] / base},
                   info_s=info_time, info_over_python=info_time / base, errors=errors,
                   errors_max_s=max(e["median_s"] for e in errors.values()),
                   errors_all_exit_2=all(e["exit_code"] == 2 for e in errors.values()))
    record("cli_startup", figures, data=[{"name": "none", "source": "no data: wall time of process start-up"}])
    for label, value, goal in (("mlx26 --help", help_time, 0.3), ("slowest subcommand --help", sub[slowest], 0.4),
                               ("mlx26 info", info_time, 0.5), ("slowest early error", figures["errors_max_s"], 0.5)):
        print(f"{label}: {value:.3f} s — {'meets' if value < goal else 'MISSES'} the < {goal} s goal")


if __name__ == "__main__":
    main()
