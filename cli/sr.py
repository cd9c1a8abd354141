"""``mlx26 sr``: Flash-ANSR amortised symbolic regression on the simplify engine (Saegert & Köthe, ICML 2026).

Thin wrapper over ``mlx26.core.sr``; options and the CSV loader live in ``cli/_sr.py``.
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _sr as S
from mlx26.cli._errors import UsageError, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    InputFormat,
    InputFormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    check_output,
    emit,
    notice,
    resolve_output_format,
)
from mlx26.cli._plot import PlotOpt, check_plot, curves
from mlx26.core.sr.spec import BASELINES, SUITES

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)
A = OutputFormat.auto


EquivOpt = Annotated[bool, typer.Option("--equiv/--hash-only",
                                         help="Decontaminate with the equivalence layer too (a test skeleton up to "
                                         "re-parametrised constants, e.g. x1 + c*(x1 + c) = c*x1 + c); --hash-only "
                                         "keeps the two hash layers (faster, misses those).")]


@app.command("sample")
def sample_cmd(n: Annotated[int, typer.Option("--n", help="Skeletons to draw.", min=1, metavar="N")] = 10,
               max_ops: Annotated[int, typer.Option("--max-ops", help="Most operators per skeleton.", min=1, metavar="N")] = 6,
               max_vars: Annotated[int, typer.Option("--max-vars", help="Most variables (1..3).", min=1, max=3, metavar="N")] = 3,
               points: Annotated[int, typer.Option("--points", help="Also sample this many points (0: none).",
                                                   min=0, metavar="N")] = 0,
               decontaminate: Annotated[bool, typer.Option("--decontaminate/--no-decontaminate",
                                                           help="Drop skeletons of the test sets.")] = True,
               equiv: EquivOpt = True,
               operators: S.OpsOpt = None, seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
               force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Draw simplified skeletons from the training prior (SYNTHETIC), decontaminated against the test sets.

    \b
    Examples:
      mlx26 sr sample --n 5 --seed 0 --format jsonl
      mlx26 sr sample --n 3 --points 4 --format json
    """
    check_output(output, force)
    ops = S.operators(operators)
    import numpy as np
    from mlx26.core.simplify import to_infix
    from mlx26.core.sr.decontam import default_test_index
    from mlx26.core.sr.expr import n_constants
    from mlx26.core.sr.sampler import PriorConfig, sample_points, skeletons
    from mlx26.core.sr.train import heldout_problems

    cfg = PriorConfig(max_ops=max_ops, max_vars=max_vars, **({"operators": ops} if ops else {}))
    index = default_test_index([p.skeleton for p in heldout_problems()], use_equiv=equiv) if decontaminate else None
    rng = np.random.default_rng(seed)
    records = []
    for s in skeletons(50 * n, seed=seed, cfg=cfg):
        if index is not None and index.contaminated(s):
            continue
        rec = {"data": "SYNTHETIC", "skeleton": to_infix(s), "prefix": " ".join(s), "length": len(s),
               "constants": n_constants(s)}
        if points:
            p = sample_points(s, rng, points)
            if p is None:
                continue
            rec.update(values=[float(v) for v in p.constants], X=p.X.round(6).tolist(), y=p.y.round(6).tolist())
        records.append(rec)
        if len(records) == n:
            break
    if index is not None:
        how = f", {index.stats['dropped_equiv']} of them by the equivalence layer" if equiv else ", hash layers only"
        notice(f"sr sample: {index.stats['dropped']} of {index.stats['checked']} skeletons dropped as test-set "
               f"skeletons ({index.n_test} test keys{how})", quiet)
    emit(records, output, fmt, force=force, title="sr sample (SYNTHETIC)")


@app.command("train")
def train_cmd(save: Annotated[str, typer.Option("--save", help="Model folder to write (model.pt + manifest.json).",
                                                metavar="DIR")],
              steps: Annotated[int, typer.Option("--steps", min=1, metavar="N")] = 1200,
              batch: Annotated[int, typer.Option("--batch", min=1, metavar="N")] = 48,
              lr: Annotated[float, typer.Option("--lr", help="AdamW peak learning rate.", metavar="NUMBER")] = 2e-3,
              pool: Annotated[int, typer.Option("--pool", help="Prior skeletons drawn before decontamination.",
                                                min=1, metavar="N")] = 8000,
              equiv: EquivOpt = True,
              plot: PlotOpt = None,
              seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
              force: Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Replace an existing --save "
                                                  "folder, --output or --plot file.")] = False,
              quiet: QuietOpt = False) -> None:
    """Train the tiny Flash-ANSR model on CPU on the decontaminated SYNTHETIC prior stream.

    \b
    Examples:
      mlx26 sr train --save sr-model --steps 4 --pool 200 --force -q
    """
    from pathlib import Path

    check_output(output, force)
    check_plot(plot, force)
    if Path(save).exists() and not Path(save).is_dir():
        raise UsageError(f"--save {save} is a file, not a folder")
    if Path(save).exists() and not force:
        raise UsageError(f"{save} exists", "pass --force to replace it")
    import math

    if not (math.isfinite(lr) and lr > 0):
        raise UsageError(f"--lr must be a finite number > 0, not {lr}")
    S.deps()
    from mlx26.core.sr.train import TrainConfig, train
    from mlx26.core.sr.train import save as save_model

    cmd = (f"mlx26 sr train --steps {steps} --batch {batch} --lr {lr} --pool {pool} --seed {seed} --save {save}"
           + ("" if equiv else " --hash-only"))
    from mlx26.cli._progress import Bar

    with Bar("sr train", total=steps, unit="steps", quiet=quiet, status=f"sampling and decontaminating a pool of {pool} skeletons…") as bar:
        model, manifest = train(TrainConfig(steps=steps, batch=batch, lr=lr, pool=pool, seed=seed, equiv=equiv),
                                log=None if quiet else lambda m: notice(f"sr train: {m}"), command=cmd,
                                progress=(lambda step, loss: bar.update(step, status=f"loss {loss:.3f}"))
                                if bar.active else None)
    save_model(model, manifest, Path(save))
    dc = manifest["data"]["decontam"]
    notice(f"sr train: {dc['dropped']} of {dc['checked']} pool skeletons dropped as test-set skeletons ("
           + (f"{dc['dropped_equiv']} of them by the equivalence layer)" if equiv else "hash layers only)"), quiet)
    t = manifest["train"]
    curves(plot, t.get("curve", []), title="sr train (SYNTHETIC prior; loss averaged over each 1/20 of the run)",
           force=force, quiet=quiet)
    emit({"data": "SYNTHETIC", "save": save, "parameters": manifest["parameters"], "steps": steps,
          "loss_first": t["loss_first"], "loss_last": t["loss_last"], "loss_drop": t["loss_drop"],
          "pool_kept": manifest["data"]["pool_kept"], "dropped_test_skeletons": manifest["data"]["decontam"]["dropped"],
          "wall_s": t["wall_s"], "seed": seed}, output, fmt, force=force, title="sr train (SYNTHETIC)")


@app.command("fit")
def fit_cmd(input: Annotated[str | None, typer.Argument(help="CSV/TSV/JSON(L) table, or - for stdin.",
                                                       metavar="INPUT")] = None,
            target: Annotated[str, typer.Option("--target", help="Target column name.", metavar="TEXT")] = "y",
            x: Annotated[list[str] | None, typer.Option("--x", help="Input column (repeatable; default: all "
                                                        "but the target, at most 3).", metavar="COL")] = None,
            problem: Annotated[str | None, typer.Option("--problem", help="Instead of INPUT: points of a "
                                                        "benchmark formula (nguyen-1 .. nguyen-12, feynman-...).", metavar="TEXT")
                               ] = None,
            model: S.ModelOpt = S.DEFAULTS["model"], sampler: S.SamplerOpt = "model", candidates: S.CandOpt = 256,
            operators: S.OpsOpt = None, max_constants: S.MaxConstOpt = 4,
            parsimony: S.ParsOpt = S.DEFAULTS["parsimony"], restarts: S.RestartsOpt = 2,
            input_format: InputFormatOpt = InputFormat.auto, seed: SeedOpt = 0, output: OutputOpt = None,
            fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Fit an expression to a table: best (score log10 FVU + λ·length) and the Pareto front.

    JSON output: {"best": {"expression", "fvu", "length"}, "pareto": [...]}; a table shows the front.

    \b
    Examples:
      mlx26 sr fit --problem nguyen-1 --candidates 64 --format json
      mlx26 sr fit data.csv --target y --x x1 --candidates 64
    """
    check_output(output, force)
    which = S.sampler(sampler)
    ops = S.operators(operators)
    if (input is None) == (problem is None):
        raise UsageError("give INPUT or --problem (one of them)", "e.g. mlx26 sr fit data.csv --target y")
    S.deps()
    dropped, source = 0, input
    if problem is not None:
        from mlx26.core.sr.evaluate import suite_problems

        allp = {p[0]: p for s in ("nguyen", "fastsrb") for p in suite_problems(s, seed=seed)}
        if problem not in allp:
            raise unknown_name("problem", problem, allp)
        X, y, cols = allp[problem][2], allp[problem][3], [f"x{i + 1}" for i in range(allp[problem][2].shape[1])]
        source = f"{problem} (points of the formula)"
    else:
        X, y, cols, dropped = S.read_table(input, target, x, input_format, quiet)
    from mlx26.core.sr.infer import search

    m = S.load_model(model, which)
    r = search(X, y, model=m, sampler=which, n_candidates=candidates, seed=seed, operators=ops,
               parsimony=parsimony, restarts=restarts, max_constants=max_constants)
    names = {f"x{i + 1}": c for i, c in enumerate(cols)}
    best = _named(r["best"].record(), names)
    front = [_named(c.record(), names) for c in r["pareto"]]
    notice(f"sr fit: best {best['expression']}  (FVU {best['fvu']:.3g}, length {best['length']})", quiet)
    result = {"best": best, "pareto": front, "columns": names, "rows": int(len(y)), "dropped_rows": dropped,
              "source": source, "sampler": which, "model": model if which == "model" else None,
              "candidates": candidates, "unique_skeletons": r["n_unique"], "seed": seed}
    if resolve_output_format(fmt, output, True) == "json":
        emit(result, output, fmt, force=force)
    else:
        rows = [{**c, "best": c["skeleton"] == best["skeleton"]} for c in front]
        emit(rows, output, fmt, force=force, title=f"sr fit: Pareto front (best: {best['expression']})")


def _named(rec: dict, names: dict) -> dict:
    import re

    if all(k == v for k, v in names.items()):
        return rec
    sub = lambda s: re.sub(r"\bx(\d+)\b", lambda m: names.get(m.group(0), m.group(0)), s)  # noqa: E731
    return {**rec, "expression": sub(rec["expression"])}


@app.command("eval")
def eval_cmd(suite: Annotated[str, typer.Option("--suite", help="nguyen | nguyen8 | fastsrb | synthetic "
                                                "(100 held-out SYNTHETIC problems).", metavar="TEXT")] = "nguyen",
             baseline: Annotated[list[str] | None, typer.Option("--baseline", help="Also run pyoperon / gplearn "
                                                                "(repeatable).", metavar="TEXT")] = None,
             sampler: Annotated[list[str] | None, typer.Option("--sampler", help="model and/or prior "
                                                               "(repeatable; default model).", metavar="TEXT")] = None,
             n: Annotated[int, typer.Option("--n", help="Problems of the synthetic suite.", min=1, max=100, metavar="N")] = 100,
             budget: Annotated[str, typer.Option("--budget", help="Baseline budget: tiny | small.", metavar="TEXT")] = "small",
             per_problem: Annotated[bool, typer.Option("--per-problem", help="One record per problem and method.")
                                    ] = False,
             model: S.ModelOpt = S.DEFAULTS["model"], candidates: S.CandOpt = 256, max_constants: S.MaxConstOpt = 4,
             parsimony: S.ParsOpt = S.DEFAULTS["parsimony"], restarts: S.RestartsOpt = 2, seed: SeedOpt = 0,
             output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Recovery (numeric: FVU <= float32 eps on held-out points; symbolic: equivalence checker), length, time.

    \b
    Examples:
      mlx26 sr eval --suite nguyen8 --candidates 32 --format json
      mlx26 sr eval --suite nguyen8 --candidates 32 --baseline pyoperon --baseline gplearn --budget tiny
    """
    check_output(output, force)
    if suite not in SUITES:
        raise unknown_name("suite", suite, SUITES)
    for b in baseline or []:
        if b not in BASELINES:
            raise unknown_name("baseline", b, BASELINES)
    from mlx26.core.sr.baselines import BUDGETS

    if budget not in BUDGETS:
        raise unknown_name("budget", budget, BUDGETS)
    samplers = [S.sampler(s) for s in (sampler or ["model"])]
    S.deps()
    for b in baseline or []:
        S.require_baseline(b)
    from mlx26.core.sr import evaluate as E

    probs = E.suite_problems(suite, seed=seed, n=n)
    m = S.load_model(model, "model") if "model" in samplers else None
    rows = []
    for s in samplers:
        notice(f"sr eval: flash-ansr/{s} on {len(probs)} {suite} problems", quiet)
        rows += E.run_ours(probs, m, s, candidates, seed=seed, parsimony=parsimony, restarts=restarts,
                           max_constants=max_constants)
    for b in baseline or []:
        notice(f"sr eval: {b} on {len(probs)} {suite} problems", quiet)
        rows += E.run_baseline(probs, b, seed=seed, budget=budget)
    tag = "SYNTHETIC" if suite == "synthetic" else "formula points"

    def which(r: dict) -> dict:  # the model the flash-ansr/model rows used (a shipped name or a folder)
        return {"model": model} if r["method"] == "flash-ansr/model" else {}

    if per_problem:
        emit([{"data": tag, **r, **which(r)} for r in rows], output, fmt, force=force, title=f"sr eval {suite}")
    else:
        emit([{"data": tag, "suite": suite, **r, **which(r)} for r in E.summarise(rows)], output, fmt, force=force,
             title=f"sr eval {suite} ({tag}; candidates={candidates})")
