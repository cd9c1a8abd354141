"""``--engine local|ray``, ``--ray-address``, ``--batch-size``, ``--num-cpus`` for record-stream commands (issue 41).

The options, one up-front check (:func:`check_engine`: ray installed, a sane address that answers,
no terminal on stdin) and :func:`run_engine`, which runs a command's batch function through
:func:`mlx26.core.common.engine.map_batches` with a progress bar on stderr. Standard library and
typer only at module level (the ``--help`` path); ray is imported when a run asks for it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Annotated, Any

import typer
from mlx26.cli._errors import UsageError, ensure_installed, unknown_name

ENGINES = ("local", "ray")

EngineOpt = Annotated[str, typer.Option("--engine", help="local (this process) | ray (Ray Data map_batches; "
                                        "needs mlx26[ray]); the output is identical.", metavar="NAME")]
RayAddressOpt = Annotated[str | None, typer.Option("--ray-address", help="Ray cluster to join (HOST:PORT from "
                                                   "`ray start --head`, ray://HOST:PORT or auto); default: a "
                                                   "local Ray instance.", metavar="ADDR")]
BatchSizeOpt = Annotated[int, typer.Option("--batch-size", help="Records per batch (one Ray task each).", min=1,
                                           metavar="N")]
NumCpusOpt = Annotated[int | None, typer.Option("--num-cpus", help="CPUs of the local Ray instance (default: all); "
                                                "with --ray-address, batches run at once.", min=1, metavar="N")]


def check_engine(engine: str, ray_address: str | None = None, *, inputs: Iterable[str] = (),
                 num_cpus: int | None = None) -> None:
    """Validate the engine options before any work: exit 2 on a bad name, a stray --ray-address/--num-cpus
    with the local engine or stdin on a terminal; exit 3 without ray; a dead --ray-address fails here."""
    if engine not in ENGINES:
        raise unknown_name("engine", engine, ENGINES)
    if engine == "local":
        if ray_address is not None or num_cpus is not None:
            raise UsageError("--ray-address and --num-cpus apply to --engine ray.", hint="add --engine ray")
        return
    if "-" in list(inputs) and (sys.stdin is None or sys.stdin.isatty()):
        raise UsageError("--engine ray reads stdin in full first, and nothing is piped to it.",
                         hint="pipe records in (… | mlx26 …) or give a file path")
    ensure_installed("ray", "ray")  # not ray.data: finding a submodule imports ray (seconds)
    from mlx26.core.common.engine import check_address

    check_address(ray_address)


def run_engine(fn: Callable[[list[Any]], list[Any]], records: Iterable[Any], *, engine: str,
               ray_address: str | None, batch_size: int, num_cpus: int | None, total: int | None = None,
               description: str = "working", unit: str = "records", quiet: bool = False) -> Iterator[Any]:
    """``fn``'s result per record, in order, on the chosen engine; a bar on stderr (a terminal, not -q)."""
    from mlx26.cli._progress import Bar
    from mlx26.core.common.engine import map_batches

    if engine == "ray" and total is None:
        records = list(records)  # Ray reads everything in the driver anyway: the bar gets a total
        total = len(records)
    label = f"{description} ({'ray' if engine == 'ray' else 'local'})"
    with Bar(label, total=total, unit=unit, quiet=quiet) as bar:
        yield from map_batches(fn, records, engine=engine, ray_address=ray_address, batch_size=batch_size,
                               num_cpus=num_cpus, progress=bar.update if bar.active else None)
