"""``mlx26 claims``: the ledger of paper claims, what we measured, on which data, and whether it reproduced."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    OutputOpt,
    QuietOpt,
    atomic_output,
    check_output,
    emit,
    emit_raw,
    field_requested,
)


class ClaimsFormat(StrEnum):
    auto = "auto"
    table = "table"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"
    md = "md"


def claims(
    method: Annotated[str | None, typer.Argument(metavar="METHOD", help="One method (e.g. dp-mix); all if omitted.",
                                                 show_default=False)] = None,
    results: Annotated[Path | None, typer.Option(
        "--results", metavar="DIR",
        help="Recompute statuses from this folder of benchmark results (benchmarks/results in a checkout); "
             "default: the ledger shipped with this version.")] = None,
    status: Annotated[str | None, typer.Option(
        "--status", metavar="STATUS", help="Only claims with this status (e.g. 'not reproduced').")] = None,
    output: OutputOpt = None,
    fmt: Annotated[ClaimsFormat, typer.Option("--format", "-f", help="auto | table | json | jsonl | csv | md.")
                   ] = ClaimsFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Every paper claim, the figure that tests it, the data, and whether it reproduced.

    Figures come from the machine-readable results `make bench-…` writes (with command, commit, date and
    machine); statuses are computed from each claim's stated criterion. JSON holds the whole ledger
    ({"methods": …, "claims": …}); table/jsonl/csv one row per claim; md the docs table.

    \b
    Examples:
      mlx26 claims
      mlx26 claims dp-mix --format md
      mlx26 claims --status "not reproduced" --format jsonl
    """
    check_output(output, force)
    from mlx26.core.claims.ledger import select, shipped_ledger, summary
    from mlx26.core.claims.render import claims_table
    from mlx26.core.claims.spec import STATUSES
    from mlx26.core.common.errors import InputError, unknown_name

    if status is not None and status not in (*STATUSES, "no figure"):
        raise unknown_name("status", status, (*STATUSES, "no figure"))
    if results is not None and not results.is_dir():
        raise InputError(f"--results {results}: not a folder", hint="point it at benchmarks/results of a checkout")
    ledger = select(shipped_ledger(results), method)
    if status is not None:
        ledger = {**ledger, "claims": [r for r in ledger["claims"] if r["status"] == status]}
    rows = ledger["claims"]
    if fmt == ClaimsFormat.md:
        if field_requested():
            raise InputError("--field picks a field of records; --format md is a table.", hint="drop --field")
        text = claims_table(rows, with_method=method is None)
        if output in (None, "-"):
            emit_raw(text)
        else:
            with atomic_output(output, force) as handle:
                handle.write(text)
        return
    if not field_requested() and (fmt == ClaimsFormat.json
                                  or (fmt == ClaimsFormat.auto and output and output.endswith(".json"))):
        emit({**ledger, "summary": summary(rows)}, output, "json", force=force)
        return
    flat = [{"method": r["method"], "claim": r["claim"], "measured": r["measured"], "data": r["data"],
             "status": r["status"], "commit": (r["benchmark"] or {}).get("commit")} for r in rows]
    emit(flat, output, fmt.value, force=force, title="mlx26 claims: " + ", ".join(
        f"{n} {s}" for s, n in summary(rows).items()), columns=("method", "status", "claim", "measured", "data"))
