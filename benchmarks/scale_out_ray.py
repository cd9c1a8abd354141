"""Record streams on Ray Data against the same command run locally: records/s of `--engine local`, and of
`--engine ray` with 1 and 2 CPUs, on `simplify run` and `score-code score`, in one run.

Usage:  python benchmarks/scale_out_ray.py [--sizes 3000 24000] [--code-sizes 300 2400] [--repeats 1]

The anchor is `--engine local` (the command as everyone runs it). Each configuration runs at two input
sizes; records/s = (LONG − SHORT) / (wall(LONG) − wall(SHORT)) is the steady-state rate with process
start-up and Ray's own start-up (several seconds) removed, and the wall time of the LONG run is reported
beside it, start-up included, because that is what a user waits for. Inputs: seeded random expressions
(synthetic, the generator of `simplify bench`) and real Python source files of this interpreter's
standard library (one file = one record), repeated to the size needed. On a 2-core machine Ray's
driver, raylet and workers share the two cores with the work, so the ratios show Ray's overhead here,
not the speed-up of a cluster.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from _results import record

ENGINES = {"local": [], "ray-1cpu": ["--engine", "ray", "--num-cpus", "1"],
           "ray-2cpu": ["--engine", "ray", "--num-cpus", "2"]}


def _exe() -> str:
    return shutil.which("mlx26", path=os.path.dirname(sys.executable)) or "mlx26"


def _expressions(folder: Path, n: int) -> Path:
    import json

    from mlx26.core.simplify.bench import random_expressions

    path = folder / f"exprs-{n}.jsonl"
    exprs = random_expressions(n, seed=0, max_ops=10)
    path.write_text("".join(json.dumps({"prefix": " ".join(e)}) + "\n" for e in exprs), encoding="utf-8")
    return path


def _sources(folder: Path, n: int) -> Path:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if p.stat().st_size < 60_000)
    out = folder / f"src-{n}"
    out.mkdir()
    for i in range(n):
        source = files[i % len(files)]
        (out / f"{i:05d}_{source.name}").write_bytes(source.read_bytes())
    return out


def _wall(argv: list[str], repeats: int) -> tuple[float, str]:
    """(fastest wall time, sha256 of stdout): the outputs of both engines must be the same bytes."""
    env = {**os.environ, "MLX26_THREADS": "1"}
    best, digest = None, ""
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env=env)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"failed ({done.returncode}): {' '.join(argv)}\n{done.stderr.decode()[-1500:]}")
        best, digest = (wall if best is None else min(best, wall)), hashlib.sha256(done.stdout).hexdigest()
    assert best is not None
    return best, digest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs=2, default=[3000, 24000], metavar=("SHORT", "LONG"),
                    help="records of simplify run")
    ap.add_argument("--code-sizes", type=int, nargs=2, default=[300, 2400], metavar=("SHORT", "LONG"),
                    help="files of score-code score (whole stdlib modules: ~100× the work of an expression)")
    ap.add_argument("--repeats", type=int, default=1, help="runs per point; the fastest counts")
    args = ap.parse_args(argv)
    sizes = {"simplify run": sorted(args.sizes), "score-code score": sorted(args.code_sizes)}
    exe = _exe()
    figures: dict = {"cores": os.cpu_count(), "sizes": sizes, "commands": {}}
    with tempfile.TemporaryDirectory(prefix="scale-out-ray-") as tmp:
        folder = Path(tmp)
        inputs = {"simplify run": {n: _expressions(folder, n) for n in sizes["simplify run"]},
                  "score-code score": {n: _sources(folder, n) for n in sizes["score-code score"]}}
        print(f"cores {os.cpu_count()} | sizes {sizes} records | rate = steady state, wall = LONG run incl. start-up")
        for command, by_size in inputs.items():
            short, long = sizes[command]
            rows = {}
            for engine, extra in ENGINES.items():
                runs = {n: _wall([exe, *command.split(), str(path), "--format", "jsonl", "-q", *extra],
                                 args.repeats) for n, path in by_size.items()}
                walls = {n: wall for n, (wall, _) in runs.items()}
                rate = (long - short) / max(1e-9, walls[long] - walls[short])
                rows[engine] = {"records_per_s": rate, "wall_long_s": walls[long], "wall_short_s": walls[short],
                                "stdout_sha256": {str(n): digest for n, (_, digest) in runs.items()}}
            base = rows["local"]
            for engine, row in rows.items():
                row["identical_to_local"] = row["stdout_sha256"] == base["stdout_sha256"]
                row["rate_over_local"] = row["records_per_s"] / base["records_per_s"]
                row["wall_over_local"] = row["wall_long_s"] / base["wall_long_s"]
                print(f"{command:17s} {engine:9s} {row['records_per_s']:10.0f} records/s  "
                      f"({row['rate_over_local']:.2f}x local)   wall {row['wall_long_s']:6.1f} s "
                      f"({row['wall_over_local']:.2f}x local)   same bytes as local: {row['identical_to_local']}")
            figures["commands"][command] = rows
    figures["ray_2cpu_over_1cpu"] = {c: r["ray-2cpu"]["records_per_s"] / r["ray-1cpu"]["records_per_s"]
                                     for c, r in figures["commands"].items()}
    figures["all_identical"] = all(r["identical_to_local"] for rows in figures["commands"].values()
                                   for r in rows.values())
    figures["simplify_ray2_rate_over_local"] = figures["commands"]["simplify run"]["ray-2cpu"]["rate_over_local"]
    figures["score_code_ray2_rate_over_local"] = figures["commands"]["score-code score"]["ray-2cpu"]["rate_over_local"]
    record("scale_out_ray", figures, data=[
        {"name": "synthetic", "source": "seeded random expressions (simplify bench's generator, seed 0)"},
        {"name": "python-stdlib", "source": "this interpreter's standard-library *.py files (real code), "
         "repeated to size"}])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
