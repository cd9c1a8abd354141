"""``mlx26 data arith``: the arithmetic task of ``train grpo`` as JSONL prompts with gold answers.

Thin wrapper over ``mlx26.core.smartthinker.data``: the zoo's seeded arithmetic problems with a
concise and a verbose worked chain each (SYNTHETIC data, generated here; SmartThinker, arXiv 2603.08000).
"""

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
    SeedOpt,
    check_output,
    emit,
)
from mlx26.core.smartthinker.spec import STYLES

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)


@app.command("arith")
def arith_cmd(
    n: Annotated[int, typer.Option("--n", "-n", help="Number of problems.", min=0, metavar="N")] = 20,
    split: Annotated[str, typer.Option("--split", help="Split name: train, rl, test (any name: a new stream).", metavar="TEXT")
                     ] = "train",
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Problem kind (gain, share, change, left, "
                                                   "distance, savings); repeat. Default: all.", metavar="TEXT")] = None,
    style: Annotated[str, typer.Option("--style", help="Chain in `completion`: " + " | ".join(STYLES) + ".", metavar="TEXT")
                     ] = "mixed",
    seed: SeedOpt = 0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Synthetic arithmetic problems: prompt, gold answer, concise and verbose chains, SFT completion.

    \b
    Examples:
      mlx26 data arith --n 3 --format jsonl
      mlx26 data arith --n 2 --kind gain --style verbose --format json
    """
    check_output(output, force)
    from mlx26.core.smartthinker.data import records

    rows = list(records(n, seed=seed, split=split, kinds=kind, style=style))
    emit(rows, output, fmt, force=force, title="data arith (synthetic)")
