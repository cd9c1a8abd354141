"""``mlx26 dp-mix``: calibrate, compare, verify and apply Gaussian-mixture DP noise.

Thin wrapper over ``mlx26.core.dp_mix`` (Liu, Selvi & Wiesemann, ICML 2026).
"""

from __future__ import annotations

import math
from typing import Annotated

import typer
from mlx26.cli import _complete as complete
from mlx26.cli._engine import BatchSizeOpt, EngineOpt, NumCpusOpt, RayAddressOpt, check_engine, run_engine
from mlx26.cli._errors import RuntimeFailure, UsageError, unknown_name
from mlx26.cli._io import (
    VALUE_KEY,
    ColumnsOpt,
    ConfigOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    InputArg,
    InputFormat,
    InputFormatOpt,
    OutputFormat,
    OutputOpt,
    PrintConfigOpt,
    QuietOpt,
    RecordStream,
    answer_in_kind,
    check_output,
    emit,
    notice,
    parse_number,
    print_config_requested,
    read_records,
)
from mlx26.cli._plot import DpMixPlotOpt, ForcePlotOpt, check_plot, wrote
from mlx26.core.dp_mix.spec import MECHANISMS, MIXTURES, OBJECTIVES

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)

EpsOpt = Annotated[float, typer.Option("--eps", "-e", help="Privacy parameter ε > 0.", metavar="NUMBER")]
DeltaOpt = Annotated[float, typer.Option("--delta", "-d", help="Privacy parameter δ in (0, 1).", metavar="NUMBER")]
SensOpt = Annotated[float, typer.Option("--sensitivity", "-s", help="Sensitivity Δ of the query (> 0).", metavar="NUMBER")]
MechOpt = Annotated[str, typer.Option("--mechanism", "-m", help=" | ".join(MECHANISMS) + ".", metavar="MECHANISM",
                                      autocompletion=complete.dp_mechanisms)]
KOpt = Annotated[str, typer.Option("--K", help="Mixture half-width for multi: auto or an integer ≥ 1.", metavar="TEXT")]
ObjOpt = Annotated[str, typer.Option("--objective", help="Cost that optimised/best minimise: l1 (E|Z|) | l2 (E Z²).", metavar="TEXT")]
VerifyMechOpt = Annotated[str, typer.Option("--mechanism", "-m", help=" | ".join(MIXTURES) + ".",
                                            metavar="MECHANISM", autocompletion=complete.dp_mixtures)]


def _mechanism(name: str, allowed: tuple[str, ...] = MECHANISMS) -> str:
    if name not in allowed:
        raise unknown_name("mechanism", name, allowed)
    return name


def _objective(name: str) -> str:
    if name not in OBJECTIVES:
        raise unknown_name("objective", name, OBJECTIVES)
    return name


def _k(value: str | None) -> int | str | None:
    if value is None or value == "auto":
        return value
    try:
        k = int(value)
    except ValueError:
        raise UsageError(f"--K must be 'auto' or an integer ≥ 1, not '{value}'.") from None
    if k < 1:
        raise UsageError(f"--K must be ≥ 1, got {k}.")
    return k


@app.command("calibrate")
def calibrate(
    eps: EpsOpt,
    delta: DeltaOpt,
    sensitivity: SensOpt = 1.0,
    mechanism: MechOpt = "multi",
    k: KOpt = "auto",
    objective: ObjOpt = "l1",
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Smallest noise scale σ that gives (ε, δ)-DP, with its l1/l2 cost and the certified δ.

    --mechanism best returns the cheapest (in --objective) of every mechanism implemented.

    \b
    Examples:
      mlx26 dp-mix calibrate -e 1 -d 1e-5
      mlx26 dp-mix calibrate -e 4 -d 1e-5 -s 2 --mechanism quasi --format json
      mlx26 dp-mix calibrate -e 16 -d 1e-6 --mechanism best
    """
    _mechanism(mechanism)
    _objective(objective)
    check_output(output, force)
    from mlx26.core import dp_mix

    result = dp_mix.calibrate(mechanism, eps, delta, sensitivity, K=_k(k) if mechanism == "multi" else None,
                              objective=objective)
    emit(result.to_dict(), output, fmt, force=force, title=f"dp-mix calibrate ({mechanism})")


# A terminal shows these first (as many as fit); --columns all shows every field.
COMPARE_COLUMNS = ("mechanism", "eps", "l1_ratio_to_gaussian", "l2_ratio_to_gaussian", "sigma", "K", "l1", "l2",
                   "gap_closed_l1", "gap_closed_l2", "note")


@app.command("compare")
def compare(
    ctx: typer.Context,
    eps: Annotated[list[float] | None, typer.Option("--eps", "-e", help="ε; repeat for a grid.", metavar="NUMBER")] = None,
    delta: Annotated[list[float] | None, typer.Option("--delta", "-d", help="δ; repeat for a grid.", metavar="NUMBER")] = None,
    sensitivity: SensOpt = 1.0,
    grid: Annotated[str | None, typer.Option("--grid", help="File of eps,delta rows (CSV/JSONL/JSON).",
                                             metavar="FILE")] = None,
    plot: DpMixPlotOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForcePlotOpt = False,
    config: ConfigOpt = None,
    print_config: PrintConfigOpt = False,
) -> None:
    """One row per mechanism: l1, l2, ratio to the analytic Gaussian, and the gap closed.

    Mechanisms: multi, quasi, gaussian (analytic), laplace / truncated laplace, staircase.
    Repeated -e and -d give their full grid; --grid reads (eps, delta) pairs from a file.
    --plot FILE.png draws the densities at the first (ε, δ) and l1/l2 against ε at its δ.

    \b
    Examples:
      mlx26 dp-mix compare -e 4 -d 1e-5
      mlx26 dp-mix compare -e 1 -e 4 -d 1e-3 -d 1e-6 --format csv
      mlx26 dp-mix compare -e 4 -d 1e-5 --plot compare.png --force -q
    """
    if print_config_requested(ctx, print_config):
        return
    check_output(output, force)
    check_plot(plot, force)
    points = _grid_points(grid) if grid else [(e, d) for e in (eps or []) for d in (delta or [])]
    if not points:
        raise UsageError("give -e and -d (repeatable), or --grid FILE.")
    from mlx26.core import dp_mix

    for e, d in points:
        dp_mix.validate_params(e, d, sensitivity)
    rows = [{"eps": e, "delta": d, **row} for e, d in points for row in dp_mix.compare(e, d, sensitivity)]
    emit(rows, output, fmt, force=force, title="dp-mix compare", columns=COMPARE_COLUMNS)
    if plot:
        from mlx26.core.dp_mix.figure import draw

        wrote(draw(plot, points, rows, sensitivity, force=force), quiet)


def _finite_float(value: float | int | None) -> float | None:
    """A float, or None for a missing, NaN, infinite or float-overflowing (huge integer) value."""
    try:
        x = float(value) if value is not None else None
    except OverflowError:
        return None
    return x if x is not None and math.isfinite(x) else None


def _grid_points(path: str) -> list[tuple[float, float]]:
    points = []
    for number, record in enumerate(read_records(path), 1):
        e, d = _finite_float(parse_number(record.get("eps"))), _finite_float(parse_number(record.get("delta")))
        if e is None or d is None:
            raise UsageError(f"{path} row {number}: needs finite numeric 'eps' and 'delta' columns.")
        points.append((e, d))
    return points


@app.command("verify")
def verify(
    sigma: Annotated[float, typer.Option("--sigma", help="Noise scale σ to check.", metavar="NUMBER")],
    eps: EpsOpt,
    delta: DeltaOpt,
    mechanism: VerifyMechOpt = "multi",
    sensitivity: SensOpt = 1.0,
    k: Annotated[int | None, typer.Option("--K", help="Mixture half-width (multi); default: auto.", metavar="N")] = None,
    backend: Annotated[str, typer.Option("--backend", help="native | dp-accounting (cross-check).", metavar="TEXT")] = "native",
    rigorous: Annotated[bool, typer.Option("--rigorous", help="Also prove an upper bound on δ with interval "
                                           "arithmetic (mpmath iv; slow).")] = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Certified worst-case δ of a mechanism at σ over all shifts in [0, Δ]; exit 1 if it exceeds δ.

    \b
    Examples:
      mlx26 dp-mix verify --mechanism gaussian --sigma 3.75 -e 1 -d 1e-5
      mlx26 dp-mix verify --mechanism multi --sigma 0.36 -e 1 -d 1e-5 --format json
      mlx26 dp-mix verify --mechanism gaussian --sigma 1.2 -e 4 -d 1e-5 --rigorous
    """
    _mechanism(mechanism, MIXTURES)
    if backend not in ("native", "dp-accounting"):
        raise unknown_name("backend", backend, ("native", "dp-accounting"))
    if k is not None and k < 1:
        raise UsageError(f"--K must be ≥ 1, got {k}.")
    if not sigma > 0:
        raise UsageError(f"--sigma must be positive, got {sigma}.")
    check_output(output, force)
    from mlx26.core import dp_mix

    K = k if mechanism == "multi" else None
    achieved, worst_shift, passed = dp_mix.verify(mechanism, sigma, eps, delta, sensitivity, K=K)
    result = {"mechanism": mechanism, "sigma": sigma, "K": dp_mix.resolve_K(mechanism, eps, delta, K),
              "eps": eps, "delta": delta, "sensitivity": sensitivity, "delta_achieved": achieved,
              "worst_shift": worst_shift, "passed": passed, "backend": backend}
    if backend == "dp-accounting":
        from mlx26.cli._errors import require

        require("dp_accounting", "dp")
        result["delta_dp_accounting"] = dp_mix.crosscheck_dp_accounting(mechanism, sigma, eps, sensitivity, K=K,
                                                                         delta=delta)
    proved = None
    if rigorous:
        from mlx26.cli._errors import require

        require("mpmath", "dp")
        from mlx26.core.dp_mix.rigorous import rigorous_delta

        r = rigorous_delta(mechanism, sigma, eps, sensitivity, K=dp_mix.resolve_K(mechanism, eps, delta, K))
        proved = r.upper <= delta
        result.update({"delta_rigorous_upper": r.upper, "rigorous_proved": proved,
                       "rigorous_seconds": r.seconds, "rigorous_cells": r.cells})
    emit(result, output, fmt, force=force, title="dp-mix verify")
    if not passed:
        extra = (f"; the rigorous bound is {result['delta_rigorous_upper']:.3g}" if rigorous else "")
        raise RuntimeFailure(f"not private: the certified δ(σ = {sigma:g}) = {achieved:.3g} at shift "
                             f"{worst_shift:.3g} exceeds the target δ = {delta:.3g} by {achieved / delta:.3g}×"
                             f"{extra}.", hint="use `mlx26 dp-mix calibrate` for the smallest safe σ")
    if proved is False:
        up = result["delta_rigorous_upper"]
        raise RuntimeFailure(f"not proved: the rigorous interval bound δ ≤ {up:.3g} is {up / delta:.3g}× the target "
                             f"δ = {delta:.3g} ({result['rigorous_cells']} cells); the floating-point certificate "
                             f"passed (δ = {achieved:.3g} ≤ target), so this is no violation found, only no proof.",
                             hint="the interval bound is first order in the cell widths: a σ about 5-10% larger is "
                                  "usually proved (Gaussian); for multi the float certificate is the practical one")


@app.command("noise")
def noise(
    input: InputArg,
    eps: EpsOpt,
    delta: DeltaOpt,
    sensitivity: SensOpt,
    mechanism: MechOpt = "multi",
    column: Annotated[str | None, typer.Option("--column", "-c", help="Column to privatise.", metavar="TEXT")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="For tests only: seeded noise is NOT private.", min=0, metavar="N")
                    ] = None,
    skip_bad: Annotated[bool, typer.Option("--skip-bad", help="Drop rows whose cell is not a finite number.")
                        ] = False,
    objective: ObjOpt = "l1",
    secure: Annotated[bool, typer.Option("--secure", help="Snapped release on a power-of-two grid, drawn exactly "
                                         "from os.urandom integers (floating-point safe).")] = False,
    budget: Annotated[str | None, typer.Option("--budget", help="JSON budget file to charge (ε, δ) to, once per "
                                               "released value (see --charge); refuses once spent.",
                                               metavar="FILE")] = None,
    charge: Annotated[str, typer.Option("--charge", help="per-value: charge n·(ε, δ) for n values (a neighbour may "
                                        "change them all) | once: charge (ε, δ) once, valid only if a neighbouring "
                                        "dataset changes at most one value (disjoint groups).", metavar="TEXT")] = "per-value",
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    batch_size: BatchSizeOpt = 4096,
    num_cpus: NumCpusOpt = None,
    input_format: InputFormatOpt = InputFormat.auto,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Add calibrated noise to one numeric column (or to plain numbers, one a line).

    Noise comes from OS entropy. The whole input is checked before anything is written:
    a non-numeric, NaN or infinite cell is an error naming its line (or, with --skip-bad,
    the row is dropped and counted on stderr). Output keeps the input's format when piped.
    Noise is drawn per block of 1024 values from (seed, block), so --engine ray releases
    the same values as --engine local for a fixed --seed.

    \b
    Examples:
      printf '3\\n5\\n8\\n' | mlx26 dp-mix noise - -e 1 -d 1e-5 -s 1
      printf 'name,age\\nann,41\\nbob,37\\n' | mlx26 dp-mix noise - -e 2 -d 1e-6 -s 1 --column age
      printf '3\\n5\\n' | mlx26 dp-mix noise - -e 1 -d 1e-5 -s 1 --secure --budget budget.json

    With --budget, n released values cost n·(ε, δ) (basic composition) unless --charge once.
    """
    _mechanism(mechanism)
    _objective(objective)
    if secure and seed is not None:
        raise UsageError("--secure draws from os.urandom and cannot be seeded; drop --seed.")
    if charge not in ("per-value", "once"):
        raise unknown_name("charge", charge, ("per-value", "once"))
    if budget is not None and seed is not None:
        raise UsageError("--seed makes the release reproducible and NOT private; it cannot be charged to --budget.",
                         hint="drop --seed for a real release")
    check_engine(engine, ray_address, inputs=[input], num_cpus=num_cpus)
    check_output(output, force)
    from mlx26.core import dp_mix

    dp_mix.validate_params(eps, delta, sensitivity)
    source = RecordStream(input, input_format)
    rows = list(source)
    target = _noise_column(rows, column, source.name)
    kept, values, skipped = [], [], 0
    for line, record in rows:
        value = _finite_float(parse_number(record.get(target)))
        if value is None:
            if not skip_bad:
                raise UsageError(f"{source.name} line {line}: column '{target}' is {record.get(target)!r}, "
                                 "not a finite number.", hint="fix the row or pass --skip-bad to drop it")
            skipped += 1
            continue
        kept.append(record)
        values.append(value)
    if skipped:
        notice(f"dp-mix noise: skipped {skipped} row(s) without a finite number in '{target}'.", quiet)
    if seed is not None:
        notice("Warning: --seed makes the noise reproducible and therefore NOT private; use it for tests only.")
    count = (len(values) if charge == "per-value" else min(len(values), 1))
    if budget is not None:  # refuse before any noise is drawn
        from mlx26.core.dp_mix.accounting import check_budget

        check_budget(budget, eps, delta, count)
    from functools import partial

    from mlx26.core.dp_mix import release

    if secure:
        fn = partial(release.secure_values, mechanism=mechanism, eps=eps, delta=delta, sensitivity=sensitivity,
                     objective=objective)
    else:
        mech = dp_mix.calibrate(mechanism, eps, delta, sensitivity, objective=objective)
        fn = partial(release.noisy_values, mech=mech, root=release.root_seed(seed), n=len(values))
    noisy = list(run_engine(fn, list(enumerate(values)), engine=engine, ray_address=ray_address,
                            batch_size=batch_size, num_cpus=num_cpus, total=len(values), description="dp-mix noise",
                            unit="values", quiet=quiet))
    if budget is not None:
        from mlx26.core.dp_mix.accounting import spend_budget

        left = spend_budget(budget, eps, delta, note=f"noise {mechanism} on {len(values)} value(s), charge {charge}",
                            count=count)
        notice(f"dp-mix noise: budget {budget}: eps {left['eps_total'] - left['eps_spent']:g}, "
               f"delta {left['delta_total'] - left['delta_spent']:g} left.", quiet)
    for record, value in zip(kept, noisy, strict=True):
        record[target] = value
    emit(kept, output, answer_in_kind(fmt, output, source.format), force=force)


def _noise_column(rows: list[tuple[int, dict]], column: str | None, name: str) -> str:
    if column is not None:
        missing = next((line for line, r in rows if column not in r), None)
        if missing is not None:
            raise UsageError(f"{name} line {missing}: no column '{column}'.")
        return column
    keys = {k for _, r in rows for k in r}
    if keys <= {VALUE_KEY}:
        return VALUE_KEY
    if len(keys) == 1:
        return keys.pop()
    raise UsageError(f"{name} has several columns ({', '.join(sorted(keys))}).", hint="choose one with --column")


@app.command("compose")
def compose(
    eps: EpsOpt,
    delta: DeltaOpt,
    k: Annotated[int, typer.Option("--k", help="Number of uses (compositions), 1..100000.", metavar="N")],
    sensitivity: SensOpt = 1.0,
    mechanism: MechOpt = "multi",
    objective: ObjOpt = "l1",
    target_delta: Annotated[float | None, typer.Option("--target-delta", help="δ of the composed guarantee "
                                                       "(default: k·δ).", metavar="NUMBER")] = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """(ε, δ) after k uses of a mechanism calibrated to (ε, δ): our FFT accounting and dp-accounting's.

    \b
    Examples:
      mlx26 dp-mix compose -e 1 -d 1e-5 --k 10
      mlx26 dp-mix compose -e 2 -d 1e-6 --k 100 --mechanism gaussian --target-delta 1e-5
    """
    _mechanism(mechanism)
    _objective(objective)
    if k < 1 or k > 100_000:
        raise UsageError(f"--k must be in 1..100000, got {k}.")
    td = k * delta if target_delta is None else target_delta
    if not 0 < td < 1:
        raise UsageError(f"--target-delta must lie in (0, 1), got {td:g}.")
    check_output(output, force)
    from mlx26.cli._errors import require

    require("dp_accounting", "dp")
    from mlx26.core import dp_mix
    from mlx26.core.dp_mix.accounting import compose as compose_core

    mech = dp_mix.calibrate(mechanism, eps, delta, sensitivity, objective=objective)
    res = compose_core(mech, k, td)
    res.update({"mechanism": mech.name, "sigma": mech.sigma, "target_delta": td})
    res["shifts"] = ",".join(f"{s:.4g}" for s in res["shifts"])
    emit(res, output, fmt, force=force, title="dp-mix compose")


@app.command("vector")
def vector(
    eps: EpsOpt,
    delta: DeltaOpt,
    dim: Annotated[int, typer.Option("--dim", help="Dimension d of the query.", metavar="N")],
    sensitivity: SensOpt = 1.0,
    norm: Annotated[str, typer.Option("--norm", help="Norm of the sensitivity bound: l1 | l2 | linf.", metavar="TEXT")] = "linf",
    mechanism: MechOpt = "gaussian",
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Noise for a d-dimensional query whose change has the named norm ≤ Δ, at (ε, δ) overall.

    gaussian: one isotropic Gaussian on the l2 sensitivity (Δ for l1/l2, √d·Δ for linf).
    laplace: Laplace on the l1 sensitivity (Δ, √d·Δ, d·Δ), or d-fold composition if cheaper.
    Other mechanisms: per-coordinate noise (sensitivity Δ each) whose d uses compose to (ε, δ);
    valid for every norm, but it does not exploit an l1 or l2 bound.

    \b
    Examples:
      mlx26 dp-mix vector -e 2 -d 1e-5 --dim 100 --norm l2
      mlx26 dp-mix vector -e 2 -d 1e-5 --dim 4 --norm linf -m laplace
    """
    _mechanism(mechanism)
    if norm not in ("l1", "l2", "linf"):
        raise unknown_name("norm", norm, ("l1", "l2", "linf"))
    if dim < 1 or dim > 1000:
        raise UsageError(f"--dim must be in 1..1000, got {dim}.")
    check_output(output, force)
    from mlx26.cli._errors import require

    require("dp_accounting", "dp")
    from mlx26.core.dp_mix.accounting import calibrate_vector

    res = calibrate_vector(mechanism, eps, delta, sensitivity, dim, norm)
    mech = res.pop("mechanism")
    res.update({f"coordinate_{k}": mech[k] for k in ("mechanism", "sigma", "l1", "l2")})
    emit(res, output, fmt, force=force, title="dp-mix vector")


@app.command("budget")
def budget_init(
    path: Annotated[str, typer.Argument(help="Budget file (JSON) to create.", metavar="FILE")],
    eps: EpsOpt,
    delta: DeltaOpt,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE",
                                        help="Replace an existing budget FILE (and -o file).")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Create a privacy budget file that `noise --budget FILE` charges (basic composition).

    \b
    Examples:
      mlx26 dp-mix budget budget.json -e 4 -d 1e-5
    """
    from mlx26.core.dp_mix.accounting import init_budget

    check_output(output, force)
    emit(init_budget(path, eps, delta, force=force) | {"path": path}, output, fmt, force=force, title="dp-mix budget")
