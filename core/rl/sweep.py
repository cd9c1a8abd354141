"""Seed sweeps and their statistics (``mlx26 rl sweep``, ``mlx26 rl plot``); no paper.

* :func:`parse_seeds` — ``"0-4"``, ``"0,2,7"`` or ``"3"``;
* :func:`run_sweep` — one ``train rl`` run per (algorithm, seed), sequentially, in ``ROOT/<algo>-s<seed>``;
* :func:`summarize` — one row per algorithm (and env): the final evaluation's metrics over seeds as
  mean, standard deviation and a two-sided Student-t confidence interval (mean ± t·s/√n);
* :func:`curves` — per algorithm, a metric against the step, mean ± t-interval over the seeds at
  the steps every seed logged (what ``rl plot`` draws).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError

FINAL_METRICS = ("eval_return", "eval_success", "eval_length")


def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    parts = str(text).split(",")
    for part in parts:
        part = part.strip()
        if not part and len(parts) > 1:
            raise InputError(f"--seeds has an empty item: '{text}'", "write e.g. 0,1,2 or 0-4")
        lo, dash, hi = part.partition("-")
        try:
            if dash:
                a, b = int(lo), int(hi)
                if b < a:
                    raise ValueError
                seeds.extend(range(a, b + 1))
            elif part:
                seeds.append(int(part))
        except ValueError:
            raise InputError(f"--seeds must look like 0-4 or 0,1,2, got '{text}'") from None
    if not seeds or min(seeds) < 0:
        raise InputError(f"--seeds must name seeds ≥ 0, got '{text}'")
    if len(set(seeds)) != len(seeds):
        raise InputError(f"--seeds repeats a seed: '{text}'")
    return seeds


def t_interval(values: Sequence[float], level: float = 0.95) -> dict[str, float | int | None]:
    """Mean, sample sd and the Student-t interval (None for n < 2)."""
    from scipy.stats import t

    n = len(values)
    mean = sum(values) / n if n else math.nan
    if n < 2:
        return {"mean": mean, "sd": None, "ci_low": None, "ci_high": None, "n": n}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return {"mean": mean, "sd": sd, "ci_low": mean - half, "ci_high": mean + half, "n": n}


def final_eval(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    last = None
    for r in records:
        if r.get("phase") == "eval":
            last = r
    return last


def group_key(run: Mapping[str, Any], by: str = "algo") -> str:
    if by == "algo":
        return str(run["algo"])
    if by == "run":
        return Path(run["folder"]).name
    value = run["config"].get("hp", {}).get(by, run["config"].get(by))
    return f"{run['algo']} {by}={value}"


def summarize(runs: Sequence[Mapping[str, Any]], metrics: Sequence[str] = FINAL_METRICS, level: float = 0.95,
              by: str = "algo") -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for run in runs:
        groups.setdefault((group_key(run, by), str(run["env"])), []).append(run)
    rows = []
    for (name, env), members in groups.items():
        finals = [(run, final_eval(run["records"])) for run in members]
        done = [(run, f) for run, f in finals if f is not None]
        row: dict[str, Any] = {"group": name, "env": env, "seeds": sorted(run["seed"] for run, _ in done),
                               "runs_without_eval": len(finals) - len(done), "ci_level": level}
        for m in metrics:
            vals = [float(f[m]) for _, f in done if isinstance(f.get(m), (int, float))]
            if not vals:
                continue
            stats = t_interval(vals, level)
            row.update({f"{m}_{k}": v for k, v in stats.items() if k != "n"})
        row["n"] = len(done)
        rows.append(row)
    return rows


def unique_runs(runs: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], int]:
    """The runs with repeated folders (same resolved path) dropped, and how many were dropped."""
    seen: set[str] = set()
    out = []
    for run in runs:
        key = str(Path(run["folder"]).resolve())
        if key not in seen:
            seen.add(key)
            out.append(run)
    return out, len(runs) - len(out)


def check_group_by(runs: Sequence[Mapping[str, Any]], by: str) -> None:
    if by in ("algo", "run"):
        return
    names = sorted({k for run in runs for k in run["config"].get("hp", {})}
                   | {k for run in runs for k, v in run["config"].items() if not isinstance(v, (dict, list))})
    if not any(by in run["config"].get("hp", {}) or by in run["config"] for run in runs):
        raise InputError(f"--group-by '{by}' is not a hyperparameter of these runs",
                         f"valid: algo, run, {', '.join(names)}")


def check_distinct_seeds(runs: Sequence[Mapping[str, Any]], by: str = "algo") -> None:
    """Refuse two runs of a group with the same algorithm and seed (the CI would be over copies)."""
    seen: dict[tuple[str, str, Any], str] = {}
    for run in runs:
        key = (group_key(run, by), str(run["algo"]), run["seed"])
        if key in seen:
            raise InputError(f"{seen[key]} and {run['folder']} are both {run['algo']} seed {run['seed']} in group "
                             f"'{key[0]}': the interval would be over copies",
                             "give one run per seed (or --group-by run)")
        seen[key] = str(run["folder"])


def curves(runs: Sequence[Mapping[str, Any]], metric: str, level: float = 0.95,
           by: str = "algo") -> dict[str, dict[str, list]]:
    """``{group: {"step", "mean", "ci_low", "ci_high", "n"}}`` at the steps every seed of the group logged."""
    check_group_by(runs, by)
    groups: dict[str, list[dict[int, float]]] = {}
    for run in runs:
        series = {int(r["step"]): float(r[metric]) for r in run["records"]
                  if isinstance(r.get(metric), (int, float)) and not isinstance(r.get(metric), bool)
                  and "step" in r}
        if series:
            groups.setdefault(group_key(run, by), []).append(series)
    if not groups:
        raise InputError(f"no run logged the metric '{metric}'",
                         "eval metrics need --eval-every N; train metrics are logged every log_every steps "
                         "(--set log_every=N) and at the last step; see metrics.jsonl for names")
    out = {}
    for name, members in groups.items():
        steps = sorted(set.intersection(*(set(s) for s in members)))
        if not steps:
            raise InputError(f"the runs of group '{name}' share no logged step of '{metric}'",
                             "log them with the same --eval-every / log_every, or plot them with --group-by run")
        rows = [t_interval([s[x] for s in members], level) for x in steps]
        out[name] = {"step": steps, "mean": [r["mean"] for r in rows], "ci_low": [r["ci_low"] for r in rows],
                     "ci_high": [r["ci_high"] for r in rows], "n": len(members)}
    return out


def run_sweep(algos: Sequence[str], env: str, seeds: Sequence[int], root: str | Path, *,
              overrides: Mapping[str, Any] | None = None, force: bool = False,
              **common: Any) -> Iterator[dict[str, Any]]:
    """Train every (algorithm, seed) in turn; yields ``{"run", "algo", "seed", **final eval}`` per run."""
    from mlx26.core.rl import runner

    configs = []
    for algo in algos:  # every config is checked before the first run starts
        for seed in seeds:
            out = str(Path(root) / f"{algo}-s{seed}")
            cfg = runner.build_config(algo, env, overrides, seed=seed, out=out, **common)
            configs.append(cfg)
    for cfg in configs:
        runner.prepare_out(cfg.out, force=force, hint="add --force to overwrite the sweep's run folders, "
                           "or give another --out ROOT")
    for cfg in configs:
        runner.write_config(cfg.out, cfg)
        last = final_eval(runner.run(cfg)) or {}
        yield {"run": cfg.out, "algo": cfg.algo, "seed": cfg.seed,
               **{k: v for k, v in last.items() if k in FINAL_METRICS}}
