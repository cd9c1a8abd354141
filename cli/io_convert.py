"""``mlx26 io convert``: records from JSON/JSONL/CSV/TSV/lines to any output format.

It is the I/O contract on its own, useful in pipes (``… | mlx26 io convert - --format csv``)
and the reference every other command's I/O behaviour is tested against.
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli._io import (
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
    check_output,
    emit,
    parse_number,
    print_config_requested,
    read_records,
)

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)


@app.command("convert")
def convert(
    ctx: typer.Context,
    input: InputArg,
    input_format: InputFormatOpt = InputFormat.auto,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
    detect_types: Annotated[bool, typer.Option("--detect-types", help="Turn numeric CSV/TSV cells into numbers.")
                            ] = False,
    config: ConfigOpt = None,
    print_config: PrintConfigOpt = False,
) -> None:
    """Convert records between JSON, JSONL, CSV, TSV and plain lines.

    The whole input is read and checked before anything is written, so malformed input
    leaves no partial output.

    \b
    Examples:
      echo '{"a": 1}' | mlx26 io convert - --format csv
      printf 'a,b\\n1,x\\n' | mlx26 io convert - --detect-types --format json
      mlx26 io convert data.csv -o data.jsonl
    """
    if print_config_requested(ctx, print_config):
        return
    check_output(output, force)
    records = list(read_records(input, input_format))
    if detect_types:
        records = [{k: _typed(v) for k, v in r.items()} for r in records]
    emit(records, output, fmt, force=force)


def _typed(value):
    number = parse_number(value)
    return value if number is None else number
