"""``mlx26 info``: version, Python, optional extras and backends, data directory."""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    check_output,
    emit,
)


def info(
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
    probe: Annotated[bool, typer.Option("--probe", help="Import torch to ask it which device it sees (slower; "
                                        "without it the device is read from torch's build and the driver).")] = False,
) -> None:
    """Show the version, Python, which extras and backends are present, and the data directory.

    A table on a terminal, JSON when piped.

    \b
    Examples:
      mlx26 info
      mlx26 info --format json | python -c "import json,sys; print(json.load(sys.stdin)['version'])"
      mlx26 info --probe --field torch_device
    """
    check_output(output, force)
    from mlx26.core.common.environment import describe

    emit(describe(probe), output, fmt, force=force, title="mlx26 info")
